! Fortran MPI through the mpi module: mpifort builds it against Ferry's mpi.mod and libmpifort.
program uses_mpi
    use mpi
    implicit none
    integer :: ierr, rank, nprocs, total
    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
    call MPI_Allreduce(rank + 1, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    if (rank == 0) print '(A,I0)', 'fortran ok ', total
    call MPI_Finalize(ierr)
end program uses_mpi
