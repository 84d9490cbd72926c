/* ranks: 1 2 3 4 5 7 8 */
/*
 * User-defined operations (MPI_Op_create, MPI_Op_free) through every reduction:
 * MPI_Reduce at roots 0, 1 and size-1, MPI_Allreduce, MPI_Scan, MPI_Exscan,
 * MPI_Reduce_scatter_block and MPI_Reduce_scatter, blocking and non-blocking,
 * plain and with MPI_IN_PLACE, counts 0 and up:
 * - a non-commutative one, the product of 2x2 matrices held in a vector
 *   datatype with a gap (ints 0, 1, 3, 4 of 5): the result must be
 *   x_0 x_1 ... x_{p-1} in rank order, the function sees the datatype's own
 *   layout and handle, and the gaps of the receive buffer stay untouched;
 * - a non-commutative one on a struct datatype: string concatenation of
 *   {int len; char s[27]} elements (rank q contributes 1..3 letters);
 * - a commutative one (wrapping sum of longs, 10001 of them, so that long
 *   vector algorithms that split the vector run it).
 * Freeing an operation sets the handle to MPI_OP_NULL and leaves a
 * non-blocking reduction already started with it intact.
 * On MPI_COMM_WORLD and on a split of it with reversed keys.
 */
#include <stddef.h>
#include <string.h>

#define TEST_NAME "coll_user_ops"
#include "testutil.h"

static MPI_Comm comm;
static int n, r;

/* ---- matrices: 4 unsigned at ints 0, 1, 3, 4 of an extent of 5 ---------------------- */

enum { MEXT = 5, GAP = 2, GAPVAL = 0x7777 };
static MPI_Datatype mat_t;
static MPI_Op mat_op;
static int bad_calls;

static void mat_mul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    if (*dt != mat_t)
        bad_calls++;
    unsigned *a = in, *b = inout;
    for (int i = 0; i < *len; i++, a += MEXT, b += MEXT) {
        unsigned c0 = a[0] * b[0] + a[1] * b[3], c1 = a[0] * b[1] + a[1] * b[4];
        unsigned c3 = a[3] * b[0] + a[4] * b[3], c4 = a[3] * b[1] + a[4] * b[4];
        b[0] = c0; b[1] = c1; b[3] = c3; b[4] = c4;
    }
}

/* Rank q's matrix number e, written into m (5 slots, gap included). */
static void mat_of(int q, int e, unsigned *m)
{
    m[0] = 1; m[1] = (unsigned)(q + 2 * e + 1); m[GAP] = GAPVAL;
    m[3] = (unsigned)((q + e) % 2); m[4] = (unsigned)(q % 3 + 1);
}

/* x_lo x_{lo+1} ... x_{hi-1}, element e. */
static void mat_product(int lo, int hi, int e, unsigned *m)
{
    unsigned x[MEXT];
    int one = 1;
    MPI_Datatype keep = mat_t;
    m[0] = 1; m[1] = 0; m[3] = 0; m[4] = 1;
    for (int q = hi - 1; q >= lo; q--) {
        mat_of(q, e, x);
        mat_mul(x, m, &one, &keep);
    }
}

static unsigned *mats(int count, int fill_rank)
{
    unsigned *m = xmalloc((size_t)(count + 1) * MEXT * sizeof(unsigned));
    for (int e = 0; e < count + 1; e++) {
        for (int k = 0; k < MEXT; k++)
            m[e * MEXT + k] = 0xdead0000u + (unsigned)k;
        if (fill_rank >= 0 && e < count)
            mat_of(fill_rank, e, m + e * MEXT);
    }
    return m;
}

/* Checks `count` result matrices at `got`: element e is the product over ranks lo..hi-1
 * of their element first + e; gaps hold `gap`; the slot after the last is untouched. */
static void check_mats(const unsigned *got, int count, int lo, int hi, int first, unsigned gap, const char *what, int line)
{
    unsigned want[MEXT];
    for (int e = 0; e < count; e++) {
        mat_product(lo, hi, first + e, want);
        const unsigned *g = got + e * MEXT;
        if (g[0] != want[0] || g[1] != want[1] || g[3] != want[3] || g[4] != want[4])
            fail(line, "%s: matrix %d is [%u %u %u %u], expected [%u %u %u %u] (ranks %d..%d)",
                 what, e, g[0], g[1], g[3], g[4], want[0], want[1], want[3], want[4], lo, hi - 1);
        if (g[GAP] != gap)
            fail(line, "%s: the gap of matrix %d became %#x", what, e, g[GAP]);
    }
    for (int k = 0; k < MEXT; k++)
        if (got[count * MEXT + k] != 0xdead0000u + (unsigned)k)
            fail(line, "%s: written past the last matrix", what);
}

enum call { REDUCE, ALLREDUCE, SCAN, EXSCAN, RSB, RS, NCALLS };
static const char *const names[NCALLS] = { "Reduce", "Allreduce", "Scan", "Exscan", "Reduce_scatter_block", "Reduce_scatter" };

/* Runs one reduction, blocking or not. `counts` serves Reduce_scatter. */
static void reduce(enum call c, const void *s, void *d, int count, const int *counts, MPI_Datatype t, MPI_Op op, int root, int nb)
{
    MPI_Request q = MPI_REQUEST_NULL;
    switch (c) {
    case REDUCE: CALL(nb ? MPI_Ireduce(s, d, count, t, op, root, comm, &q) : MPI_Reduce(s, d, count, t, op, root, comm)); break;
    case ALLREDUCE: CALL(nb ? MPI_Iallreduce(s, d, count, t, op, comm, &q) : MPI_Allreduce(s, d, count, t, op, comm)); break;
    case SCAN: CALL(nb ? MPI_Iscan(s, d, count, t, op, comm, &q) : MPI_Scan(s, d, count, t, op, comm)); break;
    case EXSCAN: CALL(nb ? MPI_Iexscan(s, d, count, t, op, comm, &q) : MPI_Exscan(s, d, count, t, op, comm)); break;
    case RSB: CALL(nb ? MPI_Ireduce_scatter_block(s, d, count, t, op, comm, &q) : MPI_Reduce_scatter_block(s, d, count, t, op, comm)); break;
    case RS: CALL(nb ? MPI_Ireduce_scatter(s, d, counts, t, op, comm, &q) : MPI_Reduce_scatter(s, d, counts, t, op, comm)); break;
    default: fail(__LINE__, "no such call");
    }
    if (nb)
        CALL(MPI_Wait(&q, MPI_STATUS_IGNORE));
}

static void matrices(enum call c, int count, int root, int in_place, int nb)
{
    /* Reduce_scatter(_block): rank q's share is count (block) or (q % 3) * count matrices. */
    int counts[64] = { 0 }, total = count, first = 0;
    if (c == RSB || c == RS) {
        total = 0;
        for (int q = 0; q < n; q++) {
            counts[q] = c == RSB ? count : q % 3 * count;
            if (q < r)
                first += counts[q];
            total += counts[q];
        }
    }
    int mine = c == RSB || c == RS ? counts[r] : count;
    int gets = c != REDUCE || r == root;
    int ip = in_place && gets;
    unsigned *s = mats(total, r), *d = mats(ip ? total : mine, ip ? r : -1);
    reduce(c, ip ? MPI_IN_PLACE : s, d, count, counts, mat_t, mat_op, root, nb);
    char what[160];
    snprintf(what, sizeof what, "%s%s%s of %d matrices (root %d, %d ranks)", nb ? "I" : "", names[c], ip ? " in place" : "", count, root, n);
    int lo = 0, hi = c == SCAN ? r + 1 : c == EXSCAN ? r : n;
    unsigned gap = ip ? GAPVAL : 0xdead0000u + GAP;
    if (c == EXSCAN && r == 0)
        return; /* undefined on rank 0 */
    if (!gets)
        return;
    if (ip && (c == RSB || c == RS)) {
        /* The result replaces the first `mine` matrices; the rest of the input is
         * unspecified, so only those are checked. */
        unsigned want[MEXT];
        for (int e = 0; e < mine; e++) {
            mat_product(0, n, first + e, want);
            unsigned *g = d + e * MEXT;
            CHECK(g[0] == want[0] && g[1] == want[1] && g[3] == want[3] && g[4] == want[4] && g[GAP] == GAPVAL,
                  "%s: matrix %d differs", what, e);
        }
    } else {
        check_mats(d, mine, lo, hi, first, gap, what, __LINE__);
    }
    free(s);
    free(d);
}

/* ---- strings: {int len; char s[27]}, concatenated ------------------------------------- */

typedef struct { int len; char s[27]; } str_t;
static MPI_Datatype str_t_type;
static MPI_Op cat_op;

static void cat(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    if (*dt != str_t_type)
        bad_calls++;
    str_t *a = in, *b = inout;
    for (int i = 0; i < *len; i++) {
        char t[27];
        int m = a[i].len + b[i].len;
        if (m > 26)
            m = 26;
        memcpy(t, a[i].s, (size_t)a[i].len);
        memcpy(t + a[i].len, b[i].s, (size_t)(m - a[i].len));
        memcpy(b[i].s, t, (size_t)m);
        b[i].s[m] = 0;
        b[i].len = m;
    }
}

/* Rank q's string number e: (q % 3 + 1) copies of one letter. */
static void str_of(int q, int e, str_t *x)
{
    memset(x, 0, sizeof *x);
    x->len = q % 3 + 1;
    for (int k = 0; k < x->len; k++)
        x->s[k] = (char)('a' + (q + e) % 26);
}

static void strings(enum call c, int count, int root, int nb)
{
#ifdef MPICH_DEVIATIONS
    /* MPICH 4.0.2 hands the function of a Reduce_scatter(_block) buffers one byte off the
     * elements of this type (size 31, extent 32) on power-of-two communicators, and it
     * crashes reading the lengths there. */
    if (c == RSB || c == RS)
        return;
#endif
    str_t *s = xmalloc((size_t)(n * count + 1) * sizeof(str_t)), *d = xmalloc((size_t)(n * count + 1) * sizeof(str_t));
    for (int e = 0; e < n * count; e++)
        str_of(r, e, &s[e]);
    memset(d, 0, (size_t)(n * count + 1) * sizeof(str_t));
    int counts[64] = { 0 }, first = c == RSB || c == RS ? r * count : 0;
    for (int q = 0; q < n; q++)
        counts[q] = count;
    reduce(c, s, d, count, counts, str_t_type, cat_op, root, nb);
    if ((c == REDUCE && r != root) || (c == EXSCAN && r == 0))
        goto out;
    int hi = c == SCAN ? r + 1 : c == EXSCAN ? r : n;
    for (int e = 0; e < count; e++) {
        char want[64] = "";
        for (int q = 0; q < hi; q++) {
            str_t x;
            str_of(q, first + e, &x);
            strcat(want, x.s);
        }
        CHECK(d[e].len == (int)strlen(want) && strcmp(d[e].s, want) == 0,
              "%s%s of strings (root %d): element %d is \"%.*s\", expected \"%s\"", nb ? "I" : "", names[c], root, e,
              d[e].len < 0 || d[e].len > 26 ? 26 : d[e].len, d[e].s, want);
    }
    CHECK(d[count].len == 0, "%s of strings wrote past the end", names[c]);
out:
    free(s);
    free(d);
}

/* ---- a commutative operation: wrapping sum of longs ----------------------------------- */

static MPI_Op sum_op;

static void lsum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    if (*dt != MPI_LONG)
        bad_calls++;
    long *a = in, *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] = (long)((unsigned long)a[i] + (unsigned long)b[i]);
}

static void sums(enum call c, int count, int root, int in_place, int nb)
{
    long *s = xmalloc((size_t)(n * count + 1) * sizeof(long)), *d = xmalloc((size_t)(n * count + 1) * sizeof(long));
    for (int e = 0; e < n * count; e++)
        s[e] = (long)r * 1000003L + e;
    int gets = c != REDUCE || r == root, ip = in_place && gets;
#ifdef MPICH_DEVIATIONS
    /* MPICH 4.0 reads MPI_IN_PLACE as a buffer at a root other than 0 for long vectors
     * (pmodels/mpich#6540, fixed in 4.1.2). */
    if (c == REDUCE && root != 0 && count > 256)
        ip = 0;
#endif
    for (int e = 0; e <= n * count; e++)
        d[e] = ip && e < n * count ? s[e] : -1;
    int counts[64] = { 0 }, first = c == RSB || c == RS ? r * count : 0;
    for (int q = 0; q < n; q++)
        counts[q] = count;
    reduce(c, ip ? MPI_IN_PLACE : s, d, count, counts, MPI_LONG, sum_op, root, nb);
    if (!gets || (c == EXSCAN && r == 0))
        goto out;
    int hi = c == SCAN ? r + 1 : c == EXSCAN ? r : n;
    for (int e = 0; e < count; e++) {
        long want = (long)hi * (hi - 1) / 2 * 1000003L + (long)hi * (first + e);
        CHECK(d[e] == want, "%s%s of longs, count %d: element %d is %ld, expected %ld", nb ? "I" : "", names[c], count, e, d[e], want);
    }
    if (!ip)
        CHECK(d[count] == -1, "%s of longs wrote past the end", names[c]);
out:
    free(s);
    free(d);
}

static void run_on(MPI_Comm c)
{
    comm = c;
    CALL(MPI_Comm_size(comm, &n));
    CALL(MPI_Comm_rank(comm, &r));
    int roots[3] = { 0, 1 % n, n - 1 };
    for (int nb = 0; nb < 2; nb++)
        for (enum call k = REDUCE; k < NCALLS; k++) {
            for (int i = 0; i < 3; i++) {
                if (k != REDUCE && i > 0)
                    break;
                for (int in_place = 0; in_place < 2; in_place++) {
                    matrices(k, 0, roots[i], in_place, nb);
                    matrices(k, 1, roots[i], in_place, nb);
                    matrices(k, 5, roots[i], in_place, nb);
                    sums(k, 0, roots[i], in_place, nb);
                    sums(k, 10001, roots[i], in_place, nb);
                }
                strings(k, 3, roots[i], nb);
            }
        }
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    CHECK(np <= 64, "at most 64 ranks");
    CALL(MPI_Type_vector(2, 2, 3, MPI_UNSIGNED, &mat_t));
    CALL(MPI_Type_commit(&mat_t));
    MPI_Aint lb, ext;
    CALL(MPI_Type_get_extent(mat_t, &lb, &ext));
    CHECK(lb == 0 && ext == MEXT * (MPI_Aint)sizeof(unsigned), "matrix type extent %ld", (long)ext);
    int bl[2] = { 1, 27 };
    MPI_Aint disp[2] = { offsetof(str_t, len), offsetof(str_t, s) };
    MPI_Datatype types[2] = { MPI_INT, MPI_CHAR }, tmp;
    CALL(MPI_Type_create_struct(2, bl, disp, types, &tmp));
    CALL(MPI_Type_create_resized(tmp, 0, sizeof(str_t), &str_t_type));
    CALL(MPI_Type_free(&tmp));
    CALL(MPI_Type_commit(&str_t_type));
    CALL(MPI_Op_create(mat_mul, 0, &mat_op));
    CALL(MPI_Op_create(cat, 0, &cat_op));
    CALL(MPI_Op_create(lsum, 1, &sum_op));

    run_on(MPI_COMM_WORLD);
    MPI_Comm rev;
    CALL(MPI_Comm_split(MPI_COMM_WORLD, 0, np - me, &rev));
    run_on(rev);

    /* Freeing an operation while a reduction with it is in flight. */
    comm = MPI_COMM_WORLD;
    n = np;
    r = me;
    unsigned *s = mats(3, r), *d = mats(3, -1);
    MPI_Request q;
    MPI_Op doomed;
    CALL(MPI_Op_create(mat_mul, 0, &doomed));
    CALL(MPI_Iallreduce(s, d, 3, mat_t, doomed, comm, &q));
    CALL(MPI_Op_free(&doomed));
    CHECK(doomed == MPI_OP_NULL, "MPI_Op_free left the handle %#x", (unsigned)doomed);
    CALL(MPI_Wait(&q, MPI_STATUS_IGNORE));
    check_mats(d, 3, 0, n, 0, 0xdead0000u + GAP, "Iallreduce with a freed operation", __LINE__);
    free(s);
    free(d);
    CALL(MPI_Comm_free(&rev));

    CHECK(bad_calls == 0, "user functions were called %d times with another datatype", bad_calls);
    CALL(MPI_Op_free(&mat_op));
    CALL(MPI_Op_free(&cat_op));
    CALL(MPI_Op_free(&sum_op));
    CHECK(mat_op == MPI_OP_NULL && cat_op == MPI_OP_NULL && sum_op == MPI_OP_NULL, "MPI_Op_free left a handle");
    CALL(MPI_Type_free(&mat_t));
    CALL(MPI_Type_free(&str_t_type));
    CALL(MPI_Finalize());
    finalized = 1;
    return 0;
}
