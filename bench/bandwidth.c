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
 * Output (stable; lines starting with '#' are comments; see benchutil.h):
 *     # bench/bandwidth: rank 0 -> rank 1, windows of 64 non-blocking sends
 *     # library: <first line of MPI_Get_library_version>
 *     # ROW benchmark ranks size MB/s
 *     ROW bandwidth 2 1 2.510
 *     ...
 *
 * Options:
 *     -s MINSIZE  smallest message in bytes (default 1); the sizes double
 *                 from there
 *     -m MAXSIZE  largest message in bytes, suffixes K and M allowed
 *                 (default 4M)
 *     -i ITERS    timed windows for small messages (default 100)
 *
 * Plain MPI: builds with any implementation's mpicc.
 */
#include "benchutil.h"

#define WINDOW 64

int main(int argc, char **argv)
{
    struct bench_setup b = bench_init(&argc, &argv, "bandwidth", 1, 100);
    int rank = b.rank;
    long max_size = b.max_size;

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

    bench_print_header(rank, "MB/s",
                       "bench/bandwidth: rank 0 -> rank 1, windows of %d non-blocking sends",
                       WINDOW);

    MPI_Request reqs[WINDOW];
    MPI_Status statuses[WINDOW];
    for (long msg = b.min_size; msg <= max_size; msg *= 2) {
        /* Timed windows: `iters` up to 64 KiB, then proportionally fewer, at least 5. */
        long n = bench_iterations(msg, b.iters, 65536, 5);
        long warmup = bench_warmup(n);
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
        double bytes = (double)msg * WINDOW * (double)n;
        bench_print_row(rank, "bandwidth", msg, bytes / elapsed / 1e6);
    }

    for (int w = 0; w < WINDOW; w++)
        free(bufs[w]);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
