/* ranks: 1 2 4 */
/*
 * The large-count one-sided calls: MPI_Win_allocate_c, MPI_Win_create_c,
 * MPI_Win_allocate_shared_c with MPI_Win_shared_query_c, and MPI_Put_c,
 * MPI_Get_c, MPI_Accumulate_c, MPI_Get_accumulate_c and their request-based
 * forms between every rank and its right neighbour; a negative count is
 * MPI_ERR_COUNT through the window's error handler.
 */
#define TEST_NAME "large_count_rma"
#include "testutil.h"

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    int right = (me + 1) % np, left = (me + np - 1) % np;
    int *base;
    MPI_Win win;
    CALL(MPI_Win_allocate_c(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    for (int i = 0; i < 4; i++)
        base[i] = -1;
    CALL(MPI_Win_fence(0, win));
    int v = 10 * me, one = 1, got = -1, old = -1;
    CALL(MPI_Put_c(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win));
    CALL(MPI_Win_fence(0, win));
    CHECK(base[0] == 10 * left, "put_c from the left gave %d", base[0]);
    /* Nobody writes the window again before everyone has read it. */
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    CALL(MPI_Get_c(&got, 1, MPI_INT, right, 0, 1, MPI_INT, win));
    CALL(MPI_Accumulate_c(&one, 1, MPI_INT, right, 0, 1, MPI_INT, MPI_SUM, win));
    CALL(MPI_Win_fence(0, win));
    CHECK(got == 10 * me, "get_c from the right gave %d", got);
    CHECK(base[0] == 10 * left + 1, "accumulate_c gave %d", base[0]);
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    CALL(MPI_Get_accumulate_c(&one, 1, MPI_INT, &old, 1, MPI_INT, right, 0, 1, MPI_INT, MPI_SUM, win));
    CALL(MPI_Win_fence(0, win));
    CHECK(old == 10 * me + 1 && base[0] == 10 * left + 2, "get_accumulate_c: old %d now %d", old, base[0]);

    MPI_Request r[4];
    MPI_Status st[4];
    int w = 7, g = -1, o = -1;
    CALL(MPI_Win_lock_all(0, win));
    CALL(MPI_Rput_c(&w, 1, MPI_INT, right, 1, 1, MPI_INT, win, &r[0]));
    CALL(MPI_Raccumulate_c(&one, 1, MPI_INT, right, 2, 1, MPI_INT, MPI_REPLACE, win, &r[1]));
    CALL(MPI_Waitall(2, r, st));
    CALL(MPI_Win_flush_all(win));
    CALL(MPI_Rget_c(&g, 1, MPI_INT, right, 1, 1, MPI_INT, win, &r[2]));
    CALL(MPI_Rget_accumulate_c(&one, 1, MPI_INT, &o, 1, MPI_INT, right, 2, 1, MPI_INT, MPI_SUM, win, &r[3]));
    CALL(MPI_Waitall(2, r + 2, st));
    CALL(MPI_Win_unlock_all(win));
    CHECK(g == 7 && o == 1, "rget_c %d, rget_accumulate_c %d", g, o);

    CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    CALL(MPI_Win_fence(0, win));
    expect_class(MPI_Put_c(&v, -1, MPI_INT, right, 0, 1, MPI_INT, win), MPI_ERR_COUNT, "MPI_Put_c count -1",
                 __LINE__);
    CALL(MPI_Win_fence(0, win));
    CALL(MPI_Win_free(&win));

    int mem[2] = { 0, 0 };
    CALL(MPI_Win_create_c(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    CALL(MPI_Win_free(&win));

    /* Shared windows: one int each, every rank's part found by rank. */
    MPI_Comm node;
    CALL(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    int *mine;
    CALL(MPI_Win_allocate_shared_c(sizeof(int), sizeof(int), MPI_INFO_NULL, node, &mine, &win));
    MPI_Aint size = -1, unit = -1;
    int *part;
    CALL(MPI_Win_shared_query_c(win, 0, &size, &unit, &part));
    CHECK(size == sizeof(int) && unit == sizeof(int), "shared_query_c: size %ld unit %ld", (long)size, (long)unit);
    CALL(MPI_Win_free(&win));
    CALL(MPI_Comm_free(&node));
    CALL(MPI_Finalize());
    return 0;
}
