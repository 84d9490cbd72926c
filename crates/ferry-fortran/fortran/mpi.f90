! The `mpi` module of Ferry's MPI library: the constants, common blocks and function
! declarations of mpif.h, for `use mpi`. It declares no interfaces for the MPI procedures:
! calls are checked as with mpif.h (not at all), and any buffer type is accepted. `make build`
! compiles it into include/mpi.mod with the gfortran that will use it.
module mpi
  implicit none
  include 'mpif.h'
end module mpi
