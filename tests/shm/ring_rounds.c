/*
 * ring_rounds.c — a token goes around the ring ROUNDS times (default 10,000);
 * every rank but the holder waits. Meant for more ranks than cores: waiting
 * ranks must sleep, not spin. At the end rank 0 compares the CPU time of all
 * ranks (getrusage, user + system) with the wall time and the cores of the
 * host, and fails if the ranks kept the cores busy: ranks that spin while
 * they wait use every cycle there is (cpu = wall x min(ranks, cores)); ranks
 * that sleep leave a good part idle. The bound: cpu <= 0.75 x that.
 *
 *     usage: ring_rounds [ROUNDS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>
#include <mpi.h>

static double cpu_seconds(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)u.ru_utime.tv_sec + u.ru_utime.tv_usec * 1e-6 + (double)u.ru_stime.tv_sec + u.ru_stime.tv_usec * 1e-6;
}

int main(int argc, char **argv)
{
    int me, np;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    long rounds = argc > 1 ? atol(argv[1]) : 10000;
    MPI_Barrier(MPI_COMM_WORLD);
    double c0 = cpu_seconds(), t0 = MPI_Wtime();
    long token = 0;
    for (long r = 0; r < rounds; r++) {
        if (me == 0) {
            token++;
            MPI_Send(&token, 1, MPI_LONG, (me + 1) % np, 0, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_LONG, np - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&token, 1, MPI_LONG, me - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&token, 1, MPI_LONG, (me + 1) % np, 0, MPI_COMM_WORLD);
        }
    }
    double wall = MPI_Wtime() - t0, cpu = cpu_seconds() - c0, total = 0, longest = 0;
    MPI_Reduce(&cpu, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&wall, &longest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    int ok = 1;
    if (me == 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        long busy = cores < np ? cores : np;
        ok = token == rounds;
        printf("ring_rounds: %ld rounds on %d ranks, %ld cores: wall %.2f s, cpu %.2f s (%.0f%% of the cores)\n",
               rounds, np, cores, longest, total, 100.0 * total / (longest * (double)busy));
        if (total > 0.75 * longest * (double)busy) {
            fprintf(stderr, "ring_rounds: waiting ranks burnt the cores (cpu %.2f s > 0.75 x %.2f s x %ld)\n", total, longest, busy);
            ok = 0;
        }
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return ok ? 0 : 1;
}
