! ranks: 1 2
! Errors from Fortran: with MPI_ERRORS_RETURN, a bad rank, communicator, datatype or count comes
! back in IERROR with the right class; MPI_ERROR_STRING gives a blank-padded message; an error
! handler written in Fortran (MPI_COMM_CREATE_ERRHANDLER) is called with the communicator and
! the code.
module handler_state
  integer :: calls = 0, last_code = 0, last_comm = 0
end module

program errors
  use mpi
  use handler_state
  implicit none
  integer :: ierr, rank, nprocs, cls, mlen, eh, code, newclass, x
  character(len=MPI_MAX_ERROR_STRING) :: msg
  external :: record_error

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  if (ierr /= MPI_SUCCESS) call fail('set_errhandler', ierr)

  call MPI_Send(x, 1, MPI_INTEGER, nprocs, 0, MPI_COMM_WORLD, ierr)
  call expect('send to rank nprocs', ierr, MPI_ERR_RANK)
  call MPI_Send(x, 1, MPI_INTEGER, 0, 0, MPI_COMM_NULL, ierr)
  call expect('send on MPI_COMM_NULL', ierr, MPI_ERR_COMM)
  call MPI_Send(x, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD, ierr)
  call expect('send of MPI_DATATYPE_NULL', ierr, MPI_ERR_TYPE)
  call MPI_Send(x, -1, MPI_INTEGER, 0, 0, MPI_COMM_WORLD, ierr)
  call expect('send of -1 elements', ierr, MPI_ERR_COUNT)
  call MPI_Allreduce(x, code, 1, MPI_INTEGER, MPI_OP_NULL, MPI_COMM_WORLD, ierr)
  call expect('allreduce with MPI_OP_NULL', ierr, MPI_ERR_OP)

  ! The message of a class: non-empty, its length as given, blanks after it.
  msg = repeat("x", MPI_MAX_ERROR_STRING)
  call MPI_Error_string(MPI_ERR_RANK, msg, mlen, ierr)
  if (ierr /= MPI_SUCCESS .or. mlen < 1 .or. mlen > MPI_MAX_ERROR_STRING) call fail('error_string', mlen)
  if (len_trim(msg) /= mlen) call fail('error_string padding', len_trim(msg))

  ! A class and code of the program's own, with a message.
  call MPI_Add_error_class(newclass, ierr)
  call MPI_Add_error_code(newclass, code, ierr)
  call MPI_Add_error_string(code, 'the flux capacitor is empty   ', ierr)
  call MPI_Error_string(code, msg, mlen, ierr)
  if (msg /= 'the flux capacitor is empty' .or. mlen /= 27) call fail('add_error_string', mlen)
  call MPI_Error_class(code, cls, ierr)
  if (cls /= newclass) call fail('error_class of a new code', cls)

  ! A handler written in Fortran, called through MPI_COMM_CALL_ERRHANDLER and by an error.
  call MPI_Comm_create_errhandler(record_error, eh, ierr)
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh, ierr)
  call MPI_Comm_call_errhandler(MPI_COMM_WORLD, code, ierr)
  if (calls /= 1 .or. last_code /= code .or. last_comm /= MPI_COMM_WORLD) call fail('handler call', calls)
  call MPI_Send(x, 1, MPI_INTEGER, -7, 0, MPI_COMM_WORLD, ierr)
  call MPI_Error_class(last_code, cls, ierr)
  if (calls /= 2 .or. cls /= MPI_ERR_RANK) call fail('handler on error', calls)
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call MPI_Errhandler_free(eh, ierr)
  if (eh /= MPI_ERRHANDLER_NULL) call fail('errhandler_free', eh)

  print '(A,I0,A,I0)', 'errors ok rank ', rank, ' of ', nprocs
  call MPI_Finalize(ierr)
contains
  subroutine expect(what, got, class)
    character(len=*), intent(in) :: what
    integer, intent(in) :: got, class
    integer :: c, e
    if (got == MPI_SUCCESS) call fail(what // ' succeeded', 0)
    call MPI_Error_class(got, c, e)
    if (c /= class) call fail(what // ': wrong class', c)
  end subroutine
  subroutine fail(what, value)
    character(len=*), intent(in) :: what
    integer, intent(in) :: value
    integer :: e
    print '(A,I0,A,A,A,I0)', 'FAIL rank ', rank, ': ', what, ' ', value
    call MPI_Abort(MPI_COMM_WORLD, 1, e)
  end subroutine
end program

subroutine record_error(comm, code)
  use handler_state
  implicit none
  integer :: comm, code
  calls = calls + 1
  last_code = code
  last_comm = comm
end subroutine
