/* ranks: 2 4 */
/*
 * Partitioned messages and non-blocking collectives in flight together on one communicator:
 * a started MPI_Precv_init with tag 0 (and the send of it, not yet ready) must not take the
 * messages of the communicator's first non-blocking collectives, nor they its message.
 * Both travel on the communicator's internal context, each with tags of its own.
 */
#define TEST_NAME "partitioned_coll"
#include "testutil.h"

#define PARTS 4

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    MPI_Comm d;
    CALL(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    int peer = me % 2 ? me - 1 : me + 1;
    double buf[PARTS];
    MPI_Request p;
    for (int i = 0; i < PARTS; i++)
        buf[i] = me % 2 ? -1.0 : 10.0 * me + i;
    if (me % 2 == 0)
        CALL(MPI_Psend_init(buf, PARTS, 1, MPI_DOUBLE, peer, 0, d, MPI_INFO_NULL, &p));
    else
        CALL(MPI_Precv_init(buf, PARTS, 1, MPI_DOUBLE, peer, 0, d, MPI_INFO_NULL, &p));
    CALL(MPI_Start(&p));

    for (int round = 0; round < 3; round++) {
        int x = me + round, s = -1;
        MPI_Request r[2];
        CALL(MPI_Iallreduce(&x, &s, 1, MPI_INT, MPI_SUM, d, &r[0]));
        CALL(MPI_Ibarrier(d, &r[1]));
        CALL(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        CHECK(s == np * (np - 1) / 2 + np * round, "round %d: Iallreduce gave %d", round, s);
    }
    if (me % 2 == 0)
        CALL(MPI_Pready_range(0, PARTS - 1, p));
    CALL(MPI_Wait(&p, MPI_STATUS_IGNORE));
    if (me % 2)
        for (int i = 0; i < PARTS; i++)
            CHECK(buf[i] == 10.0 * peer + i, "partition %d: %g", i, buf[i]);
    CALL(MPI_Request_free(&p));
    CALL(MPI_Comm_free(&d));
    CALL(MPI_Finalize());
    finalized = 1;
    return 0;
}
