/* ranks: 1 2 3 4 */
/* env: FERRY_TRANSPORTS=shm,tcp */
/* env: FERRY_TRANSPORTS=tcp */
/*
 * The one-sided calls that a shared window serves without the runtime (put, get,
 * accumulate and get-accumulate of one element, fetch-and-op, compare-and-swap, flush)
 * follow the window's epochs exactly as the general way does: allowed in a fence epoch, a
 * lock of that target, a lock_all and a PSCW access epoch naming the target; refused with
 * MPI_ERR_RMA_SYNC before any epoch, after it ends, and for targets the epoch does not
 * cover; wrong ranks, displacements, datatypes and operations get their classes. A freed
 * window's handle is refused even when a new window took its slot. Each on a window of
 * MPI_Win_allocate_shared and one of MPI_Win_allocate (shared when every member is on this
 * host and the engine reaches it through shared memory, not with FERRY_TRANSPORTS=tcp).
 * Then the element sizes these calls update as one word (1, 2, 4 and 8 bytes: integers that
 * wrap, float, double, compare-and-swap, MPI_REPLACE, MPI_NO_OP) and an accumulate of two
 * elements, every rank at once on rank 0, with exact results.
 */
#define TEST_NAME "rma_lean"
#include "testutil.h"
#include <stddef.h>
#include <stdint.h>

static int me, np;

static void errors_outside_epochs(MPI_Win win)
{
    int64_t one = 1, res = 0, cmp = 0;
    int right = (me + 1) % np;
    EXPECT(MPI_ERR_RMA_SYNC, MPI_Fetch_and_op(&one, &res, MPI_INT64_T, right, 0, MPI_SUM, win));
    EXPECT(MPI_ERR_RMA_SYNC, MPI_Compare_and_swap(&one, &cmp, &res, MPI_INT64_T, right, 0, win));
    EXPECT(MPI_ERR_RMA_SYNC, MPI_Put(&one, 1, MPI_INT64_T, right, 0, 1, MPI_INT64_T, win));
    EXPECT(MPI_ERR_RMA_SYNC, MPI_Get(&res, 1, MPI_INT64_T, right, 0, 1, MPI_INT64_T, win));
    EXPECT(MPI_ERR_RMA_SYNC, MPI_Accumulate(&one, 1, MPI_INT64_T, right, 0, 1, MPI_INT64_T, MPI_SUM, win));
    EXPECT(MPI_ERR_RMA_SYNC, MPI_Win_flush(right, win));
    EXPECT(MPI_ERR_RMA_SYNC, MPI_Win_flush_local(right, win));
}

static void round_on(MPI_Win win, int64_t *mem)
{
    int right = (me + 1) % np, left = (me + np - 1) % np;
    int64_t one = 1, res = -1, cmp = 0, v;

    errors_outside_epochs(win);

    /* lock_all: everything allowed to every target; then nothing after the unlock. */
    CALL(MPI_Win_lock_all(0, win));
    for (int t = 0; t < np; t++)
        CALL(MPI_Fetch_and_op(&one, &res, MPI_INT64_T, t, 0, MPI_SUM, win));
    CALL(MPI_Win_flush(right, win));
    CALL(MPI_Win_flush_local(right, win));
    /* Bad arguments inside the epoch. */
    EXPECT(MPI_ERR_RANK, MPI_Fetch_and_op(&one, &res, MPI_INT64_T, np, 0, MPI_SUM, win));
    EXPECT(MPI_ERR_RANK, MPI_Win_flush(np, win));
    EXPECT(MPI_ERR_RMA_RANGE, MPI_Fetch_and_op(&one, &res, MPI_INT64_T, right, 4, MPI_SUM, win));
    EXPECT(MPI_ERR_DISP, MPI_Fetch_and_op(&one, &res, MPI_INT64_T, right, -1, MPI_SUM, win));
    double d = 1.0, dres;
    EXPECT(MPI_ERR_OP, MPI_Fetch_and_op(&d, &dres, MPI_DOUBLE, right, 0, MPI_BAND, win));
    float f = 1.0f, fc = 0.0f, fr;
    EXPECT(MPI_ERR_TYPE, MPI_Compare_and_swap(&f, &fc, &fr, MPI_FLOAT, right, 0, win));
    EXPECT(MPI_ERR_TYPE, MPI_Fetch_and_op(&one, &res, MPI_DATATYPE_NULL, right, 0, MPI_SUM, win));
    CALL(MPI_Win_unlock_all(win));
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(mem[0] == np, "after every rank added 1: %lld, expected %d", (long long)mem[0], np);
    errors_outside_epochs(win);
    CALL(MPI_Barrier(MPI_COMM_WORLD));

    /* A lock of one target covers that target only. */
    CALL(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    CALL(MPI_Compare_and_swap(&one, &cmp, &res, MPI_INT64_T, right, 1, win));
    CALL(MPI_Win_flush(right, win));
    if (np > 2) {
        int other = (me + 2) % np;
        EXPECT(MPI_ERR_RMA_SYNC, MPI_Fetch_and_op(&one, &res, MPI_INT64_T, other, 0, MPI_SUM, win));
        EXPECT(MPI_ERR_RMA_SYNC, MPI_Win_flush(other, win));
    }
    CALL(MPI_Win_unlock(right, win));
    EXPECT(MPI_ERR_RMA_SYNC, MPI_Compare_and_swap(&one, &cmp, &res, MPI_INT64_T, right, 1, win));
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(mem[1] == 1, "compare-and-swap from the left: %lld, expected 1", (long long)mem[1]);

    /* A fence epoch: puts, gets and accumulates to anyone; none after MPI_MODE_NOSUCCEED. */
    CALL(MPI_Win_fence(0, win));
    v = 100 + me;
    CALL(MPI_Put(&v, 1, MPI_INT64_T, right, 2, 1, MPI_INT64_T, win));
    CALL(MPI_Accumulate(&one, 1, MPI_INT64_T, left, 3, 1, MPI_INT64_T, MPI_SUM, win));
    CALL(MPI_Win_fence(0, win));
    CHECK(mem[2] == 100 + left, "put from the left: %lld", (long long)mem[2]);
    CHECK(mem[3] == 1, "accumulate from the right: %lld", (long long)mem[3]);
    CALL(MPI_Get(&res, 1, MPI_INT64_T, left, 2, 1, MPI_INT64_T, win));
    CALL(MPI_Get_accumulate(&one, 1, MPI_INT64_T, &v, 1, MPI_INT64_T, right, 3, 1, MPI_INT64_T, MPI_NO_OP, win));
    CALL(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    CHECK(res == 100 + (left + np - 1) % np, "get from the left: %lld", (long long)res);
    CHECK(v == 1, "fetched with MPI_NO_OP: %lld", (long long)v);
    EXPECT(MPI_ERR_RMA_SYNC, MPI_Put(&one, 1, MPI_INT64_T, right, 2, 1, MPI_INT64_T, win));

    /* A PSCW access epoch covers the targets of its group only. */
    MPI_Group world, g;
    CALL(MPI_Comm_group(MPI_COMM_WORLD, &world));
    CALL(MPI_Group_incl(world, 1, &right, &g));
    MPI_Group from;
    CALL(MPI_Group_incl(world, 1, &left, &from));
    CALL(MPI_Win_post(from, 0, win));
    CALL(MPI_Win_start(g, 0, win));
    CALL(MPI_Fetch_and_op(&one, &res, MPI_INT64_T, right, 0, MPI_SUM, win));
    if (np > 2)
        EXPECT(MPI_ERR_RMA_SYNC, MPI_Fetch_and_op(&one, &res, MPI_INT64_T, (me + 2) % np, 0, MPI_SUM, win));
    CALL(MPI_Win_complete(win));
    CALL(MPI_Win_wait(win));
    EXPECT(MPI_ERR_RMA_SYNC, MPI_Fetch_and_op(&one, &res, MPI_INT64_T, right, 0, MPI_SUM, win));
    CHECK(mem[0] == np + 1, "after the PSCW epoch: %lld, expected %d", (long long)mem[0], np + 1);
    CALL(MPI_Group_free(&g));
    CALL(MPI_Group_free(&from));
    CALL(MPI_Group_free(&world));
    CALL(MPI_Barrier(MPI_COMM_WORLD));
}

#define K 50

static void words(void)
{
    struct cells { int32_t i; uint32_t u; float f; double d; int64_t l; int16_t s; uint8_t b; signed char sc; int32_t pair[2]; int32_t cas; } *c;
    MPI_Win win;
    CALL(MPI_Win_allocate(sizeof *c, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &c, &win));
    memset(c, 0, sizeof *c);
    if (me == 0)
        c->u = 0xffffffffu - (uint32_t)(np * K) + 1;
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    CALL(MPI_Win_lock_all(0, win));
    int32_t one = 1, got;
    uint32_t uone = 1, ugot;
    float half = 0.5f, fgot;
    double dhalf = 0.5;
    int64_t lone = 1, lgot;
    int16_t sone = 1, sgot;
    uint8_t bseven = 7;
    signed char scone = -1, scgot;
    int32_t two[2] = { 1, 2 };
    for (int k = 0; k < K; k++) {
        CALL(MPI_Fetch_and_op(&one, &got, MPI_INT, 0, offsetof(struct cells, i), MPI_SUM, win));
        CALL(MPI_Fetch_and_op(&uone, &ugot, MPI_UNSIGNED, 0, offsetof(struct cells, u), MPI_SUM, win));
        CALL(MPI_Fetch_and_op(&half, &fgot, MPI_FLOAT, 0, offsetof(struct cells, f), MPI_SUM, win));
        CALL(MPI_Accumulate(&dhalf, 1, MPI_DOUBLE, 0, offsetof(struct cells, d), 1, MPI_DOUBLE, MPI_SUM, win));
        CALL(MPI_Get_accumulate(&lone, 1, MPI_INT64_T, &lgot, 1, MPI_INT64_T, 0, offsetof(struct cells, l), 1, MPI_INT64_T, MPI_SUM, win));
        CALL(MPI_Fetch_and_op(&sone, &sgot, MPI_SHORT, 0, offsetof(struct cells, s), MPI_SUM, win));
        CALL(MPI_Accumulate(&bseven, 1, MPI_UINT8_T, 0, offsetof(struct cells, b), 1, MPI_UINT8_T, MPI_SUM, win));
        CALL(MPI_Fetch_and_op(&scone, &scgot, MPI_SIGNED_CHAR, 0, offsetof(struct cells, sc), MPI_SUM, win));
        CALL(MPI_Accumulate(two, 2, MPI_INT32_T, 0, offsetof(struct cells, pair), 2, MPI_INT32_T, MPI_SUM, win));
        /* A counter made of compare-and-swap: retry until this rank's increment lands. */
        int32_t seen = 0, want;
        do {
            want = seen + 1;
            CALL(MPI_Compare_and_swap(&want, &seen, &got, MPI_INT32_T, 0, offsetof(struct cells, cas), win));
            CALL(MPI_Win_flush(0, win));
            if (got == seen)
                break;
            seen = got;
        } while (1);
        CALL(MPI_Win_flush(0, win));
    }
    CALL(MPI_Win_unlock_all(win));
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0) {
        int n = np * K;
        CHECK(c->i == n, "int sum %d, expected %d", c->i, n);
        CHECK(c->u == 0, "unsigned sum wrapped to %u, expected 0", c->u);
        CHECK(c->f == 0.5f * n, "float sum %g, expected %g", c->f, 0.5 * n);
        CHECK(c->d == 0.5 * n, "double sum %g, expected %g", c->d, 0.5 * n);
        CHECK(c->l == n, "int64 sum %lld, expected %d", (long long)c->l, n);
        CHECK(c->s == n, "short sum %d, expected %d", c->s, n);
        CHECK(c->b == (uint8_t)(7 * n), "uint8 sum %u, expected %u (wrapped)", c->b, (uint8_t)(7 * n));
        CHECK(c->sc == (signed char)(-n), "signed char sum %d, expected %d (wrapped)", c->sc, (signed char)(-n));
        CHECK(c->pair[0] == n && c->pair[1] == 2 * n, "pair sums %d %d, expected %d %d", c->pair[0], c->pair[1], n, 2 * n);
        CHECK(c->cas == n, "compare-and-swap counter %d, expected %d", c->cas, n);
    }
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    /* MPI_REPLACE and MPI_NO_OP of one word: each rank swaps its number in, one at a time. */
    for (int t = 0; t < np; t++) {
        if (me == t) {
            int32_t mine = 1000 + me, old = -1, now = -1;
            CALL(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
            CALL(MPI_Fetch_and_op(&mine, &old, MPI_INT32_T, 0, offsetof(struct cells, i), MPI_REPLACE, win));
            CALL(MPI_Fetch_and_op(NULL, &now, MPI_INT32_T, 0, offsetof(struct cells, i), MPI_NO_OP, win));
            CALL(MPI_Win_unlock(0, win));
            int want = me == 0 ? np * K : 1000 + me - 1;
            CHECK(old == want, "MPI_REPLACE gave back %d, expected %d", old, want);
            CHECK(now == mine, "MPI_NO_OP read %d, expected %d", now, mine);
        }
        CALL(MPI_Barrier(MPI_COMM_WORLD));
    }
    CALL(MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    for (int flavor = 0; flavor < 2; flavor++) {
        int64_t *mem;
        MPI_Win win;
        if (flavor == 0)
            CALL(MPI_Win_allocate_shared(4 * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
        else
            CALL(MPI_Win_allocate(4 * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
        CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
        for (int i = 0; i < 4; i++)
            mem[i] = 0;
        CALL(MPI_Barrier(MPI_COMM_WORLD));
        round_on(win, mem);

        /* A freed window's handle stays refused when another window takes its slot. */
        MPI_Win old = win;
        CALL(MPI_Win_free(&win));
        int64_t *mem2;
        MPI_Win win2;
        CALL(MPI_Win_allocate_shared(sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &mem2, &win2));
        CALL(MPI_Win_lock_all(0, win2));
        int64_t one = 1, res;
        CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        EXPECT(MPI_ERR_WIN, MPI_Fetch_and_op(&one, &res, MPI_INT64_T, 0, 0, MPI_SUM, old));
        EXPECT(MPI_ERR_WIN, MPI_Win_flush(0, old));
        CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
        CALL(MPI_Win_unlock_all(win2));
        CALL(MPI_Win_free(&win2));
    }
    words();
    CALL(MPI_Finalize());
    if (me == 0)
        printf("rma_lean: ok\n");
    return 0;
}
