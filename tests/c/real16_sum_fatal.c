/* ranks: 1 2 */
/* expect: fail stderr="no binary128" within=30 */
/*
 * MPI_SUM on MPI_REAL16 under the default error handler: the job ends, and the message says
 * why (Ferry has no binary128 arithmetic yet) rather than calling the operation invalid.
 * MPICH computes a sum (as long double) and returns; the program then exits 1, the failure
 * that the MPICH run expects.
 */
#define TEST_NAME "real16_sum_fatal"
#include "testutil.h"

#ifndef MPI_REAL16
#define MPI_REAL16 ((MPI_Datatype)0x4c00102b) /* MPICH's handle; Ferry's mpi.h lacks it */
#endif

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    __float128 one = 1, sum = 0;
    MPI_Allreduce(&one, &sum, 1, MPI_REAL16, MPI_SUM, MPI_COMM_WORLD);
    /* Not reached on Ferry. */
    fprintf(stderr, "MPI_SUM on MPI_REAL16 returned\n");
    return 1;
}
