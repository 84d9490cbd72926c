/* ranks: 2 3 */
/* expect: fail stderr="MPI_ERR_COUNT" within=30 */
/*
 * Failure path: MPI-4's MPI_ERRORS_ABORT on MPI_COMM_WORLD (it may be set and read back like
 * the other predefined handlers); then rank 1 sends with a negative count while the others
 * wait in MPI_Recv. The job must end with a non-zero status and a message naming the error
 * class.
 */
#define TEST_NAME "errors_abort"
#include "testutil.h"

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    MPI_Errhandler eh;
    CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ABORT));
    CALL(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    CHECK(eh == MPI_ERRORS_ABORT, "get_errhandler gave %#x", (unsigned)eh);
    CALL(MPI_Errhandler_free(&eh));
    CHECK(eh == MPI_ERRHANDLER_NULL, "a freed predefined handler's handle is %#x", (unsigned)eh);
    int x = 0;
    if (me == 1)
        MPI_Send(&x, -1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    else
        MPI_Recv(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    fail(__LINE__, "still running after an error under MPI_ERRORS_ABORT");
    return 0;
}
