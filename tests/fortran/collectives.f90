! ranks: 1 2 4
! Collectives from free form with `use mpi`: MPI_BCAST, MPI_REDUCE and MPI_ALLREDUCE on
! INTEGER, DOUBLE PRECISION and LOGICAL data, MPI_IN_PLACE (MPI_ALLREDUCE, and MPI_REDUCE at
! the root), MINLOC on MPI_2INTEGER, gathers, scatters, all-to-all, scans, a nonblocking
! MPI_IALLREDUCE, and MPI_OP_CREATE with a Fortran subroutine as the operation.
! The result of the nonblocking allreduce lives in a module, so that the compiler knows
! MPI_WAIT may write it.
module nonblocking_result
  integer :: imax
end module

program collectives
  use mpi
  use nonblocking_result
  implicit none
  integer :: ierr, rank, nprocs, i, op, req
  integer :: ivals(4), isum(4), pair(2), best(2), counts(8), displs(8)
  integer, allocatable :: all(:), sendv(:), recvv(:)
  double precision :: d(3), dmax(3), prod
  logical :: l(2), land(2), lor(2)
  external :: absmax

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  allocate(all(nprocs), sendv(nprocs), recvv(nprocs))

  ! Bcast of each type from the last rank.
  ivals = 0
  d = 0
  l = .false.
  if (rank == nprocs - 1) then
    ivals = (/ 1, -2, 3, 40000 /)
    d = (/ 0.5d0, 1.0d300, -3.25d0 /)
    l = (/ .true., .false. /)
  end if
  call MPI_Bcast(ivals, 4, MPI_INTEGER, nprocs - 1, MPI_COMM_WORLD, ierr)
  call MPI_Bcast(d, 3, MPI_DOUBLE_PRECISION, nprocs - 1, MPI_COMM_WORLD, ierr)
  call MPI_Bcast(l, 2, MPI_LOGICAL, nprocs - 1, MPI_COMM_WORLD, ierr)
  if (any(ivals /= (/ 1, -2, 3, 40000 /)) .or. d(2) /= 1.0d300 .or. .not. l(1) .or. l(2)) &
    call fail('bcast', 0)

  ! Reduce and Allreduce: sums, a maximum, LOGICAL and/or.
  ivals = (/ rank, 1, -rank, 2 * rank /)
  call MPI_Reduce(ivals, isum, 4, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0 .and. (isum(1) /= nprocs * (nprocs - 1) / 2 .or. isum(2) /= nprocs)) &
    call fail('reduce sum', isum(1))
  d = (/ dble(rank), -dble(rank), 1.5d0 /)
  call MPI_Allreduce(d, dmax, 3, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, ierr)
  if (dmax(1) /= nprocs - 1 .or. dmax(2) /= 0 .or. dmax(3) /= 1.5d0) call fail('allreduce max', 0)
  l = (/ rank == 0, .true. /)
  call MPI_Allreduce(l, land, 2, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD, ierr)
  call MPI_Allreduce(l, lor, 2, MPI_LOGICAL, MPI_LOR, MPI_COMM_WORLD, ierr)
  if ((land(1) .neqv. (nprocs == 1)) .or. .not. land(2) .or. .not. lor(1) .or. .not. lor(2)) &
    call fail('allreduce logical', 0)

  ! MPI_IN_PLACE: Allreduce everywhere, Reduce at the root only.
  ivals = (/ 1, rank, 3, 4 /)
  call MPI_Allreduce(MPI_IN_PLACE, ivals, 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (ivals(1) /= nprocs .or. ivals(2) /= nprocs * (nprocs - 1) / 2 .or. ivals(4) /= 4 * nprocs) &
    call fail('allreduce in place', ivals(1))
  prod = 2.0d0
  if (rank == 0) then
    call MPI_Reduce(MPI_IN_PLACE, prod, 1, MPI_DOUBLE_PRECISION, MPI_PROD, 0, MPI_COMM_WORLD, ierr)
    if (prod /= 2.0d0 ** nprocs) call fail('reduce in place', int(prod))
  else
    call MPI_Reduce(prod, d, 1, MPI_DOUBLE_PRECISION, MPI_PROD, 0, MPI_COMM_WORLD, ierr)
  end if

  ! MINLOC on (value, rank) pairs.
  pair = (/ mod(rank + 1, nprocs), rank /)
  call MPI_Allreduce(pair, best, 1, MPI_2INTEGER, MPI_MINLOC, MPI_COMM_WORLD, ierr)
  if (best(1) /= 0 .or. best(2) /= nprocs - 1) call fail('minloc', best(2))

  ! Gather, scatterv, allgather, alltoall, scan, exscan.
  call MPI_Gather(rank * 10, 1, MPI_INTEGER, all, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    if (any(all /= (/ (i * 10, i = 0, nprocs - 1) /))) call fail('gather', all(1))
  end if
  do i = 1, nprocs
    counts(i) = 1
    displs(i) = nprocs - i
    sendv(i) = 100 + i - 1
  end do
  call MPI_Scatterv(sendv, counts, displs, MPI_INTEGER, i, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  if (i /= 100 + nprocs - 1 - rank) call fail('scatterv', i)
  call MPI_Allgather(rank, 1, MPI_INTEGER, all, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  if (any(all /= (/ (i, i = 0, nprocs - 1) /))) call fail('allgather', all(1))
  sendv = (/ (rank * 100 + i, i = 0, nprocs - 1) /)
  call MPI_Alltoall(sendv, 1, MPI_INTEGER, recvv, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  if (any(recvv /= (/ (i * 100 + rank, i = 0, nprocs - 1) /))) call fail('alltoall', recvv(1))
  call MPI_Scan(rank + 1, i, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (i /= (rank + 1) * (rank + 2) / 2) call fail('scan', i)

  ! Nonblocking allreduce.
  imax = -1
  call MPI_Iallreduce(rank, imax, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  if (imax /= nprocs - 1) call fail('iallreduce', imax)

  ! A user operation written in Fortran: the largest magnitude, keeping its sign.
  call MPI_Op_create(absmax, .true., op, ierr)
  ivals = (/ rank, -rank, 7, -(rank + 1) /)
  call MPI_Allreduce(ivals, isum, 4, MPI_INTEGER, op, MPI_COMM_WORLD, ierr)
  if (isum(1) /= nprocs - 1 .or. isum(2) /= -(nprocs - 1) .or. isum(3) /= 7 .or. isum(4) /= -nprocs) &
    call fail('user op', isum(4))
  call MPI_Op_free(op, ierr)
  if (op /= MPI_OP_NULL) call fail('op_free', op)

  print '(A,I0,A,I0)', 'collectives ok rank ', rank, ' of ', nprocs
  call MPI_Finalize(ierr)
contains
  subroutine fail(what, value)
    character(len=*), intent(in) :: what
    integer, intent(in) :: value
    integer :: e
    print '(A,I0,A,A,A,I0)', 'FAIL rank ', rank, ': ', what, ' ', value
    call MPI_Abort(MPI_COMM_WORLD, 1, e)
  end subroutine
end program

subroutine absmax(invec, inoutvec, len, datatype)
  implicit none
  integer :: len, datatype, i
  integer :: invec(len), inoutvec(len)
  do i = 1, len
    if (abs(invec(i)) > abs(inoutvec(i))) inoutvec(i) = invec(i)
  end do
end subroutine
