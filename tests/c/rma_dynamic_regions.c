/* ranks: 1 2 3 */
/*
 * A dynamic window with an array attached as two halves: puts, accumulates
 * and get-accumulates that run from the first half into the second, each
 * followed by MPI_Win_flush and an MPI_Get of the same range, under
 * MPI_Win_lock_all; every byte is attached, so every access applies (the
 * target checked that an access lay in one attached region).
 */
#define TEST_NAME "rma_dynamic_regions"
#include "testutil.h"

#define HALF 2048

static int mem[2 * HALF], out[2 * HALF], back[2 * HALF], old[2 * HALF];

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    MPI_Aint *at = xmalloc(np * sizeof(MPI_Aint));
    CALL(MPI_Get_address(mem, &at[me]));
    CALL(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, at, 1, MPI_AINT, MPI_COMM_WORLD));
    MPI_Win win;
    CALL(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    CALL(MPI_Win_attach(win, &mem[HALF], HALF * sizeof(int)));
    CALL(MPI_Win_attach(win, mem, HALF * sizeof(int)));
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    int to = (me + 1) % np, from = (me + np - 1) % np;
    /* From a quarter in to three quarters: across the seam. */
    MPI_Aint disp = at[to] + HALF / 2 * sizeof(int);
    int n = HALF;
    CALL(MPI_Win_lock_all(0, win));
    for (int op = 0; op < 3; op++) {
        for (int i = 0; i < n; i++)
            out[i] = me * 100000 + op * 10000 + i;
        if (op == 0)
            CALL(MPI_Put(out, n, MPI_INT, to, disp, n, MPI_INT, win));
        else if (op == 1)
            CALL(MPI_Accumulate(out, n, MPI_INT, to, disp, n, MPI_INT, MPI_REPLACE, win));
        else
            CALL(MPI_Get_accumulate(out, n, MPI_INT, old, n, MPI_INT, to, disp, n, MPI_INT, MPI_REPLACE, win));
        CALL(MPI_Win_flush(to, win));
        memset(back, 0, sizeof back);
        CALL(MPI_Get(back, n, MPI_INT, to, disp, n, MPI_INT, win));
        CALL(MPI_Win_flush(to, win));
        for (int i = 0; i < n; i++)
            CHECK(back[i] == out[i], "operation %d: element %d reads %d, expected %d", op, i, back[i], out[i]);
        if (op == 2)
            for (int i = 0; i < n; i++)
                CHECK(old[i] == me * 100000 + 10000 + i, "get-accumulate fetched %d at %d", old[i], i);
    }
    CALL(MPI_Win_unlock_all(win));
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    /* What the previous rank left here, and nothing outside its range. */
    for (int i = 0; i < 2 * HALF; i++) {
        int want = i >= HALF / 2 && i < HALF / 2 + n ? from * 100000 + 20000 + (i - HALF / 2) : 0;
        CHECK(mem[i] == want, "element %d of this rank's array is %d, expected %d", i, mem[i], want);
    }
    CALL(MPI_Win_detach(win, mem));
    CALL(MPI_Win_detach(win, &mem[HALF]));
    CALL(MPI_Win_free(&win));
    free(at);
    CALL(MPI_Finalize());
    return 0;
}
