/* ranks: 1 2 3 4 */
/*
 * MPI_MAXLOC and MPI_MINLOC accumulates with derived datatypes built of a
 * pair type alone (a vector of MPI_LONG_DOUBLE_INT, whose pairs have padding;
 * a contiguous type of MPI_2INT): each pair is combined by value and index as
 * with the pair type itself, the gaps of the vector stay as they were. Each
 * rank accumulates into the next one's window, under a lock, in a window made
 * by MPI_Win_create and in a shared-memory one (there the origin combines).
 */
#define TEST_NAME "rma_pair_types"
#include "testutil.h"

#define D 25

typedef struct { long double a; int b; } ldi;

static void run(int shared)
{
    MPI_Win win;
    ldi *t;
    if (shared) {
        CALL(MPI_Win_allocate_shared(D * sizeof(ldi), sizeof(ldi), MPI_INFO_NULL, MPI_COMM_WORLD, &t, &win));
    } else {
        t = xmalloc(D * sizeof(ldi));
        CALL(MPI_Win_create(t, D * sizeof(ldi), sizeof(ldi), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    }
    CALL(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, win));
    for (int i = 0; i < D; i++) {
        t[i].a = 0;
        t[i].b = -1;
    }
    CALL(MPI_Win_unlock(me, win));
    CALL(MPI_Barrier(MPI_COMM_WORLD));

    ldi o[D];
    for (int i = 0; i < D; i++) {
        o[i].a = 1.0 + me;
        o[i].b = me;
    }
    MPI_Datatype vec;
    CALL(MPI_Type_vector(5, 3, 5, MPI_LONG_DOUBLE_INT, &vec));
    CALL(MPI_Type_commit(&vec));
    int to = (me + 1) % np, from = (me + np - 1) % np;
    CALL(MPI_Win_lock(MPI_LOCK_SHARED, to, 0, win));
    CALL(MPI_Accumulate(o, 1, vec, to, 0, 1, vec, MPI_MAXLOC, win));
    CALL(MPI_Win_unlock(to, win));
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    CALL(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, win));
    for (int i = 0; i < D; i++) {
        int in = i % 5 < 3;
        long double a = in ? 1.0 + from : 0;
        int b = in ? from : -1;
        CHECK(t[i].a == a && t[i].b == b, "%s window: pair %d is (%Lg, %d), expected (%Lg, %d)", shared ? "shared" : "created", i,
              t[i].a, t[i].b, a, b);
    }
    CALL(MPI_Win_unlock(me, win));
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    CALL(MPI_Type_free(&vec));
    CALL(MPI_Win_free(&win));
    if (!shared)
        free(t);
}

/* MINLOC through a contiguous type of MPI_2INT, the old values fetched. */
static void run_2int(void)
{
    int cell[4] = {100, -1, 100, -1}, mine[4] = {me, me, 50 + me, me}, old[4];
    MPI_Win win;
    MPI_Datatype two;
    CALL(MPI_Type_contiguous(2, MPI_2INT, &two));
    CALL(MPI_Type_commit(&two));
    CALL(MPI_Win_create(cell, sizeof cell, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    CALL(MPI_Win_fence(0, win));
    CALL(MPI_Get_accumulate(mine, 1, two, old, 1, two, 0, 0, 1, two, MPI_MINLOC, win));
    CALL(MPI_Win_fence(0, win));
    if (me == 0)
        CHECK(cell[0] == 0 && cell[1] == 0 && cell[2] == 50 && cell[3] == 0, "MINLOC gave (%d, %d) (%d, %d)", cell[0], cell[1],
              cell[2], cell[3]);
    CALL(MPI_Win_free(&win));
    CALL(MPI_Type_free(&two));
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    run(0);
    run(1);
    run_2int();
    CALL(MPI_Finalize());
    return 0;
}
