/* ranks: 2 */
/* expect: fail stderr="MPI_ERR_RANK" within=30 */
/*
 * Failure path: with the default error handler (MPI_ERRORS_ARE_FATAL),
 * rank 0 sends to a rank that does not exist while rank 1 waits in MPI_Recv.
 * The job must end with a non-zero status and a message naming the error
 * class (MPI_ERR_RANK).
 */
#define TEST_NAME "fatal_error"
#include "testutil.h"

int main(int argc, char **argv)
{
    int x = 0;
    TEST_INIT(&argc, &argv);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        MPI_Send(&x, 1, MPI_INT, np, 0, MPI_COMM_WORLD);
        fprintf(stderr, "FAIL fatal_error: MPI_Send to rank %d returned\n", np);
        return 1;
    }
    MPI_Recv(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    fprintf(stderr, "FAIL fatal_error: rank %d received a message that was never sent\n", me);
    MPI_Finalize();
    return 1;
}
