/* ranks: 2 3 */
/* env: FERRY_TRANSPORTS=shm,tcp */
/* env: FERRY_TRANSPORTS=tcp */
/* expect: pass stderr="finalize: dropping 2 sends that the receiver finalized without receiving" */
/*
 * MPI_Finalize returns although sends that can never complete are pending: rank 0 starts a
 * synchronous send and a large (rendezvous) send to rank 1 and frees both requests; rank 1
 * never posts the receives. Both wait for an answer from rank 1 that will not come once
 * rank 1 finalizes: rank 0 drops them with a warning that names them (the runner checks
 * stderr) instead of hanging. A synchronous send that is received meanwhile still completes
 * normally first.
 */
#define TEST_NAME "finalize_pending"
#include "testutil.h"
#include <string.h>

#define BIG (1 << 20)

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    char *big = xmalloc(BIG);
    memset(big, 7, BIG);
    int small = 42, got = 0;
    if (me == 0) {
        MPI_Request r[2];
        CALL(MPI_Issend(&small, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, &r[0]));
        CALL(MPI_Isend(big, BIG, MPI_CHAR, 1, 6, MPI_COMM_WORLD, &r[1]));
        CALL(MPI_Request_free(&r[0]));
        CALL(MPI_Request_free(&r[1]));
        /* One that is received completes as usual. */
        CALL(MPI_Ssend(&small, 1, MPI_INT, 1, 7, MPI_COMM_WORLD));
    } else if (me == 1) {
        CALL(MPI_Recv(&got, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(got == 42, "received %d, expected 42", got);
    }
    free(big);
    finalized = 1;
    CALL(MPI_Finalize());
    return 0;
}
