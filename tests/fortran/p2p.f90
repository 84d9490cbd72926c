! ranks: 2 4
! Point-to-point from free form with `use mpi`: statuses (source, tag, count), MPI_ANY_SOURCE,
! MPI_STATUS_IGNORE and MPI_STATUSES_IGNORE, nonblocking requests with MPI_WAITANY's 1-based
! index and MPI_TESTSOME's indices, MPI_SENDRECV, MPI_PROBE / MPI_IPROBE with their LOGICAL
! flag, MPI_REQUEST_NULL after completion, and absolute addresses from MPI_BOTTOM.
! What nonblocking calls and MPI_BOTTOM reach lives in a module, so that the compiler knows
! that any call may read or write it (gfortran may keep a local variable in a register across
! a call that does not name it, such as MPI_WAIT).
module p2p_buffers
  integer :: ibuf(10), got(10), int_out, int_in
  double precision :: dbl_out, dbl_in
end module

program p2p
  use mpi
  use p2p_buffers
  implicit none
  integer :: ierr, rank, nprocs, next, prev, i, n, count, idx, outcount
  integer :: status(MPI_STATUS_SIZE), statuses(MPI_STATUS_SIZE, 4)
  integer :: reqs(4), indices(4)
  double precision :: d(3)
  logical :: flag
  character(len=MPI_MAX_LIBRARY_VERSION_STRING) :: version
  integer(kind=MPI_ADDRESS_KIND) :: addr(2)
  integer :: blens(2), types(2), sendtype, recvtype

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  next = mod(rank + 1, nprocs)
  prev = mod(rank + nprocs - 1, nprocs)

  ! Rank 0 receives from every other rank with MPI_ANY_SOURCE; the status says who and what.
  if (rank == 0) then
    do i = 1, nprocs - 1
      got = -1
      call MPI_Recv(got, 10, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, status, ierr)
      call MPI_Get_count(status, MPI_INTEGER, count, ierr)
      n = status(MPI_SOURCE)
      if (count /= n .or. status(MPI_TAG) /= 100 + n .or. any(got(1:n) /= n)) &
        call fail('any-source receive', n)
    end do
  else
    ibuf = rank
    call MPI_Send(ibuf, rank, MPI_INTEGER, 0, 100 + rank, MPI_COMM_WORLD, ierr)
  end if
  ! MPI_ANY_TAG above must not match the ring's messages below.
  call MPI_Barrier(MPI_COMM_WORLD, ierr)

  ! A ring with MPI_SENDRECV, the status ignored.
  d = (/ rank * 1.5d0, 2.0d0, -1.0d0 /)
  call MPI_Sendrecv_replace(d, 3, MPI_DOUBLE_PRECISION, next, 7, prev, 7, MPI_COMM_WORLD, &
                            MPI_STATUS_IGNORE, ierr)
  if (d(1) /= prev * 1.5d0 .or. d(2) /= 2.0d0) call fail('sendrecv_replace', int(d(1)))
  call MPI_Sendrecv(rank, 1, MPI_INTEGER, next, 8, n, 1, MPI_INTEGER, prev, 8, &
                    MPI_COMM_WORLD, status, ierr)
  if (n /= prev .or. status(MPI_SOURCE) /= prev .or. status(MPI_TAG) /= 8) call fail('sendrecv', n)

  ! Nonblocking: two receives, two sends; MPI_WAITANY's index is 1-based; the rest with
  ! MPI_WAITALL and MPI_STATUSES_IGNORE.
  got = -1
  call MPI_Irecv(got(1), 1, MPI_INTEGER, prev, 21, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Irecv(got(2), 1, MPI_INTEGER, next, 22, MPI_COMM_WORLD, reqs(2), ierr)
  ibuf(1) = rank
  ibuf(2) = -rank
  call MPI_Isend(ibuf(1), 1, MPI_INTEGER, next, 21, MPI_COMM_WORLD, reqs(3), ierr)
  call MPI_Isend(ibuf(2), 1, MPI_INTEGER, prev, 22, MPI_COMM_WORLD, reqs(4), ierr)
  call MPI_Waitany(2, reqs, idx, status, ierr)
  if (idx < 1 .or. idx > 2 .or. reqs(idx) /= MPI_REQUEST_NULL) call fail('waitany index', idx)
  if (status(MPI_TAG) /= 20 + idx) call fail('waitany status', status(MPI_TAG))
  call MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE, ierr)
  if (got(1) /= prev .or. got(2) /= -next) call fail('waitall', got(1))
  if (any(reqs /= MPI_REQUEST_NULL)) call fail('requests not null', 0)
  ! Only null requests: MPI_UNDEFINED, not made 1-based (MPICH 4.0's Fortran layer gives
  ! MPI_UNDEFINED + 1, so the check is Ferry's only).
  call MPI_Waitany(4, reqs, idx, status, ierr)
  call MPI_Get_library_version(version, n, ierr)
  if (idx /= MPI_UNDEFINED .and. index(version, 'MPICH Version') == 0) &
    call fail('waitany on null requests', idx)

  ! MPI_TESTSOME until both receives are in: indices 1-based, statuses filled.
  call MPI_Irecv(got(3), 1, MPI_INTEGER, prev, 31, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Irecv(got(4), 1, MPI_INTEGER, prev, 32, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_Send(rank, 1, MPI_INTEGER, next, 32, MPI_COMM_WORLD, ierr)
  call MPI_Send(rank, 1, MPI_INTEGER, next, 31, MPI_COMM_WORLD, ierr)
  n = 0
  do while (n < 2)
    call MPI_Testsome(2, reqs, outcount, indices, statuses, ierr)
    if (outcount == MPI_UNDEFINED) call fail('testsome undefined', 0)
    do i = 1, outcount
      if (indices(i) < 1 .or. indices(i) > 2) call fail('testsome index', indices(i))
      if (statuses(MPI_TAG, i) /= 30 + indices(i)) call fail('testsome status', statuses(MPI_TAG, i))
    end do
    n = n + outcount
  end do
  if (got(3) /= prev .or. got(4) /= prev) call fail('testsome data', got(3))

  ! Probe, then a LOGICAL flag from MPI_IPROBE and MPI_TEST.
  call MPI_Send(ibuf, 5, MPI_INTEGER, next, 40, MPI_COMM_WORLD, ierr)
  call MPI_Probe(prev, 40, MPI_COMM_WORLD, status, ierr)
  call MPI_Get_count(status, MPI_INTEGER, count, ierr)
  if (count /= 5) call fail('probe count', count)
  call MPI_Iprobe(prev, 40, MPI_COMM_WORLD, flag, MPI_STATUS_IGNORE, ierr)
  if (.not. flag) call fail('iprobe flag', 0)
  call MPI_Recv(got, 10, MPI_INTEGER, prev, 40, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call MPI_Iprobe(prev, 41, MPI_COMM_WORLD, flag, status, ierr)
  if (flag) call fail('iprobe found nothing sent', 0)
  call MPI_Irecv(got(6), 1, MPI_INTEGER, prev, 42, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Test(reqs(1), flag, status, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Send(rank, 1, MPI_INTEGER, next, 42, MPI_COMM_WORLD, ierr)
  call MPI_Wait(reqs(1), status, ierr)
  if (got(6) /= prev .or. reqs(1) /= MPI_REQUEST_NULL) call fail('wait', got(6))

  ! Structs of absolute addresses, sent from and received into MPI_BOTTOM.
  blens = 1
  types = (/ MPI_INTEGER, MPI_DOUBLE_PRECISION /)
  call MPI_Get_address(int_out, addr(1), ierr)
  call MPI_Get_address(dbl_out, addr(2), ierr)
  call MPI_Type_create_struct(2, blens, addr, types, sendtype, ierr)
  call MPI_Get_address(int_in, addr(1), ierr)
  call MPI_Get_address(dbl_in, addr(2), ierr)
  call MPI_Type_create_struct(2, blens, addr, types, recvtype, ierr)
  call MPI_Type_commit(sendtype, ierr)
  call MPI_Type_commit(recvtype, ierr)
  int_out = 33 + rank
  dbl_out = 7.5d0 + rank
  int_in = -1
  dbl_in = -1
  call MPI_Sendrecv(MPI_BOTTOM, 1, sendtype, next, 50, MPI_BOTTOM, 1, recvtype, prev, 50, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  if (int_in /= 33 + prev .or. dbl_in /= 7.5d0 + prev) call fail('MPI_BOTTOM', int_in)
  call MPI_Type_free(sendtype, ierr)
  call MPI_Type_free(recvtype, ierr)

  ! The library wrote nothing into the objects that stand for "ignore".
  if (any(MPI_STATUS_IGNORE /= 0) .or. any(MPI_STATUSES_IGNORE /= 0)) &
    call fail('a status was written into MPI_STATUS(ES)_IGNORE', 0)

  print '(A,I0,A,I0)', 'p2p ok rank ', rank, ' of ', nprocs
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
