/* ranks: 2 3 */
/* expect: fail within=30 */
/* mpich: skip Hydra often ends such a job with status 0 */
/*
 * Failure path: the last rank returns from main (exit status 0) without
 * calling MPI_Finalize while the others wait in MPI_Recv from it. That
 * process's exit is an error for the job, which must end promptly with a
 * non-zero status instead of hanging.
 */
#define TEST_NAME "no_finalize"
#include "testutil.h"

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == np - 1)
        return 0;
    int x;
    MPI_Recv(&x, 1, MPI_INT, np - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    fprintf(stderr, "FAIL no_finalize: rank %d received a message that was never sent\n", me);
    MPI_Finalize();
    return 1;
}
