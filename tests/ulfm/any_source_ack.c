/* ranks: 4 */
/* Rank 3 dies; a receive from any source fails with MPIX_ERR_PROC_FAILED_PENDING until the
 * failure is acknowledged (MPIX_Comm_failure_ack, MPIX_Comm_failure_get_acked names rank 3),
 * then receives from any source work again among the survivors. */
#include "ulfm_util.h"

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 3) raise(SIGKILL);
    int x = -1;
    MPI_Request req;
    MPI_Status st;
    int rc = MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &req);
    if (rc == MPI_SUCCESS) rc = MPI_Wait(&req, &st); /* ends when rank 3's failure is found */
    EXPECT(rc, MPIX_ERR_PROC_FAILED_PENDING);
    EXPECT(MPIX_Comm_failure_ack(MPI_COMM_WORLD), MPI_SUCCESS);
    MPI_Group acked, world;
    EXPECT(MPIX_Comm_failure_get_acked(MPI_COMM_WORLD, &acked), MPI_SUCCESS);
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int n, r = 0, w = -1;
    MPI_Group_size(acked, &n);
    MPI_Group_translate_ranks(acked, 1, &r, world, &w);
    if (n != 1 || w != 3) FAILF("acked group of %d, its first is world rank %d", n, w);
    /* A ring among the survivors 0, 1, 2, received from any source. */
    int next = (me + 1) % 3, got = -1;
    EXPECT(MPI_Sendrecv(&me, 1, MPI_INT, next, 2, &got, 1, MPI_INT, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &st), MPI_SUCCESS);
    if (got != (me + 2) % 3 || st.MPI_SOURCE != got) FAILF("got %d from %d", got, st.MPI_SOURCE);
    MPI_Group_free(&acked);
    MPI_Group_free(&world);
    printf("ULFM-OK rank %d\n", me);
    MPI_Finalize();
    return 0;
}
