/* ranks: 2 3 4 */
/*
 * Persistent collectives started in different orders on different ranks: the
 * init calls are made in the same order everywhere (MPI-4.0 6.13: they follow
 * the ordering rules of collectives), and that order, not the order of
 * MPI_Start, matches them. Rank 0 starts a Bcast, then a Barrier, then an
 * Allreduce; the others start them in reverse, a few times over, with an
 * MPI_Ibarrier begun between the inits and a blocking collective between the
 * rounds, which must still match theirs.
 */
#define TEST_NAME "coll_persistent_order"
#include "testutil.h"

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    int a = -1, in = 0, sum = -1;
    MPI_Request r[3], ib;
    CALL(MPI_Bcast_init(&a, 1, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]));
    CALL(MPI_Ibarrier(MPI_COMM_WORLD, &ib));
    CALL(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]));
    CALL(MPI_Allreduce_init(&in, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r[2]));
    for (int round = 0; round < 4; round++) {
        in = me + round;
        if (me == 0) {
            a = 42 + round;
            for (int i = 0; i < 3; i++)
                CALL(MPI_Start(&r[i]));
        } else {
            a = -1;
            for (int i = 2; i >= 0; i--)
                CALL(MPI_Start(&r[i]));
        }
        if (round == 0)
            CALL(MPI_Wait(&ib, MPI_STATUS_IGNORE));
        CALL(MPI_Waitall(3, r, statuses_ignore()));
        CHECK(a == 42 + round, "round %d: bcast gave %d", round, a);
        CHECK(sum == np * (np - 1) / 2 + np * round, "round %d: allreduce gave %d", round, sum);
        int b = me == 1 ? round : -1;
        CALL(MPI_Bcast(&b, 1, MPI_INT, 1, MPI_COMM_WORLD));
        CHECK(b == round, "round %d: blocking bcast gave %d", round, b);
    }
    for (int i = 0; i < 3; i++)
        CALL(MPI_Request_free(&r[i]));
    CALL(MPI_Finalize());
    return 0;
}
