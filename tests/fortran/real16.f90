! ranks: 1 2 4
! gfortran's REAL(16) and COMPLEX(16) (IEEE binary128) as MPI_REAL16 and MPI_COMPLEX32: their
! sizes, a broadcast and a ring exchange that keep every bit, and, on Ferry's library,
! MPI_ALLREDUCE with MPI_SUM, MPI_PROD, MPI_MAX and MPI_MIN giving what Fortran computes (the
! sums and products on values that every order of combination gives exactly). Debian's MPICH
! 4.0.2 reduces REAL16 as if it were x87 long double: on its library the reductions are skipped.
program real16
  use mpi
  implicit none
  integer, parameter :: qp = 16
  integer :: ierr, rank, nprocs, size, r, k, next, prev, len
  real(qp) :: v(4), s(4), p(4), mx(4), mn(4), ws(4), wp(4), wmx(4), wmn(4), b(3), got(3)
  complex(qp) :: z(2), zin(2)
  character(len=MPI_MAX_LIBRARY_VERSION_STRING) :: version

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  next = mod(rank + 1, nprocs)
  prev = mod(rank + nprocs - 1, nprocs)

  call MPI_Type_size(MPI_REAL16, size, ierr)
  if (size /= 16) call fail('MPI_REAL16 size', size)
  call MPI_Type_size(MPI_COMPLEX32, size, ierr)
  if (size /= 32) call fail('MPI_COMPLEX32 size', size)

  ! Thirds have bits beyond any double; huge and tiny test the exponent range.
  if (rank == nprocs - 1) then
    b = (/ 1.0_qp / 3.0_qp, huge(1.0_qp), -tiny(1.0_qp) /)
  else
    b = 0
  end if
  call MPI_Bcast(b, 3, MPI_REAL16, nprocs - 1, MPI_COMM_WORLD, ierr)
  if (b(1) /= 1.0_qp / 3.0_qp .or. b(2) /= huge(1.0_qp) .or. b(3) /= -tiny(1.0_qp)) &
    call fail('bcast', 0)

  z = (/ cmplx(rank + 1, -rank, qp) / 3.0_qp, cmplx(0.5_qp, rank, qp) /)
  call MPI_Sendrecv(z, 2, MPI_COMPLEX32, next, 1, zin, 2, MPI_COMPLEX32, prev, 1, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  if (zin(1) /= cmplx(prev + 1, -prev, qp) / 3.0_qp .or. zin(2) /= cmplx(0.5_qp, prev, qp)) &
    call fail('complex ring', prev)

  call MPI_Get_library_version(version, len, ierr)
  if (version(1:5) == 'Ferry') then
    do k = 1, 4
      v(k) = part(rank, k)
    end do
    call MPI_Allreduce(v, s, 4, MPI_REAL16, MPI_SUM, MPI_COMM_WORLD, ierr)
    call MPI_Allreduce(v, p, 4, MPI_REAL16, MPI_PROD, MPI_COMM_WORLD, ierr)
    call MPI_Allreduce(v, mx, 4, MPI_REAL16, MPI_MAX, MPI_COMM_WORLD, ierr)
    call MPI_Allreduce(v, mn, 4, MPI_REAL16, MPI_MIN, MPI_COMM_WORLD, ierr)
    ws = 0
    wp = 1
    wmx = -huge(1.0_qp)
    wmn = huge(1.0_qp)
    do r = 0, nprocs - 1
      do k = 1, 4
        ws(k) = ws(k) + part(r, k)
        wp(k) = wp(k) * part(r, k)
        wmx(k) = max(wmx(k), part(r, k))
        wmn(k) = min(wmn(k), part(r, k))
      end do
    end do
    ! SUM and PROD are exact on the first three parts only; MAX and MIN on all.
    if (any(s(1:3) /= ws(1:3))) call fail('SUM', 0)
    if (any(p(1:3) /= wp(1:3))) call fail('PROD', 0)
    if (any(mx /= wmx)) call fail('MAX', 0)
    if (any(mn /= wmn)) call fail('MIN', 0)
    ! Complex sums of small integers and quarters are exact.
    z(1) = cmplx(rank + 1, -rank, qp) / 4.0_qp
    call MPI_Allreduce(z, zin, 1, MPI_COMPLEX32, MPI_SUM, MPI_COMM_WORLD, ierr)
    got(1) = real(nprocs * (nprocs + 1) / 2, qp) / 4.0_qp
    got(2) = -real(nprocs * (nprocs - 1) / 2, qp) / 4.0_qp
    if (zin(1) /= cmplx(got(1), got(2), qp)) call fail('complex SUM', 0)
  end if

  call MPI_Finalize(ierr)
  print '(A,I0,A,I0)', 'real16 ok rank ', rank, ' of ', nprocs

contains

  ! Rank r's value k: multiples of 2**-100 and of 1/1024, a power of 1 + 2**-20, and signed
  ! thirds for MAX and MIN.
  real(qp) function part(r, k)
    integer, intent(in) :: r, k
    select case (k)
    case (1)
      part = real(r + 1, qp) * 2.0_qp**(-100)
    case (2)
      part = real(r + 1, qp) / 1024.0_qp
    case (3)
      part = 1.0_qp + 2.0_qp**(-20)
    case default
      part = real((-1)**r * (r + 1), qp) / 3.0_qp
    end select
  end function

  subroutine fail(what, v)
    character(len=*), intent(in) :: what
    integer, intent(in) :: v
    integer :: e
    print '(a, a, a, i0, a, i0)', 'FAIL real16: ', what, ' (', v, ') on rank ', rank
    call MPI_Abort(MPI_COMM_WORLD, 1, e)
  end subroutine
end program
