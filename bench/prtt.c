/*
 * prtt.c — the parametrised round trip PRTT(n, d, s) of Hoefler, Lichei and Rehm
 * ("Low-overhead LogGP parameter assessment for modern interconnection networks",
 * IPDPS 2007), from which `ferry fit` takes LogGP's g and cross-checks o, L and G.
 *
 * PRTT(n, d, s): rank 0 sends n messages of s bytes to rank 1 (MPI_Send), busy-waiting
 * d microseconds on the wall clock after every send but the last, then receives one s-byte
 * reply; rank 1 receives the n messages, then sends the reply. The value is rank 0's time
 * from its first send to the end of the reply. For every size s the program measures
 *
 *     PRTT(1, 0, s),   PRTT(n, 0, s),   PRTT(n, d, s) with d = PRTT(1, 0, s)
 *
 * with n = 16 (PRTT_N of ferry-model's results schema). The method needs d >= g + sG, the
 * network's time per message, so that the sends of PRTT(n, d, s) are spaced by o + d and
 * not by the network; a whole round trip, 2(L + 2o + sG), is longer than that, and it is
 * measured just before, so d = PRTT(1, 0, s) needs no guess (Netgauge makes the same
 * choice). The delay used is reported with the results.
 *
 * Each value is the median over the timed repetitions, after untimed warm-up ones (a
 * tenth, at least 2); rank 0 times every repetition on its own with MPI_Wtime.
 *
 * Output (stable): every line starts with '#' except the results, which rank 0 prints as
 *     ROW <benchmark> <ranks> <size> <value>
 * with benchmark prtt.1, prtt.n, prtt.nd (PRTT(1,0,s), PRTT(16,0,s), PRTT(16,d,s), in us)
 * and prtt.d (the delay d, in us), e.g.
 *     # bench/prtt: PRTT(n, d, s) between ranks 0 and 1, n = 16, d = PRTT(1, 0, s)
 *     # library: <first line of MPI_Get_library_version>
 *     ROW prtt.1 2 1 0.8123
 *
 * Options:
 *     -m MAXSIZE  largest message in bytes, suffixes K and M allowed (default 128K)
 *     -s MINSIZE  smallest message in bytes (default 1; 0 is measured, then 1, 2, 4, ...)
 *     -i ITERS    timed repetitions per value up to 8 KiB (default 200), proportionally
 *                 fewer above, at least 10
 * Runs on exactly 2 ranks; bad options or another rank count end it with status 2.
 *
 * Plain MPI: builds with any implementation's mpicc.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PRTT_N = 16, TAG = 7 };

/* A byte count with an optional suffix K or M (powers of 1024); -1 if the text is not one. */
static long parse_size(const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s)
        return -1;
    if (*end == 'k' || *end == 'K')
        v *= 1024, end++;
    else if (*end == 'm' || *end == 'M')
        v *= 1024 * 1024, end++;
    return *end == '\0' && v >= 0 ? v : -1;
}

static void busy_wait_us(double d)
{
    double until = MPI_Wtime() + d * 1e-6;
    while (MPI_Wtime() < until)
        ;
}

/* One PRTT(n, d, s); rank 0 returns its time in us, rank 1 returns 0. */
static double prtt_once(int rank, char *buf, int s, int n, double d)
{
    if (rank == 0) {
        double t0 = MPI_Wtime();
        for (int k = 0; k < n; k++) {
            if (k > 0 && d > 0.0)
                busy_wait_us(d);
            MPI_Send(buf, s, MPI_BYTE, 1, TAG, MPI_COMM_WORLD);
        }
        MPI_Recv(buf, s, MPI_BYTE, 1, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        return (MPI_Wtime() - t0) * 1e6;
    }
    for (int k = 0; k < n; k++)
        MPI_Recv(buf, s, MPI_BYTE, 0, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(buf, s, MPI_BYTE, 0, TAG, MPI_COMM_WORLD);
    return 0.0;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median over `reps` timed repetitions of PRTT(n, d, s), after warm-up ones; the value
 * is meaningful on rank 0 only. `samples` holds at least `reps` doubles. */
static double prtt(int rank, char *buf, int s, int n, double d, long reps, double *samples)
{
    long warmup = reps / 10 < 2 ? 2 : reps / 10;
    MPI_Barrier(MPI_COMM_WORLD);
    for (long k = 0; k < warmup; k++)
        prtt_once(rank, buf, s, n, d);
    for (long k = 0; k < reps; k++)
        samples[k] = prtt_once(rank, buf, s, n, d);
    qsort(samples, (size_t)reps, sizeof *samples, by_value);
    return reps % 2 ? samples[reps / 2] : (samples[reps / 2 - 1] + samples[reps / 2]) / 2.0;
}

static void usage_and_exit(int rank, const char *why)
{
    if (rank == 0)
        fprintf(stderr, "prtt: %s\nusage: prtt [-m MAXSIZE] [-s MINSIZE] [-i ITERS] (on 2 ranks)\n", why);
    MPI_Finalize();
    exit(2);
}

int main(int argc, char **argv)
{
    int rank, size;
    long max_size = 128L << 10, min_size = 1, iters = 200;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int a = 1; a < argc; a++) {
        long *opt = strcmp(argv[a], "-m") == 0   ? &max_size
                    : strcmp(argv[a], "-s") == 0 ? &min_size
                    : strcmp(argv[a], "-i") == 0 ? &iters
                                                 : NULL;
        if (!opt || a + 1 >= argc || (*opt = parse_size(argv[++a])) < 0)
            usage_and_exit(rank, "bad option");
    }
    if (iters < 1 || min_size > max_size || max_size > (1L << 30))
        usage_and_exit(rank, "need ITERS >= 1 and MINSIZE <= MAXSIZE <= 1G");
    if (size != 2)
        usage_and_exit(rank, "runs on exactly 2 ranks");

    long most = iters < 10 ? 10 : iters;
    char *buf = malloc(max_size > 0 ? (size_t)max_size : 1);
    double *samples = malloc((size_t)most * sizeof *samples);
    if (!buf || !samples) {
        fprintf(stderr, "prtt: cannot allocate %ld bytes\n", max_size);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(buf, 'p', max_size > 0 ? (size_t)max_size : 1);

    if (rank == 0) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(lib, &len);
        lib[strcspn(lib, "\n")] = '\0';
        printf("# bench/prtt: PRTT(n, d, s) between ranks 0 and 1, n = %d, d = PRTT(1, 0, s)\n", PRTT_N);
        printf("# library: %s\n", lib);
        printf("# ROW benchmark ranks size value_us\n");
        fflush(stdout);
    }

    for (long s = min_size; s <= max_size; s = s ? s * 2 : 1) {
        /* All `iters` up to 8 KiB, then proportionally fewer, at least 10. */
        long reps = s <= 8192 ? iters : iters * 8192 / s;
        if (reps < 10)
            reps = 10;
        int count = (int)s;
        double one = prtt(rank, buf, count, 1, 0.0, reps, samples);
        /* Rank 1 never waits: only rank 0 needs d. */
        double d = one;
        double n0 = prtt(rank, buf, count, PRTT_N, 0.0, reps, samples);
        double nd = prtt(rank, buf, count, PRTT_N, d, reps, samples);
        if (rank == 0) {
            printf("ROW prtt.1 2 %ld %.4f\n", s, one);
            printf("ROW prtt.n 2 %ld %.4f\n", s, n0);
            printf("ROW prtt.nd 2 %ld %.4f\n", s, nd);
            printf("ROW prtt.d 2 %ld %.4f\n", s, d);
            fflush(stdout);
        }
    }

    free(samples);
    free(buf);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
