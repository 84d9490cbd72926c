/* ranks: 1 2 3 4 5 6 7 8 */
/* algorithms: bcast scatter gather allgather alltoall reduce allreduce reduce_scatter scan exscan barrier */
/*
 * Every collective once over, small and quick, so that the runner can repeat it with each
 * registered algorithm forced through FERRY_<COLL>_ALGORITHM (the `algorithms:` line):
 * Bcast, Scatter(v), Gather(v), Allgather(v), Alltoall(v), Reduce, Allreduce,
 * Reduce_scatter(_block), Scan, Exscan and Barrier, blocking and non-blocking, roots 0, 1
 * and size-1, counts 0, 1 and 1000 ints (33 chars for bcast), MPI_IN_PLACE where MPI
 * allows it, v-variants with empty blocks and gaps that must stay untouched, MPI_SUM, and
 * a non-commutative user operation (2x2 matrix product) that must come out in rank order
 * whatever algorithm is forced (an unordered one is skipped for it). Barrier: no rank
 * leaves before rank 0 has entered (a message sent after leaving must not reach rank 0
 * before it enters).
 */
#include <string.h>

#define TEST_NAME "coll_algorithms"
#include "testutil.h"

#define POISON (-777)
#define MAXP 64

static int n, r;
static const MPI_Comm comm = MPI_COMM_WORLD;
static MPI_Datatype mat;
static MPI_Op matmul;

static int val(int q, int k) { return q * 10007 + k * 3 + 1; }

static int *filled(int len, int v)
{
    int *p = xmalloc((size_t)len * sizeof(int));
    for (int k = 0; k < len; k++)
        p[k] = v;
    return p;
}

/* Blocking when `nb` is 0, else the non-blocking twin completed by MPI_Wait. */
static void done(int nb, MPI_Request *q)
{
    if (nb)
        CALL(MPI_Wait(q, MPI_STATUS_IGNORE));
}

static void bcast(int root, int count, int nb)
{
    int *b = filled(count + 2, POISON);
    if (r == root)
        for (int k = 0; k < count; k++)
            b[k] = val(root, k);
    MPI_Request q;
    if (nb)
        CALL(MPI_Ibcast(b, count, MPI_INT, root, comm, &q));
    else
        CALL(MPI_Bcast(b, count, MPI_INT, root, comm));
    done(nb, &q);
    for (int k = 0; k < count + 2; k++)
        CHECK(b[k] == (k < count ? val(root, k) : POISON), "bcast root %d count %d: int %d is %d", root, count, k, b[k]);
    char c[33];
    for (int k = 0; k < 33; k++)
        c[k] = r == root ? (char)('a' + (k + root) % 26) : '?';
    CALL(MPI_Bcast(c, 33, MPI_CHAR, root, comm));
    for (int k = 0; k < 33; k++)
        CHECK(c[k] == (char)('a' + (k + root) % 26), "bcast of 33 chars, root %d: char %d", root, k);
    free(b);
}

static void scatter_gather(int root, int count, int in_place, int nb)
{
    int total = n * count;
    int *all = filled(total + 2, POISON), *mine = filled(count + 2, POISON);
    MPI_Request q;
    /* Scatter from the root's `all` to everyone's `mine` (root in place: keeps its block). */
    if (r == root)
        for (int k = 0; k < total; k++)
            all[k] = val(k / count, k % count);
    void *rb = r == root && in_place ? MPI_IN_PLACE : (void *)mine;
    if (nb)
        CALL(MPI_Iscatter(all, count, MPI_INT, rb, count, MPI_INT, root, comm, &q));
    else
        CALL(MPI_Scatter(all, count, MPI_INT, rb, count, MPI_INT, root, comm));
    done(nb, &q);
    if (!(r == root && in_place))
        for (int k = 0; k < count + 2; k++)
            CHECK(mine[k] == (k < count ? val(r, k) : POISON), "scatter root %d count %d in_place %d: int %d is %d", root, count, in_place, k, mine[k]);
    /* Gather it back into a poisoned `all` (root in place: own block already there). */
    for (int k = 0; k < count; k++)
        mine[k] = val(r, k) + 1;
    for (int k = 0; k < total + 2; k++)
        all[k] = r == root && in_place && k < total && k / count == r ? val(r, k % count) + 1 : POISON;
    const void *sb = r == root && in_place ? MPI_IN_PLACE : (const void *)mine;
    if (nb)
        CALL(MPI_Igather(sb, count, MPI_INT, all, count, MPI_INT, root, comm, &q));
    else
        CALL(MPI_Gather(sb, count, MPI_INT, all, count, MPI_INT, root, comm));
    done(nb, &q);
    if (r == root)
        for (int k = 0; k < total + 2; k++)
            CHECK(all[k] == (k < total ? val(k / count, k % count) + 1 : POISON), "gather root %d count %d in_place %d: int %d is %d", root, count, in_place, k, all[k]);
    free(all);
    free(mine);
}

/* Irregular layout: rank q has base + q ints (none for q % 3 == 1), blocks in reverse rank
 * order with a gap of 2 after each. Returns the length of the whole buffer. */
static int layout(int base, int *counts, int *displs)
{
    int pos = 1;
#ifdef MPICH_DEVIATIONS
    /* MPICH 4.0 ignores the displacement on a single rank (pmodels/mpich#6374). */
    if (n == 1)
        pos = 0;
#endif
    for (int q = n - 1; q >= 0; q--) {
        counts[q] = q % 3 == 1 ? 0 : base + q;
        displs[q] = pos;
        pos += counts[q] + 2;
    }
    return pos;
}

static void scatterv_gatherv(int root, int base, int nb)
{
    int counts[MAXP], displs[MAXP];
    int len = layout(base, counts, displs);
    int *all = filled(len, POISON), *mine = filled(counts[r] + 1, POISON);
    MPI_Request q;
    for (int p = 0; p < n; p++)
        for (int k = 0; k < counts[p]; k++)
            all[displs[p] + k] = val(p, k);
    if (nb)
        CALL(MPI_Iscatterv(all, counts, displs, MPI_INT, mine, counts[r], MPI_INT, root, comm, &q));
    else
        CALL(MPI_Scatterv(all, counts, displs, MPI_INT, mine, counts[r], MPI_INT, root, comm));
    done(nb, &q);
    for (int k = 0; k <= counts[r]; k++)
        CHECK(mine[k] == (k < counts[r] ? val(r, k) : POISON), "scatterv root %d base %d: int %d is %d", root, base, k, mine[k]);
    int *back = filled(len, POISON);
    if (nb)
        CALL(MPI_Igatherv(mine, counts[r], MPI_INT, back, counts, displs, MPI_INT, root, comm, &q));
    else
        CALL(MPI_Gatherv(mine, counts[r], MPI_INT, back, counts, displs, MPI_INT, root, comm));
    done(nb, &q);
    if (r == root)
        for (int k = 0; k < len; k++)
            CHECK(back[k] == all[k], "gatherv root %d base %d: int %d is %d, expected %d", root, base, k, back[k], all[k]);
    free(all);
    free(mine);
    free(back);
}

static void allgathers(int count, int in_place, int nb)
{
    int total = n * count;
    int *mine = filled(count, 0), *all = filled(total + 2, POISON);
    MPI_Request q;
    for (int k = 0; k < count; k++)
        mine[k] = all[r * count + k] = val(r, k);
    if (!in_place)
        for (int k = 0; k < count; k++)
            all[r * count + k] = POISON;
    const void *sb = in_place ? MPI_IN_PLACE : (const void *)mine;
    if (nb)
        CALL(MPI_Iallgather(sb, count, MPI_INT, all, count, MPI_INT, comm, &q));
    else
        CALL(MPI_Allgather(sb, count, MPI_INT, all, count, MPI_INT, comm));
    done(nb, &q);
    for (int k = 0; k < total + 2; k++)
        CHECK(all[k] == (k < total ? val(k / count, k % count) : POISON), "allgather count %d in_place %d: int %d is %d", count, in_place, k, all[k]);
    int counts[MAXP], displs[MAXP];
    int len = layout(count, counts, displs);
    int *v = filled(len, POISON);
    free(mine);
    mine = filled(counts[r] + 1, 0);
    for (int k = 0; k < counts[r]; k++)
        mine[k] = v[displs[r] + k] = val(r, k);
    if (!in_place)
        for (int k = 0; k < counts[r]; k++)
            v[displs[r] + k] = POISON;
    sb = in_place ? MPI_IN_PLACE : (const void *)mine;
    if (nb)
        CALL(MPI_Iallgatherv(sb, counts[r], MPI_INT, v, counts, displs, MPI_INT, comm, &q));
    else
        CALL(MPI_Allgatherv(sb, counts[r], MPI_INT, v, counts, displs, MPI_INT, comm));
    done(nb, &q);
    for (int p = 0; p < n; p++)
        for (int k = -2; k < counts[p]; k++) {
            int at = displs[p] + k;
            if (at >= 0)
                CHECK(v[at] == (k >= 0 ? val(p, k) : POISON), "allgatherv base %d in_place %d: int %d is %d", count, in_place, at, v[at]);
        }
    free(mine);
    free(all);
    free(v);
}

/* Rank i's k-th int for rank j. */
static int a2a(int i, int j, int k) { return i * 1000003 + j * 1009 + k; }

static void alltoalls(int count, int in_place, int nb)
{
    int total = n * count;
    int *s = filled(total, 0), *d = filled(total + 2, POISON);
    MPI_Request q;
    for (int k = 0; k < total; k++)
        s[k] = a2a(r, k / count, k % count);
    if (in_place)
        memcpy(d, s, (size_t)total * sizeof(int));
    const void *sb = in_place ? MPI_IN_PLACE : (const void *)s;
    if (nb)
        CALL(MPI_Ialltoall(sb, count, MPI_INT, d, count, MPI_INT, comm, &q));
    else
        CALL(MPI_Alltoall(sb, count, MPI_INT, d, count, MPI_INT, comm));
    done(nb, &q);
    for (int k = 0; k < total + 2; k++)
        CHECK(d[k] == (k < total ? a2a(k / count, r, k % count) : POISON), "alltoall count %d in_place %d: int %d is %d", count, in_place, k, d[k]);
    /* Alltoallv: i sends (i + j) % 3 * count ints to j (symmetric, as in place needs),
     * blocks in reverse order with gaps of one on both sides. */
    int sc[MAXP], sd[MAXP], rc[MAXP], rd[MAXP], spos = 0, rpos = 0;
    for (int j = n - 1; j >= 0; j--) {
        sc[j] = (r + j) % 3 * count;
        rc[j] = (j + r) % 3 * count;
        sd[j] = spos;
        rd[j] = rpos;
        spos += sc[j] + 1;
        rpos += rc[j] + 1;
    }
    int *vs = filled(spos, POISON), *vd = filled(rpos, POISON);
    for (int j = 0; j < n; j++)
        for (int k = 0; k < sc[j]; k++)
            vs[sd[j] + k] = a2a(r, j, k);
    if (in_place)
        memcpy(vd, vs, (size_t)rpos * sizeof(int));
    sb = in_place ? MPI_IN_PLACE : (const void *)vs;
    if (nb)
        CALL(MPI_Ialltoallv(sb, sc, sd, MPI_INT, vd, rc, rd, MPI_INT, comm, &q));
    else
        CALL(MPI_Alltoallv(sb, sc, sd, MPI_INT, vd, rc, rd, MPI_INT, comm));
    done(nb, &q);
    for (int j = 0; j < n; j++) {
        for (int k = 0; k < rc[j]; k++)
            CHECK(vd[rd[j] + k] == a2a(j, r, k), "alltoallv count %d in_place %d: int %d of block %d is %d", count, in_place, k, j, vd[rd[j] + k]);
        CHECK(vd[rd[j] + rc[j]] == POISON, "alltoallv wrote into the gap after block %d", j);
    }
    free(s);
    free(d);
    free(vs);
    free(vd);
}

/* 2x2 integer matrices: a (op) b = a * b, wrapping. */
static void mat_mul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    unsigned *a = in, *b = inout;
    for (int i = 0; i < *len; i++, a += 4, b += 4) {
        unsigned c[4] = { a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
                          a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3] };
        memcpy(b, c, sizeof c);
    }
}

/* Rank q's matrix number e. */
static void mat_of(int q, int e, unsigned m[4])
{
    m[0] = 1; m[1] = (unsigned)(q + e + 1); m[2] = (unsigned)(e % 2); m[3] = (unsigned)(q % 3 + 1);
}

/* Product of the matrices of ranks lo..hi-1 (element e), in rank order. */
static void product(int lo, int hi, int e, unsigned m[4])
{
    unsigned acc[4] = { 1, 0, 0, 1 }, x[4];
    for (int q = hi - 1; q >= lo; q--) {
        mat_of(q, e, x);
        int one = 1;
        mat_mul(x, acc, &one, NULL);
    }
    memcpy(m, acc, sizeof acc);
}

static void sums(int root, int count, int in_place, int nb)
{
    int *s = filled(n * count + 1, 0), *d = filled(n * count + 1, POISON);
    MPI_Request q;
    for (int k = 0; k < n * count; k++)
        s[k] = val(r, k);
    int gets = r == root, root_in_place = in_place && gets;
#ifdef MPICH_DEVIATIONS
    /* MPICH 4.0 reads MPI_IN_PLACE as a buffer at a root other than 0 for long vectors
     * (pmodels/mpich#6540, fixed in 4.1.2). */
    if (root != 0 && count > 256)
        root_in_place = 0;
#endif
    if (root_in_place)
        memcpy(d, s, (size_t)count * sizeof(int));
    const void *sb = root_in_place ? MPI_IN_PLACE : (const void *)s;
    if (nb)
        CALL(MPI_Ireduce(sb, d, count, MPI_INT, MPI_SUM, root, comm, &q));
    else
        CALL(MPI_Reduce(sb, d, count, MPI_INT, MPI_SUM, root, comm));
    done(nb, &q);
    int base = n * (n - 1) / 2 * 10007;
    if (gets)
        for (int k = 0; k <= count; k++)
            CHECK(d[k] == (k < count ? base + n * (k * 3 + 1) : POISON), "reduce root %d count %d: int %d is %d", root, count, k, d[k]);
    /* Allreduce, Scan, Exscan. */
    for (int what = 0; what < 3; what++) {
        for (int k = 0; k <= count; k++)
            d[k] = in_place && k < count ? s[k] : POISON;
        sb = in_place ? MPI_IN_PLACE : (const void *)s;
        if (what == 0 && nb)
            CALL(MPI_Iallreduce(sb, d, count, MPI_INT, MPI_SUM, comm, &q));
        else if (what == 0)
            CALL(MPI_Allreduce(sb, d, count, MPI_INT, MPI_SUM, comm));
        else if (what == 1 && nb)
            CALL(MPI_Iscan(sb, d, count, MPI_INT, MPI_SUM, comm, &q));
        else if (what == 1)
            CALL(MPI_Scan(sb, d, count, MPI_INT, MPI_SUM, comm));
        else if (nb)
            CALL(MPI_Iexscan(sb, d, count, MPI_INT, MPI_SUM, comm, &q));
        else
            CALL(MPI_Exscan(sb, d, count, MPI_INT, MPI_SUM, comm));
        done(nb, &q);
        int upto = what == 0 ? n : what == 1 ? r + 1 : r;
        for (int k = 0; k <= count; k++) {
            int want = upto * (upto - 1) / 2 * 10007 + upto * (k * 3 + 1);
            if (k == count)
                want = POISON;
            else if (what == 2 && r == 0)
                want = in_place ? s[k] : POISON; /* rank 0's buffer is left alone */
            CHECK(d[k] == want, "%s count %d in_place %d: int %d is %d, expected %d", what == 0 ? "allreduce" : what == 1 ? "scan" : "exscan", count, in_place, k, d[k], want);
        }
    }
    /* Reduce_scatter_block and Reduce_scatter (rank q gets q % 3 * count ints). */
    int rcounts[MAXP], at = 0, mine_at = 0;
    for (int p = 0; p < n; p++) {
        rcounts[p] = p % 3 * count;
        if (p < r)
            mine_at += rcounts[p];
        at += rcounts[p];
    }
    for (int v = 0; v < 2; v++) {
        int m = v ? rcounts[r] : count, off = v ? mine_at : r * count;
        for (int k = 0; k <= n * count; k++)
            d[k] = in_place && k < (v ? at : n * count) ? s[k] : POISON;
        sb = in_place ? MPI_IN_PLACE : (const void *)s;
        if (v == 0 && nb)
            CALL(MPI_Ireduce_scatter_block(sb, d, count, MPI_INT, MPI_SUM, comm, &q));
        else if (v == 0)
            CALL(MPI_Reduce_scatter_block(sb, d, count, MPI_INT, MPI_SUM, comm));
        else if (nb)
            CALL(MPI_Ireduce_scatter(sb, d, rcounts, MPI_INT, MPI_SUM, comm, &q));
        else
            CALL(MPI_Reduce_scatter(sb, d, rcounts, MPI_INT, MPI_SUM, comm));
        done(nb, &q);
        for (int k = 0; k < m; k++)
            CHECK(d[k] == base + n * ((off + k) * 3 + 1), "reduce_scatter%s count %d in_place %d: int %d is %d", v ? "" : "_block", count, in_place, k, d[k]);
        if (!in_place)
            CHECK(d[m] == POISON, "reduce_scatter%s wrote past its block", v ? "" : "_block");
    }
    free(s);
    free(d);
}

static void products(int root, int count, int nb)
{
    unsigned *s = xmalloc((size_t)(4 * n * count + 1) * sizeof(unsigned));
    unsigned *d = xmalloc((size_t)(4 * n * count + 1) * sizeof(unsigned));
    unsigned want[4];
    MPI_Request q;
    for (int e = 0; e < n * count; e++)
        mat_of(r, e, s + 4 * e);
    for (int what = 0; what < 4; what++) {
        memset(d, 0xff, (size_t)(4 * n * count + 1) * sizeof(unsigned));
        if (what == 0 && nb)
            CALL(MPI_Ireduce(s, d, count, mat, matmul, root, comm, &q));
        else if (what == 0)
            CALL(MPI_Reduce(s, d, count, mat, matmul, root, comm));
        else if (what == 1 && nb)
            CALL(MPI_Iallreduce(s, d, count, mat, matmul, comm, &q));
        else if (what == 1)
            CALL(MPI_Allreduce(s, d, count, mat, matmul, comm));
        else if (what == 2 && nb)
            CALL(MPI_Iscan(s, d, count, mat, matmul, comm, &q));
        else if (what == 2)
            CALL(MPI_Scan(s, d, count, mat, matmul, comm));
        else if (nb)
            CALL(MPI_Iexscan(s, d, count, mat, matmul, comm, &q));
        else
            CALL(MPI_Exscan(s, d, count, mat, matmul, comm));
        done(nb, &q);
        if (what == 0 && r != root)
            continue;
        if (what == 3 && r == 0)
            continue;
        int hi = what < 2 ? n : what == 2 ? r + 1 : r;
        for (int e = 0; e < count; e++) {
            product(0, hi, e, want);
            CHECK(memcmp(d + 4 * e, want, sizeof want) == 0, "matrix product %d (root %d) count %d: element %d is [%u %u %u %u], expected [%u %u %u %u]", what, root, count, e, d[4 * e], d[4 * e + 1], d[4 * e + 2], d[4 * e + 3], want[0], want[1], want[2], want[3]);
        }
    }
    /* Reduce_scatter_block and Reduce_scatter of matrices: rank q's share is count
     * matrices (block) or q % 2 * count (v). */
    int rcounts[MAXP], off = 0;
    for (int p = 0; p < n; p++) {
        rcounts[p] = p % 2 * count;
        if (p < r)
            off += rcounts[p];
    }
    for (int v = 0; v < 2; v++) {
        if (v)
            CALL(MPI_Reduce_scatter(s, d, rcounts, mat, matmul, comm));
        else
            CALL(MPI_Reduce_scatter_block(s, d, count, mat, matmul, comm));
        int m = v ? rcounts[r] : count, first = v ? off : r * count;
        for (int e = 0; e < m; e++) {
            product(0, n, first + e, want);
            CHECK(memcmp(d + 4 * e, want, sizeof want) == 0, "matrix reduce_scatter%s count %d: element %d differs", v ? "" : "_block", count, e);
        }
    }
    free(s);
    free(d);
}

static void barriers(int nb)
{
    int leftover = 0, flag = 0;
    MPI_Request q;
    if (r == 0) {
        /* Whoever left the barrier early would have sent this by now. */
        double until = MPI_Wtime() + 0.01;
        while (MPI_Wtime() < until && !flag)
            CALL(MPI_Iprobe(MPI_ANY_SOURCE, 99, comm, &flag, MPI_STATUS_IGNORE));
        CHECK(!flag, "a rank left the barrier before rank 0 entered it");
    }
    if (nb)
        CALL(MPI_Ibarrier(comm, &q));
    else
        CALL(MPI_Barrier(comm));
    done(nb, &q);
    if (r != 0)
        CALL(MPI_Send(&leftover, 1, MPI_INT, 0, 99, comm));
    else
        for (int p = 1; p < n; p++)
            CALL(MPI_Recv(&leftover, 1, MPI_INT, MPI_ANY_SOURCE, 99, comm, MPI_STATUS_IGNORE));
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    CHECK(np <= MAXP, "at most %d ranks", MAXP);
    n = np;
    r = me;
    CALL(MPI_Type_contiguous(4, MPI_UNSIGNED, &mat));
    CALL(MPI_Type_commit(&mat));
    CALL(MPI_Op_create(mat_mul, 0, &matmul));
    int roots[3] = { 0, 1 % n, n - 1 }, counts[3] = { 0, 1, 1000 };
    for (int nb = 0; nb < 2; nb++) {
        barriers(nb);
        for (int i = 0; i < 3; i++) {
            bcast(roots[i], counts[i], nb);
            scatterv_gatherv(roots[i], i * 3, nb);
            products(roots[i], i + 1, nb);
            for (int ip = 0; ip < 2; ip++) {
                scatter_gather(roots[i], counts[(i + ip) % 3], ip, nb);
                allgathers(counts[i], ip, nb);
                alltoalls(counts[i], ip, nb);
                sums(roots[i], counts[i], ip, nb);
            }
        }
    }
    CALL(MPI_Op_free(&matmul));
    CALL(MPI_Type_free(&mat));
    CALL(MPI_Finalize());
    finalized = 1;
    return 0;
}
