/* ranks: 1 2 4 */
/*
 * The array and block constructors (hindexed, indexed_block, hindexed_block,
 * subarray in C and Fortran order, darray with block, cyclic and undistributed
 * dimensions, dup): each type map is read back through MPI_Pack of a buffer of
 * ints holding their own index, and through a send to rank^1 received as plain
 * ints, and compared with the expected list of indexes. Envelopes and contents:
 * each type is rebuilt from its contents and must have the same map. Names of
 * predefined and derived types, true extents, the _x queries, Type_match_size,
 * and the error classes of bad arguments under MPI_ERRORS_RETURN.
 */
#include <string.h>

#define TEST_NAME "datatypes_more"
#include "testutil.h"

#define N 256
static int partner = -1;
static int src[N];

/* The indexes of the ints one copy of t covers, in type-map order; returns how many. */
static int map_of(MPI_Datatype t, int *out)
{
    int size = 0, pos = 0;
    char buf[N * sizeof(int)];
    CALL(MPI_Type_size(t, &size));
    CHECK(size % (int)sizeof(int) == 0 && size <= (int)sizeof buf, "size %d", size);
    CALL(MPI_Pack(src, 1, t, buf, sizeof buf, &pos, MPI_COMM_WORLD));
    CHECK(pos == size, "packed %d of %d bytes", pos, size);
    memcpy(out, buf, size);
    return size / (int)sizeof(int);
}

/* t must cover exactly the `n` ints of `want`, through Pack and through a send. */
static void expect_map(MPI_Datatype t, const int *want, int n, const char *what)
{
    int got[N], recv[N];
    int k = map_of(t, got);
    CHECK(k == n, "%s: %d ints, expected %d", what, k, n);
    for (int i = 0; i < n; i++)
        CHECK(got[i] == want[i], "%s: entry %d is %d, expected %d", what, i, got[i], want[i]);
    MPI_Status st;
    CALL(MPI_Sendrecv(src, 1, t, partner, 7, recv, N, MPI_INT, partner, 7, MPI_COMM_WORLD, &st));
    int count = -1;
    CALL(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == n, "%s: received %d ints", what, count);
    for (int i = 0; i < n; i++)
        CHECK(recv[i] == want[i], "%s: received entry %d is %d", what, i, recv[i]);
}

/* Rebuilds t from its envelope and contents. */
static MPI_Datatype rebuild(MPI_Datatype t)
{
    int ni, na, nd, comb;
    CALL(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
    int ints[64];
    MPI_Aint aints[64];
    MPI_Datatype types[8];
    CHECK(ni <= 64 && na <= 64 && nd <= 8, "envelope %d %d %d", ni, na, nd);
    CALL(MPI_Type_get_contents(t, ni, na, nd, ints, aints, types));
    MPI_Datatype r = MPI_DATATYPE_NULL;
    switch (comb) {
    case MPI_COMBINER_DUP: CHECK(ni == 0 && na == 0 && nd == 1, "dup"); CALL(MPI_Type_dup(types[0], &r)); break;
    case MPI_COMBINER_CONTIGUOUS: CALL(MPI_Type_contiguous(ints[0], types[0], &r)); break;
    case MPI_COMBINER_VECTOR: CALL(MPI_Type_vector(ints[0], ints[1], ints[2], types[0], &r)); break;
    case MPI_COMBINER_HVECTOR: CALL(MPI_Type_create_hvector(ints[0], ints[1], aints[0], types[0], &r)); break;
    case MPI_COMBINER_INDEXED:
        CHECK(ni == 2 * ints[0] + 1, "indexed ints %d", ni);
        CALL(MPI_Type_indexed(ints[0], ints + 1, ints + 1 + ints[0], types[0], &r));
        break;
    case MPI_COMBINER_HINDEXED:
        CHECK(ni == ints[0] + 1 && na == ints[0], "hindexed %d %d", ni, na);
        CALL(MPI_Type_create_hindexed(ints[0], ints + 1, aints, types[0], &r));
        break;
    case MPI_COMBINER_INDEXED_BLOCK:
        CHECK(ni == ints[0] + 2, "indexed_block ints %d", ni);
        CALL(MPI_Type_create_indexed_block(ints[0], ints[1], ints + 2, types[0], &r));
        break;
    case MPI_COMBINER_HINDEXED_BLOCK:
        CHECK(ni == 2 && na == ints[0], "hindexed_block %d %d", ni, na);
        CALL(MPI_Type_create_hindexed_block(ints[0], ints[1], aints, types[0], &r));
        break;
    case MPI_COMBINER_STRUCT:
        CALL(MPI_Type_create_struct(ints[0], ints + 1, aints, types, &r));
        break;
    case MPI_COMBINER_SUBARRAY: {
        int n = ints[0];
        CHECK(ni == 3 * n + 2, "subarray ints %d", ni);
        CALL(MPI_Type_create_subarray(n, ints + 1, ints + 1 + n, ints + 1 + 2 * n, ints[3 * n + 1], types[0], &r));
        break;
    }
    case MPI_COMBINER_DARRAY: {
        int n = ints[2];
        CHECK(ni == 4 * n + 4, "darray ints %d", ni);
        CALL(MPI_Type_create_darray(ints[0], ints[1], n, ints + 3, ints + 3 + n, ints + 3 + 2 * n,
                                    ints + 3 + 3 * n, ints[4 * n + 3], types[0], &r));
        break;
    }
    case MPI_COMBINER_RESIZED: CALL(MPI_Type_create_resized(types[0], aints[0], aints[1], &r)); break;
    default: fail(__LINE__, "combiner %d", comb);
    }
    for (int i = 0; i < nd; i++) {
        int a, b, c, k;
        CALL(MPI_Type_get_envelope(types[i], &a, &b, &c, &k));
        if (k != MPI_COMBINER_NAMED)
            CALL(MPI_Type_free(&types[i]));
    }
    CALL(MPI_Type_commit(&r));
    return r;
}

/* Checks t's map, then the map of the type rebuilt from its contents, and frees t. */
static void check(MPI_Datatype *t, int combiner, const int *want, int n, const char *what)
{
    int ni, na, nd, comb;
    CALL(MPI_Type_commit(t));
    CALL(MPI_Type_get_envelope(*t, &ni, &na, &nd, &comb));
    CHECK(comb == combiner, "%s: combiner %d, expected %d", what, comb, combiner);
    expect_map(*t, want, n, what);
    MPI_Datatype r = rebuild(*t);
    expect_map(r, want, n, what);
    MPI_Aint lb1, ex1, lb2, ex2;
    CALL(MPI_Type_get_extent(*t, &lb1, &ex1));
    CALL(MPI_Type_get_extent(r, &lb2, &ex2));
    CHECK(lb1 == lb2 && ex1 == ex2, "%s: rebuilt bounds %ld %ld vs %ld %ld", what, (long)lb2, (long)ex2, (long)lb1, (long)ex1);
    CALL(MPI_Type_free(&r));
    CALL(MPI_Type_free(t));
}

static void constructors(void)
{
    MPI_Datatype t, v;
    int bl[3] = {2, 1, 3};
    MPI_Aint hd[3] = {10 * 4, 0, 5 * 4};
    CALL(MPI_Type_create_hindexed(3, bl, hd, MPI_INT, &t));
    check(&t, MPI_COMBINER_HINDEXED, (int[]){10, 11, 0, 5, 6, 7}, 6, "hindexed");

    int d[3] = {4, 0, 9};
    CALL(MPI_Type_create_indexed_block(3, 2, d, MPI_INT, &t));
    check(&t, MPI_COMBINER_INDEXED_BLOCK, (int[]){4, 5, 0, 1, 9, 10}, 6, "indexed_block");

    /* Blocks of a vector (2 ints, stride 3) at byte displacements. */
    CALL(MPI_Type_vector(2, 1, 3, MPI_INT, &v));
    MPI_Aint hb[2] = {0, 20 * 4};
    CALL(MPI_Type_create_hindexed_block(2, 1, hb, v, &t));
    CALL(MPI_Type_free(&v));
    check(&t, MPI_COMBINER_HINDEXED_BLOCK, (int[]){0, 3, 20, 23}, 4, "hindexed_block of a vector");

    /* Rows 1..2, columns 2..4 of a 4 x 6 matrix, in C and in Fortran order. */
    int sizes[2] = {4, 6}, subs[2] = {2, 3}, starts[2] = {1, 2};
    CALL(MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &t));
    MPI_Aint lb, ex;
    CALL(MPI_Type_get_extent(t, &lb, &ex));
    CHECK(lb == 0 && ex == 24 * 4, "subarray extent %ld %ld", (long)lb, (long)ex);
    CALL(MPI_Type_get_true_extent(t, &lb, &ex));
    CHECK(lb == 8 * 4 && ex == 9 * 4, "subarray true extent %ld %ld", (long)lb, (long)ex);
    MPI_Count clb, cex, csz;
    CALL(MPI_Type_get_true_extent_x(t, &clb, &cex));
    CHECK(clb == 32 && cex == 36, "true_extent_x %lld %lld", (long long)clb, (long long)cex);
    CALL(MPI_Type_get_extent_x(t, &clb, &cex));
    CALL(MPI_Type_size_x(t, &csz));
    CHECK(clb == 0 && cex == 96 && csz == 24, "extent_x/size_x %lld %lld %lld", (long long)clb, (long long)cex, (long long)csz);
    check(&t, MPI_COMBINER_SUBARRAY, (int[]){8, 9, 10, 14, 15, 16}, 6, "subarray C");
    CALL(MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_FORTRAN, MPI_INT, &t));
    /* Fortran: element (i, j) at j * 4 + i; i fastest. */
    check(&t, MPI_COMBINER_SUBARRAY, (int[]){9, 10, 13, 14, 17, 18}, 6, "subarray Fortran");

    /* A 4 x 6 array over a 2 x 2 grid: rows in blocks, columns cyclic in pairs. Rank 3 is at
     * (1, 1): rows 2..3, columns 2, 3. Then a 1-d cyclic(1) over 3 and an undistributed one. */
    int gs[2] = {4, 6}, dist[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC};
    int dargs[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, ps[2] = {2, 2};
    CALL(MPI_Type_create_darray(4, 3, 2, gs, dist, dargs, ps, MPI_ORDER_C, MPI_INT, &t));
    CALL(MPI_Type_get_extent(t, &lb, &ex));
    CHECK(lb == 0 && ex == 24 * 4, "darray extent %ld %ld", (long)lb, (long)ex);
    check(&t, MPI_COMBINER_DARRAY, (int[]){14, 15, 20, 21}, 4, "darray block x cyclic(2)");
    CALL(MPI_Type_create_darray(4, 3, 2, gs, dist, dargs, ps, MPI_ORDER_FORTRAN, MPI_INT, &t));
    /* Fortran: (i, j) at j * 4 + i; rows 2..3, columns 2, 3. */
    check(&t, MPI_COMBINER_DARRAY, (int[]){10, 11, 14, 15}, 4, "darray Fortran");
    int g1 = 10, d1 = MPI_DISTRIBUTE_CYCLIC, a1 = MPI_DISTRIBUTE_DFLT_DARG, p1 = 3;
    CALL(MPI_Type_create_darray(3, 1, 1, &g1, &d1, &a1, &p1, MPI_ORDER_C, MPI_INT, &t));
    check(&t, MPI_COMBINER_DARRAY, (int[]){1, 4, 7}, 3, "darray cyclic");
    int dn[2] = {MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_BLOCK}, pn[2] = {1, 3};
    int an[2] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG}, gn[2] = {2, 5};
    CALL(MPI_Type_create_darray(3, 2, 2, gn, dn, an, pn, MPI_ORDER_C, MPI_INT, &t));
    check(&t, MPI_COMBINER_DARRAY, (int[]){4, 9}, 2, "darray none x block");

    /* Dup, and contents that nest a derived type. */
    CALL(MPI_Type_vector(3, 2, 4, MPI_INT, &v));
    CALL(MPI_Type_dup(v, &t));
    check(&t, MPI_COMBINER_DUP, (int[]){0, 1, 4, 5, 8, 9}, 6, "dup of a vector");
    CALL(MPI_Type_create_resized(v, 0, 40, &t));
    CALL(MPI_Type_free(&v));
    check(&t, MPI_COMBINER_RESIZED, (int[]){0, 1, 4, 5, 8, 9}, 6, "resized vector");
    CALL(MPI_Type_contiguous(3, MPI_INT, &v));
    int sbl[2] = {1, 2};
    MPI_Aint sd[2] = {12 * 4, 0};
    MPI_Datatype st[2] = {v, MPI_INT};
    CALL(MPI_Type_create_struct(2, sbl, sd, st, &t));
    CALL(MPI_Type_free(&v));
    check(&t, MPI_COMBINER_STRUCT, (int[]){12, 13, 14, 0, 1}, 5, "struct");
    int ib[2] = {1, 2}, id[2] = {7, 2};
    CALL(MPI_Type_indexed(2, ib, id, MPI_INT, &t));
    check(&t, MPI_COMBINER_INDEXED, (int[]){7, 2, 3}, 3, "indexed");
}

static void introspection(void)
{
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    CALL(MPI_Type_get_name(MPI_INT, name, &len));
    CHECK(strcmp(name, "MPI_INT") == 0 && len == 7, "name of MPI_INT: '%s' (%d)", name, len);
    CALL(MPI_Type_get_name(MPI_DOUBLE, name, &len));
    CHECK(strcmp(name, "MPI_DOUBLE") == 0, "name of MPI_DOUBLE: '%s'", name);
    /* One handle, two names in C: MPICH answers with MPI_C_COMPLEX. */
    CALL(MPI_Type_get_name(MPI_C_FLOAT_COMPLEX, name, &len));
    CHECK(strcmp(name, "MPI_C_COMPLEX") == 0, "name of MPI_C_COMPLEX: '%s'", name);
    int ni, na, nd, comb;
    CALL(MPI_Type_get_envelope(MPI_DOUBLE_INT, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_NAMED && ni == 0 && na == 0 && nd == 0, "envelope of a named type");
    MPI_Datatype t;
    CALL(MPI_Type_contiguous(2, MPI_INT, &t));
    CALL(MPI_Type_get_name(t, name, &len));
    CHECK(len == 0 && name[0] == 0, "a new type has no name: '%s'", name);
    CALL(MPI_Type_set_name(t, "pair of ints"));
    CALL(MPI_Type_get_name(t, name, &len));
    CHECK(strcmp(name, "pair of ints") == 0 && len == 12, "set name: '%s' (%d)", name, len);
    CALL(MPI_Type_free(&t));

    MPI_Datatype m;
    int size = 0;
    CALL(MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &m));
    CALL(MPI_Type_size(m, &size));
    CHECK(size == 8, "match_size real 8 gave size %d", size);
    CALL(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 4, &m));
    CALL(MPI_Type_size(m, &size));
    CHECK(size == 4, "match_size integer 4 gave size %d", size);
    CALL(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 16, &m));
    CALL(MPI_Type_size(m, &size));
    CHECK(size == 16, "match_size complex 16 gave size %d", size);
}

static void expect_class_of(int rc, int want, const char *what)
{
    int cls = -1;
    CHECK(rc != MPI_SUCCESS, "%s succeeded", what);
    CALL(MPI_Error_class(rc, &cls));
    CHECK(cls == want, "%s: class %d, expected %d", what, cls, want);
}

static void errors(void)
{
    CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Datatype t = MPI_DATATYPE_NULL;
    int bl[1] = {1}, d[1] = {0};
    MPI_Aint hd[1] = {0};
    expect_class_of(MPI_Type_create_hindexed(-1, bl, hd, MPI_INT, &t), MPI_ERR_COUNT, "hindexed count -1");
    expect_class_of(MPI_Type_create_indexed_block(-2, 1, d, MPI_INT, &t), MPI_ERR_COUNT, "indexed_block count -2");
    expect_class_of(MPI_Type_create_hindexed_block(1, 1, hd, MPI_DATATYPE_NULL, &t), MPI_ERR_TYPE, "hindexed_block of MPI_DATATYPE_NULL");
#ifndef MPICH_DEVIATIONS
    /* MPICH 4.0 does not check the shape of a subarray or of a darray grid. */
    int sizes[2] = {4, 6}, subs[2] = {5, 3}, starts[2] = {0, 0};
    expect_class_of(MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG, "subarray larger than its array");
    subs[0] = 2;
    starts[1] = 4;
    expect_class_of(MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG, "subarray past the end");
    starts[1] = 0;
    expect_class_of(MPI_Type_create_subarray(2, sizes, subs, starts, 99, MPI_INT, &t), MPI_ERR_ARG, "subarray order 99");
    int gs = 8, dist = MPI_DISTRIBUTE_NONE, darg = MPI_DISTRIBUTE_DFLT_DARG, ps = 2;
    expect_class_of(MPI_Type_create_darray(2, 0, 1, &gs, &dist, &darg, &ps, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG, "darray none over 2");
#endif
    expect_class_of(MPI_Type_get_contents(MPI_INT, 0, 0, 0, NULL, NULL, NULL), MPI_ERR_TYPE, "contents of a named type");
    CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    partner = (me ^ 1) < np ? (me ^ 1) : me;
    for (int i = 0; i < N; i++)
        src[i] = i;
    constructors();
    introspection();
    errors();
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    CALL(MPI_Finalize());
    return 0;
}
