/*
 * coll_rounds.c — small collectives among more ranks than cores, through the shared-memory
 * algorithms of one host.
 *
 * First rank 0 sleeps for a second while all the others wait in MPI_Barrier, then again
 * while they wait in MPI_Scatter from it: a wait that long must end asleep in the kernel,
 * not in a spin, so the waiting ranks together may use at most 0.2 s of CPU in each second. Then ROUNDS rounds (default 2,000) of MPI_Allreduce,
 * MPI_Bcast (root moving), MPI_Reduce and MPI_Barrier, checked; the program prints the time
 * per round and the CPU time of all ranks (getrusage) against wall time x ranks.
 *
 *     usage: coll_rounds [ROUNDS]
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
    int me, np, bad = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    long rounds = argc > 1 ? atol(argv[1]) : 2000;
    MPI_Barrier(MPI_COMM_WORLD);
    double w0 = cpu_seconds(), idle = 0, idle_total = 0;
    if (me == 0) {
        struct timespec second = { 1, 0 };
        nanosleep(&second, NULL);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (me != 0)
        idle = cpu_seconds() - w0;
    MPI_Reduce(&idle, &idle_total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    double scattered = -1, blocks[64] = { 0 }, idle_scatter = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    w0 = cpu_seconds();
    if (me == 0) {
        struct timespec second = { 1, 0 };
        nanosleep(&second, NULL);
    }
    MPI_Scatter(blocks, 1, MPI_DOUBLE, &scattered, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    idle = me != 0 ? cpu_seconds() - w0 : 0;
    bad += scattered != 0;
    MPI_Reduce(&idle, &idle_scatter, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (idle_scatter > idle_total)
        idle_total = idle_scatter;

    MPI_Barrier(MPI_COMM_WORLD);
    double c0 = cpu_seconds(), t0 = MPI_Wtime();
    for (long r = 0; r < rounds; r++) {
        double x = me + r, s = 0;
        MPI_Allreduce(&x, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        bad += s != (double)np * (np - 1) / 2 + (double)np * r;
        long b = me == r % np ? r : -1;
        MPI_Bcast(&b, 1, MPI_LONG, (int)(r % np), MPI_COMM_WORLD);
        bad += b != r;
        int m = me, mx = -1;
        MPI_Reduce(&m, &mx, 1, MPI_INT, MPI_MAX, (int)((r + 1) % np), MPI_COMM_WORLD);
        bad += me == (r + 1) % np && mx != np - 1;
        MPI_Barrier(MPI_COMM_WORLD);
    }
    double wall = MPI_Wtime() - t0, cpu = cpu_seconds() - c0, cpu_total = 0;
    int bad_total = 0;
    MPI_Reduce(&cpu, &cpu_total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&bad, &bad_total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    int fail = 0;
    if (me == 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        double share = cpu_total / (wall * np);
        printf("coll_rounds: %d ranks on %ld cores: %.1f us a round of 4 collectives, CPU %.2f of wall x ranks; "
               "%.3f s of CPU while waiting a second\n", np, cores, wall / rounds * 1e6, share, idle_total);
        if (bad_total) {
            fprintf(stderr, "coll_rounds: %d wrong results\n", bad_total);
            fail = 1;
        }
        if (idle_total > 0.2) {
            fprintf(stderr, "coll_rounds: the waiting ranks used %.3f s of CPU in a second\n", idle_total);
            fail = 1;
        }
    }
    MPI_Bcast(&fail, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return fail;
}
