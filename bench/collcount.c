/*
 * collcount.c — a fixed stream of small collective calls, made to be counted
 * (instructions per call under callgrind, see bench/collcount.sh) rather than
 * timed.
 *
 * Eight phases, one per collective, each CALLS calls of 8 bytes per rank on
 * MPI_COMM_WORLD, in this order:
 *   MPI_Allreduce  1 double, MPI_SUM
 *   MPI_Bcast      1 double from rank 0
 *   MPI_Barrier
 *   MPI_Reduce     1 double, MPI_SUM, to rank 0
 *   MPI_Allgather  1 double from each rank
 *   MPI_Gather     1 double from each rank, to rank 0
 *   MPI_Scatter    1 double to each rank, from rank 0
 *   MPI_Alltoall   1 double from each rank to each rank
 * Every call's input depends on the call's number and the rank, and every
 * result is checked; any wrong value or MPI error ends the program with a
 * non-zero status.
 *
 * Only the measured calls are made from main: the warm-up (a few calls of
 * each, so that connection set-up and first-use costs land outside),
 * the barriers between the phases and the final exchange of the error
 * counts are made from functions of their own, which the counting leaves
 * out (it reads the calls made from main).
 *
 * Usage: collcount [CALLS]   (default 10000)
 * Any number of ranks (the benchmark runs 2). Rank 0 prints:
 *     # collcount: calls 10000 ranks 2
 *     # library: <first line of MPI_Get_library_version>
 *     # collcount: ok
 *
 * Plain MPI: builds with any implementation's mpicc.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

static int check(int rc, const char *what)
{
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "collcount: %s returned error %d\n", what, rc);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return rc;
}

/* A few calls of each collective, outside main. */
static NOINLINE void warm_up(int size)
{
    double in = 1.0, out = 0.0;
    double *all = malloc(2 * (size_t)size * sizeof *all);
    if (!all) {
        fprintf(stderr, "collcount: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int k = 0; k < 10; k++) {
        check(MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
        check(MPI_Bcast(&out, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD), "MPI_Bcast");
        check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
        check(MPI_Reduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD), "MPI_Reduce");
        check(MPI_Allgather(&in, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, MPI_COMM_WORLD),
              "MPI_Allgather");
        check(MPI_Gather(&in, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD), "MPI_Gather");
        check(MPI_Scatter(all, 1, MPI_DOUBLE, &out, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD),
              "MPI_Scatter");
        check(MPI_Alltoall(all, 1, MPI_DOUBLE, all + size, 1, MPI_DOUBLE, MPI_COMM_WORLD),
              "MPI_Alltoall");
    }
    free(all);
}

/* Between two phases, outside main. */
static NOINLINE void fence(void)
{
    check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
}

/* Whether any rank saw a wrong value, outside main. */
static NOINLINE long verdict(long errors)
{
    long all_errors = 0;
    check(MPI_Allreduce(&errors, &all_errors, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD),
          "MPI_Allreduce");
    return all_errors;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    long calls = 10000;
    if (argc > 1) {
        char *end;
        calls = strtol(argv[1], &end, 10);
        if (*end != '\0' || calls < 0 || calls > 100000000) {
            fprintf(stderr, "collcount: bad argument '%s' (0 to 100000000)\n", argv[1]);
            fprintf(stderr, "usage: collcount [CALLS]\n");
            return 2;
        }
    }
    double *all = malloc(2 * (size_t)size * sizeof *all);
    if (!all) {
        fprintf(stderr, "collcount: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    if (rank == 0) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len = 0;
        MPI_Get_library_version(lib, &len);
        lib[len < MPI_MAX_LIBRARY_VERSION_STRING ? len : MPI_MAX_LIBRARY_VERSION_STRING - 1] = '\0';
        char *nl = strchr(lib, '\n');
        if (nl)
            *nl = '\0';
        printf("# collcount: calls %ld ranks %d\n", calls, size);
        printf("# library: %s\n", lib);
        fflush(stdout);
    }

    warm_up(size);
    long errors = 0;
    /* The sum over ranks r of (k + r): size k + size (size - 1) / 2, exact in a double. */
    double spread = (double)size * (size - 1) / 2;

    fence();
    for (long k = 0; k < calls; k++) {
        double in = (double)(k + rank), out = -1.0;
        check(MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
        if (out != (double)size * k + spread)
            errors++;
    }

    fence();
    for (long k = 0; k < calls; k++) {
        double v = rank == 0 ? (double)k : -1.0;
        check(MPI_Bcast(&v, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD), "MPI_Bcast");
        if (v != (double)k)
            errors++;
    }

    fence();
    for (long k = 0; k < calls; k++)
        check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");

    fence();
    for (long k = 0; k < calls; k++) {
        double in = (double)(k + rank), out = -1.0;
        check(MPI_Reduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD), "MPI_Reduce");
        if (rank == 0 && out != (double)size * k + spread)
            errors++;
    }

    fence();
    for (long k = 0; k < calls; k++) {
        double in = (double)(k * size + rank);
        for (int r = 0; r < size; r++)
            all[r] = -1.0;
        check(MPI_Allgather(&in, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, MPI_COMM_WORLD),
              "MPI_Allgather");
        for (int r = 0; r < size; r++)
            if (all[r] != (double)(k * size + r))
                errors++;
    }

    fence();
    for (long k = 0; k < calls; k++) {
        double in = (double)(k * size + rank);
        for (int r = 0; r < size; r++)
            all[r] = -1.0;
        check(MPI_Gather(&in, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD), "MPI_Gather");
        if (rank == 0)
            for (int r = 0; r < size; r++)
                if (all[r] != (double)(k * size + r))
                    errors++;
    }

    fence();
    for (long k = 0; k < calls; k++) {
        double out = -1.0;
        if (rank == 0)
            for (int r = 0; r < size; r++)
                all[r] = (double)(k * size + r);
        check(MPI_Scatter(all, 1, MPI_DOUBLE, &out, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD),
              "MPI_Scatter");
        if (out != (double)(k * size + rank))
            errors++;
    }

    fence();
    for (long k = 0; k < calls; k++) {
        /* Block r of rank q: k + size q + r; rank q gets block q of every rank r. */
        for (int r = 0; r < size; r++) {
            all[r] = (double)(k + size * rank + r);
            all[size + r] = -1.0;
        }
        check(MPI_Alltoall(all, 1, MPI_DOUBLE, all + size, 1, MPI_DOUBLE, MPI_COMM_WORLD),
              "MPI_Alltoall");
        for (int r = 0; r < size; r++)
            if (all[size + r] != (double)(k + size * r + rank))
                errors++;
    }

    long all_errors = verdict(errors);
    if (errors)
        fprintf(stderr, "collcount: rank %d saw %ld wrong results\n", rank, errors);
    if (rank == 0 && all_errors == 0) {
        printf("# collcount: ok\n");
        fflush(stdout);
    }
    free(all);
    MPI_Finalize();
    return all_errors ? 1 : 0;
}
