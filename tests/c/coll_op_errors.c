/* ranks: 1 2 3 4 */
/*
 * Argument errors of the operation functions and of the newer collectives
 * under MPI_ERRORS_RETURN, made identically on every rank, each checked for
 * its error class: MPI_Op_create without a function or output -> MPI_ERR_ARG;
 * MPI_Op_free of a predefined operation or of MPI_OP_NULL -> MPI_ERR_OP; a
 * freed user operation in a reduction -> MPI_ERR_OP; MPI_REPLACE and
 * MPI_NO_OP (one-sided only) in a reduction -> MPI_ERR_OP; predefined
 * operations on types they are not defined for (MPI_BAND on MPI_FLOAT and
 * MPI_DOUBLE, MPI_SUM on MPI_FLOAT_INT, MPI_MINLOC on MPI_DOUBLE, MPI_LAND on
 * MPI_DOUBLE) -> MPI_ERR_OP; MPI_Alltoall(v), MPI_Reduce_scatter and their
 * non-blocking forms with negative counts -> MPI_ERR_COUNT, with
 * MPI_COMM_NULL -> MPI_ERR_COMM, with MPI_DATATYPE_NULL -> MPI_ERR_TYPE, and
 * without count arrays -> MPI_ERR_ARG; MPI_IN_PLACE as a receive buffer or
 * as a broadcast's buffer -> MPI_ERR_BUFFER; non-blocking collectives
 * without a request -> MPI_ERR_ARG. The collectives still work afterwards.
 */
#include <string.h>

#define TEST_NAME "coll_op_errors"
#include "testutil.h"

static void add(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Comm w = MPI_COMM_WORLD;
    CHECK(np <= 64, "at most 64 ranks");
    int a[64], b[64], counts[64], displs[64], neg[64];
    double x[4] = { 1, 2, 3, 4 }, y[4];
    float f[4] = { 1, 2, 3, 4 }, g[4];
    struct { float v; int i; } fi[2] = { { 1, 1 }, { 2, 2 } }, fo[2];
    for (int k = 0; k < 64; k++) {
        a[k] = k;
        counts[k] = 1;
        displs[k] = k;
        neg[k] = k == np - 1 ? -1 : 1;
    }
    MPI_Request q;

    /* Creating and freeing operations. */
    MPI_Op op = MPI_OP_NULL, sum;
    EXPECT(MPI_ERR_ARG, MPI_Op_create(NULL, 1, &op));
    EXPECT(MPI_ERR_ARG, MPI_Op_create(add, 1, NULL));
    op = MPI_SUM;
    EXPECT(MPI_ERR_OP, MPI_Op_free(&op));
    CHECK(op == MPI_SUM, "a failed MPI_Op_free changed the handle");
    op = MPI_OP_NULL;
    EXPECT(MPI_ERR_OP, MPI_Op_free(&op));
    CALL(MPI_Op_create(add, 1, &op));
    MPI_Op stale = op;
    CALL(MPI_Op_free(&op));
    CHECK(op == MPI_OP_NULL, "MPI_Op_free left the handle");
#ifndef MPICH_DEVIATIONS
    /* MPICH 4.0 does not notice a freed operation handle. */
    EXPECT(MPI_ERR_OP, MPI_Allreduce(a, b, 1, MPI_INT, stale, w));
    EXPECT(MPI_ERR_OP, MPI_Op_free(&stale));
#endif
    (void)stale;

    /* Operations that do not apply. */
    EXPECT(MPI_ERR_OP, MPI_Allreduce(a, b, 1, MPI_INT, MPI_REPLACE, w));
    EXPECT(MPI_ERR_OP, MPI_Reduce(a, b, 1, MPI_INT, MPI_NO_OP, 0, w));
    EXPECT(MPI_ERR_OP, MPI_Allreduce(f, g, 4, MPI_FLOAT, MPI_BAND, w));
    EXPECT(MPI_ERR_OP, MPI_Reduce_scatter_block(x, y, 1, MPI_DOUBLE, MPI_BOR, w));
    EXPECT(MPI_ERR_OP, MPI_Allreduce(fi, fo, 2, MPI_FLOAT_INT, MPI_SUM, w));
    EXPECT(MPI_ERR_OP, MPI_Scan(x, y, 4, MPI_DOUBLE, MPI_MINLOC, w));
    EXPECT(MPI_ERR_OP, MPI_Reduce_scatter(x, y, counts, MPI_DOUBLE, MPI_MAXLOC, w));
    EXPECT(MPI_ERR_OP, MPI_Reduce_scatter(a, b, counts, MPI_INT, MPI_OP_NULL, w));
    EXPECT(MPI_ERR_OP, MPI_Iallreduce(a, b, 1, MPI_INT, MPI_OP_NULL, w, &q));
#ifndef MPICH_DEVIATIONS
    /* MPICH 4.0 also takes the logical operations on floating point types. */
    EXPECT(MPI_ERR_OP, MPI_Allreduce(x, y, 4, MPI_DOUBLE, MPI_LAND, w));
#endif

    /* Alltoall(v), Reduce_scatter: counts, communicator, datatype, arrays. */
    EXPECT(MPI_ERR_COUNT, MPI_Alltoall(a, -1, MPI_INT, b, 1, MPI_INT, w));
    EXPECT(MPI_ERR_COUNT, MPI_Ialltoall(a, 1, MPI_INT, b, -1, MPI_INT, w, &q));
    EXPECT(MPI_ERR_COUNT, MPI_Alltoallv(a, neg, displs, MPI_INT, b, counts, displs, MPI_INT, w));
    EXPECT(MPI_ERR_COUNT, MPI_Ialltoallv(a, counts, displs, MPI_INT, b, neg, displs, MPI_INT, w, &q));
    EXPECT(MPI_ERR_COUNT, MPI_Reduce_scatter(a, b, neg, MPI_INT, MPI_SUM, w));
    EXPECT(MPI_ERR_COUNT, MPI_Ireduce_scatter(a, b, neg, MPI_INT, MPI_SUM, w, &q));
    EXPECT(MPI_ERR_COMM, MPI_Alltoall(a, 1, MPI_INT, b, 1, MPI_INT, MPI_COMM_NULL));
    EXPECT(MPI_ERR_COMM, MPI_Alltoallv(a, counts, displs, MPI_INT, b, counts, displs, MPI_INT, MPI_COMM_NULL));
    EXPECT(MPI_ERR_COMM, MPI_Reduce_scatter(a, b, counts, MPI_INT, MPI_SUM, MPI_COMM_NULL));
    EXPECT(MPI_ERR_COMM, MPI_Ibarrier(MPI_COMM_NULL, &q));
    EXPECT(MPI_ERR_TYPE, MPI_Alltoall(a, 1, MPI_DATATYPE_NULL, b, 1, MPI_INT, w));
    EXPECT(MPI_ERR_TYPE, MPI_Alltoallv(a, counts, displs, MPI_INT, b, counts, displs, MPI_DATATYPE_NULL, w));
#ifndef MPICH_DEVIATIONS
    /* MPICH 4.0 reads the missing arrays and crashes. */
    EXPECT(MPI_ERR_ARG, MPI_Alltoallv(a, NULL, displs, MPI_INT, b, counts, displs, MPI_INT, w));
    EXPECT(MPI_ERR_ARG, MPI_Alltoallv(a, counts, displs, MPI_INT, b, counts, NULL, MPI_INT, w));
    EXPECT(MPI_ERR_ARG, MPI_Reduce_scatter(a, b, NULL, MPI_INT, MPI_SUM, w));
#endif

    /* MPI_IN_PLACE where it is no buffer. */
    EXPECT(MPI_ERR_BUFFER, MPI_Allreduce(a, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, w));
    EXPECT(MPI_ERR_BUFFER, MPI_Reduce_scatter(a, MPI_IN_PLACE, counts, MPI_INT, MPI_SUM, w));
    EXPECT(MPI_ERR_BUFFER, MPI_Alltoall(a, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, w));
    EXPECT(MPI_ERR_BUFFER, MPI_Allgather(a, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, w));
#ifndef MPICH_DEVIATIONS
    /* MPICH 4.0 takes MPI_IN_PLACE for a buffer here and crashes. */
    EXPECT(MPI_ERR_BUFFER, MPI_Bcast(MPI_IN_PLACE, 1, MPI_INT, 0, w));
#endif

    /* Non-blocking collectives need somewhere to put the request. */
    EXPECT(MPI_ERR_ARG, MPI_Ibarrier(w, NULL));
    EXPECT(MPI_ERR_ARG, MPI_Ibcast(a, 1, MPI_INT, 0, w, NULL));
    EXPECT(MPI_ERR_ARG, MPI_Ialltoall(a, 1, MPI_INT, b, 1, MPI_INT, w, NULL));
    EXPECT(MPI_ERR_ARG, MPI_Ireduce_scatter(a, b, counts, MPI_INT, MPI_SUM, w, NULL));

    /* Still working. */
    CALL(MPI_Op_create(add, 1, &sum));
    int v = me + 1, total = -1;
    CALL(MPI_Allreduce(&v, &total, 1, MPI_INT, sum, w));
    CHECK(total == np * (np + 1) / 2, "Allreduce with a user operation after the errors: %d", total);
    CALL(MPI_Alltoall(a, 1, MPI_INT, b, 1, MPI_INT, w));
    for (int k = 0; k < np; k++)
        CHECK(b[k] == me, "Alltoall after the errors: %d from rank %d", b[k], k);
    CALL(MPI_Ibarrier(w, &q));
    CALL(MPI_Wait(&q, MPI_STATUS_IGNORE));
    CALL(MPI_Op_free(&sum));
    CALL(MPI_Finalize());
    finalized = 1;
    return 0;
}
