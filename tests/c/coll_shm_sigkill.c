/* ranks: 2 4 8 */
/* expect: fail stderr="rank 1" within=30 */
/*
 * Failure path of the shared-memory collectives: after a few hundred small collectives
 * (which run through the communicator's shared segment on one host), rank 1 kills itself
 * with SIGKILL, while the others go on calling MPI_Allreduce, MPI_Bcast and MPI_Barrier,
 * and so wait for a flag that rank 1 will never publish. The job must end promptly, naming
 * rank 1, instead of hanging (or burning the cores) in that wait.
 */
#include <signal.h>

#define TEST_NAME "coll_shm_sigkill"
#include "testutil.h"

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    double x = me, s = 0;
    for (int k = 0; k < 300; k++) {
        CALL(MPI_Allreduce(&x, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
        CALL(MPI_Bcast(&x, 1, MPI_DOUBLE, k % np, MPI_COMM_WORLD));
    }
    if (me == 1) {
        fflush(stdout);
        raise(SIGKILL);
    }
    for (;;) {
        CALL(MPI_Allreduce(&x, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
        CALL(MPI_Bcast(&x, 1, MPI_DOUBLE, 1, MPI_COMM_WORLD));
        CALL(MPI_Barrier(MPI_COMM_WORLD));
    }
}
