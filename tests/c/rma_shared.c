/* ranks: 1 2 4 8 */
/* env: FERRY_TRANSPORTS=shm,tcp */
/* env: FERRY_TRANSPORTS=tcp */
/*
 * Shared-memory windows: MPI_Win_allocate_shared over the ranks of one host,
 * MPI_Win_shared_query (every part, contiguous in rank order), plain loads
 * and stores into other ranks' parts, and the RMA calls on the same window
 * (put/get copy directly, accumulates stay atomic).
 */
#define TEST_NAME "rma_shared"
#include "testutil.h"

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    MPI_Comm node;
    CALL(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    int nme, nn;
    CALL(MPI_Comm_rank(node, &nme));
    CALL(MPI_Comm_size(node, &nn));

    /* Rank r has r + 2 ints. */
    int *mine;
    MPI_Win win;
    CALL(MPI_Win_allocate_shared(sizeof(int) * (nme + 2), sizeof(int), MPI_INFO_NULL, node, &mine, &win));
    int *flavor, flag;
    CALL(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag));
    CHECK(flag && *flavor == MPI_WIN_FLAVOR_SHARED, "flavor %d", *flavor);
    int **part = xmalloc(sizeof(int *) * nn);
    for (int r = 0; r < nn; r++) {
        MPI_Aint size;
        int du;
        CALL(MPI_Win_shared_query(win, r, &size, &du, &part[r]));
        CHECK(size == (MPI_Aint)sizeof(int) * (r + 2) && du == (int)sizeof(int), "rank %d: size %ld, disp unit %d", r, (long)size, du);
        if (r > 0)
            CHECK(part[r] == part[r - 1] + (r + 1), "parts are not contiguous at rank %d", r);
    }
    CHECK(part[nme] == mine, "shared_query of myself %p, allocate gave %p", (void *)part[nme], (void *)mine);

    /* Loads and stores: everybody writes its rank into slot 0 of the next rank's part. */
    CALL(MPI_Win_lock_all(0, win));
    int next = (nme + 1) % nn, prev = (nme + nn - 1) % nn;
    part[next][0] = 1000 + nme;
    CALL(MPI_Win_sync(win));
    CALL(MPI_Barrier(node));
    CALL(MPI_Win_sync(win));
    CHECK(mine[0] == 1000 + prev, "store by rank %d: %d", prev, mine[0]);
    CALL(MPI_Win_unlock_all(win));
    CALL(MPI_Barrier(node));

    /* RMA calls on the same memory. */
    CALL(MPI_Win_fence(0, win));
    int v = 2000 + nme, got = -1;
    CALL(MPI_Put(&v, 1, MPI_INT, next, 1, 1, MPI_INT, win));
    CALL(MPI_Win_fence(0, win));
    CHECK(mine[1] == 2000 + prev, "put: %d", mine[1]);
    CALL(MPI_Get(&got, 1, MPI_INT, prev, 1, 1, MPI_INT, win));
    CALL(MPI_Win_fence(0, win));
    CHECK(got == 2000 + (prev + nn - 1) % nn, "get: %d", got);
    if (nme == 0)
        mine[0] = 0;
    CALL(MPI_Win_fence(0, win));
    CALL(MPI_Win_lock_all(0, win));
    int one = 1, old;
    for (int i = 0; i < 200; i++)
        CALL(MPI_Fetch_and_op(&one, &old, MPI_INT, 0, 0, MPI_SUM, win));
    CALL(MPI_Win_unlock_all(win));
    CALL(MPI_Barrier(node));
    CALL(MPI_Win_lock_all(0, win));
    CALL(MPI_Win_sync(win));
    CHECK(part[0][0] == 200 * nn, "counter %d, expected %d", part[0][0], 200 * nn);
    CALL(MPI_Win_unlock_all(win));
    CALL(MPI_Win_free(&win));

#ifdef FERRY_MPI_H
    /* Only shared windows answer MPI_Win_shared_query. */
    int x[2];
    MPI_Aint sz;
    int du;
    void *bp;
    CALL(MPI_Win_create(x, sizeof x, 1, MPI_INFO_NULL, node, &win));
    CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    EXPECT(MPI_ERR_RMA_FLAVOR, MPI_Win_shared_query(win, 0, &sz, &du, &bp));
    CALL(MPI_Win_free(&win));
#endif

    free(part);
    CALL(MPI_Comm_free(&node));
    CALL(MPI_Finalize());
    return 0;
}
