/* ranks: 4 */
/* Rank 1 dies; the survivors agree: the flags ANDed over them, MPIX_ERR_PROC_FAILED at all
 * alike while the failure is not acknowledged, success once it is; the failed group holds
 * rank 1, and the MPI-4.1 draft calls see it too. */
#include "ulfm_util.h"

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 1) raise(SIGKILL);
    int want = ~((1 << 0) | (1 << 2) | (1 << 3));
    int flag = ~(1 << me);
    EXPECT(MPIX_Comm_agree(MPI_COMM_WORLD, &flag), MPIX_ERR_PROC_FAILED);
    if (flag != want) FAILF("flag %#x, wanted %#x", flag, want);
    EXPECT(MPIX_Comm_failure_ack(MPI_COMM_WORLD), MPI_SUCCESS);
    flag = ~(1 << me);
    EXPECT(MPIX_Comm_agree(MPI_COMM_WORLD, &flag), MPI_SUCCESS);
    if (flag != want) FAILF("flag %#x after the acknowledgement, wanted %#x", flag, want);
    MPI_Group acked, failed, world;
    EXPECT(MPIX_Comm_failure_get_acked(MPI_COMM_WORLD, &acked), MPI_SUCCESS);
    EXPECT(MPIX_Comm_get_failed(MPI_COMM_WORLD, &failed), MPI_SUCCESS);
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int n, r = 0, in_world = -1;
    MPI_Group_size(acked, &n);
    MPI_Group_translate_ranks(acked, 1, &r, world, &in_world);
    if (n != 1 || in_world != 1) FAILF("acked group of %d, its first is world rank %d", n, in_world);
    MPI_Group_size(failed, &n);
    if (n != 1) FAILF("failed group of %d", n);
    int num = -1;
    EXPECT(MPIX_Comm_ack_failed(MPI_COMM_WORLD, 1, &num), MPI_SUCCESS);
    if (num != 1) FAILF("ack_failed says %d acknowledged", num);
    /* A dead rank's contribution never counts: 0 from everyone but the dead rank. */
    flag = 1;
    EXPECT(MPIX_Comm_agree(MPI_COMM_WORLD, &flag), MPI_SUCCESS);
    if (flag != 1) FAILF("flag %d, wanted 1", flag);
    MPI_Group_free(&acked);
    MPI_Group_free(&failed);
    MPI_Group_free(&world);
    printf("ULFM-OK rank %d\n", me);
    MPI_Finalize();
    return 0;
}
