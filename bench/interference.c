/*
 * interference.c — rooted collectives while two ranks are busy with a long transfer
 * (the interference experiment of status-based collectives, SEEDS.md S1, on a real run).
 *
 * Every trial: all ranks leave a barrier; rank 2 sends one long message (or several, -n)
 * to rank 1 with MPI_Send, and rank 1 receives it with MPI_Recv, so both are busy when
 * root 0 starts the collective; every rank then calls the collective (MPI_Bcast,
 * MPI_Scatter or MPI_Gather of SIZE bytes per rank, MPI_BYTE, root 0). Each rank times
 * from the barrier to the end of its collective call. A trial without the transfer follows
 * each trial with it (the same collective and size), so the cost of the algorithm without
 * interference is measured in the same conditions. Per collective, size and interference, the row gives medians over
 * trials of: the slowest rank (max over all ranks), the slowest rank outside the busy pair
 * (ranks other than 1 and 2: what serving busy ranks last can improve), and the root.
 *
 * Which algorithm runs is the implementation's choice; under Ferry, the environment picks
 * it (FERRY_BCAST_ALGORITHM, FERRY_SCATTER_ALGORITHM, FERRY_GATHER_ALGORITHM; see
 * bench/interference.sh, which compares the status-based and fixed-order ones).
 *
 * Output (stable; lines starting with '#' are comments):
 *     # bench/interference: ...
 *     # library: <first line of MPI_Get_library_version>
 *     # coll   size     busy  trials  max_us      others_us   root_us
 *     bcast    4        yes   20      <median>    <median>    <median>
 *     bcast    4        no    20      <median>    <median>    <median>
 *     ...
 *
 * Options:
 *     -c LIST     collectives: bcast,scatter,gather (default: all three)
 *     -s LIST     sizes in bytes per rank, comma-separated, suffixes K and M
 *                 (default 4,16,64,256,1K,4K,16K,64K)
 *     -L BYTES    length of the interfering message (default 16M)
 *     -n COUNT    interfering messages per trial (default 1)
 *     -T TRIALS   trials per collective, size and interference (default 20)
 *
 * Plain MPI: builds with any implementation's mpicc. Needs at least 4 ranks (8 is the
 * experiment).
 */
#include "benchutil.h"

#define MAX_ITEMS 64
#define BUSY_DST 1
#define BUSY_SRC 2

enum coll { C_BCAST, C_SCATTER, C_GATHER, C_COUNT };
static const char *const names[C_COUNT] = { "bcast", "scatter", "gather" };

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

__attribute__((noreturn))
static void usage_and_exit(int rank, const char *why)
{
    if (rank == 0) {
        if (why)
            fprintf(stderr, "interference: %s\n", why);
        fprintf(stderr, "usage: interference [-c COLLS] [-s SIZES] [-L BYTES] [-n COUNT] "
                        "[-T TRIALS]\n");
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

    const char *colls = "bcast,scatter,gather", *sizes_arg = "4,16,64,256,1K,4K,16K,64K";
    long long_len = 16L << 20, count = 1, trials = 20;
    for (int a = 1; a < argc; a++) {
        const char *o = argv[a];
        if (a + 1 >= argc)
            usage_and_exit(rank, NULL);
        if (strcmp(o, "-c") == 0)
            colls = argv[++a];
        else if (strcmp(o, "-s") == 0)
            sizes_arg = argv[++a];
        else if (strcmp(o, "-L") == 0)
            long_len = bench_parse_size(argv[++a]);
        else if (strcmp(o, "-n") == 0)
            count = bench_parse_size(argv[++a]);
        else if (strcmp(o, "-T") == 0)
            trials = bench_parse_size(argv[++a]);
        else
            usage_and_exit(rank, NULL);
    }
    if (long_len <= 0 || long_len > (1L << 30) || count <= 0 || trials <= 0 || trials > 100000)
        usage_and_exit(rank, "-L, -n and -T need positive values (-L at most 1G)");
    if (size < 4)
        usage_and_exit(rank, "needs at least 4 ranks: root 0, busy ranks 1 and 2, others");

    long sizes[MAX_ITEMS];
    int nsizes = 0;
    char *copy = strdup(sizes_arg);
    for (char *t = strtok(copy, ","); t; t = strtok(NULL, ",")) {
        long v = bench_parse_size(t);
        if (v <= 0 || v > (1L << 26) || nsizes == MAX_ITEMS)
            usage_and_exit(rank, "sizes are from 1 byte to 64 MiB");
        sizes[nsizes++] = v;
    }
    free(copy);
    int chosen[C_COUNT] = { 0 };
    copy = strdup(colls);
    for (char *t = strtok(copy, ","); t; t = strtok(NULL, ",")) {
        int found = -1;
        for (int c = 0; c < C_COUNT; c++)
            if (strcmp(t, names[c]) == 0)
                found = c;
        if (found < 0)
            usage_and_exit(rank, "collectives are bcast, scatter and gather");
        chosen[found] = 1;
    }
    free(copy);

    long biggest = 1;
    for (int s = 0; s < nsizes; s++)
        if (sizes[s] > biggest)
            biggest = sizes[s];
    size_t all = (size_t)biggest * (size_t)size;
    char *send = malloc(all), *recv = malloc(all);
    char *busy_buf = (rank == BUSY_DST || rank == BUSY_SRC) ? malloc((size_t)long_len) : NULL;
    double *mine = malloc(2 * sizeof(double) * (size_t)trials); /* [busy][trial] */
    double *slowest = malloc(sizeof(double) * (size_t)trials);
    double *others = malloc(sizeof(double) * (size_t)trials);
    double *root_t = malloc(sizeof(double) * (size_t)trials);
    double *row = malloc(sizeof(double) * (size_t)size);
    if (!send || !recv || !mine || !slowest || !others || !root_t || !row ||
        ((rank == BUSY_DST || rank == BUSY_SRC) && !busy_buf)) {
        fprintf(stderr, "interference: rank %d cannot allocate its buffers\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(send, 's', all);
    memset(recv, 0, all);
    if (busy_buf)
        memset(busy_buf, 'b', (size_t)long_len);

    if (rank == 0) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(lib, &len);
        lib[strcspn(lib, "\n")] = '\0';
        printf("# bench/interference: %d ranks, root 0; busy: rank %d sends %ld x %ld bytes "
               "to rank %d as the collective starts\n",
               size, BUSY_SRC, count, long_len, BUSY_DST);
        printf("# library: %s\n", lib);
        printf("# times from the barrier to the end of the call, medians over trials: "
               "max_us slowest rank, others_us slowest rank but %d and %d, root_us rank 0\n",
               BUSY_DST, BUSY_SRC);
        printf("# %-7s %-8s %-5s %-7s %-11s %-11s %s\n", "coll", "size", "busy", "trials",
               "max_us", "others_us", "root_us");
        fflush(stdout);
    }

    for (int c = 0; c < C_COUNT; c++) {
        if (!chosen[c])
            continue;
        for (int s = 0; s < nsizes; s++) {
            int n = (int)sizes[s];
            /* Untimed: connections, first-touch of buffers, the long path once. */
            for (int w = 0; w < 2; w++) {
                if (rank == BUSY_SRC)
                    MPI_Send(busy_buf, (int)long_len, MPI_BYTE, BUSY_DST, 7, MPI_COMM_WORLD);
                else if (rank == BUSY_DST)
                    MPI_Recv(busy_buf, (int)long_len, MPI_BYTE, BUSY_SRC, 7, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE);
                if (c == C_BCAST)
                    MPI_Bcast(recv, n, MPI_BYTE, 0, MPI_COMM_WORLD);
                else if (c == C_SCATTER)
                    MPI_Scatter(send, n, MPI_BYTE, recv, n, MPI_BYTE, 0, MPI_COMM_WORLD);
                else
                    MPI_Gather(send, n, MPI_BYTE, recv, n, MPI_BYTE, 0, MPI_COMM_WORLD);
            }
            /* Trials with and without the transfer alternate, so drift hits both. */
            for (long t = 0; t < trials; t++) {
                for (int busy = 1; busy >= 0; busy--) {
                    MPI_Barrier(MPI_COMM_WORLD);
                    double start = MPI_Wtime();
                    if (busy && rank == BUSY_SRC)
                        for (long k = 0; k < count; k++)
                            MPI_Send(busy_buf, (int)long_len, MPI_BYTE, BUSY_DST, 7,
                                     MPI_COMM_WORLD);
                    else if (busy && rank == BUSY_DST)
                        for (long k = 0; k < count; k++)
                            MPI_Recv(busy_buf, (int)long_len, MPI_BYTE, BUSY_SRC, 7,
                                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    if (c == C_BCAST)
                        MPI_Bcast(recv, n, MPI_BYTE, 0, MPI_COMM_WORLD);
                    else if (c == C_SCATTER)
                        MPI_Scatter(send, n, MPI_BYTE, recv, n, MPI_BYTE, 0, MPI_COMM_WORLD);
                    else
                        MPI_Gather(send, n, MPI_BYTE, recv, n, MPI_BYTE, 0, MPI_COMM_WORLD);
                    mine[busy * trials + t] = (MPI_Wtime() - start) * 1e6;
                }
            }
            /* Every rank's time of every trial to the root, outside the timed part. */
            for (int busy = 1; busy >= 0; busy--) {
                for (long t = 0; t < trials; t++) {
                    MPI_Gather(&mine[busy * trials + t], 1, MPI_DOUBLE, row, 1, MPI_DOUBLE, 0,
                               MPI_COMM_WORLD);
                    if (rank != 0)
                        continue;
                    double hi = 0.0, hi_others = 0.0;
                    for (int r = 0; r < size; r++) {
                        if (row[r] > hi)
                            hi = row[r];
                        if (r != BUSY_DST && r != BUSY_SRC && row[r] > hi_others)
                            hi_others = row[r];
                    }
                    slowest[t] = hi;
                    others[t] = hi_others;
                    root_t[t] = row[0];
                }
                if (rank == 0) {
                    printf("%-9s %-8d %-5s %-7ld %-11.2f %-11.2f %.2f\n", names[c], n,
                           busy ? "yes" : "no", trials, median(slowest, (int)trials),
                           median(others, (int)trials), median(root_t, (int)trials));
                    fflush(stdout);
                }
            }
        }
    }

    free(send);
    free(recv);
    free(busy_buf);
    free(mine);
    free(slowest);
    free(others);
    free(root_t);
    free(row);
    MPI_Finalize();
    return 0;
}
