/* ranks: 1 2 */
/*
 * MPI-4 large-count datatype functions: MPI_Type_contiguous_c of 3 * 2^30
 * bytes (no buffer of that size exists: only the type map) reports its size
 * and extent through MPI_Type_size_c / MPI_Type_get_extent_c beyond INT_MAX,
 * MPI_Type_size says MPI_UNDEFINED for it, and MPI_Pack_size_c and
 * MPI_Pack_external_size_c of such counts are exact; vector_c, hvector_c,
 * indexed_c, hindexed_c, the block forms, struct_c, resized_c, subarray_c
 * and darray_c build the same type maps as their int-count twins (same size,
 * extent and packed bytes); MPI_Type_get_envelope_c / get_contents_c return
 * their MPI_Count arguments as large counts; MPI_Pack_c / MPI_Unpack_c /
 * external32 round trips with MPI_Count positions; MPI_Get_count_c and
 * MPI_Get_elements_c of a received message; and MPI_ERR_COUNT for negative
 * counts.
 */
#include <limits.h>
#include <string.h>

#define TEST_NAME "large_count_types"
#include "testutil.h"

static const MPI_Count BIG = (MPI_Count)3 << 30;

static void big_types(void)
{
    MPI_Datatype t, v;
    CALL(MPI_Type_contiguous_c(BIG, MPI_BYTE, &t));
    MPI_Count size = -1, lb = -1, extent = -1;
    CALL(MPI_Type_size_c(t, &size));
    CHECK(size == BIG, "Type_size_c %ld, expected %ld", (long)size, (long)BIG);
    CALL(MPI_Type_get_extent_c(t, &lb, &extent));
    CHECK(lb == 0 && extent == BIG, "extent_c lb %ld extent %ld", (long)lb, (long)extent);
    CALL(MPI_Type_get_true_extent_c(t, &lb, &extent));
    CHECK(lb == 0 && extent == BIG, "true_extent_c lb %ld extent %ld", (long)lb, (long)extent);
    int isize = 0;
    CALL(MPI_Type_size(t, &isize));
    CHECK(isize == MPI_UNDEFINED, "Type_size of a %ld-byte type gave %d", (long)BIG, isize);

    /* Two of them in a vector with a stride of three: 6 * 2^30 bytes, 9 * 2^30 extent. */
    CALL(MPI_Type_vector_c(2, 1, 3, t, &v));
    CALL(MPI_Type_size_c(v, &size));
    CHECK(size == 2 * BIG, "vector_c size %ld", (long)size);
    CALL(MPI_Type_get_extent_c(v, &lb, &extent));
    CHECK(extent == 4 * BIG, "vector_c extent %ld, expected %ld", (long)extent, (long)(4 * BIG));
    CALL(MPI_Type_free(&v));
    CALL(MPI_Type_free(&t));

    MPI_Count psize = -1;
    CALL(MPI_Pack_size_c(BIG, MPI_INT, MPI_COMM_WORLD, &psize));
    CHECK(psize >= BIG * 4, "Pack_size_c %ld", (long)psize);
    CALL(MPI_Pack_external_size_c("external32", BIG, MPI_DOUBLE, &psize));
    CHECK(psize == BIG * 8, "Pack_external_size_c %ld", (long)psize);
}

/* The large-count and int-count constructors make the same type map. */
static void same_as_int(MPI_Datatype a, MPI_Datatype b, const char *what)
{
    MPI_Count sa, sb, la, lb, ea, eb;
    CALL(MPI_Type_size_c(a, &sa));
    CALL(MPI_Type_size_c(b, &sb));
    CALL(MPI_Type_get_extent_c(a, &la, &ea));
    CALL(MPI_Type_get_extent_c(b, &lb, &eb));
    CHECK(sa == sb && la == lb && ea == eb, "%s: size %ld/%ld lb %ld/%ld extent %ld/%ld", what,
          (long)sa, (long)sb, (long)la, (long)lb, (long)ea, (long)eb);
    CALL(MPI_Type_commit(&a));
    CALL(MPI_Type_commit(&b));
    int src[64], pa[64], pb[64];
    for (int i = 0; i < 64; i++)
        src[i] = i * 7 + 1;
    MPI_Count posa = 0;
    int posb = 0;
    memset(pa, 0, sizeof pa);
    memset(pb, 0, sizeof pb);
    CALL(MPI_Pack_c(src, 1, a, pa, sizeof pa, &posa, MPI_COMM_WORLD));
    CALL(MPI_Pack(src, 1, b, pb, sizeof pb, &posb, MPI_COMM_WORLD));
    CHECK(posa == posb && memcmp(pa, pb, (size_t)posb) == 0, "%s: packed %ld vs %d bytes", what,
          (long)posa, posb);
    /* Unpack_c puts the elements back where they came from. */
    int back[64];
    memset(back, 0, sizeof back);
    posa = 0;
    CALL(MPI_Unpack_c(pa, sizeof pa, &posa, back, 1, a, MPI_COMM_WORLD));
    CHECK(posa == posb, "%s: unpacked to %ld", what, (long)posa);
    int again[64];
    memset(again, 0, sizeof again);
    posb = 0;
    CALL(MPI_Pack(back, 1, b, again, sizeof again, &posb, MPI_COMM_WORLD));
    CHECK(memcmp(again, pb, (size_t)posb) == 0, "%s: round trip differs", what);
    CALL(MPI_Type_free(&a));
    CALL(MPI_Type_free(&b));
}

static void constructors(void)
{
    MPI_Datatype a, b;
    CALL(MPI_Type_vector_c(3, 2, 4, MPI_INT, &a));
    CALL(MPI_Type_vector(3, 2, 4, MPI_INT, &b));
    same_as_int(a, b, "vector");
    CALL(MPI_Type_create_hvector_c(3, 2, 20, MPI_INT, &a));
    CALL(MPI_Type_create_hvector(3, 2, 20, MPI_INT, &b));
    same_as_int(a, b, "hvector");
    MPI_Count cbl[3] = {1, 3, 2}, cdi[3] = {0, 5, 11}, cbd[3] = {0, 20, 44};
    int ibl[3] = {1, 3, 2}, idi[3] = {0, 5, 11};
    MPI_Aint abd[3] = {0, 20, 44};
    CALL(MPI_Type_indexed_c(3, cbl, cdi, MPI_INT, &a));
    CALL(MPI_Type_indexed(3, ibl, idi, MPI_INT, &b));
    same_as_int(a, b, "indexed");
    CALL(MPI_Type_create_hindexed_c(3, cbl, cbd, MPI_INT, &a));
    CALL(MPI_Type_create_hindexed(3, ibl, abd, MPI_INT, &b));
    same_as_int(a, b, "hindexed");
    CALL(MPI_Type_create_indexed_block_c(3, 2, cdi, MPI_INT, &a));
    CALL(MPI_Type_create_indexed_block(3, 2, idi, MPI_INT, &b));
    same_as_int(a, b, "indexed_block");
    CALL(MPI_Type_create_hindexed_block_c(3, 2, cbd, MPI_INT, &a));
    CALL(MPI_Type_create_hindexed_block(3, 2, abd, MPI_INT, &b));
    same_as_int(a, b, "hindexed_block");
    MPI_Datatype types[3] = {MPI_INT, MPI_INT, MPI_INT};
    CALL(MPI_Type_create_struct_c(3, cbl, cbd, types, &a));
    CALL(MPI_Type_create_struct(3, ibl, abd, types, &b));
    same_as_int(a, b, "struct");
    CALL(MPI_Type_create_resized_c(MPI_INT, -4, 12, &a));
    CALL(MPI_Type_create_resized(MPI_INT, -4, 12, &b));
    same_as_int(a, b, "resized");
    MPI_Count csz[2] = {4, 8}, csub[2] = {2, 3}, cst[2] = {1, 2};
    int isz[2] = {4, 8}, isub[2] = {2, 3}, ist[2] = {1, 2};
    CALL(MPI_Type_create_subarray_c(2, csz, csub, cst, MPI_ORDER_C, MPI_INT, &a));
    CALL(MPI_Type_create_subarray(2, isz, isub, ist, MPI_ORDER_C, MPI_INT, &b));
    same_as_int(a, b, "subarray");
    MPI_Count cg[2] = {6, 4};
    int ig[2] = {6, 4}, distribs[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC};
    int dargs[2] = {MPI_DISTRIBUTE_DFLT_DARG, 1}, psizes[2] = {2, 2};
    CALL(MPI_Type_create_darray_c(4, 3, 2, cg, distribs, dargs, psizes, MPI_ORDER_C, MPI_INT, &a));
    CALL(MPI_Type_create_darray(4, 3, 2, ig, distribs, dargs, psizes, MPI_ORDER_C, MPI_INT, &b));
    same_as_int(a, b, "darray");
}

static void contents(void)
{
    MPI_Datatype t, inner;
    CALL(MPI_Type_contiguous(2, MPI_DOUBLE, &inner));
    MPI_Count bl[2] = {1, 4}, di[2] = {0, 3};
    CALL(MPI_Type_indexed_c(2, bl, di, inner, &t));
    MPI_Count ni = -1, na = -1, nl = -1, nd = -1;
    int comb = -1;
    CALL(MPI_Type_get_envelope_c(t, &ni, &na, &nl, &nd, &comb));
    CHECK(comb == MPI_COMBINER_INDEXED && ni == 0 && na == 0 && nl == 5 && nd == 1,
          "envelope_c of indexed_c: combiner %d, %ld ints %ld addresses %ld counts %ld types",
          comb, (long)ni, (long)na, (long)nl, (long)nd);
    MPI_Count large[5] = {0};
    MPI_Datatype dts[1] = {MPI_DATATYPE_NULL};
    CALL(MPI_Type_get_contents_c(t, 0, 0, 5, 1, NULL, NULL, large, dts));
    CHECK(large[0] == 2 && large[1] == 1 && large[2] == 4 && large[3] == 0 && large[4] == 3,
          "contents_c: %ld %ld %ld %ld %ld", (long)large[0], (long)large[1], (long)large[2],
          (long)large[3], (long)large[4]);
    MPI_Count size = 0;
    CALL(MPI_Type_size_c(dts[0], &size));
    CHECK(size == 16, "contents_c type: size %ld", (long)size);
    CALL(MPI_Type_free(&dts[0]));
    CALL(MPI_Type_free(&t));

    /* A type made by an int-count constructor keeps its int-count form. */
    CALL(MPI_Type_get_envelope_c(inner, &ni, &na, &nl, &nd, &comb));
    CHECK(comb == MPI_COMBINER_CONTIGUOUS && ni == 1 && na == 0 && nl == 0 && nd == 1,
          "envelope_c of contiguous: combiner %d, %ld/%ld/%ld/%ld", comb, (long)ni, (long)na,
          (long)nl, (long)nd);
    int ints[1] = {0};
    MPI_Datatype old = MPI_DATATYPE_NULL;
    CALL(MPI_Type_get_contents_c(inner, 1, 0, 0, 1, ints, NULL, NULL, &old));
    CHECK(ints[0] == 2 && old == MPI_DOUBLE, "contents_c of contiguous: %d", ints[0]);
    CALL(MPI_Type_get_envelope_c(MPI_INT, &ni, &na, &nl, &nd, &comb));
    CHECK(comb == MPI_COMBINER_NAMED, "envelope_c of MPI_INT: combiner %d", comb);
    CALL(MPI_Type_free(&inner));
}

static void pack_external(void)
{
    double in[3] = {1.5, -2.25, 1e300}, out[3] = {0};
    unsigned char buf[24];
    MPI_Count pos = 0;
    CALL(MPI_Pack_external_c("external32", in, 3, MPI_DOUBLE, buf, sizeof buf, &pos));
    CHECK(pos == 24, "Pack_external_c position %ld", (long)pos);
    /* external32 is big-endian: 1.5 is 3f f8 00 ... */
    CHECK(buf[0] == 0x3f && buf[1] == 0xf8 && buf[2] == 0, "external32 bytes %02x %02x", buf[0],
          buf[1]);
    pos = 0;
    CALL(MPI_Unpack_external_c("external32", buf, sizeof buf, &pos, out, 3, MPI_DOUBLE));
    CHECK(pos == 24 && memcmp(in, out, sizeof in) == 0, "Unpack_external_c round trip");
}

static void counts_of_message(void)
{
    if (np < 2)
        return;
    int partner = me ^ 1;
    if (partner >= np)
        return;
    double d[5] = {1, 2, 3, 4, 5};
    MPI_Status st;
    if (me % 2 == 0) {
        CALL(MPI_Send(d, 5, MPI_DOUBLE, partner, 3, MPI_COMM_WORLD));
    } else {
        double r[8];
        CALL(MPI_Recv(r, 8, MPI_DOUBLE, partner, 3, MPI_COMM_WORLD, &st));
        MPI_Count n = -1;
        CALL(MPI_Get_count_c(&st, MPI_DOUBLE, &n));
        CHECK(n == 5, "Get_count_c %ld", (long)n);
        CALL(MPI_Get_elements_c(&st, MPI_DOUBLE, &n));
        CHECK(n == 5, "Get_elements_c %ld", (long)n);
        CALL(MPI_Get_count_c(&st, MPI_LONG_DOUBLE, &n));
        CHECK(n == MPI_UNDEFINED, "Get_count_c of 40 bytes as long double: %ld", (long)n);
        MPI_Datatype pair;
        CALL(MPI_Type_contiguous_c(2, MPI_DOUBLE, &pair));
        CALL(MPI_Type_commit(&pair));
        CALL(MPI_Get_count_c(&st, pair, &n));
        CHECK(n == MPI_UNDEFINED, "Get_count_c of 5 doubles as pairs: %ld", (long)n);
        CALL(MPI_Get_elements_c(&st, pair, &n));
        CHECK(n == 5, "Get_elements_c of 5 doubles as pairs: %ld", (long)n);
        CALL(MPI_Type_free(&pair));
    }
}

static void errors(void)
{
    MPI_Datatype t = MPI_DATATYPE_NULL;
    MPI_Count size = 0, pos = 0;
    char buf[16];
    EXPECT(MPI_ERR_COUNT, MPI_Type_contiguous_c(-1, MPI_INT, &t));
    EXPECT(MPI_ERR_COUNT, MPI_Type_vector_c(-5, 1, 1, MPI_INT, &t));
    EXPECT(MPI_ERR_COUNT, MPI_Pack_size_c(-2, MPI_INT, MPI_COMM_WORLD, &size));
    EXPECT(MPI_ERR_COUNT, MPI_Pack_c(buf, -1, MPI_INT, buf, sizeof buf, &pos, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_TYPE, MPI_Type_size_c(MPI_DATATYPE_NULL, &size));
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    big_types();
    constructors();
    contents();
    pack_external();
    counts_of_message();
    errors();
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0)
        printf("large_count_types: ok\n");
    CALL(MPI_Finalize());
    return 0;
}
