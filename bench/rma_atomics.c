/*
 * rma_atomics.c — the latency of one 8-byte atomic operation and its flush
 * (and of two 32 KiB accumulates): rank 0 operates on rank 1's window inside one
 * MPI_Win_lock_all epoch, MPI_Win_flush(1) after every operation, while
 * rank 1 (and any other rank) waits in MPI_Barrier.
 *
 * Rows, each for a window of MPI_Win_allocate ("allocate") and of
 * MPI_Win_allocate_shared ("shared"):
 *   fop       MPI_Fetch_and_op, one int64_t, MPI_SUM
 *   cas       MPI_Compare_and_swap, one int64_t
 *   acc       MPI_Accumulate, one int64_t, MPI_SUM
 *   fop_f64   MPI_Fetch_and_op, one double, MPI_SUM
 *   acc32k_i32  MPI_Accumulate of 8192 int32_t, MPI_SUM (32 KiB)
 *   acc32k_f64  MPI_Accumulate of 4096 doubles, MPI_SUM (32 KiB)
 * Each row runs batches of operations until at least 0.2 s have passed
 * (after an untimed warm-up batch) and prints microseconds per operation
 * (operation + flush), with the number of operations timed.
 *
 * Output:
 *     # rma_atomics: rank 0 -> rank 1, 8-byte atomics + MPI_Win_flush under MPI_Win_lock_all
 *     # library: <first line of MPI_Get_library_version>
 *     # window    op        calls      us/op
 *     allocate    fop       1234567    0.041
 *     ...
 * Option: -t SECONDS  least time per row (default 0.2).
 *
 * Plain MPI: builds with any implementation's mpicc.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum op { FOP, CAS, ACC, FOP_F64, ACC32K_I32, ACC32K_F64 };
static const char *op_names[] = { "fop", "cas", "acc", "fop_f64", "acc32k_i32", "acc32k_f64" };

#define WIN_BYTES 32768
static int32_t ints[WIN_BYTES / 4];
static double doubles[WIN_BYTES / 8];

/* `n` operations of kind `op` on rank 1's element 0, each followed by a flush. */
static void batch(MPI_Win win, enum op op, long n)
{
    int64_t one = 1, result = 0, compare = 0;
    double d = 1.0, dres = 0.0;
    for (long k = 0; k < n; k++) {
        switch (op) {
        case FOP:
            MPI_Fetch_and_op(&one, &result, MPI_INT64_T, 1, 0, MPI_SUM, win);
            break;
        case CAS:
            MPI_Compare_and_swap(&one, &compare, &result, MPI_INT64_T, 1, 0, win);
            compare = result;
            break;
        case ACC:
            MPI_Accumulate(&one, 1, MPI_INT64_T, 1, 0, 1, MPI_INT64_T, MPI_SUM, win);
            break;
        case FOP_F64:
            MPI_Fetch_and_op(&d, &dres, MPI_DOUBLE, 1, 0, MPI_SUM, win);
            break;
        case ACC32K_I32:
            MPI_Accumulate(ints, WIN_BYTES / 4, MPI_INT32_T, 1, 0, WIN_BYTES / 4, MPI_INT32_T, MPI_SUM, win);
            break;
        case ACC32K_F64:
            MPI_Accumulate(doubles, WIN_BYTES / 8, MPI_DOUBLE, 1, 0, WIN_BYTES / 8, MPI_DOUBLE, MPI_SUM, win);
            break;
        }
        MPI_Win_flush(1, win);
    }
}

/* Rank 0 times `op`; every rank returns from the closing barrier. */
static void row(int rank, const char *flavor, MPI_Win win, enum op op, double least)
{
    if (rank == 0) {
        long calls = 0, n = op >= ACC32K_I32 ? 10 : 100;
        MPI_Win_lock_all(0, win);
        batch(win, op, n);
        double t0 = MPI_Wtime(), t = 0.0;
        while ((t = MPI_Wtime() - t0) < least) {
            batch(win, op, n);
            calls += n;
            if (n < 100000)
                n *= 2;
        }
        MPI_Win_unlock_all(win);
        printf("%-10s  %-10s  %9ld  %9.3f\n", flavor, op_names[op], calls, t * 1e6 / (double)calls);
        fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    int rank, size;
    double least = 0.2;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "-t") == 0 && a + 1 < argc) {
            least = atof(argv[++a]);
        } else {
            if (rank == 0)
                fprintf(stderr, "usage: %s [-t SECONDS]\n", argv[0]);
            MPI_Finalize();
            return 2;
        }
    }
    if (size < 2) {
        if (rank == 0)
            fprintf(stderr, "rma_atomics: needs at least 2 ranks\n");
        MPI_Finalize();
        return 2;
    }
    if (rank == 0) {
        char version[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(version, &len);
        char *nl = strchr(version, '\n');
        if (nl)
            *nl = '\0';
        printf("# rma_atomics: rank 0 -> rank 1, 8-byte atomics + MPI_Win_flush under MPI_Win_lock_all\n");
        printf("# library: %s\n", version);
        printf("# window    op              calls      us/op\n");
    }
    for (int k = 0; k < WIN_BYTES / 8; k++) {
        ints[2 * k] = ints[2 * k + 1] = 1;
        doubles[k] = 0.5;
    }
    for (int flavor = 0; flavor < 2; flavor++) {
        MPI_Win win;
        void *base;
        if (flavor == 0)
            MPI_Win_allocate(WIN_BYTES, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
        else
            MPI_Win_allocate_shared(WIN_BYTES, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
        memset(base, 0, WIN_BYTES);
        MPI_Barrier(MPI_COMM_WORLD);
        for (int op = FOP; op <= ACC32K_F64; op++)
            row(rank, flavor == 0 ? "allocate" : "shared", win, (enum op)op, least);
        MPI_Win_free(&win);
    }
    MPI_Finalize();
    return 0;
}
