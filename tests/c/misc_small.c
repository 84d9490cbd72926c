/* ranks: 1 */
/*
 * Small functions: MPI_Get_address and MPI_Aint_add/MPI_Aint_diff on a
 * struct's fields; MPI_Alloc_mem/MPI_Free_mem (usable memory, negative size
 * is an error); MPI_Op_commutative of predefined and user operations;
 * MPI_Reduce_local with predefined and user operations, contiguous and
 * strided datatypes, and its error classes (MPI_IN_PLACE or one buffer
 * twice: MPI_ERR_BUFFER).
 */
#define TEST_NAME "misc_small"
#include "testutil.h"

/* Non-commutative: inout = in * 10 + inout (order shows). */
static void digits(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] = ((int *)in)[i] * 10 + ((int *)inout)[i];
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    struct { char c; double d; int a[4]; } s;
    MPI_Aint base, ad, aa;
    CALL(MPI_Get_address(&s, &base));
    CALL(MPI_Get_address(&s.d, &ad));
    CALL(MPI_Get_address(&s.a[2], &aa));
    CHECK(MPI_Aint_diff(ad, base) == (MPI_Aint)((char *)&s.d - (char *)&s), "diff %ld", (long)MPI_Aint_diff(ad, base));
    CHECK(MPI_Aint_diff(aa, base) == (MPI_Aint)((char *)&s.a[2] - (char *)&s), "diff of a[2]");
    CHECK(MPI_Aint_add(base, MPI_Aint_diff(aa, base)) == aa, "add(base, diff) != address");

    int *mem = NULL;
    CALL(MPI_Alloc_mem(1000 * sizeof(int), MPI_INFO_NULL, &mem));
    CHECK(mem != NULL, "MPI_Alloc_mem gave NULL");
    for (int i = 0; i < 1000; i++)
        mem[i] = i;
    CHECK(mem[999] == 999, "memory");
    CALL(MPI_Free_mem(mem));

    int commute;
    CALL(MPI_Op_commutative(MPI_SUM, &commute));
    CHECK(commute, "MPI_SUM not commutative");
    MPI_Op op;
    CALL(MPI_Op_create(digits, 0, &op));
    CALL(MPI_Op_commutative(op, &commute));
    CHECK(!commute, "a non-commutative user op reported commutative");

    int in[6] = { 1, 2, 3, 4, 5, 6 }, io[6] = { 10, 20, 30, 40, 50, 60 };
    CALL(MPI_Reduce_local(in, io, 6, MPI_INT, MPI_SUM));
    for (int i = 0; i < 6; i++)
        CHECK(io[i] == 11 * (i + 1), "sum[%d] = %d", i, io[i]);
    CHECK(in[0] == 1 && in[5] == 6, "inbuf changed");
    int a[3] = { 1, 2, 3 }, b[3] = { 4, 5, 6 };
    CALL(MPI_Reduce_local(a, b, 3, MPI_INT, op));
    CHECK(b[0] == 14 && b[1] == 25 && b[2] == 36, "user op: %d %d %d (want 14 25 36)", b[0], b[1], b[2]);
#ifdef FERRY_MPI_H
    /* Strided: every other int (MPICH's Reduce_local crashes on this). */
    MPI_Datatype every2;
    CALL(MPI_Type_vector(3, 1, 2, MPI_INT, &every2));
    CALL(MPI_Type_commit(&every2));
    int x[6] = { 1, 100, 2, 100, 3, 100 }, y[6] = { 5, 7, 5, 7, 5, 7 };
    CALL(MPI_Reduce_local(x, y, 1, every2, op));
    /* The function sees one element of the vector (len 1) in its own layout. */
    CHECK(y[0] == 15 && y[2] == 5 && y[4] == 5 && y[1] == 7 && y[3] == 7 && y[5] == 7,
          "strided user op: %d %d %d %d %d %d", y[0], y[1], y[2], y[3], y[4], y[5]);
    CALL(MPI_Type_free(&every2));
#endif

    CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int rc, cls;
#ifdef FERRY_MPI_H
    /* MPICH does not check the count here and crashes. */
    rc = MPI_Reduce_local(in, io, -1, MPI_INT, MPI_SUM);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COUNT, "negative count: class %d", cls);
#endif
    rc = MPI_Reduce_local(in, io, 1, MPI_INT, MPI_OP_NULL);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_OP, "MPI_OP_NULL: class %d", cls);
    /* MPI_IN_PLACE is no buffer here, and the two buffers may not be one. */
    EXPECT(MPI_ERR_BUFFER, MPI_Reduce_local(MPI_IN_PLACE, io, 2, MPI_INT, MPI_SUM));
    EXPECT(MPI_ERR_BUFFER, MPI_Reduce_local(in, MPI_IN_PLACE, 2, MPI_INT, MPI_SUM));
    EXPECT(MPI_ERR_BUFFER, MPI_Reduce_local(io, io, 2, MPI_INT, MPI_SUM));
    rc = MPI_Op_commutative(MPI_OP_NULL, &commute);
    CHECK(rc != MPI_SUCCESS, "MPI_Op_commutative(MPI_OP_NULL) succeeded");
    CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    CALL(MPI_Op_free(&op));
    MPI_Finalize();
    return 0;
}
