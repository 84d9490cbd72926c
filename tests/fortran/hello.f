! ranks: 1 2 4
! Fixed form with mpif.h: start-up and environment queries, the
! functions with results (MPI_WTIME, MPI_WTICK, MPI_AINT_ADD), CHARACTER
! outputs (blank-padded), LOGICAL flags and MPI_PCONTROL.
      PROGRAM HELLO
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER IERR, RANK, NPROCS, LEN, VER, SUBVER, PROVIDED
      LOGICAL FLAG
      CHARACTER*(MPI_MAX_PROCESSOR_NAME) NAME
      CHARACTER*(MPI_MAX_LIBRARY_VERSION_STRING) LIBVER
      DOUBLE PRECISION T0, T1, TICK
      INTEGER(KIND=MPI_ADDRESS_KIND) A, B

      CALL MPI_INITIALIZED(FLAG, IERR)
      IF (FLAG .OR. IERR .NE. MPI_SUCCESS) CALL FAIL('initialized')
      CALL MPI_INIT_THREAD(MPI_THREAD_FUNNELED, PROVIDED, IERR)
      IF (IERR .NE. MPI_SUCCESS) CALL FAIL('init_thread')
      IF (PROVIDED .LT. MPI_THREAD_SINGLE .OR.
     &    PROVIDED .GT. MPI_THREAD_MULTIPLE) CALL FAIL('provided')
      CALL MPI_INITIALIZED(FLAG, IERR)
      IF (.NOT. FLAG) CALL FAIL('not initialized')
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, NPROCS, IERR)

      NAME = 'x'
      CALL MPI_GET_PROCESSOR_NAME(NAME, LEN, IERR)
      IF (LEN .LT. 1 .OR. LEN .GT. MPI_MAX_PROCESSOR_NAME)
     &    CALL FAIL('processor name length')
      IF (LEN_TRIM(NAME) .NE. LEN) CALL FAIL('name not blank-padded')
      CALL MPI_GET_VERSION(VER, SUBVER, IERR)
      IF (VER .NE. MPI_VERSION .OR. SUBVER .NE. MPI_SUBVERSION)
     &    CALL FAIL('version')
      CALL MPI_GET_LIBRARY_VERSION(LIBVER, LEN, IERR)
      IF (LEN .LT. 1 .OR. LEN_TRIM(LIBVER) .NE. LEN)
     &    CALL FAIL('library version')

      T0 = MPI_WTIME()
      TICK = MPI_WTICK()
      CALL MPI_BARRIER(MPI_COMM_WORLD, IERR)
      T1 = MPI_WTIME()
      IF (TICK .LE. 0.0D0 .OR. TICK .GT. 1.0D0) CALL FAIL('wtick')
      IF (T1 .LT. T0 .OR. T0 .LE. 0.0D0) CALL FAIL('wtime')
      A = 1000
      B = 24
      IF (MPI_AINT_ADD(A, B) .NE. 1024) CALL FAIL('aint_add')
      IF (MPI_AINT_DIFF(A, B) .NE. 976) CALL FAIL('aint_diff')

! The profiling control: no IERROR in Fortran.
      CALL MPI_PCONTROL(1)
      WRITE (*, '(A,I0,A,I0)') 'hello ok rank ', RANK, ' of ', NPROCS
      CALL MPI_FINALIZE(IERR)
      CALL MPI_FINALIZED(FLAG, IERR)
      IF (.NOT. FLAG .OR. IERR .NE. MPI_SUCCESS) CALL FAIL('finalized')
      END

      SUBROUTINE FAIL(WHAT)
      CHARACTER*(*) WHAT
      INCLUDE 'mpif.h'
      INTEGER IERR
      WRITE (*, '(A,A)') 'FAIL ', WHAT
      CALL MPI_ABORT(MPI_COMM_WORLD, 1, IERR)
      END
