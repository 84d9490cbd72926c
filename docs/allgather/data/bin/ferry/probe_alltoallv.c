#include <mpi.h>
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Alltoallv(0, 0, 0, MPI_BYTE, 0, 0, 0, MPI_BYTE, MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
