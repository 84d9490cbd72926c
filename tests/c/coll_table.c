/* ranks: 2 3 */
/* env: FERRY_COLL_TABLE=tests/c/tables/bcast-binomial.table FERRY_COLL_STATS=1 */
/* expect: pass stderr="coll-stats: bcast bcast.binomial bytes=8-16 calls=3" */
/* mpich: skip FERRY_COLL_TABLE is Ferry's own variable */
/*
 * FERRY_COLL_TABLE names a decision table file that replaces the built-in one:
 * its only row sends every bcast through the binomial tree, where the built-in
 * table would take shared memory for these 8-byte calls on one host. The
 * runner checks FERRY_COLL_STATS's line; calls the file has no row for (the
 * barrier) still run.
 */
#define TEST_NAME "coll_table"
#include "testutil.h"

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    for (int i = 0; i < 3; i++) {
        long long x = me == 0 ? 1000 + i : -1;
        CALL(MPI_Bcast(&x, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD));
        CHECK(x == 1000 + i, "Bcast %d gave %lld", i, x);
    }
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    CALL(MPI_Finalize());
    finalized = 1;
    return 0;
}
