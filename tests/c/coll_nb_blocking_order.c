/* ranks: 1 2 3 4 8 */
/*
 * A non-blocking collective started on one rank while the others are still in a blocking
 * collective of the same communicator: the blocking calls and the non-blocking ones are
 * numbered apart, so neither takes the other's messages. This is the order of mpi4py's
 * MPI_Comm_iagree fallback (an MPI_Iallreduce) in its own tests; MPICH and Open MPI run it.
 *   1. For each root: the root starts an Iallreduce, checks that it cannot be complete yet,
 *      then calls Barrier; the others call Barrier first, then the Iallreduce.
 *   2. Rank 0 starts an Ibcast, then a Bcast of other data; the others call the Bcast
 *      first: every buffer gets its own call's data.
 *   3. The same with a persistent Allreduce's start on rank 0 against a blocking Allreduce.
 * Collectives afterwards still match in order.
 */
#define TEST_NAME "coll_nb_blocking_order"
#include "testutil.h"

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    MPI_Comm c = MPI_COMM_WORLD;

    for (int root = 0; root < np; root++) {
        int flag = me == root ? 0xB : 0xD, done = 0;
        MPI_Request rq;
        CALL(MPI_Barrier(c));
        if (me == root) {
            CALL(MPI_Iallreduce(MPI_IN_PLACE, &flag, 1, MPI_INT, MPI_BAND, c, &rq));
            CALL(MPI_Test(&rq, &done, MPI_STATUS_IGNORE));
            CHECK(np == 1 || !done, "root %d: the Iallreduce completed before the others began it", root);
            CALL(MPI_Barrier(c));
        } else {
            CALL(MPI_Barrier(c));
            CALL(MPI_Iallreduce(MPI_IN_PLACE, &flag, 1, MPI_INT, MPI_BAND, c, &rq));
        }
        CALL(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        int want = np == 1 ? 0xB : 0x9;
        CHECK(flag == want, "root %d: agreed flag %#x, expected %#x", root, flag, want);
    }

    int nb[4] = {-1, -1, -1, -1}, bl[4] = {-1, -1, -1, -1};
    MPI_Request rq;
    if (me == 0) {
        for (int k = 0; k < 4; k++)
            nb[k] = 100 + k, bl[k] = 200 + k;
        CALL(MPI_Ibcast(nb, 4, MPI_INT, 0, c, &rq));
        CALL(MPI_Bcast(bl, 4, MPI_INT, 0, c));
    } else {
        CALL(MPI_Bcast(bl, 4, MPI_INT, 0, c));
        CALL(MPI_Ibcast(nb, 4, MPI_INT, 0, c, &rq));
    }
    CALL(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int k = 0; k < 4; k++) {
        CHECK(nb[k] == 100 + k, "Ibcast: element %d is %d", k, nb[k]);
        CHECK(bl[k] == 200 + k, "Bcast: element %d is %d", k, bl[k]);
    }

    int pin = me + 1, pout = -1, bin = 10 * (me + 1), bout = -1;
    MPI_Request pr;
    CALL(MPI_Allreduce_init(&pin, &pout, 1, MPI_INT, MPI_SUM, c, MPI_INFO_NULL, &pr));
    if (me == 0) {
        CALL(MPI_Start(&pr));
        CALL(MPI_Allreduce(&bin, &bout, 1, MPI_INT, MPI_SUM, c));
    } else {
        CALL(MPI_Allreduce(&bin, &bout, 1, MPI_INT, MPI_SUM, c));
        CALL(MPI_Start(&pr));
    }
    CALL(MPI_Wait(&pr, MPI_STATUS_IGNORE));
    CALL(MPI_Request_free(&pr));
    CHECK(pout == np * (np + 1) / 2, "persistent Allreduce: %d", pout);
    CHECK(bout == 10 * np * (np + 1) / 2, "Allreduce: %d", bout);

    int x = me, sum = -1;
    CALL(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK(sum == np * (np - 1) / 2, "Allreduce afterwards: %d", sum);

    CALL(MPI_Finalize());
    finalized = 1;
    return 0;
}
