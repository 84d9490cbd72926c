/*
 * rmacount.c — a fixed stream of small one-sided calls, made to be counted
 * (instructions per call under callgrind, see bench/rmacount.sh) rather than
 * timed.
 *
 * Two ranks, each the origin of the same calls on the other's part of an
 * MPI_Win_allocate window of four int64 slots (shared memory where the
 * implementation makes it so), inside one MPI_Win_lock_all epoch; five
 * phases of CALLS calls, each call followed by MPI_Win_flush of the target:
 *   MPI_Fetch_and_op      +1 (MPI_SUM) to slot 0, the old value checked
 *   MPI_Compare_and_swap  slot 1 from k to k + 1, the old value checked
 *   MPI_Put               k into slot 2
 *   MPI_Get               slot 0 (which only this origin changes: CALLS)
 *   MPI_Accumulate        +1 (MPI_SUM) to slot 3
 * Only this origin updates the target's slots, so every value is known; the
 * slots are checked at the end. Any wrong value or MPI error ends the program
 * with a non-zero status.
 *
 * Only the measured calls are made from main: the warm-up, the epoch's
 * opening and closing, the barriers and the final check are made from
 * functions of their own, which the counting leaves out (it reads the calls
 * made from main).
 *
 * Usage: rmacount [CALLS]   (default 10000)
 * Exactly 2 ranks. Rank 0 prints:
 *     # rmacount: calls 10000 ranks 2
 *     # library: <first line of MPI_Get_library_version>
 *     # rmacount: ok
 *
 * Plain MPI: builds with any implementation's mpicc.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

static int check(int rc, const char *what)
{
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "rmacount: %s returned error %d\n", what, rc);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return rc;
}

static void wrong(const char *what, long long got, long long want)
{
    fprintf(stderr, "rmacount: %s: %lld, expected %lld\n", what, got, want);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* A few calls of each kind on slots the measured phases do not use, then
 * the slots back to zero; the epoch stays open. */
static NOINLINE void warm_up(MPI_Win win, int64_t *mem, int other)
{
    int64_t one = 1, res = 0, cmp = 0;
    check(MPI_Win_lock_all(0, win), "MPI_Win_lock_all");
    for (int k = 0; k < 10; k++) {
        check(MPI_Fetch_and_op(&one, &res, MPI_INT64_T, other, 4, MPI_SUM, win), "MPI_Fetch_and_op");
        check(MPI_Compare_and_swap(&one, &cmp, &res, MPI_INT64_T, other, 5, win), "MPI_Compare_and_swap");
        check(MPI_Put(&one, 1, MPI_INT64_T, other, 6, 1, MPI_INT64_T, win), "MPI_Put");
        check(MPI_Get(&res, 1, MPI_INT64_T, other, 6, 1, MPI_INT64_T, win), "MPI_Get");
        check(MPI_Accumulate(&one, 1, MPI_INT64_T, other, 7, 1, MPI_INT64_T, MPI_SUM, win), "MPI_Accumulate");
        check(MPI_Win_flush(other, win), "MPI_Win_flush");
    }
    (void)mem;
}

static NOINLINE void finish(MPI_Win win, int64_t *mem, long calls, int rank)
{
    /* Every operation was flushed: once both origins are past the barrier, the target's
     * memory holds them (MPI_Win_sync inside the epoch, as MPICH requires). */
    check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    check(MPI_Win_sync(win), "MPI_Win_sync");
    if (mem[0] != calls)
        wrong("slot 0 after the fetch-and-ops", (long long)mem[0], calls);
    if (mem[1] != calls)
        wrong("slot 1 after the compare-and-swaps", (long long)mem[1], calls);
    if (mem[2] != calls - 1)
        wrong("slot 2 after the puts", (long long)mem[2], calls - 1);
    if (mem[3] != calls)
        wrong("slot 3 after the accumulates", (long long)mem[3], calls);
    check(MPI_Win_unlock_all(win), "MPI_Win_unlock_all");
    check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    if (rank == 0)
        printf("# rmacount: ok\n");
}

static NOINLINE void banner(long calls, int size)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    check(MPI_Get_library_version(lib, &len), "MPI_Get_library_version");
    char *nl = strchr(lib, '\n');
    if (nl)
        *nl = '\0';
    printf("# rmacount: calls %ld ranks %d\n# library: %s\n", calls, size, lib);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long calls = argc > 1 ? atol(argv[1]) : 10000;
    if (size != 2 || calls < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: rmacount [CALLS] on exactly 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (rank == 0)
        banner(calls, size);
    int other = 1 - rank;
    int64_t *mem;
    MPI_Win win;
    check(MPI_Win_allocate(8 * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win), "MPI_Win_allocate");
    memset(mem, 0, 8 * sizeof(int64_t));
    check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    warm_up(win, mem, other);

    int64_t one = 1, res = 0;
    for (long k = 0; k < calls; k++) {
        check(MPI_Fetch_and_op(&one, &res, MPI_INT64_T, other, 0, MPI_SUM, win), "MPI_Fetch_and_op");
        check(MPI_Win_flush(other, win), "MPI_Win_flush");
        if (res != k)
            wrong("fetch-and-op's old value", (long long)res, k);
    }
    for (long k = 0; k < calls; k++) {
        int64_t cmp = k, next = k + 1;
        check(MPI_Compare_and_swap(&next, &cmp, &res, MPI_INT64_T, other, 1, win), "MPI_Compare_and_swap");
        check(MPI_Win_flush(other, win), "MPI_Win_flush");
        if (res != k)
            wrong("compare-and-swap's old value", (long long)res, k);
    }
    for (long k = 0; k < calls; k++) {
        int64_t v = k;
        check(MPI_Put(&v, 1, MPI_INT64_T, other, 2, 1, MPI_INT64_T, win), "MPI_Put");
        check(MPI_Win_flush(other, win), "MPI_Win_flush");
    }
    for (long k = 0; k < calls; k++) {
        check(MPI_Get(&res, 1, MPI_INT64_T, other, 0, 1, MPI_INT64_T, win), "MPI_Get");
        check(MPI_Win_flush(other, win), "MPI_Win_flush");
        if (res != calls)
            wrong("get of slot 0", (long long)res, calls);
    }
    for (long k = 0; k < calls; k++) {
        check(MPI_Accumulate(&one, 1, MPI_INT64_T, other, 3, 1, MPI_INT64_T, MPI_SUM, win), "MPI_Accumulate");
        check(MPI_Win_flush(other, win), "MPI_Win_flush");
    }

    finish(win, mem, calls, rank);
    check(MPI_Win_free(&win), "MPI_Win_free");
    MPI_Finalize();
    return 0;
}
