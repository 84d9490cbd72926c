/* ranks: 4 */
/* Rank 3 dies. Ranks 1 and 2 block in receives from live ranks that never send; rank 0
 * finds the failure and revokes: their receives end with MPIX_ERR_REVOKED, later operations
 * on the communicator fail the same way, and the survivors shrink and go on. */
#include "ulfm_util.h"

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Barrier(comm);
    if (me == 3) raise(SIGKILL);
    int x = 0, flag = 0;
    MPI_Status st;
    if (me == 0) {
        EXPECT(MPI_Recv(&x, 1, MPI_INT, 3, 0, comm, &st), MPIX_ERR_PROC_FAILED);
        EXPECT(MPIX_Comm_revoke(comm), MPI_SUCCESS);
    } else {
        EXPECT(MPI_Recv(&x, 1, MPI_INT, me == 1 ? 2 : 0, 9, comm, &st), MPIX_ERR_REVOKED);
    }
    EXPECT(MPIX_Comm_is_revoked(comm, &flag), MPI_SUCCESS);
    if (!flag) FAILF("the communicator is not revoked");
    EXPECT(MPI_Send(&x, 1, MPI_INT, (me + 1) % 3, 0, comm), MPIX_ERR_REVOKED);
    EXPECT(MPI_Barrier(comm), MPIX_ERR_REVOKED);
    MPI_Comm smaller;
    EXPECT(MPIX_Comm_shrink(comm, &smaller), MPI_SUCCESS);
    int size, sum = 0;
    MPI_Comm_size(smaller, &size);
    MPI_Comm_set_errhandler(smaller, MPI_ERRORS_RETURN);
    EXPECT(MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, smaller), MPI_SUCCESS);
    if (size != 3 || sum != 3) FAILF("size %d, sum %d", size, sum);
    MPI_Comm_free(&smaller);
    MPI_Comm_free(&comm);
    printf("ULFM-OK rank %d\n", me);
    MPI_Finalize();
    return 0;
}
