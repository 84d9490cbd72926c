! ranks: 1 2 4
! The argument kinds the other programs leave out: address-sized values and outputs
! (MPI_TYPE_CREATE_HVECTOR, MPI_TYPE_GET_EXTENT, MPI_ALLOC_MEM), the ranges(3, n) of the group
! range functions, MPI_UNWEIGHTED, MPI_BUFFER_DETACH's address, MPI_PACK's position,
! persistent requests, MPI_F_SYNC_REG, a neighbourhood collective, datatype attributes and
! the INTEGER attributes of MPI_ATTR_PUT / MPI_ATTR_GET.
! The buffers of the persistent requests live in a module, so that the compiler knows that
! MPI_STARTALL and MPI_WAITALL may read and write them (locals could stay in registers).
module persistent_data
  integer :: pin, pout
end module

program kinds
  use mpi
  use persistent_data
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
  implicit none
  integer :: ierr, rank, nprocs, next, prev, i, n, t, world, grp, sub, key, pos, size
  integer :: ranges(3, 1), reqs(2), nbrs(2), got(2), indeg, outdeg, srcs(1), dsts(1)
  integer(kind=MPI_ADDRESS_KIND) :: stride, lb, extent, base, val
  integer :: mat(4, 3), col(3), bsendbuf(64), packed(16), out(3)
  integer, pointer :: mem(:)
  type(c_ptr) :: cmem
  logical :: flag, weighted
  double precision :: x
  character(len=MPI_MAX_LIBRARY_VERSION_STRING) :: version

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  next = mod(rank + 1, nprocs)
  prev = mod(rank + nprocs - 1, nprocs)

  ! A row of a 4x3 matrix: 3 INTEGERs 16 bytes apart; its extent and a resized copy.
  stride = 16
  call MPI_Type_create_hvector(3, 1, stride, MPI_INTEGER, t, ierr)
  call MPI_Type_commit(t, ierr)
  call MPI_Type_get_extent(t, lb, extent, ierr)
  if (lb /= 0 .or. extent /= 36) call fail('hvector extent', int(extent))
  mat = reshape((/ (i, i = 1, 12) /), (/ 4, 3 /))
  call MPI_Sendrecv(mat(2, 1), 1, t, rank, 0, col, 3, MPI_INTEGER, rank, 0, MPI_COMM_WORLD, &
                    MPI_STATUS_IGNORE, ierr)
  if (any(col /= (/ 2, 6, 10 /))) call fail('hvector data', col(2))

  ! A datatype attribute holding an address-sized value.
  call MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, key, 0_MPI_ADDRESS_KIND, ierr)
  val = -123456789012_MPI_ADDRESS_KIND
  call MPI_Type_set_attr(t, key, val, ierr)
  val = 0
  call MPI_Type_get_attr(t, key, val, flag, ierr)
  if (.not. flag .or. val /= -123456789012_MPI_ADDRESS_KIND) call fail('type attribute', int(val))
  call MPI_Type_delete_attr(t, key, ierr)
  call MPI_Type_get_attr(t, key, val, flag, ierr)
  if (flag) call fail('deleted type attribute', 0)
  call MPI_Type_free_keyval(key, ierr)
  call MPI_Type_free(t, ierr)

  ! MPI-1 attributes: INTEGER values; MPI_TAG_UB through MPI_ATTR_GET.
  call MPI_Comm_dup(MPI_COMM_WORLD, world, ierr)
  call MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, key, &
                              0_MPI_ADDRESS_KIND, ierr)
  call MPI_Attr_put(world, key, 4242, ierr)
  n = 0
  call MPI_Attr_get(world, key, n, flag, ierr)
  if (.not. flag .or. n /= 4242) call fail('attr_get', n)
  call MPI_Attr_get(MPI_COMM_WORLD, MPI_TAG_UB, n, flag, ierr)
  if (.not. flag .or. n < 32767) call fail('attr_get tag_ub', n)
  call MPI_Comm_free(world, ierr)
  call MPI_Comm_free_keyval(key, ierr)

  ! Group ranges: every other rank from the last down to 0.
  call MPI_Comm_group(MPI_COMM_WORLD, grp, ierr)
  ranges(:, 1) = (/ nprocs - 1, 0, -2 /)
  call MPI_Group_range_incl(grp, 1, ranges, sub, ierr)
  call MPI_Group_size(sub, n, ierr)
  if (n /= (nprocs + 1) / 2) call fail('group_range_incl size', n)
  call MPI_Group_rank(sub, n, ierr)
  if (mod(nprocs - 1 - rank, 2) == 0 .and. n /= (nprocs - 1 - rank) / 2) call fail('range rank', n)
  call MPI_Group_free(sub, ierr)
  call MPI_Group_free(grp, ierr)

  ! A directed ring without weights; its neighbourhood allgather.
  srcs(1) = prev
  dsts(1) = next
  call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, srcs, MPI_UNWEIGHTED, 1, dsts, &
                                      MPI_UNWEIGHTED, MPI_INFO_NULL, .false., sub, ierr)
  call MPI_Dist_graph_neighbors_count(sub, indeg, outdeg, weighted, ierr)
  if (indeg /= 1 .or. outdeg /= 1 .or. weighted) call fail('dist_graph counts', indeg)
  call MPI_Neighbor_allgather(rank, 1, MPI_INTEGER, got, 1, MPI_INTEGER, sub, ierr)
  if (got(1) /= prev) call fail('neighbor_allgather', got(1))
  call MPI_Comm_free(sub, ierr)

  ! Buffered sends; MPI_BUFFER_DETACH gives the size back.
  call MPI_Buffer_attach(bsendbuf, 4 * 64, ierr)
  call MPI_Bsend(rank, 1, MPI_INTEGER, next, 5, MPI_COMM_WORLD, ierr)
  call MPI_Recv(n, 1, MPI_INTEGER, prev, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  if (n /= prev) call fail('bsend', n)
  call MPI_Buffer_detach(bsendbuf, size, ierr)
  if (size /= 4 * 64) call fail('buffer_detach size', size)

  ! Pack an INTEGER and a DOUBLE PRECISION; unpack them.
  pos = 0
  x = 2.5d0
  call MPI_Pack(rank, 1, MPI_INTEGER, packed, 64, pos, MPI_COMM_WORLD, ierr)
  call MPI_Pack(x, 1, MPI_DOUBLE_PRECISION, packed, 64, pos, MPI_COMM_WORLD, ierr)
  if (pos < 12) call fail('pack position', pos)
  n = pos
  pos = 0
  x = 0
  call MPI_Unpack(packed, n, pos, i, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call MPI_Unpack(packed, n, pos, x, 1, MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, ierr)
  if (i /= rank .or. x /= 2.5d0 .or. pos /= n) call fail('unpack', i)

  ! Persistent requests, started twice.
  call MPI_Recv_init(pin, 1, MPI_INTEGER, prev, 6, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Send_init(pout, 1, MPI_INTEGER, next, 6, MPI_COMM_WORLD, reqs(2), ierr)
  do i = 1, 2
    pout = 10 * i + rank
    call MPI_Startall(2, reqs, ierr)
    call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE, ierr)
    if (pin /= 10 * i + prev) call fail('persistent', pin)
  end do
  call MPI_Request_free(reqs(1), ierr)
  call MPI_Request_free(reqs(2), ierr)

  ! A local buffer instead, made safe by MPI_F_SYNC_REG after the wait (Ferry's only: MPICH
  ! 4.0's MPI_F_SYNC_REG crashes on a scalar).
  call MPI_Get_library_version(version, i, ierr)
  if (index(version, 'MPICH Version') == 0) then
    n = -1
    call MPI_Irecv(n, 1, MPI_INTEGER, prev, 7, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_Send(rank + 100, 1, MPI_INTEGER, next, 7, MPI_COMM_WORLD, ierr)
    call MPI_Wait(reqs(1), MPI_STATUS_IGNORE, ierr)
    call MPI_F_sync_reg(n)
    if (n /= prev + 100) call fail('irecv with MPI_F_SYNC_REG', n)
  end if

  ! Memory from the library, reached through a Fortran pointer.
  call MPI_Alloc_mem(3_MPI_ADDRESS_KIND * 4, MPI_INFO_NULL, base, ierr)
  if (base == 0) call fail('alloc_mem', 0)
  cmem = transfer(base, cmem)
  call c_f_pointer(cmem, mem, (/ 3 /))
  mem = (/ 7, 8, 9 /)
  call MPI_Allreduce(mem, out, 3, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (any(out /= (/ 7, 8, 9 /) * nprocs)) call fail('alloc_mem data', out(1))
  call MPI_Free_mem(mem, ierr)
  if (ierr /= MPI_SUCCESS) call fail('free_mem', ierr)

  print '(A,I0,A,I0)', 'kinds ok rank ', rank, ' of ', nprocs
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
