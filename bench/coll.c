/*
 * coll.c — time of every MPI collective, per call, for a list of per-rank block sizes.
 *
 * The size of a row is the per-rank block in bytes, the one size metric of every
 * collective: the message of Bcast; the block each rank sends (Scatter: receives) to or
 * from the root in Scatter(v)/Gather(v); each rank's contribution to Allgather(v); the
 * block for each peer in Alltoall(v); the vector each rank reduces in Reduce, Allreduce,
 * Scan and Exscan (MPI_INT, MPI_SUM); each rank's result block in Reduce_scatter_block and
 * Reduce_scatter. Barrier has one row, size 0. Rooted collectives use root 0. The
 * v-variants run with equal counts, so they time the v-code path on the same volume.
 *
 * For each collective and size: one call whose result is checked (not timed; a wrong
 * result aborts the job); untimed warm-up calls (at least 3, then more up to a tenth of
 * the timed count or of the time budget), whose median time on rank 0 estimates an
 * iteration; then the timed iterations, each one call followed by a barrier, with only the
 * call timed, per rank. A row gives the minimum, average and maximum over ranks of each
 * rank's mean time per call. The number of timed iterations is ITERS for blocks up to
 * 8 KiB, proportionally fewer above (at least 3), and cut so that they take about SECONDS
 * (option -t), which keeps oversubscribed runs short; the count used is printed.
 *
 * Output (stable; lines starting with '#' are comments): the ROW lines of benchutil.h,
 * three per collective and size, named as in ferry-model's results schema
 * (<coll>.min, <coll>.avg, <coll>.max; reduce_scatter is MPI_Reduce_scatter_block):
 *     # bench/coll: time per collective call (us), min/avg/max over ranks
 *     # library: <first line of MPI_Get_library_version>
 *     # ranks: 4
 *     # bcast 8: 1000 iterations
 *     ROW bcast.min 4 8 <min>
 *     ROW bcast.avg 4 8 <avg>
 *     ROW bcast.max 4 8 <max>
 *     ...
 * These rows cover the eleven collectives of the schema: barrier, bcast, scatter, gather,
 * allgather, alltoall, reduce, allreduce, reduce_scatter, scan, exscan.
 *
 * With -T, the table that bench/coll.sh reads instead, with MPI's names for every call
 * (reduce_scatter_block, and reduce_scatter for MPI_Reduce_scatter) and the v-variants:
 *     # not built: alltoall alltoallv reduce_scatter      (only if some are missing)
 *     # coll                 size      iters  min_us     avg_us     max_us
 *     bcast                  8         1000   <min>      <avg>      <max>
 *     ...
 *
 * Options:
 *     -c LIST     collectives to run, comma-separated, named as in the output (default:
 *                 all that were built; -l lists them); one that was not built is reported
 *                 and skipped
 *     -s LIST     block sizes in bytes, comma-separated, multiples of 4, suffixes K and M
 *                 (default 8,128,1K,8K,64K,256K,1M)
 *     -m MAXSIZE  leave out sizes above MAXSIZE
 *     -i ITERS    timed iterations for blocks up to 8 KiB (default 1000)
 *     -t SECONDS  time budget of one collective and size, iterations and barriers
 *                 included (default 0.25)
 *     -l          list the collectives of this build and exit
 *     -T          print the table instead of ROW lines
 *
 * Plain MPI: builds with any implementation's mpicc. A collective that an implementation
 * lacks is compiled out with -DBENCH_NO_ALLTOALL, -DBENCH_NO_ALLTOALLV or
 * -DBENCH_NO_REDUCE_SCATTER (bench/coll.sh probes each compiler and sets them).
 */
#include "benchutil.h"

#define DEFAULT_SIZES "8,128,1K,8K,64K,256K,1M"
#define MAX_SIZES 64
#define MAX_WARMUP 1000

enum coll {
    C_BCAST, C_SCATTER, C_SCATTERV, C_GATHER, C_GATHERV, C_ALLGATHER, C_ALLGATHERV,
    C_ALLTOALL, C_ALLTOALLV, C_REDUCE, C_ALLREDUCE, C_REDUCE_SCATTER_BLOCK,
    C_REDUCE_SCATTER, C_SCAN, C_EXSCAN, C_BARRIER, C_COUNT
};

static const char *const coll_names[C_COUNT] = {
    "bcast", "scatter", "scatterv", "gather", "gatherv", "allgather", "allgatherv",
    "alltoall", "alltoallv", "reduce", "allreduce", "reduce_scatter_block",
    "reduce_scatter", "scan", "exscan", "barrier",
};

/* The collective's name in ROW lines (ferry-coll's name), or NULL for calls the results
 * schema has no name for (the v-variants and MPI_Reduce_scatter). */
static const char *row_name(enum coll c)
{
    switch (c) {
    case C_SCATTERV: case C_GATHERV: case C_ALLGATHERV: case C_ALLTOALLV:
    case C_REDUCE_SCATTER:
        return NULL;
    case C_REDUCE_SCATTER_BLOCK:
        return "reduce_scatter";
    default:
        return coll_names[c];
    }
}

/* The collective's name in this output mode (-T or ROW lines), or NULL if it has none. */
static const char *name_in(int table, enum coll c)
{
    return table ? coll_names[c] : row_name(c);
}

static int coll_built(enum coll c)
{
    switch (c) {
#ifdef BENCH_NO_ALLTOALL
    case C_ALLTOALL: return 0;
#endif
#ifdef BENCH_NO_ALLTOALLV
    case C_ALLTOALLV: return 0;
#endif
#ifdef BENCH_NO_REDUCE_SCATTER
    case C_REDUCE_SCATTER: return 0;
#endif
    default: return 1;
    }
}

/* Buffers of one run, sized for the largest block. */
struct bufs {
    int rank, size;
    long block;        /* bytes of the current block */
    unsigned char *send, *recv;
    int *counts, *displs; /* v-variants: `block` per rank, packed (bytes or MPI_INTs) */
};

static void set_counts(struct bufs *b, int elem)
{
    for (int i = 0; i < b->size; i++) {
        b->counts[i] = (int)(b->block / elem);
        b->displs[i] = i * b->counts[i];
    }
}

/* One call of collective c on the current block size. */
static void call(enum coll c, struct bufs *b)
{
    int n = (int)b->block, ni = (int)(b->block / 4);
    MPI_Comm w = MPI_COMM_WORLD;
    switch (c) {
    case C_BCAST: MPI_Bcast(b->recv, n, MPI_BYTE, 0, w); break;
    case C_SCATTER: MPI_Scatter(b->send, n, MPI_BYTE, b->recv, n, MPI_BYTE, 0, w); break;
    case C_SCATTERV:
        MPI_Scatterv(b->send, b->counts, b->displs, MPI_BYTE, b->recv, n, MPI_BYTE, 0, w);
        break;
    case C_GATHER: MPI_Gather(b->send, n, MPI_BYTE, b->recv, n, MPI_BYTE, 0, w); break;
    case C_GATHERV:
        MPI_Gatherv(b->send, n, MPI_BYTE, b->recv, b->counts, b->displs, MPI_BYTE, 0, w);
        break;
    case C_ALLGATHER: MPI_Allgather(b->send, n, MPI_BYTE, b->recv, n, MPI_BYTE, w); break;
    case C_ALLGATHERV:
        MPI_Allgatherv(b->send, n, MPI_BYTE, b->recv, b->counts, b->displs, MPI_BYTE, w);
        break;
#ifndef BENCH_NO_ALLTOALL
    case C_ALLTOALL: MPI_Alltoall(b->send, n, MPI_BYTE, b->recv, n, MPI_BYTE, w); break;
#endif
#ifndef BENCH_NO_ALLTOALLV
    case C_ALLTOALLV:
        MPI_Alltoallv(b->send, b->counts, b->displs, MPI_BYTE, b->recv, b->counts, b->displs,
                      MPI_BYTE, w);
        break;
#endif
    case C_REDUCE: MPI_Reduce(b->send, b->recv, ni, MPI_INT, MPI_SUM, 0, w); break;
    case C_ALLREDUCE: MPI_Allreduce(b->send, b->recv, ni, MPI_INT, MPI_SUM, w); break;
    case C_REDUCE_SCATTER_BLOCK:
        MPI_Reduce_scatter_block(b->send, b->recv, ni, MPI_INT, MPI_SUM, w);
        break;
#ifndef BENCH_NO_REDUCE_SCATTER
    case C_REDUCE_SCATTER:
        MPI_Reduce_scatter(b->send, b->recv, b->counts, MPI_INT, MPI_SUM, w);
        break;
#endif
    case C_SCAN: MPI_Scan(b->send, b->recv, ni, MPI_INT, MPI_SUM, w); break;
    case C_EXSCAN: MPI_Exscan(b->send, b->recv, ni, MPI_INT, MPI_SUM, w); break;
    case C_BARRIER: MPI_Barrier(w); break;
    default: break; /* compiled out: never selected */
    }
}

/* Byte k of the block that rank `from` contributes for rank `to`. */
static unsigned char pattern(int from, int to, long k)
{
    return (unsigned char)(from * 31 + to * 17 + k * 7 + 1);
}

static int elem_of(enum coll c)
{
    switch (c) {
    case C_REDUCE: case C_ALLREDUCE: case C_REDUCE_SCATTER_BLOCK: case C_REDUCE_SCATTER:
    case C_SCAN: case C_EXSCAN:
        return 4;
    default:
        return 1;
    }
}

/* Fills the buffers for a checked call of c, runs it, and returns the number of wrong
 * bytes or elements on this rank. */
static long checked_call(enum coll c, struct bufs *b)
{
    int p = b->size, r = b->rank;
    long n = b->block, ni = b->block / 4, bad = 0;
    int *si = (int *)b->send, *ri = (int *)b->recv;
    memset(b->recv, 0xee, (size_t)(n * p));
    set_counts(b, elem_of(c));
    switch (c) {
    case C_BCAST:
        for (long k = 0; k < n; k++)
            b->recv[k] = r == 0 ? pattern(0, 0, k) : 0;
        break;
    case C_SCATTER: case C_SCATTERV: case C_ALLTOALL: case C_ALLTOALLV:
        for (int to = 0; to < p; to++)
            for (long k = 0; k < n; k++)
                b->send[to * n + k] = pattern(r, to, k);
        break;
    case C_GATHER: case C_GATHERV: case C_ALLGATHER: case C_ALLGATHERV:
        for (long k = 0; k < n; k++)
            b->send[k] = pattern(r, 0, k);
        break;
    case C_REDUCE_SCATTER_BLOCK: case C_REDUCE_SCATTER:
        for (long k = 0; k < ni * p; k++)
            si[k] = r + (int)k;
        break;
    default:
        for (long k = 0; k < ni; k++)
            si[k] = r + (int)k;
        break;
    }
    call(c, b);
    switch (c) {
    case C_BCAST:
        for (long k = 0; k < n; k++)
            bad += b->recv[k] != pattern(0, 0, k);
        break;
    case C_SCATTER: case C_SCATTERV:
        for (long k = 0; k < n; k++)
            bad += b->recv[k] != pattern(0, r, k);
        break;
    case C_GATHER: case C_GATHERV:
        if (r == 0)
            for (int from = 0; from < p; from++)
                for (long k = 0; k < n; k++)
                    bad += b->recv[from * n + k] != pattern(from, 0, k);
        break;
    case C_ALLGATHER: case C_ALLGATHERV:
        for (int from = 0; from < p; from++)
            for (long k = 0; k < n; k++)
                bad += b->recv[from * n + k] != pattern(from, 0, k);
        break;
    case C_ALLTOALL: case C_ALLTOALLV:
        for (int from = 0; from < p; from++)
            for (long k = 0; k < n; k++)
                bad += b->recv[from * n + k] != pattern(from, r, k);
        break;
    case C_REDUCE: case C_ALLREDUCE:
        if (c == C_ALLREDUCE || r == 0)
            for (long k = 0; k < ni; k++)
                bad += ri[k] != p * (p - 1) / 2 + p * (int)k;
        break;
    case C_REDUCE_SCATTER_BLOCK: case C_REDUCE_SCATTER:
        for (long k = 0; k < ni; k++)
            bad += ri[k] != p * (p - 1) / 2 + p * (int)(r * ni + k);
        break;
    case C_SCAN:
        for (long k = 0; k < ni; k++)
            bad += ri[k] != r * (r + 1) / 2 + (r + 1) * (int)k;
        break;
    case C_EXSCAN:
        if (r > 0)
            for (long k = 0; k < ni; k++)
                bad += ri[k] != r * (r - 1) / 2 + r * (int)k;
        break;
    default:
        break;
    }
    return bad;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Times collective c at the current block size and prints its rows on rank 0: one line
 * of the table with -T (`table`), else three ROW lines. */
static void measure(enum coll c, struct bufs *b, long iters, double budget, int table)
{
    long bad = checked_call(c, b), total_bad;
    MPI_Allreduce(&bad, &total_bad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (total_bad != 0) {
        if (b->rank == 0)
            fprintf(stderr, "coll: %s with %ld-byte blocks gave %ld wrong values\n",
                    coll_names[c], b->block, total_bad);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }

    /* Warm-up, which also estimates the time of one iteration: at least 3 calls, then
     * more until a tenth of the budget or a tenth of the iteration count is spent. Rank 0
     * times each call and the broadcast that tells the others whether to go on, and takes
     * the median, so that one slow first call does not cut the count. */
    long n = bench_iterations(b->block, iters, 8192, 3);
    long max_warmup = bench_warmup(n) < 3 ? 3 : bench_warmup(n);
    double times[MAX_WARMUP];
    long warm = 0;
    int more = 1;
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    while (more) {
        double s = MPI_Wtime();
        call(c, b);
        if (b->rank == 0) {
            more = warm + 1 < 3 ||
                   (warm + 1 < max_warmup && warm + 1 < MAX_WARMUP &&
                    MPI_Wtime() - start < budget / 10.0);
        }
        MPI_Bcast(&more, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (b->rank == 0)
            times[warm] = MPI_Wtime() - s;
        warm++;
    }
    if (b->rank == 0) {
        qsort(times, (size_t)warm, sizeof(double), cmp_double);
        double per_iter = times[warm / 2];
        if (per_iter > 0.0 && (double)n * per_iter > 0.9 * budget) {
            n = (long)(0.9 * budget / per_iter);
            if (n < 3)
                n = 3;
        }
    }
    MPI_Bcast(&n, 1, MPI_LONG, 0, MPI_COMM_WORLD);

    double busy = 0.0;
    MPI_Barrier(MPI_COMM_WORLD);
    for (long k = 0; k < n; k++) {
        double s = MPI_Wtime();
        call(c, b);
        busy += MPI_Wtime() - s;
        MPI_Barrier(MPI_COMM_WORLD);
    }
    double mine = busy * 1e6 / (double)n, lo, hi, sum;
    MPI_Reduce(&mine, &lo, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    MPI_Reduce(&mine, &hi, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    long size = c == C_BARRIER ? 0L : b->block;
    if (table && b->rank == 0) {
        printf("%-22s %-9ld %-6ld %-10.2f %-10.2f %.2f\n", coll_names[c], size, n, lo,
               sum / b->size, hi);
        fflush(stdout);
    } else if (b->rank == 0) {
        const char *name = row_name(c);
        char what[64];
        printf("# %s %ld: %ld iterations\n", name, size, n);
        snprintf(what, sizeof what, "%s.min", name);
        bench_print_row(b->rank, what, size, lo);
        snprintf(what, sizeof what, "%s.avg", name);
        bench_print_row(b->rank, what, size, sum / b->size);
        snprintf(what, sizeof what, "%s.max", name);
        bench_print_row(b->rank, what, size, hi);
    }
}

__attribute__((noreturn))
static void usage_and_exit(int rank, const char *why)
{
    if (rank == 0) {
        if (why)
            fprintf(stderr, "coll: %s\n", why);
        fprintf(stderr, "usage: coll [-c COLLS] [-s SIZES] [-m MAXSIZE] [-i ITERS] "
                        "[-t SECONDS] [-l] [-T]\n");
    }
    MPI_Finalize();
    exit(2);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    const char *colls = NULL, *sizes_arg = DEFAULT_SIZES;
    long max_size = 1L << 30, iters = 1000;
    double budget = 0.25;
    int list_only = 0, table = 0;
    for (int a = 1; a < argc; a++) {
        const char *o = argv[a];
        int has_value = a + 1 < argc;
        if (strcmp(o, "-l") == 0)
            list_only = 1;
        else if (strcmp(o, "-T") == 0)
            table = 1;
        else if (strcmp(o, "-c") == 0 && has_value)
            colls = argv[++a];
        else if (strcmp(o, "-s") == 0 && has_value)
            sizes_arg = argv[++a];
        else if (strcmp(o, "-m") == 0 && has_value)
            max_size = bench_parse_size(argv[++a]);
        else if (strcmp(o, "-i") == 0 && has_value)
            iters = bench_parse_size(argv[++a]);
        else if (strcmp(o, "-t") == 0 && has_value)
            budget = atof(argv[++a]);
        else
            usage_and_exit(rank, NULL);
    }
    if (max_size < 0 || iters <= 0 || !(budget > 0.0))
        usage_and_exit(rank, "-m, -i and -t need positive values");

    if (list_only) {
        if (rank == 0)
            for (int c = 0; c < C_COUNT; c++)
                if (coll_built((enum coll)c) && name_in(table, (enum coll)c))
                    printf("%s\n", name_in(table, (enum coll)c));
        MPI_Finalize();
        return 0;
    }

    /* Sizes. */
    long sizes[MAX_SIZES];
    int nsizes = 0;
    char *sizes_copy = strdup(sizes_arg);
    for (char *tok = strtok(sizes_copy, ","); tok; tok = strtok(NULL, ",")) {
        long v = bench_parse_size(tok);
        if (v < 4 || v % 4 != 0 || v > (1L << 28) || nsizes == MAX_SIZES)
            usage_and_exit(rank, "sizes are multiples of 4 from 4 bytes to 256 MiB");
        if (v <= max_size)
            sizes[nsizes++] = v;
    }
    free(sizes_copy);

    /* Collectives. */
    int chosen[C_COUNT] = { 0 }, not_built[C_COUNT] = { 0 };
    if (!colls) {
        for (int c = 0; c < C_COUNT; c++)
            chosen[c] = coll_built((enum coll)c) && name_in(table, (enum coll)c);
    } else {
        char *copy = strdup(colls);
        for (char *tok = strtok(copy, ","); tok; tok = strtok(NULL, ",")) {
            int found = -1;
            for (int c = 0; c < C_COUNT; c++)
                if (name_in(table, (enum coll)c) && strcmp(tok, name_in(table, (enum coll)c)) == 0)
                    found = c;
            if (found < 0) {
                if (rank == 0)
                    fprintf(stderr, "coll: unknown collective '%s'%s\n", tok,
                            table ? "" : " (the v-variants need -T)");
                usage_and_exit(rank, NULL);
            }
            if (coll_built((enum coll)found))
                chosen[found] = 1;
            else
                not_built[found] = 1;
        }
        free(copy);
    }

    long biggest = 4;
    for (int s = 0; s < nsizes; s++)
        if (sizes[s] > biggest)
            biggest = sizes[s];
    struct bufs b = { rank, size, 0, NULL, NULL, NULL, NULL };
    size_t all = (size_t)biggest * (size_t)size;
    b.send = malloc(all);
    b.recv = malloc(all);
    b.counts = malloc(sizeof(int) * (size_t)size);
    b.displs = malloc(sizeof(int) * (size_t)size);
    if (!b.send || !b.recv || !b.counts || !b.displs) {
        fprintf(stderr, "coll: rank %d cannot allocate 2 x %zu bytes\n", rank, all);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(b.send, 1, all);
    memset(b.recv, 0, all);

    if (rank == 0) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(lib, &len);
        lib[strcspn(lib, "\n")] = '\0';
        printf("# bench/coll: time per collective call (us), min/avg/max over ranks\n");
        printf("# library: %s\n", lib);
        printf("# ranks: %d\n", size);
        int any = 0;
        for (int c = 0; c < C_COUNT; c++) {
            if (coll_built((enum coll)c) || !name_in(table, (enum coll)c))
                continue;
            if (!any++)
                printf("# not built:");
            printf(" %s", coll_names[c]);
        }
        if (any)
            printf("\n");
        for (int c = 0; c < C_COUNT; c++)
            if (not_built[c])
                printf("# skipped, not in this build: %s\n", name_in(table, (enum coll)c));
        if (table)
            printf("# %-20s %-9s %-6s %-10s %-10s %s\n", "coll", "size", "iters", "min_us",
                   "avg_us", "max_us");
        else
            printf("# ROW benchmark ranks size us\n");
        fflush(stdout);
    }

    for (int c = 0; c < C_COUNT; c++) {
        if (!chosen[c])
            continue;
        for (int s = 0; s < nsizes; s++) {
            b.block = sizes[s];
            set_counts(&b, elem_of((enum coll)c));
            measure((enum coll)c, &b, iters, budget, table);
            if (c == C_BARRIER)
                break;
        }
    }

    free(b.send);
    free(b.recv);
    free(b.counts);
    free(b.displs);
    MPI_Finalize();
    return 0;
}
