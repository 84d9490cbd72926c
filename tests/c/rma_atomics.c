/* ranks: 1 2 4 8 */
/* env: FERRY_TRANSPORTS=shm,tcp */
/* env: FERRY_TRANSPORTS=tcp */
/* timeout: 120 */
/*
 * Atomicity of the accumulate family when every rank updates the same
 * elements at once, on an MPI_Win_allocate window and an
 * MPI_Win_allocate_shared one (over shared memory the origins update the
 * target's memory themselves: atomic instructions for integers, the target's
 * lock otherwise; over TCP MPI_Win_allocate goes to the target). Each result
 * is checked exactly:
 *   - N ranks x K fetch-and-ops of +1 on one int64: N*K, and the old values
 *     returned are 0 .. N*K-1, each once;
 *   - fetch-and-ops spread over several elements of several ranks;
 *   - a spin lock made of compare-and-swap protecting a counter updated with
 *     plain get and put;
 *   - sums of doubles (exact: halves), several at once, and long doubles;
 *   - on one element: accumulates of one and of several elements, fetch-and-
 *     ops and get-accumulates, mixed; MPI_NO_OP fetches that never go back;
 *   - get-accumulate MPI_REPLACE as an atomic swap: every value written is
 *     read back exactly once;
 *   - 1-, 2- and 4-byte integers in long accumulates mixed with one-element
 *     fetch-and-ops on the same bytes; an int at an odd address; MAXLOC on
 *     MPI_DOUBLE_INT; a vector type;
 *   - an exclusive MPI_Win_lock protecting plain get and put.
 */
#define TEST_NAME "rma_atomics"
#include "testutil.h"

#include <stdint.h>

#define SIZE 4096
#define K 300
/* Byte offsets in every rank's part (displacement unit 1). */
#define OFF_COUNT 0   /* int64 */
#define OFF_MULTI 64  /* int64[8] */
#define OFF_LOCK 192  /* int64 */
#define OFF_PLAIN 200 /* int64 */
#define OFF_DBL 256   /* double */
#define OFF_DBL4 264  /* double[4] */
#define OFF_MIX 320   /* int64[4] */
#define OFF_SWAP 384  /* int64 */
#define OFF_ODD 449   /* int at an odd address */
#define OFF_LDBL 512  /* long double */
#define OFF_DI 544    /* struct { double; int; } */
#define OFF_CHARS 576 /* signed char[16] */
#define OFF_SHORT 600 /* short[4] */
#define OFF_INT 616   /* int32_t[4] */
#define OFF_EXCL 640  /* int64 */
#define OFF_VEC 704   /* int64[8], every other one */

struct dbl_int {
    double v;
    int i;
};

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int64_t fetch64(MPI_Win win, int rank, MPI_Aint off)
{
    int64_t v = 0;
    CALL(MPI_Fetch_and_op(NULL, &v, MPI_INT64_T, rank, off, MPI_NO_OP, win));
    CALL(MPI_Win_flush(rank, win));
    return v;
}

/* The shortcuts of shared windows give way to the general checks: every error has its class.
 * MPI leaves detecting most of these to the implementation (MPICH checks no range): Ferry's. */
static void errors(MPI_Win win)
{
    int64_t one = 1, r = 0;
    double d = 1.0;
    if (!is_ferry())
        return;
    CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    EXPECT(MPI_ERR_RMA_SYNC, MPI_Fetch_and_op(&one, &r, MPI_INT64_T, 0, 0, MPI_SUM, win));
    EXPECT(MPI_ERR_RMA_SYNC, MPI_Put(&one, 1, MPI_INT64_T, 0, 0, 1, MPI_INT64_T, win));
    CALL(MPI_Win_lock_all(0, win));
    EXPECT(MPI_ERR_RMA_RANGE, MPI_Fetch_and_op(&one, &r, MPI_INT64_T, 0, SIZE - 4, MPI_SUM, win));
    EXPECT(MPI_ERR_RMA_RANGE, MPI_Compare_and_swap(&one, &r, &r, MPI_INT64_T, 0, SIZE, win));
    EXPECT(MPI_ERR_RMA_RANGE, MPI_Accumulate(&one, 1, MPI_INT64_T, 0, SIZE - 7, 1, MPI_INT64_T, MPI_SUM, win));
    EXPECT(MPI_ERR_RMA_RANGE, MPI_Put(&one, 1, MPI_INT64_T, 0, SIZE - 1, 1, MPI_INT64_T, win));
    EXPECT(MPI_ERR_RMA_RANGE, MPI_Get(&r, 1, MPI_INT64_T, 0, SIZE - 1, 1, MPI_INT64_T, win));
    EXPECT(MPI_ERR_DISP, MPI_Fetch_and_op(&one, &r, MPI_INT64_T, 0, -8, MPI_SUM, win));
    EXPECT(MPI_ERR_RANK, MPI_Fetch_and_op(&one, &r, MPI_INT64_T, np, 0, MPI_SUM, win));
    EXPECT(MPI_ERR_OP, MPI_Fetch_and_op(&d, &d, MPI_DOUBLE, 0, 0, MPI_BAND, win));
    EXPECT(MPI_ERR_OP, MPI_Accumulate(&one, 1, MPI_INT64_T, 0, 0, 1, MPI_INT64_T, MPI_OP_NULL, win));
    /* Compare-and-swap compares bits: not for floating types, nor derived ones. */
    MPI_Datatype eight;
    CALL(MPI_Type_contiguous(8, MPI_BYTE, &eight));
    CALL(MPI_Type_commit(&eight));
    EXPECT(MPI_ERR_TYPE, MPI_Compare_and_swap(&d, &d, &d, MPI_DOUBLE, 0, 0, win));
    EXPECT(MPI_ERR_TYPE, MPI_Compare_and_swap(&one, &r, &r, eight, 0, 0, win));
    CALL(MPI_Type_free(&eight));
    /* MPI_PROC_NULL: nothing happens, successfully. */
    CALL(MPI_Fetch_and_op(&one, &r, MPI_INT64_T, MPI_PROC_NULL, 0, MPI_SUM, win));
    CALL(MPI_Compare_and_swap(&one, &r, &r, MPI_INT64_T, MPI_PROC_NULL, 0, win));
    CALL(MPI_Win_unlock_all(win));
    CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_ARE_FATAL));
}

static void run(MPI_Win win, char *base, const char *what)
{
    const int64_t one = 1;
    const int last = np - 1;
    memset(base, 0, SIZE);
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    errors(win);
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    CALL(MPI_Win_lock_all(0, win));

    /* One element, every rank: the old values are distinct. */
    int64_t *olds = xmalloc(sizeof(int64_t) * K);
    for (int k = 0; k < K; k++) {
        CALL(MPI_Fetch_and_op(&one, &olds[k], MPI_INT64_T, 0, OFF_COUNT, MPI_SUM, win));
        CALL(MPI_Win_flush(0, win));
    }
    /* Several elements of several ranks. */
    for (int k = 0; k < K; k++) {
        int64_t old;
        CALL(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, k % np, OFF_MULTI + 8 * (k % 8), MPI_SUM, win));
    }
    CALL(MPI_Win_flush_all(win));

    /* A spin lock of compare-and-swap on rank 0, guarding a counter on the last rank. */
    for (int k = 0; k < K / 10; k++) {
        int64_t mine = me + 1, zero = 0, seen = -1;
        do {
            CALL(MPI_Compare_and_swap(&mine, &zero, &seen, MPI_INT64_T, 0, OFF_LOCK, win));
            CALL(MPI_Win_flush(0, win));
        } while (seen != 0);
        int64_t c;
        CALL(MPI_Get(&c, 1, MPI_INT64_T, last, OFF_PLAIN, 1, MPI_INT64_T, win));
        CALL(MPI_Win_flush(last, win));
        c++;
        CALL(MPI_Put(&c, 1, MPI_INT64_T, last, OFF_PLAIN, 1, MPI_INT64_T, win));
        CALL(MPI_Win_flush(last, win));
        CALL(MPI_Compare_and_swap(&zero, &mine, &seen, MPI_INT64_T, 0, OFF_LOCK, win));
        CALL(MPI_Win_flush(0, win));
        CHECK(seen == mine, "%s: the spin lock held %ld, not this rank's %ld", what, (long)seen, (long)mine);
    }

    /* Floating point: one double, four at once, a long double. */
    double half = 0.5, halves[4] = { 0.5, 1.0, 1.5, 2.0 }, dold;
    long double lhalf = 0.5L;
    for (int k = 0; k < K; k++) {
        CALL(MPI_Fetch_and_op(&half, &dold, MPI_DOUBLE, 0, OFF_DBL, MPI_SUM, win));
        CALL(MPI_Accumulate(halves, 4, MPI_DOUBLE, last, OFF_DBL4, 4, MPI_DOUBLE, MPI_SUM, win));
        CALL(MPI_Accumulate(&lhalf, 1, MPI_LONG_DOUBLE, 0, OFF_LDBL, 1, MPI_LONG_DOUBLE, MPI_SUM, win));
    }
    CALL(MPI_Win_flush_all(win));

    /* One element, every way: +1 by accumulate, +1 by fetch-and-op, +1 to each of four
     * elements by one accumulate, +1 to two by get-accumulate; NO_OP reads never go back. */
    int64_t ones[4] = { 1, 1, 1, 1 }, got[4], prev = 0;
    for (int k = 0; k < K; k++) {
        int64_t old, now;
        switch (k % 4) {
        case 0:
            CALL(MPI_Accumulate(&one, 1, MPI_INT64_T, 0, OFF_MIX, 1, MPI_INT64_T, MPI_SUM, win));
            break;
        case 1:
            CALL(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, 0, OFF_MIX, MPI_SUM, win));
            break;
        case 2:
            CALL(MPI_Accumulate(ones, 4, MPI_INT64_T, 0, OFF_MIX, 4, MPI_INT64_T, MPI_SUM, win));
            break;
        case 3:
            CALL(MPI_Get_accumulate(ones, 2, MPI_INT64_T, got, 2, MPI_INT64_T, 0, OFF_MIX, 2, MPI_INT64_T, MPI_SUM, win));
            break;
        }
        CALL(MPI_Win_flush(0, win));
        CALL(MPI_Fetch_and_op(NULL, &now, MPI_INT64_T, 0, OFF_MIX, MPI_NO_OP, win));
        CALL(MPI_Win_flush(0, win));
        CHECK(now > prev, "%s: element read %ld after %ld", what, (long)now, (long)prev);
        prev = now;
    }

    /* Atomic swap: each rank writes K distinct values and keeps what it took out. */
    int64_t *taken = xmalloc(sizeof(int64_t) * K);
    for (int k = 0; k < K; k++) {
        int64_t v = (int64_t)me * K + k + 1;
        CALL(MPI_Get_accumulate(&v, 1, MPI_INT64_T, &taken[k], 1, MPI_INT64_T, last, OFF_SWAP, 1, MPI_INT64_T, MPI_REPLACE, win));
        CALL(MPI_Win_flush(last, win));
    }

    /* Small integers: long accumulates over bytes a fetch-and-op also hits. */
    signed char cones[16], cold;
    short sones[4] = { 1, 1, 1, 1 }, sold;
    int32_t iones[4] = { 1, 1, 1, 1 }, iold;
    memset(cones, 1, sizeof cones);
    int odd = 1, oddold;
    for (int k = 0; k < K; k++) {
        CALL(MPI_Accumulate(cones, 16, MPI_SIGNED_CHAR, 0, OFF_CHARS, 16, MPI_SIGNED_CHAR, MPI_SUM, win));
        CALL(MPI_Fetch_and_op(&cones[0], &cold, MPI_SIGNED_CHAR, 0, OFF_CHARS + 5, MPI_SUM, win));
        CALL(MPI_Accumulate(sones, 4, MPI_SHORT, 0, OFF_SHORT, 4, MPI_SHORT, MPI_SUM, win));
        CALL(MPI_Fetch_and_op(&sones[0], &sold, MPI_SHORT, 0, OFF_SHORT + 2, MPI_SUM, win));
        CALL(MPI_Accumulate(iones, 4, MPI_INT32_T, 0, OFF_INT, 4, MPI_INT32_T, MPI_SUM, win));
        CALL(MPI_Fetch_and_op(&iones[0], &iold, MPI_INT32_T, 0, OFF_INT + 12, MPI_SUM, win));
        CALL(MPI_Fetch_and_op(&odd, &oddold, MPI_INT, last, OFF_ODD, MPI_SUM, win));
    }
    /* MAXLOC: every rank offers (rank, rank); the last one wins. */
    struct dbl_int di = { (double)me, me }, diold;
    CALL(MPI_Get_accumulate(&di, 1, MPI_DOUBLE_INT, &diold, 1, MPI_DOUBLE_INT, 0, OFF_DI, 1, MPI_DOUBLE_INT, MPI_MAXLOC, win));
    /* A vector type: every other int64 of OFF_VEC. */
    MPI_Datatype every_other;
    CALL(MPI_Type_vector(4, 1, 2, MPI_INT64_T, &every_other));
    CALL(MPI_Type_commit(&every_other));
    for (int k = 0; k < K / 10; k++)
        CALL(MPI_Accumulate(ones, 4, MPI_INT64_T, last, OFF_VEC, 1, every_other, MPI_SUM, win));
    CALL(MPI_Type_free(&every_other));
    CALL(MPI_Win_unlock_all(win));

    /* An exclusive lock around plain get and put. */
    for (int k = 0; k < K / 10; k++) {
        int64_t c;
        CALL(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        CALL(MPI_Get(&c, 1, MPI_INT64_T, 0, OFF_EXCL, 1, MPI_INT64_T, win));
        CALL(MPI_Win_flush(0, win));
        c++;
        CALL(MPI_Put(&c, 1, MPI_INT64_T, 0, OFF_EXCL, 1, MPI_INT64_T, win));
        CALL(MPI_Win_unlock(0, win));
    }
    CALL(MPI_Barrier(MPI_COMM_WORLD));

    /* The checks, read with NO_OP fetches (and on the target itself). */
    CALL(MPI_Win_lock_all(0, win));
    const int64_t n = np;
    CHECK(fetch64(win, 0, OFF_COUNT) == n * K, "%s: counter %ld, expected %ld", what, (long)fetch64(win, 0, OFF_COUNT), (long)(n * K));
    int64_t *all = me == 0 ? xmalloc(sizeof(int64_t) * K * np) : NULL;
    CALL(MPI_Gather(olds, K, MPI_INT64_T, all, K, MPI_INT64_T, 0, MPI_COMM_WORLD));
    if (me == 0) {
        qsort(all, (size_t)K * np, sizeof(int64_t), cmp64);
        for (int64_t i = 0; i < n * K; i++)
            CHECK(all[i] == i, "%s: fetch-and-op returned old values out of 0..%ld (%ld at %ld)", what, (long)(n * K - 1), (long)all[i], (long)i);
    }
    for (int r = 0; r < np; r++)
        for (int e = 0; e < 8; e++) {
            int64_t want = 0;
            for (int k = 0; k < K; k++)
                want += (k % np == r && k % 8 == e);
            want *= n;
            int64_t v = fetch64(win, r, OFF_MULTI + 8 * e);
            CHECK(v == want, "%s: rank %d element %d holds %ld, expected %ld", what, r, e, (long)v, (long)want);
        }
    CHECK(fetch64(win, last, OFF_PLAIN) == n * (K / 10), "%s: counter under the spin lock %ld, expected %ld", what, (long)fetch64(win, last, OFF_PLAIN), (long)(n * (K / 10)));
    CHECK(fetch64(win, 0, OFF_LOCK) == 0, "%s: the spin lock is still held", what);
    double d[4];
    CALL(MPI_Get(d, 1, MPI_DOUBLE, 0, OFF_DBL, 1, MPI_DOUBLE, win));
    CALL(MPI_Win_flush(0, win));
    CHECK(d[0] == 0.5 * K * np, "%s: double sum %g, expected %g", what, d[0], 0.5 * K * np);
    CALL(MPI_Get(d, 4, MPI_DOUBLE, last, OFF_DBL4, 4, MPI_DOUBLE, win));
    CALL(MPI_Win_flush(last, win));
    for (int e = 0; e < 4; e++)
        CHECK(d[e] == halves[e] * K * np, "%s: double %d sums to %g, expected %g", what, e, d[e], halves[e] * K * np);
    long double ld;
    CALL(MPI_Get(&ld, 1, MPI_LONG_DOUBLE, 0, OFF_LDBL, 1, MPI_LONG_DOUBLE, win));
    CALL(MPI_Win_flush(0, win));
    CHECK(ld == 0.5L * K * np, "%s: long double sum %Lg, expected %Lg", what, ld, 0.5L * K * np);
    /* Per rank and round of four: 1 + 1 + 1 + 1 on element 0; 1 and 1 on 1; 1 on 2 and 3. */
    int64_t mix[4];
    CALL(MPI_Get(mix, 4, MPI_INT64_T, 0, OFF_MIX, 4, MPI_INT64_T, win));
    CALL(MPI_Win_flush(0, win));
    const int64_t rounds = n * (K / 4);
    CHECK(mix[0] == 4 * rounds && mix[1] == 2 * rounds && mix[2] == rounds && mix[3] == rounds, "%s: mixture %ld %ld %ld %ld, expected %ld %ld %ld %ld", what, (long)mix[0], (long)mix[1], (long)mix[2], (long)mix[3], (long)(4 * rounds), (long)(2 * rounds), (long)rounds, (long)rounds);
    /* Swaps: what was taken out, and what is left, are every value written and the initial 0. */
    int64_t left = fetch64(win, last, OFF_SWAP);
    CALL(MPI_Gather(taken, K, MPI_INT64_T, all, K, MPI_INT64_T, 0, MPI_COMM_WORLD));
    if (me == 0) {
        qsort(all, (size_t)K * np, sizeof(int64_t), cmp64);
        CHECK(all[0] == 0, "%s: the initial value was never swapped out (%ld)", what, (long)all[0]);
        /* The initial 0 is the smallest taken; in its place, what is left. */
        all[0] = left;
        qsort(all, (size_t)K * np, sizeof(int64_t), cmp64);
        for (int64_t i = 0; i < n * K; i++)
            CHECK(all[i] == i + 1, "%s: swaps lost or duplicated a value (%ld at %ld)", what, (long)all[i], (long)i);
    }
    signed char c16[16];
    CALL(MPI_Get(c16, 16, MPI_SIGNED_CHAR, 0, OFF_CHARS, 16, MPI_SIGNED_CHAR, win));
    short s4[4];
    CALL(MPI_Get(s4, 4, MPI_SHORT, 0, OFF_SHORT, 4, MPI_SHORT, win));
    int32_t i4[4];
    CALL(MPI_Get(i4, 4, MPI_INT32_T, 0, OFF_INT, 4, MPI_INT32_T, win));
    int oddv;
    CALL(MPI_Get(&oddv, 1, MPI_INT, last, OFF_ODD, 1, MPI_INT, win));
    struct dbl_int dv;
    CALL(MPI_Get(&dv, 1, MPI_DOUBLE_INT, 0, OFF_DI, 1, MPI_DOUBLE_INT, win));
    int64_t vec[8];
    CALL(MPI_Get(vec, 8, MPI_INT64_T, last, OFF_VEC, 8, MPI_INT64_T, win));
    CALL(MPI_Win_flush_all(win));
    /* Sums of bytes wrap at 256: compare modulo it. */
    for (int e = 0; e < 16; e++)
        CHECK((unsigned char)c16[e] == (unsigned char)(n * K * (e == 5 ? 2 : 1)), "%s: char %d is %d", what, e, c16[e]);
    for (int e = 0; e < 4; e++) {
        CHECK((unsigned short)s4[e] == (unsigned short)(n * K * (e == 1 ? 2 : 1)), "%s: short %d is %d", what, e, s4[e]);
        CHECK(i4[e] == n * K * (e == 3 ? 2 : 1), "%s: int32 %d is %d", what, e, (int)i4[e]);
        CHECK(vec[2 * e] == n * (K / 10) && vec[2 * e + 1] == 0, "%s: vector elements %d: %ld %ld", what, e, (long)vec[2 * e], (long)vec[2 * e + 1]);
    }
    CHECK(oddv == n * K, "%s: int at an odd address %d, expected %ld", what, oddv, (long)(n * K));
    CHECK(dv.v == (double)last && dv.i == last, "%s: MAXLOC gave (%g, %d)", what, dv.v, dv.i);
    CHECK(fetch64(win, 0, OFF_EXCL) == n * (K / 10), "%s: counter under the exclusive lock %ld", what, (long)fetch64(win, 0, OFF_EXCL));
    CALL(MPI_Win_unlock_all(win));
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    free(all);
    free(olds);
    free(taken);
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    char *base;
    MPI_Win win;
    CALL(MPI_Win_allocate(SIZE, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    run(win, base, "MPI_Win_allocate");
    CALL(MPI_Win_free(&win));
    CALL(MPI_Win_allocate_shared(SIZE, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    run(win, base, "MPI_Win_allocate_shared");
    CALL(MPI_Win_free(&win));
    if (me == 0)
        printf("rma_atomics: %d ranks ok\n", np);
    CALL(MPI_Finalize());
    return 0;
}
