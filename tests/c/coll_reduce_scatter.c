/* ranks: 1 2 3 4 5 7 8 */
/*
 * MPI_Reduce_scatter and MPI_Ireduce_scatter: rank q gets recvcounts[q]
 * elements of the reduced vector, the concatenation of every rank's share in
 * rank order. Counts that differ per rank with some zero (base 0, 1, 7 and
 * 10001), all zero, plain and with MPI_IN_PLACE (the input is then the whole
 * vector in the receive buffer, the result replaces its start); MPI_SUM on
 * MPI_INT, MPI_MAX on MPI_DOUBLE, MPI_BXOR on MPI_UNSIGNED_CHAR, MPI_PROD on
 * MPI_LONG; MPI_SUM on a vector datatype (3 blocks of 2 ints, stride 4) whose
 * gaps stay untouched (not with MPICH, which takes predefined operations on
 * predefined datatypes only). Nothing is written past the end of a receive buffer.
 * On MPI_COMM_WORLD, on a split of it with reversed keys and on MPI_COMM_SELF.
 */
#include <string.h>

#define TEST_NAME "coll_reduce_scatter"
#include "testutil.h"

#define GUARD 4
#define POISON (-777)

static MPI_Comm comm;
static const char *comm_name;
static int n, r, nb;

static void rs(const void *s, void *d, const int *counts, MPI_Datatype t, MPI_Op op)
{
    if (nb) {
        MPI_Request q;
        CALL(MPI_Ireduce_scatter(s, d, counts, t, op, comm, &q));
        CALL(MPI_Wait(&q, MPI_STATUS_IGNORE));
    } else {
        CALL(MPI_Reduce_scatter(s, d, counts, t, op, comm));
    }
}

/* recvcounts: base + q for ranks q % 3 != 1, none for the others. */
static int counts_of(int base, int *counts, int *first)
{
    int total = 0;
    for (int q = 0; q < n; q++) {
        counts[q] = q % 3 == 1 ? 0 : base + q;
        if (q == r)
            *first = total;
        total += counts[q];
    }
    return total;
}

static int ival(int q, int k) { return q * 1009 + k % 1000 - 300; }

static void ints(int base, int in_place)
{
    int counts[64], first = 0;
    int total = counts_of(base, counts, &first), mine = counts[r];
    int *s = xmalloc((size_t)(total + 1) * sizeof(int));
    int *d = xmalloc((size_t)(total + GUARD) * sizeof(int));
    for (int k = 0; k < total; k++)
        s[k] = ival(r, k);
    for (int k = 0; k < total + GUARD; k++)
        d[k] = in_place && k < total ? s[k] : POISON;
    rs(in_place ? MPI_IN_PLACE : s, d, counts, MPI_INT, MPI_SUM);
    for (int k = 0; k < mine; k++) {
        int want = 0;
        for (int q = 0; q < n; q++)
            want += ival(q, first + k);
        CHECK(d[k] == want, "%sreduce_scatter%s of ints (base %d), %s (rank %d of %d): int %d is "
              "%d, expected %d", nb ? "I" : "", in_place ? " in place" : "", base, comm_name, r, n,
              k, d[k], want);
    }
    for (int k = in_place ? total : mine; k < total + GUARD; k++)
        CHECK(d[k] == POISON, "%sreduce_scatter wrote int %d past the result", nb ? "I" : "", k);
    free(s);
    free(d);
}

static void others(int base)
{
    int counts[64], first = 0;
    int total = counts_of(base, counts, &first), mine = counts[r];
    double *sd = xmalloc((size_t)(total + 1) * sizeof(double)), *dd = xmalloc((size_t)(mine + 1) * sizeof(double));
    unsigned char *sc = xmalloc((size_t)total + 1), *dc = xmalloc((size_t)mine + 1);
    long *sl = xmalloc((size_t)(total + 1) * sizeof(long)), *dl = xmalloc((size_t)(mine + 1) * sizeof(long));
    for (int k = 0; k < total; k++) {
        sd[k] = (double)((r * 7 + k) % 11) - 5.5;
        sc[k] = (unsigned char)(r * 37 + k);
        sl[k] = (k + r) % 3 == 0 ? -1 : 1;
    }
    dd[mine] = -1.0;
    dc[mine] = 0x5a;
    dl[mine] = 99;
    rs(sd, dd, counts, MPI_DOUBLE, MPI_MAX);
    rs(sc, dc, counts, MPI_UNSIGNED_CHAR, MPI_BXOR);
    rs(sl, dl, counts, MPI_LONG, MPI_PROD);
    for (int k = 0; k < mine; k++) {
        int at = first + k;
        double mx = -100;
        unsigned char x = 0;
        long p = 1;
        for (int q = 0; q < n; q++) {
            double v = (double)((q * 7 + at) % 11) - 5.5;
            mx = v > mx ? v : mx;
            x ^= (unsigned char)(q * 37 + at);
            p *= (at + q) % 3 == 0 ? -1 : 1;
        }
        CHECK(dd[k] == mx, "reduce_scatter MPI_MAX of doubles, %s: element %d is %g, expected %g", comm_name, k, dd[k], mx);
        CHECK(dc[k] == x, "reduce_scatter MPI_BXOR of bytes, %s: element %d is %d, expected %d", comm_name, k, dc[k], x);
        CHECK(dl[k] == p, "reduce_scatter MPI_PROD of longs, %s: element %d is %ld, expected %ld", comm_name, k, dl[k], p);
    }
    CHECK(dd[mine] == -1.0 && dc[mine] == 0x5a && dl[mine] == 99, "reduce_scatter wrote past the result");
    free(sd);
    free(dd);
    free(sc);
    free(dc);
    free(sl);
    free(dl);
}

/* Vectors: 6 ints of an extent of 10 (3 blocks of 2, stride 4). */
enum { VEXT = 10 };
static MPI_Datatype vec;
static int in_vec(int k) { return k % VEXT % 4 < 2; }

static void vectors(int base, int in_place)
{
#ifdef MPICH_DEVIATIONS
    /* MPICH 4.0 applies predefined operations to predefined datatypes only. */
    if (base >= 0)
        return;
#endif
    int counts[64], first = 0;
    int total = counts_of(base, counts, &first), mine = counts[r];
    int *s = xmalloc((size_t)(total * VEXT + 1) * sizeof(int));
    int *d = xmalloc((size_t)(total * VEXT + GUARD) * sizeof(int));
    for (int k = 0; k < total * VEXT; k++)
        s[k] = in_vec(k) ? ival(r, k) : POISON;
    for (int k = 0; k < total * VEXT + GUARD; k++)
        d[k] = in_place && k < total * VEXT ? s[k] : POISON;
    rs(in_place ? MPI_IN_PLACE : s, d, counts, vec, MPI_SUM);
    for (int k = 0; k < mine * VEXT; k++) {
        int want = POISON;
        if (in_vec(k)) {
            want = 0;
            for (int q = 0; q < n; q++)
                want += ival(q, first * VEXT + k);
        }
        CHECK(d[k] == want, "%sreduce_scatter%s of vectors (base %d), %s: int %d is %d, expected %d",
              nb ? "I" : "", in_place ? " in place" : "", base, comm_name, k, d[k], want);
    }
    int from = in_place ? total * VEXT : mine * VEXT;
    for (int k = from; k < total * VEXT + GUARD; k++)
        CHECK(d[k] == POISON, "reduce_scatter of vectors wrote int %d past the result", k);
    free(s);
    free(d);
}

static void run_on(MPI_Comm c, const char *name)
{
    comm = c;
    comm_name = name;
    CALL(MPI_Comm_size(comm, &n));
    CALL(MPI_Comm_rank(comm, &r));
    static const int bases[] = { 0, 1, 7, 10001 };
    for (nb = 0; nb < 2; nb++) {
        for (int j = 0; j < 4; j++)
            for (int in_place = 0; in_place < 2; in_place++)
                ints(bases[j], in_place);
        /* Nothing at all for anyone. */
        int zeros[64] = { 0 }, x = 5;
        rs(&x, &x, zeros, MPI_INT, MPI_SUM);
        CHECK(x == 5, "reduce_scatter of nothing changed the buffer");
        others(7);
        vectors(3, 0);
        vectors(3, 1);
    }
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    CHECK(np <= 64, "at most 64 ranks");
    CALL(MPI_Type_vector(3, 2, 4, MPI_INT, &vec));
    CALL(MPI_Type_commit(&vec));
    run_on(MPI_COMM_WORLD, "MPI_COMM_WORLD");
    MPI_Comm rev;
    CALL(MPI_Comm_split(MPI_COMM_WORLD, 0, np - me, &rev));
    run_on(rev, "reversed split of MPI_COMM_WORLD");
    CALL(MPI_Comm_free(&rev));
    run_on(MPI_COMM_SELF, "MPI_COMM_SELF");
    CALL(MPI_Type_free(&vec));
    CALL(MPI_Finalize());
    finalized = 1;
    return 0;
}
