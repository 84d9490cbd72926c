/* ranks: 2 4 8 */
/* env: FERRY_TRANSPORTS=shm,tcp */
/* env: FERRY_TRANSPORTS=tcp */
/* mpich: skip Debian's MPICH 4.0 misdirects this program's PSCW epochs: a put to the right neighbour lands in the origin's own window */
/*
 * Generalized active-target synchronisation (post/start/complete/wait):
 * each rank exposes its window to its left neighbour and accesses its right
 * one, several rounds, with MPI_Win_test polling on odd rounds; and the
 * error classes of out-of-order calls.
 */
#define TEST_NAME "rma_pscw"
#include "testutil.h"

#define ROUNDS 10

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    int right = (me + 1) % np, left = (me + np - 1) % np;
    int mem[2] = { -1, -1 };
    MPI_Win win;
    CALL(MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_Group world, lg, rg;
    CALL(MPI_Comm_group(MPI_COMM_WORLD, &world));
    CALL(MPI_Group_incl(world, 1, &left, &lg));
    CALL(MPI_Group_incl(world, 1, &right, &rg));

    for (int round = 0; round < ROUNDS; round++) {
        CALL(MPI_Win_post(lg, 0, win));
        CALL(MPI_Win_start(rg, 0, win));
        int v = me * 100 + round, got = -1;
        CALL(MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win));
        CALL(MPI_Get(&got, 1, MPI_INT, right, 1, 1, MPI_INT, win));
        CALL(MPI_Win_complete(win));
        /* Slot 1 holds what the target wrote there before it posted. */
        int want = round == 0 ? -1 : right * 100 + round - 1;
        CHECK(got == want, "round %d: got %d, expected %d", round, got, want);
        if (round % 2) {
            int flag = 0;
            while (!flag)
                CALL(MPI_Win_test(win, &flag));
        } else {
            CALL(MPI_Win_wait(win));
        }
        CHECK(mem[0] == left * 100 + round, "round %d: mem[0] = %d, expected %d", round, mem[0], left * 100 + round);
        mem[1] = me * 100 + round;
        /* The next round's origin reads mem[1] only after our next post. */
    }

    CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    EXPECT(MPI_ERR_RMA_SYNC, MPI_Win_complete(win));
    EXPECT(MPI_ERR_RMA_SYNC, MPI_Win_wait(win));

    CALL(MPI_Group_free(&lg));
    CALL(MPI_Group_free(&rg));
    CALL(MPI_Group_free(&world));
    CALL(MPI_Win_free(&win));
    CALL(MPI_Finalize());
    return 0;
}
