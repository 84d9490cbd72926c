/* ranks: 1 2 3 4 */
/*
 * Argument errors of the blocking collectives under MPI_ERRORS_RETURN,
 * made identically on every rank: a root out of range -> MPI_ERR_ROOT, a
 * negative count -> MPI_ERR_COUNT, MPI_OP_NULL -> MPI_ERR_OP,
 * MPI_DATATYPE_NULL -> MPI_ERR_TYPE, MPI_COMM_NULL -> MPI_ERR_COMM, and a
 * predefined operation on a type it is not defined for (MPI_SUM on
 * MPI_2INT, MPI_MAXLOC on MPI_INT) -> MPI_ERR_OP. Each code's class, and
 * the collectives still work afterwards.
 */
#include <string.h>

#define TEST_NAME "coll_errors"
#include "testutil.h"

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CALL(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));

    MPI_Comm w = MPI_COMM_WORLD;
    int a[64], b[64], counts[64], displs[64];
    int pairs[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, pout[8];
    CHECK(np <= 64, "at most 64 ranks");
    for (int k = 0; k < 64; k++) {
        a[k] = k;
        counts[k] = 1;
        displs[k] = k;
    }

    /* MPI_ERR_ROOT */
    EXPECT(MPI_ERR_ROOT, MPI_Bcast(a, 1, MPI_INT, np, w));
    EXPECT(MPI_ERR_ROOT, MPI_Bcast(a, 1, MPI_INT, -1, w));
    EXPECT(MPI_ERR_ROOT, MPI_Reduce(a, b, 1, MPI_INT, MPI_SUM, np, w));
    EXPECT(MPI_ERR_ROOT, MPI_Reduce(a, b, 1, MPI_INT, MPI_SUM, -5, w));
    EXPECT(MPI_ERR_ROOT, MPI_Gather(a, 1, MPI_INT, b, 1, MPI_INT, np + 2, w));
    EXPECT(MPI_ERR_ROOT, MPI_Gatherv(a, 1, MPI_INT, b, counts, displs, MPI_INT, np, w));
    EXPECT(MPI_ERR_ROOT, MPI_Scatter(a, 1, MPI_INT, b, 1, MPI_INT, -1, w));
    EXPECT(MPI_ERR_ROOT, MPI_Scatterv(a, counts, displs, MPI_INT, b, 1, MPI_INT, np, w));
    EXPECT(MPI_ERR_ROOT, MPI_Bcast(a, 1, MPI_INT, 1, MPI_COMM_SELF));

    /* MPI_ERR_COUNT */
    EXPECT(MPI_ERR_COUNT, MPI_Bcast(a, -1, MPI_INT, 0, w));
#ifndef MPICH_DEVIATIONS
    /* MPICH 4.0 does not check the count of its reductions: it goes on and
     * crashes. */
    EXPECT(MPI_ERR_COUNT, MPI_Reduce(a, b, -1, MPI_INT, MPI_SUM, 0, w));
    EXPECT(MPI_ERR_COUNT, MPI_Allreduce(a, b, -2, MPI_INT, MPI_SUM, w));
    EXPECT(MPI_ERR_COUNT, MPI_Scan(a, b, -1, MPI_INT, MPI_SUM, w));
    EXPECT(MPI_ERR_COUNT, MPI_Exscan(a, b, -1, MPI_INT, MPI_SUM, w));
    EXPECT(MPI_ERR_COUNT, MPI_Reduce_scatter_block(a, b, -1, MPI_INT, MPI_SUM, w));
#endif
    EXPECT(MPI_ERR_COUNT, MPI_Gather(a, -1, MPI_INT, b, 1, MPI_INT, 0, w));
    EXPECT(MPI_ERR_COUNT, MPI_Allgather(a, -1, MPI_INT, b, -1, MPI_INT, w));
    EXPECT(MPI_ERR_COUNT, MPI_Scatter(a, -1, MPI_INT, b, -1, MPI_INT, 0, w));

    /* MPI_ERR_OP */
    EXPECT(MPI_ERR_OP, MPI_Reduce(a, b, 1, MPI_INT, MPI_OP_NULL, 0, w));
    EXPECT(MPI_ERR_OP, MPI_Allreduce(a, b, 1, MPI_INT, MPI_OP_NULL, w));
    EXPECT(MPI_ERR_OP, MPI_Scan(a, b, 1, MPI_INT, MPI_OP_NULL, w));
    EXPECT(MPI_ERR_OP, MPI_Exscan(a, b, 1, MPI_INT, MPI_OP_NULL, w));
    EXPECT(MPI_ERR_OP, MPI_Reduce_scatter_block(a, b, 1, MPI_INT, MPI_OP_NULL, w));
    EXPECT(MPI_ERR_OP, MPI_Allreduce(pairs, pout, 4, MPI_2INT, MPI_SUM, w));
    EXPECT(MPI_ERR_OP, MPI_Reduce(pairs, pout, 4, MPI_2INT, MPI_SUM, 0, w));
    EXPECT(MPI_ERR_OP, MPI_Allreduce(a, b, 2, MPI_INT, MPI_MAXLOC, w));
    EXPECT(MPI_ERR_OP, MPI_Scan(a, b, 2, MPI_INT, MPI_MAXLOC, w));
    EXPECT(MPI_ERR_OP, MPI_Allreduce(a, b, 2, MPI_INT, MPI_MINLOC, MPI_COMM_SELF));

    /* MPI_ERR_TYPE */
    EXPECT(MPI_ERR_TYPE, MPI_Bcast(a, 1, MPI_DATATYPE_NULL, 0, w));
#ifdef MPICH_DEVIATIONS
    /* MPICH 4.0 checks the operation against the type first and reports
     * MPI_ERR_OP. */
    EXPECT(MPI_ERR_OP, MPI_Allreduce(a, b, 1, MPI_DATATYPE_NULL, MPI_SUM, w));
    EXPECT(MPI_ERR_OP, MPI_Reduce(a, b, 1, MPI_DATATYPE_NULL, MPI_SUM, 0, w));
#else
    EXPECT(MPI_ERR_TYPE, MPI_Allreduce(a, b, 1, MPI_DATATYPE_NULL, MPI_SUM, w));
    EXPECT(MPI_ERR_TYPE, MPI_Reduce(a, b, 1, MPI_DATATYPE_NULL, MPI_SUM, 0, w));
#endif
    EXPECT(MPI_ERR_TYPE, MPI_Gather(a, 1, MPI_DATATYPE_NULL, b, 1, MPI_DATATYPE_NULL, 0, w));
    EXPECT(MPI_ERR_TYPE, MPI_Allgather(a, 1, MPI_DATATYPE_NULL, b, 1, MPI_INT, w));

    /* MPI_ERR_COMM */
    EXPECT(MPI_ERR_COMM, MPI_Bcast(a, 1, MPI_INT, 0, MPI_COMM_NULL));
    EXPECT(MPI_ERR_COMM, MPI_Reduce(a, b, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_NULL));
    EXPECT(MPI_ERR_COMM, MPI_Allreduce(a, b, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL));
    EXPECT(MPI_ERR_COMM, MPI_Gather(a, 1, MPI_INT, b, 1, MPI_INT, 0, MPI_COMM_NULL));
    EXPECT(MPI_ERR_COMM, MPI_Scatter(a, 1, MPI_INT, b, 1, MPI_INT, 0, MPI_COMM_NULL));
    EXPECT(MPI_ERR_COMM, MPI_Allgather(a, 1, MPI_INT, b, 1, MPI_INT, MPI_COMM_NULL));
    EXPECT(MPI_ERR_COMM, MPI_Scan(a, b, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL));
    EXPECT(MPI_ERR_COMM, MPI_Exscan(a, b, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL));
    EXPECT(MPI_ERR_COMM, MPI_Reduce_scatter_block(a, b, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL));

    /* Still working. */
    int x = me + 1, sum = -1;
    CALL(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, w));
    CHECK(sum == np * (np + 1) / 2, "Allreduce after the errors: %d", sum);
    int v = me == 0 ? 42 : 0;
    CALL(MPI_Bcast(&v, 1, MPI_INT, 0, w));
    CHECK(v == 42, "Bcast after the errors: %d", v);
    CALL(MPI_Allreduce(pairs, pout, 4, MPI_2INT, MPI_MAXLOC, w));
    CHECK(pout[0] == 1 && pout[1] == 2 && pout[6] == 7 && pout[7] == 8,
          "MAXLOC on MPI_2INT after the errors: %d %d", pout[0], pout[1]);

    CALL(MPI_Finalize());
    finalized = 1;
    return 0;
}
