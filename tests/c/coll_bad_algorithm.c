/* ranks: 1 2 */
/* env: FERRY_BCAST_ALGORITHM=binomial,nonsense */
/* expect: fail exit=1 stderr="is not an algorithm of bcast; valid names: binomial, scatter_allgather" within=20 */
/* mpich: skip FERRY_BCAST_ALGORITHM is Ferry's own variable */
/*
 * An unknown name in FERRY_BCAST_ALGORITHM ends the job in MPI_Init, before
 * any communication, with a message that names the valid algorithms; the
 * program never gets past MPI_Init.
 */
#define TEST_NAME "coll_bad_algorithm"
#include "testutil.h"

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    fail(__LINE__, "MPI_Init accepted FERRY_BCAST_ALGORITHM=binomial,nonsense");
}
