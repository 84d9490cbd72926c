/*
 * bibandwidth.c — point-to-point bandwidth in both directions at once
 * between ranks 0 and 1.
 *
 * For each message size (1 B doubling up to the maximum), one iteration is a
 * window of 64 messages each way: ranks 0 and 1 both post 64 MPI_Irecv from
 * the other, start 64 MPI_Isend to the other, and complete all 128 requests
 * with MPI_Waitall; a zero-byte MPI_Sendrecv between them then closes the
 * window, so that no message of the next window overtakes the receives of
 * this one. Every window slot has its own send and its own receive buffer
 * (2 x 64 buffers of the largest size per rank), as in bench/bandwidth.c, so
 * the figure is memory bandwidth, not cache bandwidth. The result is the sum
 * of both directions: 2 x bytes per direction / elapsed time, in MB/s with
 * 1 MB = 10^6 bytes. Each size starts with untimed warm-up windows; the
 * number of timed windows shrinks for large messages. Other ranks, if any,
 * only take part in the barriers.
 *
 * Output (stable; lines starting with '#' are comments; see benchutil.h):
 *     # bench/bibandwidth: ranks 0 <-> 1, windows of 64 non-blocking sends each way
 *     # library: <first line of MPI_Get_library_version>
 *     # ROW benchmark ranks size MB/s
 *     ROW bibandwidth 2 1 4.870
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
    struct bench_setup b = bench_init(&argc, &argv, "bibandwidth", 1, 100);
    int rank = b.rank;
    long max_size = b.max_size;
    int peer = rank == 0 ? 1 : 0;

    /* One send and one receive buffer per window slot. */
    char *sbufs[WINDOW] = { 0 }, *rbufs[WINDOW] = { 0 };
    if (rank <= 1) {
        for (int w = 0; w < WINDOW; w++) {
            sbufs[w] = malloc((size_t)max_size);
            rbufs[w] = malloc((size_t)max_size);
            if (!sbufs[w] || !rbufs[w]) {
                fprintf(stderr, "bibandwidth: cannot allocate 2 x %d x %ld bytes\n", WINDOW,
                        max_size);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            memset(sbufs[w], 'a' + w % 26, (size_t)max_size);
            memset(rbufs[w], 0, (size_t)max_size);
        }
    }

    bench_print_header(rank, "MB/s",
                       "bench/bibandwidth: ranks 0 <-> 1, windows of %d non-blocking sends "
                       "each way",
                       WINDOW);

    MPI_Request reqs[2 * WINDOW];
    MPI_Status statuses[2 * WINDOW];
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
            if (rank > 1)
                continue;
            for (int w = 0; w < WINDOW; w++)
                MPI_Irecv(rbufs[w], count, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &reqs[w]);
            for (int w = 0; w < WINDOW; w++)
                MPI_Isend(sbufs[w], count, MPI_BYTE, peer, 2, MPI_COMM_WORLD,
                          &reqs[WINDOW + w]);
            MPI_Waitall(2 * WINDOW, reqs, statuses);
            MPI_Sendrecv(NULL, 0, MPI_BYTE, peer, 3, NULL, 0, MPI_BYTE, peer, 3,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        double elapsed = MPI_Wtime() - t0;
        double bytes = 2.0 * (double)msg * WINDOW * (double)n;
        bench_print_row(rank, "bibandwidth", msg, bytes / elapsed / 1e6);
    }

    for (int w = 0; w < WINDOW; w++) {
        free(sbufs[w]);
        free(rbufs[w]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
