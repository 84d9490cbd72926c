! A Fortran MPI program built with Debian's mpif90.mpich (MPICH's `mpi` module and Fortran
! layer, libmpichfort.so.12), run on Ferry's library by tests/abi/fortran.sh: the Fortran
! layer starts (it writes its STATUS_IGNORE addresses into the C library's data objects) and
! its calls reach Ferry's C functions with MPICH's handle values.
program fortran_mpich
  use mpi
  implicit none
  integer :: ierr, rank, size, i, total, status(MPI_STATUS_SIZE), count, next, prev
  double precision :: x(4)
  real :: r, rmax
  logical :: flags(3), mine, all_true, any_true
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  ! A ring: each rank sends its rank to the next and receives from the previous.
  next = mod(rank + 1, size)
  prev = mod(rank + size - 1, size)
  call MPI_Sendrecv(rank, 1, MPI_INTEGER, next, 11, i, 1, MPI_INTEGER, prev, 11, &
                    MPI_COMM_WORLD, status, ierr)
  call MPI_Get_count(status, MPI_INTEGER, count, ierr)
  if (i /= prev .or. count /= 1 .or. status(MPI_SOURCE) /= prev .or. status(MPI_TAG) /= 11) then
    print *, 'rank', rank, ': bad ring receive', i, count, status(MPI_SOURCE), status(MPI_TAG)
    call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
  end if
  call MPI_Sendrecv(rank, 1, MPI_INTEGER, next, 12, i, 1, MPI_INTEGER, prev, 12, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  ! Collectives on Fortran types.
  x = 0.0d0
  if (rank == 0) x = (/ 1.5d0, 2.5d0, 3.5d0, 4.5d0 /)
  call MPI_Bcast(x, 4, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, ierr)
  call MPI_Allreduce(rank, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  r = real(rank)
  call MPI_Reduce(r, rmax, 1, MPI_REAL, MPI_MAX, 0, MPI_COMM_WORLD, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (sum(x) /= 12.0d0 .or. total /= size * (size - 1) / 2) then
    print *, 'rank', rank, ': bad collective results', sum(x), total
    call MPI_Abort(MPI_COMM_WORLD, 3, ierr)
  end if
  if (rank == 0 .and. rmax /= real(size - 1)) then
    print *, 'rank 0: bad maximum', rmax
    call MPI_Abort(MPI_COMM_WORLD, 4, ierr)
  end if
  ! LOGICALs: a Bcast, and Allreduce with MPI_LAND / MPI_LOR giving Fortran truth values.
  flags = .false.
  if (rank == 0) flags = (/ .true., .false., .true. /)
  call MPI_Bcast(flags, 3, MPI_LOGICAL, 0, MPI_COMM_WORLD, ierr)
  mine = rank == 0
  call MPI_Allreduce(mine, all_true, 1, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD, ierr)
  call MPI_Allreduce(mine, any_true, 1, MPI_LOGICAL, MPI_LOR, MPI_COMM_WORLD, ierr)
  if (.not. (flags(1) .and. .not. flags(2) .and. flags(3)) .or. .not. any_true .or. &
      (all_true .neqv. (size == 1))) then
    print *, 'rank', rank, ': bad LOGICAL results', flags, all_true, any_true
    call MPI_Abort(MPI_COMM_WORLD, 5, ierr)
  end if
  print '(A,I0,A,I0)', 'fortran ok rank ', rank, ' of ', size
  call MPI_Finalize(ierr)
end program
