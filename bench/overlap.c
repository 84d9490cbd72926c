/*
 * overlap.c — how much of a transfer hides behind computation.
 *
 * Rank 0 sends M bytes to rank 1 with MPI_Isend / MPI_Irecv; both ranks then
 * compute for a fixed time (a busy loop on the wall clock, no MPI call inside)
 * and call MPI_Wait. For each size:
 *
 *   t_comm   time of post + wait with no computation (the transfer alone)
 *   t_work   the computation, set to max(2 t_comm, 20 us) so that all of the
 *            transfer could hide behind it
 *   t_total  time of post + compute + wait
 *   hidden   1 - (t_total - t_work) / t_comm, clamped to [0, 1]: the fraction
 *            of the transfer that the computation covered
 *
 * Every time is the slower of the two ranks in one iteration (the ranks start
 * together after a barrier); the figures are medians over the iterations.
 *
 *     usage: overlap [-s MINSIZE] [-m MAXSIZE] [-i ITERS]
 *
 * Sizes 1 KiB, 4 KiB, 16 KiB, 64 KiB, 128 KiB, 256 KiB, 1 MiB, 4 MiB, 16 MiB
 * (up to MAXSIZE: 4M by default, -m 16M for the whole range). ITERS (default 200) iterations up to 64 KiB,
 * proportionally fewer above, at least 15.
 *
 * Plain MPI: builds with any implementation's mpicc.
 */
#include <stdlib.h>
#include <string.h>

#include "benchutil.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, long n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static volatile double sink;

/* Busy work until `seconds` of wall-clock time have passed since `start`. */
static void compute_until(double start, double seconds)
{
    double x = 1.0;
    while (MPI_Wtime() - start < seconds) {
        for (int k = 0; k < 200; k++)
            x = x * 1.0000001 + 1e-9;
    }
    sink = x;
}

/* One iteration: returns the slower rank's time of post + work + wait. */
static double one(int rank, char *buf, int count, double work)
{
    MPI_Request req;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (rank == 0)
        MPI_Isend(buf, count, MPI_BYTE, 1, 7, MPI_COMM_WORLD, &req);
    else if (rank == 1)
        MPI_Irecv(buf, count, MPI_BYTE, 0, 7, MPI_COMM_WORLD, &req);
    else
        req = MPI_REQUEST_NULL;
    if (work > 0)
        compute_until(t0, work);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    double mine = MPI_Wtime() - t0, slowest;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest;
}

int main(int argc, char **argv)
{
    struct bench_setup b = bench_init(&argc, &argv, "overlap", 1024, 200);
    int rank = b.rank;
    static const long sizes[] = {1L << 10, 4L << 10, 16L << 10, 64L << 10, 128L << 10,
                                 256L << 10, 1L << 20, 4L << 20, 16L << 20};

    char *buf = malloc(b.max_size > 0 ? (size_t)b.max_size : 1);
    double *t = malloc(sizeof(double) * (size_t)(b.iters > 15 ? b.iters : 15));
    if (!buf || !t) {
        fprintf(stderr, "overlap: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(buf, 'o', b.max_size > 0 ? (size_t)b.max_size : 1);

    bench_print_header(rank, "t_comm_us t_work_us t_total_us hidden",
                       "bench/overlap: Isend/Irecv of M bytes, compute, Wait (rank 0 -> 1)");
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes && sizes[i] <= b.max_size; i++) {
        long m = sizes[i];
        if (m < b.min_size)
            continue;
        long n = bench_iterations(m, b.iters, 64L << 10, 15);
        for (long k = 0; k < bench_warmup(n); k++)
            one(rank, buf, (int)m, 0);
        for (long k = 0; k < n; k++)
            t[k] = one(rank, buf, (int)m, 0);
        double comm = median(t, n);
        double work = 2 * comm > 20e-6 ? 2 * comm : 20e-6;
        for (long k = 0; k < n; k++)
            t[k] = one(rank, buf, (int)m, work);
        double total = median(t, n);
        double hidden = 1.0 - (total - work) / comm;
        hidden = hidden < 0 ? 0 : hidden > 1 ? 1 : hidden;
        if (rank == 0)
            printf("%-8ld %10.2f %10.2f %10.2f %6.2f\n", m, comm * 1e6, work * 1e6, total * 1e6, hidden);
        fflush(stdout);
    }
    free(t);
    free(buf);
    MPI_Finalize();
    return 0;
}
