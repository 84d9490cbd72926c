/*
 * window_cost.c — what a window's progress thread costs point-to-point: the
 * 8-byte ping-pong latency between ranks 0 and 1 (half a round trip, us)
 * before any window exists, while one exists (Ferry serves passive targets
 * from a progress thread then), and after it is freed.
 *
 * Output: three lines, `before <us>`, `with_window <us>`, `after <us>`.
 * Option: -i ITERS round trips per measurement (default 20000).
 *
 * Plain MPI: builds with any implementation's mpicc.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double pingpong(int rank, long iters)
{
    char buf[8] = { 0 };
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = 0.0;
    for (long k = 0; k < iters + iters / 10; k++) {
        if (k == iters / 10)
            t0 = MPI_Wtime();
        if (rank == 0) {
            MPI_Send(buf, 8, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(buf, 8, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(buf, 8, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, 8, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        }
    }
    return (MPI_Wtime() - t0) * 1e6 / (2.0 * (double)iters);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long iters = 20000;
    if (argc == 3 && strcmp(argv[1], "-i") == 0)
        iters = atol(argv[2]);
    if (size < 2 || iters <= 0) {
        if (rank == 0)
            fprintf(stderr, "usage: window_cost [-i ITERS], on at least 2 ranks\n");
        MPI_Finalize();
        return 2;
    }
    double before = pingpong(rank, iters);
    int *base;
    MPI_Win win;
    MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    double with = pingpong(rank, iters);
    MPI_Win_free(&win);
    double after = pingpong(rank, iters);
    if (rank == 0)
        printf("before %.3f\nwith_window %.3f\nafter %.3f\n", before, with, after);
    MPI_Finalize();
    return 0;
}
