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
 * Output (stable; lines starting with '#' are comments; see benchutil.h):
 *     # bench/latency: ping-pong between ranks 0 and 1, half round-trip time
 *     # library: <first line of MPI_Get_library_version>
 *     # ROW benchmark ranks size latency_us
 *     ROW latency 2 0 0.420
 *     ROW latency 2 1 0.450
 *     ...
 *
 * Options:
 *     -s MINSIZE  smallest message in bytes (default 0); the sizes double
 *                 from there (0 is followed by 1)
 *     -m MAXSIZE  largest message in bytes, suffixes K and M allowed
 *                 (default 4M)
 *     -i ITERS    timed round trips for small messages (default 10000)
 *
 * Plain MPI: builds with any implementation's mpicc.
 */
#include "benchutil.h"

int main(int argc, char **argv)
{
    struct bench_setup b = bench_init(&argc, &argv, "latency", 0, 10000);
    int rank = b.rank;
    long max_size = b.max_size;

    char *buf = malloc(max_size > 0 ? (size_t)max_size : 1);
    if (!buf) {
        fprintf(stderr, "latency: cannot allocate %ld bytes\n", max_size);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(buf, 'a', max_size > 0 ? (size_t)max_size : 1);

    bench_print_header(rank, "latency_us",
                       "bench/latency: ping-pong between ranks 0 and 1, half round-trip time");

    for (long msg = b.min_size; msg <= max_size; msg = bench_next_size(msg)) {
        /* Timed round trips: `iters` up to 8 KiB, then proportionally fewer, at least 20. */
        long n = bench_iterations(msg, b.iters, 8192, 20);
        long warmup = bench_warmup(n);
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
        bench_print_row(rank, "latency", msg, elapsed * 1e6 / (2.0 * (double)n));
    }

    free(buf);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
