/* ranks: 2 4 */
/* expect: fail exit=3 stderr="MPI_Abort" within=30 */
/*
 * Failure path: the last rank calls MPI_Abort(MPI_COMM_WORLD, 3) while the
 * others block in MPI_Recv from it. The whole job must end promptly with
 * exit status 3 and a message naming MPI_Abort.
 */
#define TEST_NAME "abort"
#include "testutil.h"

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == np - 1) {
        MPI_Abort(MPI_COMM_WORLD, 3);
        fprintf(stderr, "FAIL abort: MPI_Abort returned\n");
        return 1;
    }
    int x;
    MPI_Recv(&x, 1, MPI_INT, np - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    fprintf(stderr, "FAIL abort: rank %d received a message that was never sent\n", me);
    MPI_Finalize();
    return 1;
}
