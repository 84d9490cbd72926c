! Fortran MPI, which Ferry does not support yet: mpifort must refuse it with a clear message.
program uses_mpi
    use mpi
    integer :: ierr
    call MPI_Init(ierr)
    call MPI_Finalize(ierr)
end program uses_mpi
