/* ranks: 1 2 4 8 */
/* env: FERRY_TRANSPORTS=shm,tcp */
/* env: FERRY_TRANSPORTS=tcp */
/*
 * One-sided communication with fences: MPI_Win_create and MPI_Win_allocate,
 * Put/Get/Accumulate between every pair of ranks, derived datatypes on both
 * sides, the predefined attributes, and the error classes of bad calls.
 */
#define TEST_NAME "rma_fence"
#include "testutil.h"

#include <string.h>

#define N 16

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    MPI_Win win;
    int *mem = xmalloc(sizeof(int) * (N * np + 1));
    for (int i = 0; i < N * np + 1; i++)
        mem[i] = -1;
    CALL(MPI_Win_create(mem, sizeof(int) * (N * np + 1), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));

    /* Put: every rank writes N ints into its own slot of every window. */
    int src[N];
    for (int i = 0; i < N; i++)
        src[i] = me * 1000 + i;
    CALL(MPI_Win_fence(0, win));
    for (int t = 0; t < np; t++)
        CALL(MPI_Put(src, N, MPI_INT, t, me * N, N, MPI_INT, win));
    CALL(MPI_Win_fence(0, win));
    for (int r = 0; r < np; r++)
        for (int i = 0; i < N; i++)
            CHECK(mem[r * N + i] == r * 1000 + i, "put: mem[%d] = %d, expected %d", r * N + i, mem[r * N + i], r * 1000 + i);

    /* Get: read the right neighbour's slot of the left neighbour. */
    int right = (me + 1) % np, left = (me + np - 1) % np;
    int got[N];
    memset(got, 0, sizeof got);
    CALL(MPI_Get(got, N, MPI_INT, right, left * N, N, MPI_INT, win));
    CALL(MPI_Win_fence(0, win));
    for (int i = 0; i < N; i++)
        CHECK(got[i] == left * 1000 + i, "get: got[%d] = %d, expected %d", i, got[i], left * 1000 + i);

    /* Accumulate: everybody adds into rank 0's first slot; MPI_REPLACE into the last. */
    int ones[N];
    for (int i = 0; i < N; i++)
        ones[i] = i + 1;
    for (int i = 0; i < N * np + 1; i++)
        mem[i] = 0;
    CALL(MPI_Win_fence(0, win));
    CALL(MPI_Accumulate(ones, N, MPI_INT, 0, 0, N, MPI_INT, MPI_SUM, win));
    CALL(MPI_Accumulate(&me, 1, MPI_INT, 0, N * np, 1, MPI_INT, MPI_MAX, win));
    /* No data: nothing to combine, so the operation need not suit the type. */
    CALL(MPI_Accumulate(ones, 0, MPI_BYTE, right, 0, 0, MPI_BYTE, MPI_SUM, win));
    CALL(MPI_Win_fence(0, win));
    if (me == 0) {
        for (int i = 0; i < N; i++)
            CHECK(mem[i] == np * (i + 1), "accumulate: mem[%d] = %d, expected %d", i, mem[i], np * (i + 1));
        CHECK(mem[N * np] == np - 1, "MPI_MAX accumulate: %d, expected %d", mem[N * np], np - 1);
    }

    /* Derived types: a strided origin into a strided target (every other int). */
    MPI_Datatype every_other;
    CALL(MPI_Type_vector(N / 2, 1, 2, MPI_INT, &every_other));
    CALL(MPI_Type_commit(&every_other));
    for (int i = 0; i < N * np; i++)
        mem[i] = -1;
    CALL(MPI_Win_fence(0, win));
    CALL(MPI_Put(src, 1, every_other, right, me * N + 1, 1, every_other, win));
    CALL(MPI_Win_fence(0, win));
    for (int i = 0; i < N; i++) {
        int want = (i % 2 == 1) ? left * 1000 + i - 1 : -1;
        CHECK(mem[left * N + i] == want, "strided put: mem[%d] = %d, expected %d", left * N + i, mem[left * N + i], want);
    }
    /* ...and back with a strided get into a contiguous buffer. */
    memset(got, 0, sizeof got);
    CALL(MPI_Get(got, N / 2, MPI_INT, right, me * N + 1, 1, every_other, win));
    CALL(MPI_Win_fence(0, win));
    for (int i = 0; i < N / 2; i++)
        CHECK(got[i] == me * 1000 + 2 * i, "strided get: got[%d] = %d, expected %d", i, got[i], me * 1000 + 2 * i);
    CALL(MPI_Type_free(&every_other));

    /* Attributes. */
    void *base;
    MPI_Aint *size;
    int *disp_unit, *flavor, *model, flag;
    CALL(MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag));
    CHECK(flag && base == mem, "MPI_WIN_BASE %p, expected %p", base, (void *)mem);
    CALL(MPI_Win_get_attr(win, MPI_WIN_SIZE, &size, &flag));
    CHECK(flag && *size == (MPI_Aint)(sizeof(int) * (N * np + 1)), "MPI_WIN_SIZE %ld", (long)*size);
    CALL(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &disp_unit, &flag));
    CHECK(flag && *disp_unit == (int)sizeof(int), "MPI_WIN_DISP_UNIT %d", *disp_unit);
    CALL(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag));
    CHECK(flag && *flavor == MPI_WIN_FLAVOR_CREATE, "MPI_WIN_CREATE_FLAVOR %d", *flavor);
    CALL(MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag));
    CHECK(flag && (*model == MPI_WIN_UNIFIED || *model == MPI_WIN_SEPARATE), "MPI_WIN_MODEL %d", *model);

    /* Errors, returned to the caller. */
    CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    EXPECT(MPI_ERR_RANK, MPI_Put(src, 1, MPI_INT, np, 0, 1, MPI_INT, win));
    EXPECT(MPI_ERR_COUNT, MPI_Put(src, -1, MPI_INT, 0, 0, -1, MPI_INT, win));
    EXPECT(MPI_ERR_TYPE, MPI_Put(src, 1, MPI_DATATYPE_NULL, 0, 0, 1, MPI_INT, win));
    EXPECT(MPI_ERR_OP, MPI_Accumulate(src, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_OP_NULL, win));
    /* Compare-and-swap compares bits: no floating types. */
    float fl = 0;
    EXPECT(MPI_ERR_TYPE, MPI_Compare_and_swap(&fl, &fl, &fl, MPI_FLOAT, 0, 0, win));
#ifdef FERRY_MPI_H
    /* MPICH does not check the target's window size at the origin. */
    EXPECT(MPI_ERR_RMA_RANGE, MPI_Put(src, N, MPI_INT, right, N * np - 1, N, MPI_INT, win));
    EXPECT(MPI_ERR_DISP, MPI_Put(src, 1, MPI_INT, right, -1, 1, MPI_INT, win));
#endif
    CALL(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    EXPECT(MPI_ERR_RMA_SYNC, MPI_Put(src, 1, MPI_INT, right, 0, 1, MPI_INT, win));
    CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    EXPECT(MPI_ERR_WIN, MPI_Win_fence(0, MPI_WIN_NULL));
    CALL(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL, "MPI_Win_free left the handle");

    /* MPI_Win_allocate: the library's memory, doubles this time. */
    double *dmem;
    CALL(MPI_Win_allocate(sizeof(double) * np, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &dmem, &win));
    for (int i = 0; i < np; i++)
        dmem[i] = 0.0;
    CALL(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag));
    CHECK(flag && *flavor == MPI_WIN_FLAVOR_ALLOCATE, "MPI_WIN_CREATE_FLAVOR %d", *flavor);
    CALL(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    double x = me + 0.5;
    for (int t = 0; t < np; t++)
        CALL(MPI_Accumulate(&x, 1, MPI_DOUBLE, t, me, 1, MPI_DOUBLE, MPI_SUM, win));
    CALL(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    for (int r = 0; r < np; r++)
        CHECK(dmem[r] == r + 0.5, "allocate: dmem[%d] = %g", r, dmem[r]);
    CALL(MPI_Win_free(&win));

    /* Large transfers (past every eager limit): 1 MiB put to the right, got back from the left. */
    enum { BIG = 1 << 18 };
    int *big, *out = xmalloc(sizeof(int) * BIG), *in = xmalloc(sizeof(int) * BIG);
    CALL(MPI_Win_allocate(sizeof(int) * BIG, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &big, &win));
    for (int i = 0; i < BIG; i++) {
        out[i] = me * 7 + i;
        in[i] = -1;
    }
    CALL(MPI_Win_fence(0, win));
    CALL(MPI_Put(out, BIG, MPI_INT, right, 0, BIG, MPI_INT, win));
    CALL(MPI_Win_fence(0, win));
    CALL(MPI_Get(in, BIG, MPI_INT, left, 0, BIG, MPI_INT, win));
    CALL(MPI_Win_fence(0, win));
    for (int i = 0; i < BIG; i++) {
        CHECK(big[i] == left * 7 + i, "big put: [%d] = %d", i, big[i]);
        CHECK(in[i] == ((left + np - 1) % np) * 7 + i, "big get: [%d] = %d", i, in[i]);
    }
    CALL(MPI_Win_free(&win));
    free(out);
    free(in);

    free(mem);
    CALL(MPI_Finalize());
    return 0;
}
