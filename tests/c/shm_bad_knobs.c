/* ranks: 2 */
/* env: FERRY_TRANSPORTS=shm,ib */
/* env: FERRY_TRANSPORTS=shm */
/* env: FERRY_SHM_RING_SIZE=1000 */
/* env: FERRY_SHM_EAGER_LIMIT=lots */
/* env: FERRY_SHM_SINGLE_COPY=yes */
/* env: FERRY_SHM_SINGLE_COPY_MAX=abc */
/* env: FERRY_ASYNC_PROGRESS=2 */
/* expect: fail exit=1 stderr="is invalid: expected" within=20 */
/* mpich: skip these variables are Ferry's own */
/*
 * A bad value for any knob of the shared-memory route or of the progress
 * thread ends the job in MPI_Init with a message naming the variable, the
 * value and what it accepts: an unknown transport, shared memory without TCP
 * for the other hosts, a ring that is not a power of two, an eager limit that
 * is not a size, flags that are not 0 or 1. The program never gets past
 * MPI_Init.
 */
#define TEST_NAME "shm_bad_knobs"
#include "testutil.h"

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    fail(__LINE__, "MPI_Init accepted a bad shared-memory knob");
}
