/* ranks: 1 2 4 */
/* env: FERRY_TRANSPORTS=shm,tcp */
/* env: FERRY_TRANSPORTS=tcp */
/*
 * Passive-target synchronisation: a target that computes without calling MPI
 * while the others lock its window, put and unlock (Ferry: they finish while
 * it still computes, served by the progress thread); exclusive locks that
 * really exclude (read-modify-write under MPI_LOCK_EXCLUSIVE); a counter that
 * every rank bumps with MPI_Fetch_and_op under MPI_Win_lock_all, whose final
 * value and fetched values must be exact; a spin lock with
 * MPI_Compare_and_swap; flush and the request-based operations; and the busy
 * target again on a window of MPI_Win_create made after the first was freed.
 */
#define TEST_NAME "rma_passive"
#include "testutil.h"

#include <string.h>

#define ROUNDS 1000
#define BUSY 2.5

/* Rank 0 computes for BUSY seconds without calling MPI while the others lock its window,
 * put into slot `me` and unlock; then everybody checks. */
static void busy_round(MPI_Win win, long *mem)
{
    if (me == 0) {
        double t0 = MPI_Wtime();
        volatile double sink = 0;
        while (MPI_Wtime() - t0 < BUSY)
            for (int i = 0; i < 1000; i++)
                sink += i * 0.5;
        (void)sink;
    } else {
        double t0 = MPI_Wtime();
        long v = 100 + me;
        CALL(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        CALL(MPI_Put(&v, 1, MPI_LONG, 0, me, 1, MPI_LONG, win));
        CALL(MPI_Win_unlock(0, win));
        double took = MPI_Wtime() - t0;
#ifdef FERRY_MPI_H
        /* Served while the target computed, not when it came back to MPI. */
        CHECK(took < BUSY - 1.0, "lock/put/unlock on a busy target took %.2f s", took);
#else
        (void)took;
#endif
    }
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0) {
        CALL(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        for (int r = 1; r < np; r++)
            CHECK(mem[r] == 100 + r, "busy target: mem[%d] = %ld", r, mem[r]);
        CALL(MPI_Win_unlock(0, win));
    }
    CALL(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    long *mem;
    MPI_Win win;
    CALL(MPI_Win_allocate(sizeof(long) * (np + 4), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    for (int i = 0; i < np + 4; i++)
        mem[i] = 0;
    CALL(MPI_Barrier(MPI_COMM_WORLD));

    /* 1. A busy target (a window of MPI_Win_allocate). */
    busy_round(win, mem);

    /* 2. Exclusive locks exclude: get, add one, put back, at rank 0's slot 0. */
    for (int i = 0; i < 50; i++) {
        long v = -1;
        CALL(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        CALL(MPI_Get(&v, 1, MPI_LONG, 0, 0, 1, MPI_LONG, win));
        CALL(MPI_Win_flush(0, win));
        v += 1;
        CALL(MPI_Put(&v, 1, MPI_LONG, 0, 0, 1, MPI_LONG, win));
        CALL(MPI_Win_unlock(0, win));
    }
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0) {
        CALL(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        CHECK(mem[0] == 50L * np, "exclusive increments: %ld, expected %ld", mem[0], 50L * np);
        CALL(MPI_Win_unlock(0, win));
    }
    CALL(MPI_Barrier(MPI_COMM_WORLD));

    /* 3. A shared counter: ROUNDS Fetch_and_op(SUM) from every rank. */
    CALL(MPI_Win_lock_all(0, win));
    long one = 1, prev = -1, old;
    for (int i = 0; i < ROUNDS; i++) {
        CALL(MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, np, MPI_SUM, win));
        CALL(MPI_Win_flush(0, win));
        CHECK(old > prev && old < (long)ROUNDS * np, "fetched %ld after %ld", old, prev);
        prev = old;
    }
    CALL(MPI_Win_unlock_all(win));
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    long total = -1;
    CALL(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    CALL(MPI_Fetch_and_op(NULL, &total, MPI_LONG, 0, np, MPI_NO_OP, win));
    CALL(MPI_Win_unlock(0, win));
    CHECK(total == (long)ROUNDS * np, "counter %ld, expected %ld", total, (long)ROUNDS * np);

    /* 4. A spin lock with compare-and-swap guarding a plain read-modify-write. */
    CALL(MPI_Win_lock_all(0, win));
    for (int i = 0; i < 20; i++) {
        long want = 0, mine = me + 1, seen = -1;
        do {
            CALL(MPI_Compare_and_swap(&mine, &want, &seen, MPI_LONG, 0, np + 1, win));
            CALL(MPI_Win_flush(0, win));
        } while (seen != 0);
        long v;
        CALL(MPI_Get(&v, 1, MPI_LONG, 0, np + 2, 1, MPI_LONG, win));
        CALL(MPI_Win_flush(0, win));
        v += 1;
        CALL(MPI_Put(&v, 1, MPI_LONG, 0, np + 2, 1, MPI_LONG, win));
        CALL(MPI_Win_flush(0, win));
        long zero = 0;
        CALL(MPI_Accumulate(&zero, 1, MPI_LONG, 0, np + 1, 1, MPI_LONG, MPI_REPLACE, win));
        CALL(MPI_Win_flush(0, win));
    }
    CALL(MPI_Win_unlock_all(win));
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0) {
        CALL(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        CHECK(mem[np + 2] == 20L * np, "CAS-guarded count %ld, expected %ld", mem[np + 2], 20L * np);
        CALL(MPI_Win_unlock(0, win));
    }
    CALL(MPI_Barrier(MPI_COMM_WORLD));

    /* 5. Request-based operations and flush_local. */
    int right = (me + 1) % np;
    CALL(MPI_Win_lock_all(0, win));
    long v = 7000 + me, back = -1;
    MPI_Request rq[2];
    CALL(MPI_Rput(&v, 1, MPI_LONG, right, np + 3, 1, MPI_LONG, win, &rq[0]));
    CALL(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    CALL(MPI_Win_flush(right, win));
    CALL(MPI_Rget(&back, 1, MPI_LONG, right, np + 3, 1, MPI_LONG, win, &rq[1]));
    CALL(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
    CHECK(back == 7000 + me, "Rget after Rput: %ld", back);
    long sum = -1, add = 5;
    CALL(MPI_Rget_accumulate(&add, 1, MPI_LONG, &sum, 1, MPI_LONG, right, np + 3, 1, MPI_LONG, MPI_SUM, win, &rq[0]));
    CALL(MPI_Raccumulate(&add, 1, MPI_LONG, right, np + 3, 1, MPI_LONG, MPI_SUM, win, &rq[1]));
    MPI_Status sts[2];
    CALL(MPI_Waitall(2, rq, sts));
    CHECK(sum == 7000 + me, "Rget_accumulate fetched %ld", sum);
    /* The requests completed locally only; a get is not ordered after accumulates. */
    CALL(MPI_Win_flush(right, win));
    CALL(MPI_Get(&back, 1, MPI_LONG, right, np + 3, 1, MPI_LONG, win));
    CALL(MPI_Win_flush_local(right, win));
    CHECK(back == 7010 + me, "after two accumulates: %ld", back);
    CALL(MPI_Win_unlock_all(win));

    /* 6. Errors. */
    CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    EXPECT(MPI_ERR_RMA_SYNC, MPI_Win_unlock(0, win));
    EXPECT(MPI_ERR_RMA_SYNC, MPI_Win_flush(0, win));
    EXPECT(MPI_ERR_RMA_SYNC, MPI_Win_unlock_all(win));
#ifdef FERRY_MPI_H
    EXPECT(MPI_ERR_LOCKTYPE, MPI_Win_lock(12345, 0, 0, win));
#else
    /* MPICH reports a bad lock type as MPI_ERR_ARG, Ferry (here under MPICH's header) as
     * MPI_ERR_LOCKTYPE. */
    {
        int rc = MPI_Win_lock(12345, 0, 0, win), cls = -1;
        CALL(MPI_Error_class(rc, &cls));
        CHECK(cls == MPI_ERR_ARG || cls == MPI_ERR_LOCKTYPE, "bad lock type: class %d", cls);
    }
#endif
    EXPECT(MPI_ERR_RANK, MPI_Win_lock(MPI_LOCK_SHARED, np, 0, win));
    CALL(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    EXPECT(MPI_ERR_RMA_SYNC, MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    CALL(MPI_Win_unlock(0, win));
    /* A fence with no operation since ends where a lock begins: once unlocked, the window
     * is in no epoch, and an operation is out of place. */
    int got = 0;
    CALL(MPI_Win_fence(0, win));
    CALL(MPI_Win_lock(MPI_LOCK_SHARED, 0, MPI_MODE_NOCHECK, win));
    CALL(MPI_Get(&got, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
    CALL(MPI_Win_unlock(0, win));
    EXPECT(MPI_ERR_RMA_SYNC, MPI_Get(&got, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
    CALL(MPI_Win_fence(0, win));
    CALL(MPI_Get(&got, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
    CALL(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));

    CALL(MPI_Win_free(&win));

    /* 7. Again on a new window of user memory (MPI_Win_create: every put goes through the
     * target), after the last window was freed. */
    long *user = xmalloc(sizeof(long) * np);
    for (int i = 0; i < np; i++)
        user[i] = 0;
    CALL(MPI_Win_create(user, sizeof(long) * np, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    busy_round(win, user);
    CALL(MPI_Win_free(&win));
    free(user);
    CALL(MPI_Finalize());
    return 0;
}
