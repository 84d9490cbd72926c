/* A job that runs until it is stopped (at most about a minute): every rank says it is
 * spinning, then meets the others in a barrier ten times a second. tests/clusters.sh kills a
 * rank, an agent, a relay or the head under it. */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv) {
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    printf("rank %d spinning\n", rank);
    fflush(stdout);
    for (int i = 0; i < 600; i++) {
        usleep(100000);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
