/* ranks: 1 2 4 5 */
/*
 * Derived datatypes: contiguous, vector with positive and negative stride,
 * hvector (also of a vector), indexed (with blocks out of address order and
 * empty blocks), create_struct with gaps (padding left untouched, a struct
 * received into a differently laid-out struct of the same signature),
 * create_resized (larger extent, negative lower bound), Type_dup, Type_free
 * of a type still used by another. Size, extent and true extent of each;
 * sending a vector and receiving it as contiguous data and the reverse;
 * Get_count and Get_elements / Get_elements_x on partial data; a large
 * strided message. Each rank exchanges with rank^1, or with itself.
 */
#include <stddef.h>
#include <string.h>

#define TEST_NAME "datatypes"
#include "testutil.h"

static int partner = -1;
static int next_tag = 1;

/* Send (sbuf, scount, stype) to the partner and receive theirs. */
static void xchg(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                 MPI_Datatype rtype, MPI_Status *st)
{
    int tag = next_tag++;
    CALL(MPI_Sendrecv(sbuf, scount, stype, partner, tag, rbuf, rcount, rtype, partner, tag,
                      MPI_COMM_WORLD, st));
    CHECK(st->MPI_SOURCE == partner && st->MPI_TAG == tag, "status %d/%d", st->MPI_SOURCE,
          st->MPI_TAG);
}

static void check_layout(MPI_Datatype t, int size, MPI_Aint lb, MPI_Aint extent,
                         MPI_Aint true_lb, MPI_Aint true_extent, const char *what)
{
    int sz = -1;
    MPI_Aint l = -1, e = -1, tl = -1, te = -1;
    CALL(MPI_Type_size(t, &sz));
    CALL(MPI_Type_get_extent(t, &l, &e));
    CALL(MPI_Type_get_true_extent(t, &tl, &te));
    CHECK(sz == size, "%s: size %d, expected %d", what, sz, size);
    CHECK(l == lb && e == extent, "%s: lb/extent %ld/%ld, expected %ld/%ld", what, (long)l,
          (long)e, (long)lb, (long)extent);
    CHECK(tl == true_lb && te == true_extent, "%s: true lb/extent %ld/%ld, expected %ld/%ld",
          what, (long)tl, (long)te, (long)true_lb, (long)true_extent);
}

static void check_counts(const MPI_Status *st, MPI_Datatype t, int count, int elements,
                         const char *what)
{
    int c = -5, el = -5;
    MPI_Count elx = -5;
    CALL(MPI_Get_count(st, t, &c));
    CALL(MPI_Get_elements(st, t, &el));
    CALL(MPI_Get_elements_x(st, t, &elx));
    CHECK(c == count, "%s: Get_count %d, expected %d", what, c, count);
    CHECK(el == elements && elx == elements, "%s: Get_elements %d / _x %lld, expected %d",
          what, el, (long long)elx, elements);
}

/* Value k of the sender's array. */
static int val(int src, int k)
{
    return 1000 * (src + 1) + k;
}

static void fill_ints(int *a, int n, int src)
{
    for (int k = 0; k < n; k++)
        a[k] = val(src, k);
}

static void basic_types(void)
{
    check_layout(MPI_INT, (int)sizeof(int), 0, sizeof(int), 0, sizeof(int), "MPI_INT");
    check_layout(MPI_DOUBLE, 8, 0, 8, 0, 8, "MPI_DOUBLE");
    check_layout(MPI_CHAR, 1, 0, 1, 0, 1, "MPI_CHAR");
    check_layout(MPI_BYTE, 1, 0, 1, 0, 1, "MPI_BYTE");
}

static void contiguous(void)
{
    MPI_Datatype t, empty;
    MPI_Status st;
    int out[15], in[15];
    CALL(MPI_Type_contiguous(5, MPI_INT, &t));
    CALL(MPI_Type_commit(&t));
    check_layout(t, 20, 0, 20, 0, 20, "contiguous(5, int)");
    fill_ints(out, 15, me);
    memset(in, 0, sizeof in);
    xchg(out, 3, t, in, 15, MPI_INT, &st);
    check_counts(&st, MPI_INT, 15, 15, "contiguous -> int");
    for (int k = 0; k < 15; k++)
        CHECK(in[k] == val(partner, k), "contiguous element %d = %d", k, in[k]);
    memset(in, 0, sizeof in);
    xchg(out, 15, MPI_INT, in, 3, t, &st);
    check_counts(&st, t, 3, 15, "int -> contiguous");
    for (int k = 0; k < 15; k++)
        CHECK(in[k] == val(partner, k), "contiguous element %d = %d", k, in[k]);
    CALL(MPI_Type_free(&t));
    CHECK(t == MPI_DATATYPE_NULL, "Type_free did not reset the handle");

    CALL(MPI_Type_contiguous(0, MPI_INT, &empty));
    CALL(MPI_Type_commit(&empty));
    check_layout(empty, 0, 0, 0, 0, 0, "contiguous(0, int)");
    xchg(out, 4, empty, in, 1, empty, &st);
    check_counts(&st, empty, 0, 0, "empty type");
    CALL(MPI_Type_free(&empty));
}

static void vector_positive(void)
{
    /* 4 blocks of 2 ints, stride 3: indices 0,1, 3,4, 6,7, 9,10. */
    static const int idx[8] = { 0, 1, 3, 4, 6, 7, 9, 10 };
    MPI_Datatype v, vdup;
    MPI_Status st;
    int out[22], in[22];
    CALL(MPI_Type_vector(4, 2, 3, MPI_INT, &v));
    CALL(MPI_Type_commit(&v));
    check_layout(v, 32, 0, 44, 0, 44, "vector(4,2,3)");

    /* vector -> contiguous */
    fill_ints(out, 22, me);
    memset(in, 0, sizeof in);
    xchg(out, 1, v, in, 8, MPI_INT, &st);
    check_counts(&st, MPI_INT, 8, 8, "vector -> int");
    for (int k = 0; k < 8; k++)
        CHECK(in[k] == val(partner, idx[k]), "vector->contig %d = %d", k, in[k]);

    /* contiguous -> vector: the gaps keep their contents. */
    for (int k = 0; k < 22; k++)
        in[k] = -1;
    xchg(out, 8, MPI_INT, in, 1, v, &st);
    check_counts(&st, v, 1, 8, "int -> vector");
    for (int k = 0, j = 0; k < 11; k++) {
        if (j < 8 && idx[j] == k)
            CHECK(in[k] == val(partner, j++), "contig->vector slot %d = %d", k, in[k]);
        else
            CHECK(in[k] == -1, "contig->vector wrote the gap at %d", k);
    }

    /* Two vectors in a row: the second starts one extent (11 ints) later.
     * Sent through a duplicate of the type. */
    CALL(MPI_Type_dup(v, &vdup));
    check_layout(vdup, 32, 0, 44, 0, 44, "dup of vector");
    memset(in, 0, sizeof in);
    xchg(out, 2, vdup, in, 16, MPI_INT, &st);
    check_counts(&st, MPI_INT, 16, 16, "2 vectors -> int");
    for (int k = 0; k < 16; k++)
        CHECK(in[k] == val(partner, idx[k % 8] + 11 * (k / 8)), "2 vectors: %d = %d", k,
              in[k]);
    CALL(MPI_Type_free(&vdup));
    CALL(MPI_Type_free(&v));
}

static void vector_negative(void)
{
    /* 3 blocks of 1 int with stride -2: offsets 0, -2, -4 ints. */
    MPI_Datatype v;
    MPI_Status st;
    int out[10], in[10];
    CALL(MPI_Type_vector(3, 1, -2, MPI_INT, &v));
    CALL(MPI_Type_commit(&v));
    int is = (int)sizeof(int);
    check_layout(v, 3 * is, -4 * is, 5 * is, -4 * is, 5 * is, "vector(3,1,-2)");

    fill_ints(out, 10, me);
    memset(in, 0, sizeof in);
    xchg(&out[6], 1, v, in, 3, MPI_INT, &st);
    CHECK(in[0] == val(partner, 6) && in[1] == val(partner, 4) && in[2] == val(partner, 2),
          "negative stride -> contiguous gave %d %d %d", in[0], in[1], in[2]);

    for (int k = 0; k < 10; k++)
        in[k] = -1;
    xchg(out, 3, MPI_INT, &in[6], 1, v, &st);
    check_counts(&st, v, 1, 3, "int -> negative vector");
    for (int k = 0; k < 10; k++) {
        int want = k == 6 ? val(partner, 0) : k == 4 ? val(partner, 1) :
                   k == 2 ? val(partner, 2) : -1;
        CHECK(in[k] == want, "contiguous -> negative stride: slot %d = %d, expected %d", k,
              in[k], want);
    }
    CALL(MPI_Type_free(&v));
}

static void hvector(void)
{
    /* 3 blocks of 2 doubles, 40 bytes apart: doubles 0,1, 5,6, 10,11. */
    MPI_Datatype h, v, hv;
    MPI_Status st;
    double out[24], in[24];
    CALL(MPI_Type_create_hvector(3, 2, 5 * sizeof(double), MPI_DOUBLE, &h));
    CALL(MPI_Type_commit(&h));
    check_layout(h, 48, 0, 96, 0, 96, "hvector(3,2,40B)");
    for (int k = 0; k < 24; k++)
        out[k] = val(me, k) + 0.5;
    memset(in, 0, sizeof in);
    xchg(out, 1, h, in, 6, MPI_DOUBLE, &st);
    static const int idx[6] = { 0, 1, 5, 6, 10, 11 };
    for (int k = 0; k < 6; k++)
        CHECK(in[k] == val(partner, idx[k]) + 0.5, "hvector element %d = %g", k, in[k]);
    CALL(MPI_Type_free(&h));

    /* hvector of a vector: 2 copies of vector(2,1,2) (doubles 0 and 2),
     * the second 12 doubles further: doubles 0, 2, 12, 14. */
    CALL(MPI_Type_vector(2, 1, 2, MPI_DOUBLE, &v));
    CALL(MPI_Type_create_hvector(2, 1, 12 * sizeof(double), v, &hv));
    CALL(MPI_Type_free(&v)); /* still used by hv */
    CALL(MPI_Type_commit(&hv));
    check_layout(hv, 32, 0, 15 * 8, 0, 15 * 8, "hvector of vector");
    memset(in, 0, sizeof in);
    xchg(out, 1, hv, in, 4, MPI_DOUBLE, &st);
    static const int idx2[4] = { 0, 2, 12, 14 };
    for (int k = 0; k < 4; k++)
        CHECK(in[k] == val(partner, idx2[k]) + 0.5, "hvector of vector element %d = %g", k,
              in[k]);
    CALL(MPI_Type_free(&hv));
}

static void indexed(void)
{
    MPI_Datatype t, u;
    MPI_Status st;
    int out[16], in[16];
    int is = (int)sizeof(int);

    /* Blocks {1 at 0, 2 at 3, 3 at 7}: ints 0, 3,4, 7,8,9. */
    int bl[3] = { 1, 2, 3 }, disp[3] = { 0, 3, 7 };
    CALL(MPI_Type_indexed(3, bl, disp, MPI_INT, &t));
    CALL(MPI_Type_commit(&t));
    check_layout(t, 6 * is, 0, 10 * is, 0, 10 * is, "indexed");
    fill_ints(out, 16, me);
    memset(in, 0, sizeof in);
    xchg(out, 1, t, in, 6, MPI_INT, &st);
    static const int idx[6] = { 0, 3, 4, 7, 8, 9 };
    for (int k = 0; k < 6; k++)
        CHECK(in[k] == val(partner, idx[k]), "indexed element %d = %d", k, in[k]);

    /* Blocks out of address order, and an empty one: {2 at 6, 0 at 0, 1 at 1}.
     * Data travel in type-map order: ints 6, 7, 1. Bounds: 1 .. 8. */
    int bl2[3] = { 2, 0, 1 }, disp2[3] = { 6, 0, 1 };
    CALL(MPI_Type_indexed(3, bl2, disp2, MPI_INT, &u));
    CALL(MPI_Type_commit(&u));
    check_layout(u, 3 * is, 1 * is, 7 * is, 1 * is, 7 * is, "indexed out of order");
    memset(in, 0, sizeof in);
    xchg(out, 1, u, in, 3, MPI_INT, &st);
    CHECK(in[0] == val(partner, 6) && in[1] == val(partner, 7) && in[2] == val(partner, 1),
          "out-of-order indexed gave %d %d %d", in[0], in[1], in[2]);
    /* And back into the same shape. */
    for (int k = 0; k < 16; k++)
        in[k] = -1;
    xchg(out, 3, MPI_INT, in, 1, u, &st);
    CHECK(in[6] == val(partner, 0) && in[7] == val(partner, 1) && in[1] == val(partner, 2) &&
          in[0] == -1 && in[2] == -1 && in[5] == -1 && in[8] == -1,
          "contiguous -> out-of-order indexed");
    CALL(MPI_Type_free(&t));
    CALL(MPI_Type_free(&u));
}

struct rec {
    char c;
    double d;
    int i[3];
    short s;
};

/* Same signature (char, double, 3 int, short), different layout. */
struct rec2 {
    short s;
    int i[3];
    double d;
    char c;
};

static MPI_Datatype rec_type(int with_short)
{
    int bl[4] = { 1, 1, 3, 1 };
    MPI_Aint disp[4] = { offsetof(struct rec, c), offsetof(struct rec, d),
                         offsetof(struct rec, i), offsetof(struct rec, s) };
    MPI_Datatype types[4] = { MPI_CHAR, MPI_DOUBLE, MPI_INT, MPI_SHORT };
    MPI_Datatype t, r;
    CALL(MPI_Type_create_struct(with_short ? 4 : 3, bl, disp, types, &t));
    if (!with_short) {
        CALL(MPI_Type_commit(&t));
        return t;
    }
    /* The extent of a struct type includes alignment padding chosen by the
     * implementation, so only the size and the true extent are fixed. */
    int sz = -1;
    MPI_Aint tl = -1, te = -1;
    CALL(MPI_Type_size(t, &sz));
    CALL(MPI_Type_get_true_extent(t, &tl, &te));
    CHECK(sz == 21 + (int)sizeof(short) && tl == 0 &&
          te == (MPI_Aint)(offsetof(struct rec, s) + sizeof(short)),
          "struct: size %d, true lb %ld, true extent %ld", sz, (long)tl, (long)te);
    CALL(MPI_Type_create_resized(t, 0, sizeof(struct rec), &r));
    CALL(MPI_Type_free(&t));
    CALL(MPI_Type_commit(&r));
    return r;
}

static void fill_rec(struct rec *r, int src, int k)
{
    r->c = (char)('a' + k + src);
    r->d = val(src, k) + 0.25;
    r->i[0] = val(src, k) + 1;
    r->i[1] = val(src, k) + 2;
    r->i[2] = val(src, k) + 3;
    r->s = (short)(k * 10 + src);
}

static void structs(void)
{
    enum { N = 4 };
    struct rec out[N], in[N];
    struct rec2 in2[N];
    MPI_Status st;
    MPI_Datatype rt = rec_type(1);
    int sz = -1;
    MPI_Aint lb = -1, ext = -1;
    CALL(MPI_Type_size(rt, &sz));
    CALL(MPI_Type_get_extent(rt, &lb, &ext));
    CHECK(sz == 21 + (int)sizeof(short) && lb == 0 && ext == (MPI_Aint)sizeof(struct rec),
          "resized struct: size %d lb %ld extent %ld", sz, (long)lb, (long)ext);

    memset(out, 0, sizeof out);
    for (int k = 0; k < N; k++)
        fill_rec(&out[k], me, k);
    memset(in, 0xab, sizeof in);
    xchg(out, N, rt, in, N, rt, &st);
    check_counts(&st, rt, N, N * 6, "struct array");
    for (int k = 0; k < N; k++) {
        struct rec want;
        memset(&want, 0xab, sizeof want);
        fill_rec(&want, partner, k);
        /* Field by field, and the padding bytes must be untouched. */
        CHECK(memcmp(&in[k], &want, sizeof want) == 0,
              "struct %d differs (fields or padding): c %d d %g i %d %d %d s %d", k, in[k].c,
              in[k].d, in[k].i[0], in[k].i[1], in[k].i[2], in[k].s);
    }

    /* The same data into struct rec2: different displacements, same
     * signature, the type map listing the blocks in signature order. */
    int bl[4] = { 1, 1, 3, 1 };
    MPI_Aint disp[4] = { offsetof(struct rec2, c), offsetof(struct rec2, d),
                         offsetof(struct rec2, i), offsetof(struct rec2, s) };
    MPI_Datatype types[4] = { MPI_CHAR, MPI_DOUBLE, MPI_INT, MPI_SHORT };
    MPI_Datatype t2, r2;
    CALL(MPI_Type_create_struct(4, bl, disp, types, &t2));
    CALL(MPI_Type_create_resized(t2, 0, sizeof(struct rec2), &r2));
    CALL(MPI_Type_commit(&r2));
    memset(in2, 0, sizeof in2);
    xchg(out, N, rt, in2, N, r2, &st);
    for (int k = 0; k < N; k++) {
        struct rec want;
        fill_rec(&want, partner, k);
        CHECK(in2[k].c == want.c && in2[k].d == want.d && in2[k].i[0] == want.i[0] &&
              in2[k].i[1] == want.i[1] && in2[k].i[2] == want.i[2] && in2[k].s == want.s,
              "struct -> rearranged struct %d", k);
    }
    CALL(MPI_Type_free(&t2));
    CALL(MPI_Type_free(&r2));

    /* Partial data: a prefix of a record (char, double, 3 ints) received as
     * a record: count undefined, 5 basic elements. */
    MPI_Datatype prefix = rec_type(0);
    memset(in, 0, sizeof in);
    xchg(out, 1, prefix, in, 1, rt, &st);
    check_counts(&st, rt, MPI_UNDEFINED, 5, "record prefix");
    struct rec want;
    fill_rec(&want, partner, 0);
    CHECK(in[0].c == want.c && in[0].d == want.d && in[0].i[2] == want.i[2] && in[0].s == 0,
          "record prefix contents");
    CALL(MPI_Type_free(&prefix));
    CALL(MPI_Type_free(&rt));
}

static void resized(void)
{
    MPI_Datatype r, neg;
    MPI_Status st;
    int out[16], in[16];
    int is = (int)sizeof(int);
    fill_ints(out, 16, me);

    /* One int every 3 ints. */
    CALL(MPI_Type_create_resized(MPI_INT, 0, 3 * is, &r));
    CALL(MPI_Type_commit(&r));
    check_layout(r, is, 0, 3 * is, 0, is, "resized(int, 0, 12)");
    memset(in, 0, sizeof in);
    xchg(out, 4, r, in, 4, MPI_INT, &st);
    for (int k = 0; k < 4; k++)
        CHECK(in[k] == val(partner, 3 * k), "resized element %d = %d", k, in[k]);
    for (int k = 0; k < 16; k++)
        in[k] = -1;
    xchg(out, 4, MPI_INT, in, 4, r, &st);
    check_counts(&st, r, 4, 4, "int -> resized");
    for (int k = 0; k < 12; k++)
        CHECK(in[k] == (k % 3 == 0 ? val(partner, k / 3) : -1), "int -> resized slot %d = %d",
              k, in[k]);

    /* Negative lower bound: lb -4 bytes, extent 8; the int sits at 0. */
    CALL(MPI_Type_create_resized(MPI_INT, -is, 2 * is, &neg));
    CALL(MPI_Type_commit(&neg));
    check_layout(neg, is, -is, 2 * is, 0, is, "resized(int, -4, 8)");
    memset(in, 0, sizeof in);
    xchg(&out[1], 3, neg, in, 3, MPI_INT, &st);
    CHECK(in[0] == val(partner, 1) && in[1] == val(partner, 3) && in[2] == val(partner, 5),
          "negative-lb resized gave %d %d %d", in[0], in[1], in[2]);
    CALL(MPI_Type_free(&r));
    CALL(MPI_Type_free(&neg));
}

/* Partial data with a contiguous type: 7 ints into count 3 of contiguous(3). */
static void partial(void)
{
    MPI_Datatype t3;
    MPI_Status st;
    int out[9], in[9];
    CALL(MPI_Type_contiguous(3, MPI_INT, &t3));
    CALL(MPI_Type_commit(&t3));
    fill_ints(out, 9, me);
    memset(in, 0, sizeof in);
    xchg(out, 7, MPI_INT, in, 3, t3, &st);
    check_counts(&st, t3, MPI_UNDEFINED, 7, "7 ints as contiguous(3)");
    check_counts(&st, MPI_INT, 7, 7, "7 ints as int");
    int bytes = -1;
    CALL(MPI_Get_count(&st, MPI_BYTE, &bytes));
    CHECK(bytes == 7 * (int)sizeof(int), "7 ints are %d bytes", bytes);
    /* 6 bytes are not a whole number of ints. */
    xchg(out, 6, MPI_BYTE, in, 6, MPI_BYTE, &st);
    int c = -5;
    CALL(MPI_Get_count(&st, MPI_INT, &c));
    CHECK(c == MPI_UNDEFINED, "Get_count(MPI_INT) of 6 bytes gave %d", c);
    CALL(MPI_Type_free(&t3));
}

/* A large strided message: 200000 blocks of 3 doubles, stride 5. */
static void large_vector(void)
{
    const int blocks = 200000;
    MPI_Datatype v;
    MPI_Status st;
    double *out = malloc(sizeof(double) * 5 * (size_t)blocks);
    double *in = malloc(sizeof(double) * 3 * (size_t)blocks);
    CHECK(out && in, "malloc");
    for (int k = 0; k < 5 * blocks; k++)
        out[k] = me * 1e7 + k;
    CALL(MPI_Type_vector(blocks, 3, 5, MPI_DOUBLE, &v));
    CALL(MPI_Type_commit(&v));
    xchg(out, 1, v, in, 3 * blocks, MPI_DOUBLE, &st);
    check_counts(&st, MPI_DOUBLE, 3 * blocks, 3 * blocks, "large vector");
    for (int b = 0; b < blocks; b++)
        for (int j = 0; j < 3; j++)
            CHECK(in[3 * b + j] == partner * 1e7 + 5 * b + j, "large vector block %d", b);
    /* And back: contiguous into the strided layout. */
    for (int k = 0; k < 5 * blocks; k++)
        out[k] = -1.0;
    double *src = in;
    for (int k = 0; k < 3 * blocks; k++)
        src[k] = me * 1e7 + k;
    xchg(src, 3 * blocks, MPI_DOUBLE, out, 1, v, &st);
    for (int b = 0; b < blocks; b++)
        for (int j = 0; j < 5; j++)
            CHECK(out[5 * b + j] == (j < 3 ? partner * 1e7 + 3 * b + j : -1.0),
                  "large vector back, block %d slot %d", b, j);
    CALL(MPI_Type_free(&v));
    free(out);
    free(in);
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    partner = (me ^ 1) < np ? (me ^ 1) : me;

    basic_types();
    contiguous();
    vector_positive();
    vector_negative();
    hvector();
    indexed();
    structs();
    resized();
    partial();
    large_vector();

    CALL(MPI_Barrier(MPI_COMM_WORLD));
    CALL(MPI_Finalize());
    return 0;
}
