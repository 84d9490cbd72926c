/*
 * latency.c — point-to-point latency, ping-pong between ranks 0 and 1.
 *
 * For each message size (0 B, then 1 B doubling up to the maximum), rank 0
 * sends a message to rank 1 with MPI_Send and rank 1 sends it straight back;
 * the latency is half the average round-trip time. Each size starts with
 * untimed warm-up round trips; the number of timed round trips shrinks for
 * large messages so that every size takes a similar time. Other ranks, if
 * any, only take part in the barriers.
 *
 * Output (stable; lines starting with '#' are comments):
 *     # bench/latency: ping-pong between ranks 0 and 1, half round-trip time
 *     # library: <first line of MPI_Get_library_version>
 *     # size  latency_us
 *     0       0.42
 *     1       0.45
 *     ...
 *
 * Options:
 *     -m MAXSIZE  largest message in bytes, suffixes K and M allowed
 *                 (default 4M)
 *     -i ITERS    timed round trips for small messages (default 10000)
 *
 * Plain MPI: builds with any implementation's mpicc.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
        fprintf(stderr, "usage: latency [-m MAXSIZE] [-i ITERS]\n");
    MPI_Finalize();
    exit(2);
}

/* Timed round trips for a message of `size` bytes: `iters` up to 8 KiB,
 * then proportionally fewer, at least 20. */
static long iterations_for(long size, long iters)
{
    if (size <= 8192)
        return iters;
    long n = iters * 8192 / size;
    return n < 20 ? 20 : n;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    long max_size = 4L << 20, iters = 10000;
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "-m") == 0 && a + 1 < argc)
            max_size = parse_size(argv[++a]);
        else if (strcmp(argv[a], "-i") == 0 && a + 1 < argc)
            iters = parse_size(argv[++a]);
        else
            usage_and_exit(rank);
    }
    if (max_size < 0 || iters <= 0 || max_size > (1L << 30))
        usage_and_exit(rank);
    if (size < 2) {
        if (rank == 0)
            fprintf(stderr, "latency: needs at least 2 ranks\n");
        MPI_Finalize();
        return 2;
    }

    char *buf = malloc(max_size > 0 ? (size_t)max_size : 1);
    if (!buf) {
        fprintf(stderr, "latency: cannot allocate %ld bytes\n", max_size);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(buf, 'a', max_size > 0 ? (size_t)max_size : 1);

    if (rank == 0) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(lib, &len);
        lib[strcspn(lib, "\n")] = '\0';
        printf("# bench/latency: ping-pong between ranks 0 and 1, half round-trip time\n");
        printf("# library: %s\n", lib);
        printf("# %-6s %s\n", "size", "latency_us");
        fflush(stdout);
    }

    for (long msg = 0; msg <= max_size; msg = msg ? msg * 2 : 1) {
        long n = iterations_for(msg, iters);
        long warmup = n / 10 < 2 ? 2 : n / 10;
        int count = (int)msg;
        double t0 = 0.0;

        MPI_Barrier(MPI_COMM_WORLD);
        for (long k = 0; k < warmup + n; k++) {
            if (k == warmup)
                t0 = MPI_Wtime();
            if (rank == 0) {
                MPI_Send(buf, count, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
                MPI_Recv(buf, count, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (rank == 1) {
                MPI_Recv(buf, count, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, count, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
            }
        }
        double elapsed = MPI_Wtime() - t0;
        if (rank == 0) {
            printf("%-8ld %.2f\n", msg, elapsed * 1e6 / (2.0 * (double)n));
            fflush(stdout);
        }
    }

    free(buf);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
