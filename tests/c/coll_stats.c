/* ranks: 1 3 */
/* env: FERRY_COLL_STATS=1 FERRY_ALLREDUCE_ALGORITHM=ring */
/* expect: pass stderr="coll-stats: allreduce allreduce.ring bytes=2K-4K calls=3" */
/*
 * FERRY_COLL_STATS=1: at MPI_Finalize every rank reports which algorithm ran
 * how often per call and size class. Three Allreduces of 1000 ints with
 * allreduce.ring forced must show up as one line with calls=3 (the runner
 * checks stderr); the other collectives come from the decision table.
 */
#define TEST_NAME "coll_stats"
#include "testutil.h"

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    static int a[1000], b[1000];
    for (int i = 0; i < 3; i++) {
        for (int k = 0; k < 1000; k++)
            a[k] = me + k + i;
        CALL(MPI_Allreduce(a, b, 1000, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        for (int k = 0; k < 1000; k++)
            CHECK(b[k] == np * (k + i) + np * (np - 1) / 2, "Allreduce element %d is %d", k, b[k]);
    }
    int x = me, y[64];
    CHECK(np <= 64, "at most 64 ranks");
    CALL(MPI_Alltoall(y, 0, MPI_INT, y, 0, MPI_INT, MPI_COMM_WORLD));
    CALL(MPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD));
    CHECK(x == 0, "Bcast gave %d", x);
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    CALL(MPI_Finalize());
    finalized = 1;
    return 0;
}
