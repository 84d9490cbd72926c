/*
 * rma.c — one-sided communication between ranks 0 (origin) and 1 (target)
 * on a window made by MPI_Win_allocate.
 *
 * For each message size (1 B doubling up to the maximum):
 *   rma.put_latency    us per MPI_Put + MPI_Win_flush, inside one shared
 *                      lock epoch (passive target)
 *   rma.get_latency    the same with MPI_Get
 *   rma.acc_latency    the same with MPI_Accumulate (MPI_SUM of doubles;
 *                      sizes of 8 bytes and more)
 *   rma.put_bandwidth  MB/s: windows of 64 puts, then one flush
 *   rma.get_bandwidth  the same with MPI_Get
 *   rma.fence          us per fence epoch: rank 0 puts, every rank fences
 *   rma.lock           us per exclusive lock epoch: lock, put, unlock
 * and, once, with size 8:
 *   rma.fop_latency    us per MPI_Fetch_and_op (MPI_SUM, one int64) + flush
 *   rma.cas_latency    us per MPI_Compare_and_swap (one int64) + flush
 * Each size starts with untimed warm-up iterations. During passive-target
 * measurements the target waits in MPI_Barrier; other ranks, if any, only
 * take part in the fences and barriers.
 *
 * Output (see benchutil.h):
 *     # bench/rma: one-sided, rank 0 -> rank 1, MPI_Win_allocate window
 *     # library: <first line of MPI_Get_library_version>
 *     # ROW benchmark ranks size us-or-MB/s
 *     ROW rma.put_latency 2 1 0.310
 *     ...
 *
 * Options:
 *     -s MINSIZE  smallest message in bytes (default 1)
 *     -m MAXSIZE  largest message in bytes, suffixes K and M allowed
 *                 (default 4M)
 *     -i ITERS    timed iterations for small messages (default 2000)
 *
 * Plain MPI: builds with any implementation's mpicc.
 */
#include "benchutil.h"
#include <stdint.h>

#define WINDOW 64

static void fail(const char *what)
{
    fprintf(stderr, "rma: %s\n", what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Passive-target ops from rank 0 to rank 1, one flush after every `batch`
 * of them; returns seconds for the `n` timed batches. Rank 1 waits in the
 * closing barrier. kind: 'p' put, 'g' get, 'a' accumulate. */
static double passive(int rank, MPI_Win win, char *buf, long size, char kind, long warmup,
                      long n, int batch)
{
    double t0 = 0.0, t1 = 0.0;
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
        for (long k = 0; k < warmup + n; k++) {
            if (k == warmup)
                t0 = MPI_Wtime();
            for (int b = 0; b < batch; b++) {
                if (kind == 'p')
                    MPI_Put(buf, (int)size, MPI_BYTE, 1, 0, (int)size, MPI_BYTE, win);
                else if (kind == 'g')
                    MPI_Get(buf, (int)size, MPI_BYTE, 1, 0, (int)size, MPI_BYTE, win);
                else
                    MPI_Accumulate(buf, (int)(size / 8), MPI_DOUBLE, 1, 0, (int)(size / 8),
                                   MPI_DOUBLE, MPI_SUM, win);
            }
            MPI_Win_flush(1, win);
        }
        t1 = MPI_Wtime();
        MPI_Win_unlock(1, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return t1 - t0;
}

int main(int argc, char **argv)
{
    struct bench_setup b = bench_init(&argc, &argv, "rma", 1, 2000);
    int rank = b.rank;
    long max_size = b.max_size;
    long win_bytes = max_size < 8 ? 8 : max_size;

    char *buf = malloc((size_t)win_bytes);
    if (!buf)
        fail("cannot allocate the origin buffer");
    memset(buf, 0, (size_t)win_bytes);

    char *base;
    MPI_Win win;
    if (MPI_Win_allocate((MPI_Aint)win_bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win) !=
        MPI_SUCCESS)
        fail("MPI_Win_allocate failed");
    memset(base, 0, (size_t)win_bytes);
    MPI_Barrier(MPI_COMM_WORLD);

    bench_print_header(rank, "us-or-MB/s",
                       "bench/rma: one-sided, rank 0 -> rank 1, MPI_Win_allocate window");

    for (long size = b.min_size; size <= max_size; size = bench_next_size(size)) {
        long n = bench_iterations(size, b.iters, 8192, 20);
        long warmup = bench_warmup(n);
        long nbw = bench_iterations(size, b.iters / 20 > 0 ? b.iters / 20 : 1, 8192, 5);

        double t = passive(rank, win, buf, size, 'p', warmup, n, 1);
        bench_print_row(rank, "rma.put_latency", size, t * 1e6 / (double)n);
        t = passive(rank, win, buf, size, 'g', warmup, n, 1);
        bench_print_row(rank, "rma.get_latency", size, t * 1e6 / (double)n);
        if (size >= 8) {
            t = passive(rank, win, buf, size, 'a', warmup, n, 1);
            bench_print_row(rank, "rma.acc_latency", size, t * 1e6 / (double)n);
        }
        t = passive(rank, win, buf, size, 'p', bench_warmup(nbw), nbw, WINDOW);
        bench_print_row(rank, "rma.put_bandwidth", size,
                        (double)size * WINDOW * (double)nbw / t / 1e6);
        t = passive(rank, win, buf, size, 'g', bench_warmup(nbw), nbw, WINDOW);
        bench_print_row(rank, "rma.get_bandwidth", size,
                        (double)size * WINDOW * (double)nbw / t / 1e6);

        /* Active target: every rank fences, rank 0 puts between fences. */
        MPI_Win_fence(0, win);
        double t0 = 0.0;
        for (long k = 0; k < warmup + n; k++) {
            if (k == warmup)
                t0 = MPI_Wtime();
            if (rank == 0)
                MPI_Put(buf, (int)size, MPI_BYTE, 1, 0, (int)size, MPI_BYTE, win);
            MPI_Win_fence(0, win);
        }
        t = MPI_Wtime() - t0;
        MPI_Win_fence(0, win);
        bench_print_row(rank, "rma.fence", size, t * 1e6 / (double)n);

        /* Exclusive lock epochs, one put each. */
        t = 0.0;
        if (rank == 0) {
            for (long k = 0; k < warmup + n; k++) {
                if (k == warmup)
                    t0 = MPI_Wtime();
                MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
                MPI_Put(buf, (int)size, MPI_BYTE, 1, 0, (int)size, MPI_BYTE, win);
                MPI_Win_unlock(1, win);
            }
            t = MPI_Wtime() - t0;
        }
        MPI_Barrier(MPI_COMM_WORLD);
        bench_print_row(rank, "rma.lock", size, t * 1e6 / (double)n);
    }

    /* Atomics on one 64-bit counter. */
    if (max_size >= 8) {
        long n = b.iters, warmup = bench_warmup(b.iters);
        int64_t one = 1, result = 0, compare = 0;
        double tf = 0.0, tc = 0.0, t0 = 0.0;
        if (rank == 0) {
            MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
            for (long k = 0; k < warmup + n; k++) {
                if (k == warmup)
                    t0 = MPI_Wtime();
                MPI_Fetch_and_op(&one, &result, MPI_INT64_T, 1, 0, MPI_SUM, win);
                MPI_Win_flush(1, win);
            }
            tf = MPI_Wtime() - t0;
            for (long k = 0; k < warmup + n; k++) {
                if (k == warmup)
                    t0 = MPI_Wtime();
                MPI_Compare_and_swap(&one, &compare, &result, MPI_INT64_T, 1, 0, win);
                MPI_Win_flush(1, win);
                compare = result;
            }
            tc = MPI_Wtime() - t0;
            MPI_Win_unlock(1, win);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        bench_print_row(rank, "rma.fop_latency", 8, tf * 1e6 / (double)n);
        bench_print_row(rank, "rma.cas_latency", 8, tc * 1e6 / (double)n);
    }

    MPI_Win_free(&win);
    free(buf);
    MPI_Finalize();
    return 0;
}
