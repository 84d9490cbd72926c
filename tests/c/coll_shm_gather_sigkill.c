/* ranks: 2 4 8 */
/* expect: fail stderr="rank 1" within=30 */
/*
 * Failure path of the shared-memory gather, scatter and alltoall: after a few hundred small
 * calls (which run through the communicator's shared segment on one host), rank 1 kills
 * itself with SIGKILL, while the others go on calling MPI_Gather to rank 0, MPI_Scatter and
 * MPI_Alltoall, and so wait for a flag that rank 1 will never publish (the root for its
 * block, the others for its slot to be free again). The job must end promptly, naming
 * rank 1, instead of hanging (or burning the cores) in that wait.
 */
#include <signal.h>

#define TEST_NAME "coll_shm_gather_sigkill"
#include "testutil.h"

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    double x = me, all[8], one = 0;
    for (int k = 0; k < 300; k++) {
        CALL(MPI_Gather(&x, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, k % np, MPI_COMM_WORLD));
        CALL(MPI_Scatter(all, 1, MPI_DOUBLE, &one, 1, MPI_DOUBLE, k % np, MPI_COMM_WORLD));
    }
    if (me == 1) {
        fflush(stdout);
        raise(SIGKILL);
    }
    double out[8] = { 0 }, back[8];
    for (;;) {
        CALL(MPI_Gather(&x, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD));
        CALL(MPI_Scatter(all, 1, MPI_DOUBLE, &one, 1, MPI_DOUBLE, 1, MPI_COMM_WORLD));
        CALL(MPI_Alltoall(out, 1, MPI_DOUBLE, back, 1, MPI_DOUBLE, MPI_COMM_WORLD));
    }
}
