/*
 * shift.c — how much of a circular shift computation can hide (SEEDS.md S2).
 *
 * One trial: all ranks leave a barrier; every rank sends SIZE bytes to rank
 * (r+1) mod n with MPI_Bsend, does W us of work, receives SIZE bytes from
 * rank (r-1) mod n with MPI_Recv, and stops its clock. The time of a trial is
 * the slowest rank's (MPI_Reduce with MPI_MAX); T(W) is the minimum over the
 * trials at one W. For each size:
 *
 *   T0 = T(0)           the shift alone                      -> shift.total
 *   W  = k * T0 / 8     for k = 1, 2, ...: more work step by step
 *   T(W) - W            falls while the work hides communication and levels
 *                       off once it hides all it can (saturation)
 *   Tp = min of T(W) - W over the steps with W >= T0 (work as long as the
 *        whole shift, so all that can hide is hidden): the part no work can
 *        hide, the processor's share o           -> shift.nonoverlap
 *   (Tp is clamped at 0: below it, the work ran faster than calibrated)
 *   T0 - Tp, clamped at 0: the part work hides, L + g   -> shift.overlap
 *
 * W goes up until W >= T0 and three steps in a row have brought no new low of
 * T(W) - W (lower by more than 2% of T0 or 0.05 us), at most 40 steps.
 *
 * The work is a chain of dependent floating-point operations with no memory
 * traffic and no MPI call, its length calibrated on the wall clock once per
 * rank at start (the fastest of several timings, so W is the undisturbed
 * time). A fixed amount of work, rather than a loop that watches the clock,
 * takes longer when something else (a progress thread, another rank on the
 * same core) takes the processor from it, and that time then shows up in
 * T(W) - W, where it belongs.
 *
 * The Bsend buffer holds four messages of the largest size, more than the
 * one each rank has in flight per trial.
 *
 * Output (stable; lines starting with '#' are comments; see benchutil.h):
 *     # bench/shift: circular shift (Bsend, W us of work, Recv) ...
 *     # library: <first line of MPI_Get_library_version>
 *     # ROW benchmark ranks size us
 *     ROW shift.total 2 1 0.850
 *     ROW shift.nonoverlap 2 1 0.610
 *     ROW shift.overlap 2 1 0.240
 *     ...
 *
 * Options:
 *     -s MINSIZE  smallest message in bytes (default 1); sizes double from there
 *     -m MAXSIZE  largest message in bytes, suffixes K and M allowed (default 4M)
 *     -i TRIALS   trials per W for messages up to 64 KiB, proportionally fewer
 *                 above, at least 5 (default 20)
 *     -v          also print T(W) for every step, as comments
 *
 * Plain MPI: builds with any implementation's mpicc. Needs at least 2 ranks.
 */
#include "benchutil.h"

#define TAG 11
#define STEPS_PER_T0 8 /* W grows by T0 / 8 per step: step 8 reaches W = T0 */
#define MAX_STEPS 40
#define QUIET_STEPS 3

static volatile double sink = 1.0;

/* `n` rounds of dependent arithmetic: no memory traffic, no MPI. */
static void work(long n)
{
    double x = sink;
    for (long k = 0; k < n; k++)
        x = x * 1.0000001 + 1e-9;
    sink = x;
}

/* Rounds of work per microsecond on this rank: the fastest of 5 timings of a
 * run of at least 2 ms. */
static double calibrate(void)
{
    long n = 1000;
    double best;
    for (;;) {
        best = 1e30;
        for (int rep = 0; rep < 5; rep++) {
            double t0 = MPI_Wtime();
            work(n);
            double t = MPI_Wtime() - t0;
            if (t < best)
                best = t;
        }
        if (best >= 2e-3)
            break;
        n *= 2;
    }
    return (double)n / (best * 1e6);
}

/* One trial; returns on rank 0 the slowest rank's time in us. */
static double trial(char *sbuf, char *rbuf, int count, int right, int left, long rounds)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    MPI_Bsend(sbuf, count, MPI_BYTE, right, TAG, MPI_COMM_WORLD);
    if (rounds > 0)
        work(rounds);
    MPI_Recv(rbuf, count, MPI_BYTE, left, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    double mine = (MPI_Wtime() - t0) * 1e6, slowest = 0.0;
    MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    return slowest;
}

/* T(W) on rank 0: the minimum over `n` trials with W us of work. */
static double shift_time(char *sbuf, char *rbuf, int count, int right, int left,
                         double per_us, double w_us, long n)
{
    long rounds = (long)(w_us * per_us);
    double best = 1e30;
    for (long k = 0; k < n; k++) {
        double t = trial(sbuf, rbuf, count, right, left, rounds);
        if (t < best)
            best = t;
    }
    return best;
}

int main(int argc, char **argv)
{
    int verbose = 0;
    /* -v is ours; bench_init takes the rest. */
    for (int a = 1; a < argc; a++)
        if (strcmp(argv[a], "-v") == 0) {
            verbose = 1;
            for (int b = a; b < argc - 1; b++)
                argv[b] = argv[b + 1];
            argc--;
            a--;
        }
    struct bench_setup b = bench_init(&argc, &argv, "shift", 1, 20);
    int rank = b.rank, nranks;
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    int right = (rank + 1) % nranks, left = (rank + nranks - 1) % nranks;

    if (b.max_size > (256L << 20)) {
        if (rank == 0)
            fprintf(stderr, "shift: -m is at most 256M (the Bsend buffer holds four)\n");
        MPI_Finalize();
        return 2;
    }
    int slot = (int)b.max_size + MPI_BSEND_OVERHEAD;
    int attached = 4 * slot;
    char *bsend = malloc((size_t)attached);
    char *sbuf = malloc((size_t)b.max_size), *rbuf = malloc((size_t)b.max_size);
    if (!bsend || !sbuf || !rbuf) {
        fprintf(stderr, "shift: cannot allocate buffers for %ld-byte messages\n", b.max_size);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(sbuf, 's', (size_t)b.max_size);
    MPI_Buffer_attach(bsend, attached);

    MPI_Barrier(MPI_COMM_WORLD);
    double per_us = calibrate(), slowest_per_us;
    MPI_Reduce(&per_us, &slowest_per_us, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);

    bench_print_header(rank, "us",
                       "bench/shift: circular shift (Bsend to r+1, W us of work, Recv from r-1) "
                       "on %d ranks; max over ranks, min over trials",
                       nranks);
    if (rank == 0) {
        printf("# work: %.1f rounds per us on the slowest rank\n", slowest_per_us);
        fflush(stdout);
    }

    for (long size = b.min_size; size <= b.max_size; size *= 2) {
        int count = (int)size;
        long n = bench_iterations(size, b.iters, 64L << 10, 5);
        for (long k = 0; k < bench_warmup(n); k++)
            trial(sbuf, rbuf, count, right, left, 0);

        double t0 = shift_time(sbuf, rbuf, count, right, left, per_us, 0.0, n);
        double step = 0.0;
        if (rank == 0) {
            step = t0 / STEPS_PER_T0;
            if (verbose)
                printf("# size %ld  W 0.00  T %.3f\n", size, t0);
        }
        MPI_Bcast(&step, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);

        /* Rank 0 decides, after each step, whether to take another. */
        double tp = 1e30, low = 1e30, tol = 0.0;
        int quiet = 0, more = 1;
        if (rank == 0) {
            tol = 0.02 * t0 > 0.05 ? 0.02 * t0 : 0.05;
        }
        for (int k = 1; more; k++) {
            double w = k * step;
            double t = shift_time(sbuf, rbuf, count, right, left, per_us, w, n);
            if (rank == 0) {
                double exposed = t - w;
                if (verbose)
                    printf("# size %ld  W %.2f  T %.3f  T-W %.3f\n", size, w, t, exposed);
                if (exposed < low - tol) {
                    low = exposed;
                    quiet = 0;
                } else {
                    quiet++;
                    if (exposed < low)
                        low = exposed;
                }
                int saturated = k >= STEPS_PER_T0;
                if (saturated && exposed < tp)
                    tp = exposed;
                more = k < MAX_STEPS && !(saturated && quiet >= QUIET_STEPS);
            }
            MPI_Bcast(&more, 1, MPI_INT, 0, MPI_COMM_WORLD);
        }
        if (rank == 0) {
            /* T(W) - W below 0 means the work ran faster during a step than at its
             * calibration (the clock of a loaded machine): nothing is left exposed. */
            if (tp < 0.0)
                tp = 0.0;
            double overlap = t0 - tp > 0.0 ? t0 - tp : 0.0;
            bench_print_row(rank, "shift.total", size, t0);
            bench_print_row(rank, "shift.nonoverlap", size, tp);
            bench_print_row(rank, "shift.overlap", size, overlap);
        }
    }

    void *detached;
    int detached_size;
    MPI_Buffer_detach(&detached, &detached_size);
    free(bsend);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
