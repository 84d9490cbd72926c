! ranks: 1 2
! Generalized requests from Fortran: MPI_GREQUEST_START with Fortran query, free and cancel
! procedures, which get the program's extra state; MPI_WAIT takes its status from the query
! procedure, MPI_CANCEL reaches the cancel procedure with COMPLETE false, and the free
! procedure runs once per request.
module grequest_state
  integer :: queries = 0, frees = 0, cancels = 0
  logical :: last_complete = .true.
end module

program grequest
  use mpi
  use grequest_state
  implicit none
  integer :: ierr, rank, nprocs, req, status(MPI_STATUS_SIZE), count
  integer(kind=MPI_ADDRESS_KIND) :: extra
  logical :: flag
  external :: query_fn, free_fn, cancel_fn

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)

  extra = 4000000000_MPI_ADDRESS_KIND + rank
  call MPI_Grequest_start(query_fn, free_fn, cancel_fn, extra, req, ierr)
  if (ierr /= MPI_SUCCESS .or. req == MPI_REQUEST_NULL) call fail('grequest_start', ierr)
  call MPI_Test(req, flag, status, ierr)
  if (flag) call fail('complete before MPI_GREQUEST_COMPLETE', 0)
  call MPI_Grequest_complete(req, ierr)
  call MPI_Wait(req, status, ierr)
  if (req /= MPI_REQUEST_NULL .or. queries < 1 .or. frees /= 1) call fail('wait', frees)
  call MPI_Get_count(status, MPI_INTEGER, count, ierr)
  if (status(MPI_SOURCE) /= rank .or. status(MPI_TAG) /= 77 .or. count /= 3) &
    call fail('status from the query procedure', status(MPI_TAG))

  ! Cancelled while pending: the cancel procedure sees COMPLETE false.
  call MPI_Grequest_start(query_fn, free_fn, cancel_fn, extra, req, ierr)
  call MPI_Cancel(req, ierr)
  if (cancels /= 1 .or. last_complete) call fail('cancel', cancels)
  call MPI_Grequest_complete(req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  if (frees /= 2) call fail('free after cancel', frees)

  print '(A,I0,A,I0)', 'grequest ok rank ', rank, ' of ', nprocs
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

! The status of a finished request: its source is the rank in the extra state, 3 INTEGERs.
subroutine query_fn(extra_state, status, ierror)
  use mpi
  use grequest_state
  implicit none
  integer(kind=MPI_ADDRESS_KIND) :: extra_state
  integer :: status(MPI_STATUS_SIZE), ierror
  queries = queries + 1
  status(MPI_SOURCE) = int(extra_state - 4000000000_MPI_ADDRESS_KIND)
  status(MPI_TAG) = 77
  call MPI_Status_set_elements(status, MPI_INTEGER, 3, ierror)
  call MPI_Status_set_cancelled(status, .false., ierror)
end subroutine

subroutine free_fn(extra_state, ierror)
  use mpi
  use grequest_state
  implicit none
  integer(kind=MPI_ADDRESS_KIND) :: extra_state
  integer :: ierror
  if (extra_state >= 4000000000_MPI_ADDRESS_KIND) frees = frees + 1
  ierror = MPI_SUCCESS
end subroutine

subroutine cancel_fn(extra_state, complete, ierror)
  use mpi
  use grequest_state
  implicit none
  integer(kind=MPI_ADDRESS_KIND) :: extra_state
  logical :: complete
  integer :: ierror
  if (extra_state >= 4000000000_MPI_ADDRESS_KIND) cancels = cancels + 1
  last_complete = complete
  ierror = MPI_SUCCESS
end subroutine
