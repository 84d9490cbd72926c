/* C main with MPI calls, a Fortran kernel (kernel.f90), linked by mpifort. Prints
 * "mixed ok SIZE" when the kernel doubled every rank's value. */
#include <mpi.h>
#include <stdio.h>

void twice(double *x);

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double x = rank, sum = 0;
    twice(&x);
    MPI_Reduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        if (sum != (double)size * (size - 1)) {
            fprintf(stderr, "sum %g\n", sum);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        printf("mixed ok %d\n", size);
    }
    MPI_Finalize();
    return 0;
}
