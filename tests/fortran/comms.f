! ranks: 1 2 4
! Fixed form with mpif.h: communicators (MPI_COMM_SPLIT, _DUP, _IDUP,
! _COMPARE, _FREE), groups, a periodic Cartesian topology (LOGICAL
! arrays), attributes (MPI_TAG_UB as an integer, a keyval with Fortran
! copy and delete callbacks, MPI_COMM_DUP_FN), a derived datatype, info
! objects and names (CHARACTER in and out).
      PROGRAM COMMS
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER IERR, RANK, NPROCS, SUB, DUP, SUBRANK, SUBSIZE, RES
      INTEGER GRP, SUBGRP, RANKS(2), TRANS(2), CART, DIMS(1), LEFT
      INTEGER RIGHT, COORDS(1), KEY, KEY2, VTYPE, INFO, N, LEN, SZ
      INTEGER MAT(3,4), COL(4), I
      LOGICAL PERIODS(1), FLAG
      INTEGER(KIND=MPI_ADDRESS_KIND) VAL, EXTRA
      CHARACTER*(MPI_MAX_INFO_VAL) VALUE
      CHARACTER*(MPI_MAX_INFO_KEY) IKEY
      CHARACTER*(MPI_MAX_OBJECT_NAME) TNAME
      CHARACTER*(MPI_MAX_LIBRARY_VERSION_STRING) LIBVER
      EXTERNAL COPYFN, DELFN
      INTEGER NCOPY, NDEL
      COMMON /COUNTS/ NCOPY, NDEL
      INTEGER IDUP, REQ
      COMMON /NONBLK/ IDUP

      CALL MPI_INIT(IERR)
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, NPROCS, IERR)

! Even and odd ranks, keyed in reverse order.
      CALL MPI_COMM_SPLIT(MPI_COMM_WORLD, MOD(RANK, 2), -RANK, SUB,
     &    IERR)
      CALL MPI_COMM_RANK(SUB, SUBRANK, IERR)
      CALL MPI_COMM_SIZE(SUB, SUBSIZE, IERR)
      IF (SUBSIZE .NE. (NPROCS - MOD(RANK, 2) + 1) / 2)
     &    CALL FAIL('split size', SUBSIZE)
      IF (SUBRANK .NE. SUBSIZE - 1 - RANK / 2)
     &    CALL FAIL('split rank', SUBRANK)
      CALL MPI_COMM_DUP(SUB, DUP, IERR)
      CALL MPI_COMM_COMPARE(SUB, DUP, RES, IERR)
      IF (RES .NE. MPI_CONGRUENT) CALL FAIL('compare dup', RES)
      CALL MPI_COMM_COMPARE(MPI_COMM_WORLD, MPI_COMM_WORLD, RES, IERR)
      IF (RES .NE. MPI_IDENT) CALL FAIL('compare world', RES)
      CALL MPI_ALLREDUCE(1, N, 1, MPI_INTEGER, MPI_SUM, DUP, IERR)
      IF (N .NE. SUBSIZE) CALL FAIL('allreduce on dup', N)
      CALL MPI_COMM_FREE(DUP, IERR)
      IF (DUP .NE. MPI_COMM_NULL) CALL FAIL('free', DUP)
! The same without blocking; the new handle is in a common block, so
! that the compiler reloads it after MPI_WAIT.
      CALL MPI_COMM_IDUP(SUB, IDUP, REQ, IERR)
      CALL MPI_WAIT(REQ, MPI_STATUS_IGNORE, IERR)
      CALL MPI_COMM_COMPARE(SUB, IDUP, RES, IERR)
      IF (RES .NE. MPI_CONGRUENT) CALL FAIL('compare idup', RES)
      CALL MPI_COMM_FREE(IDUP, IERR)

! Groups: the world rank of sub-rank 0 by translation.
      CALL MPI_COMM_GROUP(SUB, SUBGRP, IERR)
      CALL MPI_COMM_GROUP(MPI_COMM_WORLD, GRP, IERR)
      RANKS(1) = 0
      CALL MPI_GROUP_TRANSLATE_RANKS(SUBGRP, 1, RANKS, GRP, TRANS,
     &    IERR)
      IF (TRANS(1) .NE. 2 * (SUBSIZE - 1) + MOD(RANK, 2))
     &    CALL FAIL('translate', TRANS(1))
      CALL MPI_GROUP_FREE(SUBGRP, IERR)
      CALL MPI_GROUP_FREE(GRP, IERR)
      CALL MPI_COMM_FREE(SUB, IERR)

! A periodic ring as a Cartesian topology.
      DIMS(1) = 0
      CALL MPI_DIMS_CREATE(NPROCS, 1, DIMS, IERR)
      IF (DIMS(1) .NE. NPROCS) CALL FAIL('dims_create', DIMS(1))
      PERIODS(1) = .TRUE.
      CALL MPI_CART_CREATE(MPI_COMM_WORLD, 1, DIMS, PERIODS, .FALSE.,
     &    CART, IERR)
      CALL MPI_CART_SHIFT(CART, 0, 1, LEFT, RIGHT, IERR)
      IF (LEFT .NE. MOD(RANK + NPROCS - 1, NPROCS) .OR.
     &    RIGHT .NE. MOD(RANK + 1, NPROCS))
     &    CALL FAIL('cart_shift', LEFT)
      PERIODS(1) = .FALSE.
      CALL MPI_CART_GET(CART, 1, DIMS, PERIODS, COORDS, IERR)
      IF (.NOT. PERIODS(1) .OR. COORDS(1) .NE. RANK)
     &    CALL FAIL('cart_get', COORDS(1))
      CALL MPI_TOPO_TEST(CART, RES, IERR)
      IF (RES .NE. MPI_CART) CALL FAIL('topo_test', RES)

! Attributes: the predefined MPI_TAG_UB, then keyvals of the program.
      CALL MPI_COMM_GET_ATTR(MPI_COMM_WORLD, MPI_TAG_UB, VAL, FLAG,
     &    IERR)
      IF (.NOT. FLAG .OR. VAL .LT. 32767) CALL FAIL('tag_ub', INT(VAL))
      NCOPY = 0
      NDEL = 0
      EXTRA = 5
      CALL MPI_COMM_CREATE_KEYVAL(COPYFN, DELFN, KEY, EXTRA, IERR)
      CALL MPI_COMM_CREATE_KEYVAL(MPI_COMM_DUP_FN,
     &    MPI_COMM_NULL_DELETE_FN, KEY2, EXTRA, IERR)
      VAL = 123456789012_MPI_ADDRESS_KIND
      CALL MPI_COMM_SET_ATTR(CART, KEY, VAL, IERR)
      VAL = -7
      CALL MPI_COMM_SET_ATTR(CART, KEY2, VAL, IERR)
      CALL MPI_COMM_DUP(CART, DUP, IERR)
      IF (NCOPY .NE. 1) CALL FAIL('copy callback', NCOPY)
      VAL = 0
      CALL MPI_COMM_GET_ATTR(DUP, KEY, VAL, FLAG, IERR)
      IF (.NOT. FLAG .OR. VAL .NE. 123456789012_MPI_ADDRESS_KIND + 5)
     &    CALL FAIL('copied attribute', INT(VAL))
      CALL MPI_COMM_GET_ATTR(DUP, KEY2, VAL, FLAG, IERR)
      IF (.NOT. FLAG .OR. VAL .NE. -7) CALL FAIL('dup_fn', INT(VAL))
      CALL MPI_COMM_DELETE_ATTR(DUP, KEY, IERR)
      IF (NDEL .NE. 1) CALL FAIL('delete callback', NDEL)
      CALL MPI_COMM_GET_ATTR(DUP, KEY, VAL, FLAG, IERR)
      IF (FLAG) CALL FAIL('deleted attribute', 0)
      CALL MPI_COMM_FREE(DUP, IERR)
      CALL MPI_COMM_FREE(CART, IERR)
      IF (NDEL .NE. 2) CALL FAIL('delete on free', NDEL)
      CALL MPI_COMM_FREE_KEYVAL(KEY, IERR)
      CALL MPI_COMM_FREE_KEYVAL(KEY2, IERR)

! A column of a 3x4 matrix as a vector type, sent to itself.
      DO I = 1, 4
        MAT(1, I) = I
        MAT(2, I) = 10 * I
        MAT(3, I) = 100 * I
      END DO
      CALL MPI_TYPE_VECTOR(4, 1, 3, MPI_INTEGER, VTYPE, IERR)
      CALL MPI_TYPE_COMMIT(VTYPE, IERR)
      CALL MPI_TYPE_SIZE(VTYPE, SZ, IERR)
      IF (SZ .NE. 16) CALL FAIL('type_size', SZ)
      CALL MPI_TYPE_SET_NAME(VTYPE, 'row of mat   ', IERR)
      CALL MPI_TYPE_GET_NAME(VTYPE, TNAME, LEN, IERR)
      IF (TNAME .NE. 'row of mat' .OR. LEN .NE. 10)
     &    CALL FAIL('type name', LEN)
      CALL MPI_SENDRECV(MAT(2, 1), 1, VTYPE, RANK, 1, COL, 4,
     &    MPI_INTEGER, RANK, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE, IERR)
      IF (COL(1) .NE. 10 .OR. COL(4) .NE. 40)
     &    CALL FAIL('vector', COL(4))
      CALL MPI_TYPE_FREE(VTYPE, IERR)

! Info: keys and values without their blanks; MPI_INFO_GET's flag.
      CALL MPI_GET_LIBRARY_VERSION(LIBVER, LEN, IERR)
      CALL MPI_INFO_CREATE(INFO, IERR)
      CALL MPI_INFO_SET(INFO, ' colour ', 'deep blue  ', IERR)
      CALL MPI_INFO_GET_NKEYS(INFO, N, IERR)
      CALL MPI_INFO_GET_NTHKEY(INFO, 0, IKEY, IERR)
      IF (N .NE. 1 .OR. IKEY .NE. 'colour') CALL FAIL('nthkey', N)
      VALUE = 'unchanged'
      CALL MPI_INFO_GET(INFO, 'colour', MPI_MAX_INFO_VAL, VALUE, FLAG,
     &    IERR)
      IF (.NOT. FLAG .OR. VALUE .NE. 'deep blue') CALL FAIL('get', 0)
      CALL MPI_INFO_GET_VALUELEN(INFO, 'colour', LEN, FLAG, IERR)
      IF (LEN .NE. 9) CALL FAIL('valuelen', LEN)
! MPI-4's MPI_INFO_GET_STRING: BUFLEN 0 asks for the length only, which
! counts no NUL in Fortran.
      LEN = 0
      VALUE = 'unchanged'
      CALL MPI_INFO_GET_STRING(INFO, 'colour', LEN, VALUE, FLAG, IERR)
      IF (.NOT. FLAG .OR. VALUE .NE. 'unchanged')
     &    CALL FAIL('get_string length', LEN)
      N = LEN
      CALL MPI_INFO_GET_STRING(INFO, 'colour', LEN, VALUE, FLAG, IERR)
      IF (.NOT. FLAG .OR. VALUE .NE. 'deep blue' .OR. LEN .NE. 9
     &    .OR. N .NE. 9) CALL FAIL('get_string', LEN)
      VALUE = 'unchanged'
      CALL MPI_INFO_GET(INFO, 'shape', 20, VALUE, FLAG, IERR)
      IF (FLAG .OR. VALUE .NE. 'unchanged') CALL FAIL('missing key', 0)
! A value longer than VALUELEN is truncated (MPICH 4.0 refuses it, so
! the check is Ferry's only).
      IF (INDEX(LIBVER, 'MPICH Version') .EQ. 0) THEN
        CALL MPI_INFO_GET(INFO, 'colour', 4, VALUE, FLAG, IERR)
        IF (VALUE .NE. 'deep') CALL FAIL('short value', 0)
      END IF
      CALL MPI_INFO_FREE(INFO, IERR)
      IF (INFO .NE. MPI_INFO_NULL) CALL FAIL('info_free', INFO)

      WRITE (*, '(A,I0,A,I0)') 'comms ok rank ', RANK, ' of ', NPROCS
      CALL MPI_FINALIZE(IERR)
      END

! Copy: the value plus the extra state; counts its calls.
      SUBROUTINE COPYFN(OLDCOMM, KEYVAL, EXTRA, VALIN, VALOUT, FLAG,
     &    IERR)
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER OLDCOMM, KEYVAL, IERR
      INTEGER(KIND=MPI_ADDRESS_KIND) EXTRA, VALIN, VALOUT
      LOGICAL FLAG
      INTEGER NCOPY, NDEL
      COMMON /COUNTS/ NCOPY, NDEL
      NCOPY = NCOPY + 1
      VALOUT = VALIN + EXTRA
      FLAG = .TRUE.
      IERR = MPI_SUCCESS
      END

      SUBROUTINE DELFN(COMM, KEYVAL, VAL, EXTRA, IERR)
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER COMM, KEYVAL, IERR
      INTEGER(KIND=MPI_ADDRESS_KIND) VAL, EXTRA
      INTEGER NCOPY, NDEL
      COMMON /COUNTS/ NCOPY, NDEL
      IF (EXTRA .EQ. 5) NDEL = NDEL + 1
      IERR = MPI_SUCCESS
      END

      SUBROUTINE FAIL(WHAT, VALUE)
      CHARACTER*(*) WHAT
      INTEGER VALUE
      INCLUDE 'mpif.h'
      INTEGER IERR
      WRITE (*, '(A,A,A,I0)') 'FAIL ', WHAT, ' ', VALUE
      CALL MPI_ABORT(MPI_COMM_WORLD, 1, IERR)
      END
