/*
 * bandwidth.c — streaming point-to-point bandwidth from rank 0 to rank 1.
 *
 * For each message size (1 B doubling up to the maximum), one iteration is a
 * window of 64 messages: rank 1 posts 64 MPI_Irecv, rank 0 starts 64
 * MPI_Isend, both complete them with MPI_Waitall, then rank 1 sends a
 * zero-byte acknowledgement that rank 0 receives before the next window.
 * Every window slot has its own buffer, on both sides, so no two messages
 * in flight share memory (64 buffers of the largest size per rank). The
 * bandwidth is bytes sent / elapsed time, in MB/s with 1 MB = 10^6 bytes.
 * Each size starts with untimed warm-up windows; the number of timed
 * windows shrinks for large messages. Other ranks, if any, only take part
 * in the barriers.
 *
 * Output (stable; lines starting with '#' are comments):
 *     # bench/bandwidth: rank 0 -> rank 1, windows of 64 non-blocking sends
 *     # library: <first line of MPI_Get_library_version>
 *     # size  MB/s
 *     1       2.51
 *     ...
 *
 * Options:
 *     -m MAXSIZE  largest message in bytes, suffixes K and M allowed
 *                 (default 4M)
 *     -i ITERS    timed windows for small messages (default 100)
 *
 * Plain MPI: builds with any implementation's mpicc.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 64

static long parse_size(const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*end == 'k' || *end == 'K')
        v *= 1024, end++;
    else if (*end == 'm' || *end == 'M')
        v *= 1024 * 1024, end++;
    return *end == '\0' && v >= 0 ? v : -1;
}

static void usage_and_exit(int rank)
{
    if (rank == 0)
        fprintf(stderr, "usage: bandwidth [-m MAXSIZE] [-i ITERS]\n");
    MPI_Finalize();
    exit(2);
}

/* Timed windows for messages of `size` bytes: `iters` up to 64 KiB, then
 * proportionally fewer, at least 5. */
static long iterations_for(long size, long iters)
{
    if (size <= 65536)
        return iters;
    long n = iters * 65536 / size;
    return n < 5 ? 5 : n;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    long max_size = 4L << 20, iters = 100;
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "-m") == 0 && a + 1 < argc)
            max_size = parse_size(argv[++a]);
        else if (strcmp(argv[a], "-i") == 0 && a + 1 < argc)
            iters = parse_size(argv[++a]);
        else
            usage_and_exit(rank);
    }
    if (max_size < 1 || iters <= 0 || max_size > (1L << 30))
        usage_and_exit(rank);
    if (size < 2) {
        if (rank == 0)
            fprintf(stderr, "bandwidth: needs at least 2 ranks\n");
        MPI_Finalize();
        return 2;
    }

    /* One buffer per window slot. */
    char *bufs[WINDOW] = { 0 };
    if (rank <= 1) {
        for (int w = 0; w < WINDOW; w++) {
            bufs[w] = malloc((size_t)max_size);
            if (!bufs[w]) {
                fprintf(stderr, "bandwidth: cannot allocate %d x %ld bytes\n", WINDOW, max_size);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            memset(bufs[w], 'a' + w % 26, (size_t)max_size);
        }
    }

    if (rank == 0) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(lib, &len);
        lib[strcspn(lib, "\n")] = '\0';
        printf("# bench/bandwidth: rank 0 -> rank 1, windows of %d non-blocking sends\n",
               WINDOW);
        printf("# library: %s\n", lib);
        printf("# %-6s %s\n", "size", "MB/s");
        fflush(stdout);
    }

    MPI_Request reqs[WINDOW];
    MPI_Status statuses[WINDOW];
    for (long msg = 1; msg <= max_size; msg *= 2) {
        long n = iterations_for(msg, iters);
        long warmup = n / 10 < 2 ? 2 : n / 10;
        int count = (int)msg;
        double t0 = 0.0;

        MPI_Barrier(MPI_COMM_WORLD);
        for (long k = 0; k < warmup + n; k++) {
            if (k == warmup)
                t0 = MPI_Wtime();
            if (rank == 0) {
                for (int w = 0; w < WINDOW; w++)
                    MPI_Isend(bufs[w], count, MPI_BYTE, 1, 2, MPI_COMM_WORLD, &reqs[w]);
                MPI_Waitall(WINDOW, reqs, statuses);
                MPI_Recv(NULL, 0, MPI_BYTE, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (rank == 1) {
                for (int w = 0; w < WINDOW; w++)
                    MPI_Irecv(bufs[w], count, MPI_BYTE, 0, 2, MPI_COMM_WORLD, &reqs[w]);
                MPI_Waitall(WINDOW, reqs, statuses);
                MPI_Send(NULL, 0, MPI_BYTE, 0, 3, MPI_COMM_WORLD);
            }
        }
        double elapsed = MPI_Wtime() - t0;
        if (rank == 0) {
            double bytes = (double)msg * WINDOW * (double)n;
            printf("%-8ld %.2f\n", msg, bytes / elapsed / 1e6);
            fflush(stdout);
        }
    }

    for (int w = 0; w < WINDOW; w++)
        free(bufs[w]);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
