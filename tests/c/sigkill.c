/* ranks: 2 4 */
/* expect: fail within=30 */
/*
 * Failure path: rank 1 kills itself with SIGKILL in the middle of the job
 * while the others block in MPI_Recv from it (rank 0 with MPI_ANY_SOURCE).
 * The job must end promptly with a non-zero status instead of hanging.
 */
#include <signal.h>

#define TEST_NAME "sigkill"
#include "testutil.h"

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);

    /* Some traffic first, so that connections exist. */
    int right = (me + 1) % np, left = (me + np - 1) % np, v = me, w = -1;
    MPI_Sendrecv(&v, 1, MPI_INT, right, 0, &w, 1, MPI_INT, left, 0, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);

    if (me == 1) {
        fflush(stdout);
        raise(SIGKILL);
    }
    int x;
    MPI_Recv(&x, 1, MPI_INT, me == 0 ? MPI_ANY_SOURCE : 1, 0, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    fprintf(stderr, "FAIL sigkill: rank %d received a message that was never sent\n", me);
    MPI_Finalize();
    return 1;
}
