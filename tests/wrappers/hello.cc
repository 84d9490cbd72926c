// A C++ MPI program for tests/wrappers.sh: mpi.h must work from C++ (extern "C").
#include <mpi.h>
#include <iostream>
#include <vector>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::vector<int> ranks(size);
    MPI_Allgather(&rank, 1, MPI_INT, ranks.data(), 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < size; i++)
        if (ranks[i] != i)
            MPI_Abort(MPI_COMM_WORLD, 1);
    std::cout << "c++ rank " << rank << " of " << size << std::endl;
    MPI_Finalize();
    return 0;
}
