/* ranks: 1 2 3 4 5 7 8 */
/*
 * MPI_MAXLOC and MPI_MINLOC on every value-and-index pair type: MPI_2INT,
 * MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT, MPI_SHORT_INT and
 * MPI_LONG_DOUBLE_INT, through MPI_Allreduce (plain, in place and
 * non-blocking), MPI_Reduce at the last rank, MPI_Scan, MPI_Exscan,
 * MPI_Reduce_scatter_block and MPI_Reduce_scatter. Values repeat across ranks,
 * so ties must go to the smaller index; indices are not rank order (they
 * decrease with the rank) so that order cannot pass for the rule. The padding
 * of each pair element is never written.
 */
#include <stddef.h>
#include <string.h>

#define TEST_NAME "coll_maxloc"
#include "testutil.h"

enum { COUNT = 5 };
static int n, r;

/* Rank q's element k: a value with ties across ranks and an index that falls with q. */
static int vraw(int q, int k) { return (q * 7 + k * 3) % 4 - 1; }
static int idx(int q, int k) { return (n - q) * 10 + k; }

/* The winner over ranks lo..hi-1 of element k: its rank. */
static int winner(int lo, int hi, int k, int max)
{
    int best = lo;
    for (int q = lo + 1; q < hi; q++) {
        int better = max ? vraw(q, k) > vraw(best, k) : vraw(q, k) < vraw(best, k);
        int tie = vraw(q, k) == vraw(best, k) && idx(q, k) < idx(best, k);
        if (better || tie)
            best = q;
    }
    return best;
}

enum call { ALLREDUCE, ALLREDUCE_IN_PLACE, IALLREDUCE, REDUCE, SCAN, EXSCAN, RSB, RS, NCALLS };
static const char *const names[NCALLS] = { "Allreduce", "Allreduce(MPI_IN_PLACE)", "Iallreduce", "Reduce", "Scan", "Exscan", "Reduce_scatter_block", "Reduce_scatter" };

/* One pair type: runs every call with MAXLOC and MINLOC and checks each element. The
 * element struct has padding after the index for most types; it is filled with a byte
 * pattern first and must keep it. */
#define PAIR_TEST(fname, ctype, mpitype)                                                      \
    static void fname(void)                                                                   \
    {                                                                                         \
        typedef struct { ctype v; int i; } pair;                                              \
        pair s[COUNT * 64], d[COUNT * 64];                                                    \
        for (int op = 0; op < 2; op++)                                                        \
            for (enum call c = ALLREDUCE; c < NCALLS; c++) {                                  \
                int count = c == RSB ? 1 : COUNT, counts[64], first = 0, total = 0;           \
                for (int q = 0; q < n; q++) {                                                 \
                    counts[q] = c == RS ? q % 3 : c == RSB ? 1 : COUNT;                       \
                    if (q < r)                                                                \
                        first += counts[q];                                                   \
                    total += counts[q];                                                       \
                }                                                                             \
                if (c != RSB && c != RS)                                                      \
                    total = COUNT, first = 0;                                                 \
                memset(s, 0xa5, sizeof s);                                                    \
                memset(d, 0xa5, sizeof d);                                                    \
                for (int k = 0; k < total; k++) {                                             \
                    s[k].v = (ctype)vraw(r, k);                                               \
                    s[k].i = idx(r, k);                                                       \
                }                                                                             \
                if (c == ALLREDUCE_IN_PLACE)                                                  \
                    memcpy(d, s, sizeof s);                                                   \
                MPI_Op o = op ? MPI_MINLOC : MPI_MAXLOC;                                      \
                MPI_Request q;                                                                \
                switch (c) {                                                                  \
                case ALLREDUCE: CALL(MPI_Allreduce(s, d, count, mpitype, o, MPI_COMM_WORLD)); break; \
                case ALLREDUCE_IN_PLACE: CALL(MPI_Allreduce(MPI_IN_PLACE, d, count, mpitype, o, MPI_COMM_WORLD)); break; \
                case IALLREDUCE:                                                              \
                    CALL(MPI_Iallreduce(s, d, count, mpitype, o, MPI_COMM_WORLD, &q));        \
                    CALL(MPI_Wait(&q, MPI_STATUS_IGNORE));                                    \
                    break;                                                                    \
                case REDUCE: CALL(MPI_Reduce(s, d, count, mpitype, o, n - 1, MPI_COMM_WORLD)); break; \
                case SCAN: CALL(MPI_Scan(s, d, count, mpitype, o, MPI_COMM_WORLD)); break;    \
                case EXSCAN: CALL(MPI_Exscan(s, d, count, mpitype, o, MPI_COMM_WORLD)); break; \
                case RSB: CALL(MPI_Reduce_scatter_block(s, d, 1, mpitype, o, MPI_COMM_WORLD)); break; \
                case RS: CALL(MPI_Reduce_scatter(s, d, counts, mpitype, o, MPI_COMM_WORLD)); break; \
                default: break;                                                               \
                }                                                                             \
                if ((c == REDUCE && r != n - 1) || (c == EXSCAN && r == 0))                   \
                    continue;                                                                 \
                int m = c == RS ? counts[r] : c == RSB ? 1 : COUNT;                           \
                int hi = c == SCAN ? r + 1 : c == EXSCAN ? r : n;                             \
                for (int k = 0; k < m; k++) {                                                 \
                    int w = winner(0, hi, first + k, !op);                                    \
                    CHECK(d[k].v == (ctype)vraw(w, first + k) && d[k].i == idx(w, first + k), \
                          "%s %s of %s: element %d is (%g, %d), expected (%d, %d)",           \
                          op ? "MPI_MINLOC" : "MPI_MAXLOC", names[c], #mpitype, k,            \
                          (double)d[k].v, d[k].i, vraw(w, first + k), idx(w, first + k));     \
                    size_t pad = sizeof(pair) - offsetof(pair, i) - sizeof(int);              \
                    const unsigned char *p = (const unsigned char *)&d[k].i + sizeof(int);    \
                    for (size_t b = 0; b < pad; b++)                                          \
                        CHECK(p[b] == 0xa5, "%s of %s wrote into the padding", names[c], #mpitype); \
                }                                                                             \
                if (c != ALLREDUCE_IN_PLACE) {                                                \
                    const unsigned char *p = (const unsigned char *)&d[m];                    \
                    for (size_t b = 0; b < sizeof(pair); b++)                                 \
                        CHECK(p[b] == 0xa5, "%s of %s wrote past its result", names[c], #mpitype); \
                }                                                                             \
            }                                                                                 \
    }

PAIR_TEST(two_int, int, MPI_2INT)
PAIR_TEST(float_int, float, MPI_FLOAT_INT)
PAIR_TEST(double_int, double, MPI_DOUBLE_INT)
PAIR_TEST(long_int, long, MPI_LONG_INT)
PAIR_TEST(short_int, short, MPI_SHORT_INT)
PAIR_TEST(long_double_int, long double, MPI_LONG_DOUBLE_INT)

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    CHECK(np <= 64, "at most 64 ranks");
    n = np;
    r = me;
    two_int();
    float_int();
    double_int();
    long_int();
    short_int();
    long_double_int();
    CALL(MPI_Finalize());
    finalized = 1;
    return 0;
}
