/* ranks: 2 4 */
/* expect: fail stderr="rank 1" within=30 */
/* env: FERRY_TRANSPORTS=shm,tcp */
/* env: FERRY_TRANSPORTS=tcp */
/*
 * Failure path of one-sided communication: rank 1 kills itself with SIGKILL
 * right after the window is made, while rank 0 waits for a lock on it and the
 * other ranks wait in a fence. The job must end promptly, naming rank 1 (the
 * launcher saw it killed, or a survivor over TCP lost its connection to it
 * first), instead of hanging in the lock or the fence.
 */
#include <signal.h>

#define TEST_NAME "rma_sigkill"
#include "testutil.h"

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    int *base;
    MPI_Win win;
    CALL(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 1)
        raise(SIGKILL);
    if (me == 0) {
        int v = 1;
        for (;;) {
            CALL(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win));
            CALL(MPI_Put(&v, 1, MPI_INT, 1, 0, 1, MPI_INT, win));
            CALL(MPI_Win_unlock(1, win));
        }
    }
    for (;;)
        CALL(MPI_Win_fence(0, win));
}
