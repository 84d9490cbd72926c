/*
 * jacobi.c — 1-D Jacobi iteration with and without overlap of the boundary
 * exchange (the application check of SEEDS.md S2).
 *
 * An N x N grid of doubles is split into strips of whole rows, one strip per
 * rank (the first N mod p ranks get one row more), with wrap-around on both
 * axes: rank r's neighbours are r-1 and r+1 mod p, and column j's are j-1 and
 * j+1 mod N. One iteration replaces every point by the mean of its four
 * neighbours, reading one grid and writing the other. The first and last row
 * of a strip need the neighbours' rows (boundary work, TD); the rows between
 * do not (interior work, TB). Per iteration each rank sends its first row to
 * the rank above and its last row to the rank below, as S2's circular shift
 * does: MPI_Bsend, then MPI_Recv.
 *
 *   overlap   Bsend both rows, interior work, Recv both rows, boundary work
 *             -> jacobi.overlap
 *   blocking  Bsend both rows, Recv both rows, interior work, boundary work
 *             -> jacobi.blocking
 *   interior  the interior work alone (TB)         -> jacobi.interior
 *   boundary  the boundary work alone (TD)         -> jacobi.boundary
 *
 * Each figure is us per iteration: a timed run of iterations after a barrier
 * and untimed warm-up iterations, the slowest rank's mean (MPI_Reduce with
 * MPI_MAX), the fastest of REPS such runs. The size of a row is N. Grid sides
 * go from MINSIDE to MAXSIDE in steps of STEP (default 64, 128, 192, 256); the
 * iterations per run shrink with the grid (ITERS x 64^2 / N^2, at least 20),
 * so that every side takes about as long.
 *
 * Output (stable; lines starting with '#' are comments; see benchutil.h):
 *     # bench/jacobi: N x N grid in row strips over 4 ranks, wrap-around ...
 *     # library: <first line of MPI_Get_library_version>
 *     # ROW benchmark ranks size us
 *     ROW jacobi.overlap 4 64 3.120
 *     ROW jacobi.blocking 4 64 3.410
 *     ROW jacobi.interior 4 64 1.020
 *     ROW jacobi.boundary 4 64 0.090
 *     ...
 *
 * Options:
 *     -s MINSIDE  smallest grid side (default 64)
 *     -m MAXSIDE  largest grid side (default 256)
 *     -g STEP     step between grid sides (default 64)
 *     -i ITERS    iterations per run at N = 64 (default 400)
 *     -r REPS     runs per figure, the fastest counts (default 5)
 *
 * Plain MPI: builds with any implementation's mpicc. Every rank needs at least
 * two rows (N >= 2 p). The default rank count of `ferry bench` for it is 4.
 */
#include "benchutil.h"

#define TAG_DOWN 21 /* a last row, travelling to the rank below */
#define TAG_UP 22   /* a first row, travelling to the rank above */
#define WARMUP 5

struct strip {
    int rank, nranks, up, down;
    long n;        /* grid side: points per row */
    long rows;     /* rows of this rank; ghost rows 0 and rows + 1 come from the neighbours */
    double *u, *v; /* (rows + 2) x n each: read u, write v */
};

static double *row(double *g, const struct strip *s, long i)
{
    return g + i * s->n;
}

/* New values of rows [first, last] of v from u. */
static void sweep(struct strip *s, long first, long last)
{
    long n = s->n;
    for (long i = first; i <= last; i++) {
        const double *above = row(s->u, s, i - 1), *here = row(s->u, s, i);
        const double *below = row(s->u, s, i + 1);
        double *out = row(s->v, s, i);
        out[0] = 0.25 * (above[0] + below[0] + here[n - 1] + here[1]);
        for (long j = 1; j < n - 1; j++)
            out[j] = 0.25 * (above[j] + below[j] + here[j - 1] + here[j + 1]);
        out[n - 1] = 0.25 * (above[n - 1] + below[n - 1] + here[n - 2] + here[0]);
    }
}

/* Rows that need no neighbour's row: 2 .. rows - 1. */
static void interior(struct strip *s)
{
    if (s->rows > 2)
        sweep(s, 2, s->rows - 1);
}

/* Rows that need a neighbour's row: 1 and rows. */
static void boundary(struct strip *s)
{
    sweep(s, 1, 1);
    if (s->rows > 1)
        sweep(s, s->rows, s->rows);
}

static void send_rows(struct strip *s)
{
    int count = (int)s->n;
    MPI_Bsend(row(s->u, s, s->rows), count, MPI_DOUBLE, s->down, TAG_DOWN, MPI_COMM_WORLD);
    MPI_Bsend(row(s->u, s, 1), count, MPI_DOUBLE, s->up, TAG_UP, MPI_COMM_WORLD);
}

static void receive_rows(struct strip *s)
{
    int count = (int)s->n;
    MPI_Recv(row(s->u, s, 0), count, MPI_DOUBLE, s->up, TAG_DOWN, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    MPI_Recv(row(s->u, s, s->rows + 1), count, MPI_DOUBLE, s->down, TAG_UP, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
}

static void swap(struct strip *s)
{
    double *t = s->u;
    s->u = s->v;
    s->v = t;
}

enum variant { V_OVERLAP, V_BLOCKING, V_INTERIOR, V_BOUNDARY, V_COUNT };
static const char *const variant_names[V_COUNT] = {
    "jacobi.overlap", "jacobi.blocking", "jacobi.interior", "jacobi.boundary",
};

static void iterate(struct strip *s, enum variant v)
{
    switch (v) {
    case V_OVERLAP:
        send_rows(s);
        interior(s);
        receive_rows(s);
        boundary(s);
        break;
    case V_BLOCKING:
        send_rows(s);
        receive_rows(s);
        interior(s);
        boundary(s);
        break;
    case V_INTERIOR:
        interior(s);
        break;
    case V_BOUNDARY:
        boundary(s);
        break;
    default:
        break;
    }
    swap(s);
}

/* us per iteration on the slowest rank, the fastest of `reps` runs; valid on rank 0. */
static double measure(struct strip *s, enum variant v, long iters, long reps)
{
    double best = 1e30;
    for (long r = 0; r < reps; r++) {
        for (int k = 0; k < WARMUP; k++)
            iterate(s, v);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (long k = 0; k < iters; k++)
            iterate(s, v);
        double mine = (MPI_Wtime() - t0) * 1e6 / (double)iters, slowest = 0.0;
        MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (slowest < best)
            best = slowest;
    }
    return best;
}

__attribute__((noreturn))
static void usage_and_exit(int rank, const char *why)
{
    if (rank == 0) {
        if (why)
            fprintf(stderr, "jacobi: %s\n", why);
        fprintf(stderr, "usage: jacobi [-s MINSIDE] [-m MAXSIDE] [-g STEP] [-i ITERS] "
                        "[-r REPS]\n");
    }
    MPI_Finalize();
    exit(2);
}

int main(int argc, char **argv)
{
    struct strip s = { 0 };
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &s.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &s.nranks);
    s.up = (s.rank + s.nranks - 1) % s.nranks;
    s.down = (s.rank + 1) % s.nranks;

    long min_side = 64, max_side = 256, step = 64, iters = 400, reps = 5;
    for (int a = 1; a < argc; a++) {
        const char *o = argv[a];
        if (a + 1 >= argc)
            usage_and_exit(s.rank, NULL);
        long v = bench_parse_size(argv[++a]);
        if (strcmp(o, "-s") == 0)
            min_side = v;
        else if (strcmp(o, "-m") == 0)
            max_side = v;
        else if (strcmp(o, "-g") == 0)
            step = v;
        else if (strcmp(o, "-i") == 0)
            iters = v;
        else if (strcmp(o, "-r") == 0)
            reps = v;
        else
            usage_and_exit(s.rank, NULL);
    }
    if (min_side < 3 || max_side < min_side || max_side > 65536 || step < 1 || iters < 1 ||
        reps < 1)
        usage_and_exit(s.rank, "sides from 3 to 65536, MINSIDE <= MAXSIDE; STEP, ITERS and "
                               "REPS at least 1");
    if (min_side < 2L * s.nranks)
        usage_and_exit(s.rank, "every rank needs two rows: MINSIDE >= 2 x ranks");

    /* Bsend space for the two rows of a few iterations in flight. */
    int attached = 8 * ((int)(max_side * (long)sizeof(double)) + MPI_BSEND_OVERHEAD);
    char *bsend = malloc((size_t)attached);
    size_t grid = (size_t)(max_side / s.nranks + 3) * (size_t)max_side;
    double *u = malloc(grid * sizeof(double)), *w = malloc(grid * sizeof(double));
    if (!bsend || !u || !w) {
        fprintf(stderr, "jacobi: rank %d cannot allocate a %ld-wide strip\n", s.rank, max_side);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Buffer_attach(bsend, attached);

    bench_print_header(s.rank, "us",
                       "bench/jacobi: N x N grid in row strips over %d ranks, wrap-around, "
                       "Bsend/Recv of one row each way per iteration; us per iteration",
                       s.nranks);

    double checksum = 0.0;
    for (long n = min_side; n <= max_side; n += step) {
        s.n = n;
        s.rows = n / s.nranks + (s.rank < n % s.nranks ? 1 : 0);
        s.u = u;
        s.v = w;
        long first_row = s.rank * (n / s.nranks) + (s.rank < n % s.nranks ? s.rank : n % s.nranks);
        for (long i = 0; i < s.rows + 2; i++)
            for (long j = 0; j < n; j++)
                row(s.u, &s, i)[j] = (double)((first_row + i) * 7 + j * 3 % 11);
        memcpy(s.v, s.u, (size_t)(s.rows + 2) * (size_t)n * sizeof(double));

        long k = iters * 64 * 64 / (n * n);
        if (k < 20)
            k = 20;
        if (s.rank == 0) {
            printf("# N %ld: %ld iterations per run\n", n, k);
            fflush(stdout);
        }
        for (int v = 0; v < V_COUNT; v++) {
            double us = measure(&s, (enum variant)v, k, reps);
            bench_print_row(s.rank, variant_names[v], n, us);
        }
        checksum += row(s.u, &s, 1)[0];
    }

    double total = 0.0;
    MPI_Reduce(&checksum, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (s.rank == 0)
        printf("# checksum %g\n", total);

    void *detached;
    int detached_size;
    MPI_Buffer_detach(&detached, &detached_size);
    free(bsend);
    free(u);
    free(w);
    MPI_Finalize();
    return 0;
}
