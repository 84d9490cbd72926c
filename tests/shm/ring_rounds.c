/*
 * ring_rounds.c — a token goes around the ring ROUNDS times (default 10,000);
 * every rank but the holder waits. Meant for more ranks than cores.
 *
 * Before the first round rank 0 sleeps for a second while all the others
 * wait in MPI_Recv: a wait that long must end in the kernel, not in a spin,
 * so the waiting ranks together may use at most 0.2 s of CPU in that second
 * (spinning ones would use a second per core). The rounds then show that a
 * busy ring still finishes, and report how much CPU it takes (CPU time of all
 * ranks from getrusage against wall time x ranks). That figure is reported,
 * not required: with more ranks than cores it cannot pass wall x cores, and
 * with fewer, short spins between the messages are what a ring wants.
 *
 *     usage: ring_rounds [ROUNDS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
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
    /* The long wait. */
    double w0 = cpu_seconds(), idle = 0, idle_total = 0;
    long token = 0;
    if (me == 0) {
        struct timespec second = { 1, 0 };
        nanosleep(&second, NULL);
        token = -1;
        if (np > 1) {
            MPI_Send(&token, 1, MPI_LONG, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_LONG, np - 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    } else {
        MPI_Recv(&token, 1, MPI_LONG, me - 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        idle = cpu_seconds() - w0;
        MPI_Send(&token, 1, MPI_LONG, (me + 1) % np, 1, MPI_COMM_WORLD);
    }
    MPI_Reduce(&idle, &idle_total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);

    MPI_Barrier(MPI_COMM_WORLD);
    double c0 = cpu_seconds(), t0 = MPI_Wtime();
    token = 0;
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
        ok = token == rounds;
        printf("ring_rounds: %d ranks, %ld cores: %d ranks waiting 1 s used %.3f s of CPU; %ld rounds: wall %.2f s, cpu %.2f s (%.0f%% of wall x ranks)\n",
               np, cores, np - 1, idle_total, rounds, longest, total, 100.0 * total / (longest * np));
        if (idle_total > 0.2) {
            fprintf(stderr, "ring_rounds: ranks waiting a second burnt %.3f s of CPU\n", idle_total);
            ok = 0;
        }
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return ok ? 0 : 1;
}
