//! I/O (MPI-4.0 chapter 14), data access: every read and write, by explicit offset, individual
//! and shared file pointer; blocking, non-blocking and split collective; with `int` and
//! large (`_c`) counts.

use std::os::raw::{c_int, c_void};

use super::io::file_call;
use crate::consts::*;
use crate::error::out_arg;
use crate::io::access::{self, At, Buf, Dir};
use crate::objects::request::write_status;

/// Whether call `name` is collective (`_all`), for the calls with an offset or the
/// individual pointer (the `_ordered` ones say so by their `At`).
fn collective(name: &str) -> bool {
    name.contains("_all")
}

fn blocking(name: &'static str, fh: MPI_File, dir: Dir, at: At, b: Buf, status: *mut MPI_Status) -> c_int {
    file_call(name, fh, move |rt| {
        let o = access::access(rt, fh, dir, at, b, collective(name))?;
        write_status(status, &o, false);
        Ok(())
    })
}

fn nonblocking(name: &'static str, fh: MPI_File, dir: Dir, at: At, b: Buf, request: *mut MPI_Request) -> c_int {
    file_call(name, fh, move |rt| {
        let r = out_arg(request, "request")?;
        let o = access::access(rt, fh, dir, at, b, collective(name))?;
        *r = access::done_request(rt, o);
        Ok(())
    })
}

fn begin(name: &'static str, fh: MPI_File, dir: Dir, at: At, b: Buf) -> c_int {
    file_call(name, fh, move |rt| access::begin_split(rt, fh, dir, at, b))
}

fn end(name: &'static str, fh: MPI_File, status: *mut MPI_Status) -> c_int {
    file_call(name, fh, move |rt| {
        let o = access::end_split(rt, fh)?;
        write_status(status, &o, false);
        Ok(())
    })
}

/// One access call: `offset` for the `_at` calls, then how it completes (`status`,
/// `request`, `begin`).
macro_rules! io_call {
    ($mpi:ident, $pmpi:ident, $cty:ty, $dir:expr, offset, status) => {
        crate::mpi_export! { $mpi, $pmpi, (fh: MPI_File, offset: MPI_Offset, buf: *mut c_void, count: $cty, datatype: MPI_Datatype, status: *mut MPI_Status) {
            blocking(stringify!($mpi), fh, $dir, At::Explicit(offset), Buf { ptr: buf, count: count as MPI_Count, dt: datatype }, status)
        }}
    };
    ($mpi:ident, $pmpi:ident, $cty:ty, $dir:expr, offset, request) => {
        crate::mpi_export! { $mpi, $pmpi, (fh: MPI_File, offset: MPI_Offset, buf: *mut c_void, count: $cty, datatype: MPI_Datatype, request: *mut MPI_Request) {
            nonblocking(stringify!($mpi), fh, $dir, At::Explicit(offset), Buf { ptr: buf, count: count as MPI_Count, dt: datatype }, request)
        }}
    };
    ($mpi:ident, $pmpi:ident, $cty:ty, $dir:expr, offset, begin) => {
        crate::mpi_export! { $mpi, $pmpi, (fh: MPI_File, offset: MPI_Offset, buf: *mut c_void, count: $cty, datatype: MPI_Datatype) {
            begin(stringify!($mpi), fh, $dir, At::Explicit(offset), Buf { ptr: buf, count: count as MPI_Count, dt: datatype })
        }}
    };
    ($mpi:ident, $pmpi:ident, $cty:ty, $dir:expr, $at:expr, status) => {
        crate::mpi_export! { $mpi, $pmpi, (fh: MPI_File, buf: *mut c_void, count: $cty, datatype: MPI_Datatype, status: *mut MPI_Status) {
            blocking(stringify!($mpi), fh, $dir, $at, Buf { ptr: buf, count: count as MPI_Count, dt: datatype }, status)
        }}
    };
    ($mpi:ident, $pmpi:ident, $cty:ty, $dir:expr, $at:expr, request) => {
        crate::mpi_export! { $mpi, $pmpi, (fh: MPI_File, buf: *mut c_void, count: $cty, datatype: MPI_Datatype, request: *mut MPI_Request) {
            nonblocking(stringify!($mpi), fh, $dir, $at, Buf { ptr: buf, count: count as MPI_Count, dt: datatype }, request)
        }}
    };
    ($mpi:ident, $pmpi:ident, $cty:ty, $dir:expr, $at:expr, begin) => {
        crate::mpi_export! { $mpi, $pmpi, (fh: MPI_File, buf: *mut c_void, count: $cty, datatype: MPI_Datatype) {
            begin(stringify!($mpi), fh, $dir, $at, Buf { ptr: buf, count: count as MPI_Count, dt: datatype })
        }}
    };
}

/// The `_end` of a split collective.
macro_rules! io_end {
    ($mpi:ident, $pmpi:ident) => {
        crate::mpi_export! { $mpi, $pmpi, (fh: MPI_File, _buf: *mut c_void, status: *mut MPI_Status) {
            end(stringify!($mpi), fh, status)
        }}
    };
}

/// Each call with an `int` count and its `_c` twin with an `MPI_Count`.
macro_rules! io_both {
    ($mpi:ident, $pmpi:ident, $mpi_c:ident, $pmpi_c:ident, $dir:expr, $($rest:tt)*) => {
        io_call!($mpi, $pmpi, c_int, $dir, $($rest)*);
        io_call!($mpi_c, $pmpi_c, MPI_Count, $dir, $($rest)*);
    };
}

// Explicit offsets.
io_both!(MPI_File_read_at, PMPI_File_read_at, MPI_File_read_at_c, PMPI_File_read_at_c, Dir::Read, offset, status);
io_both!(MPI_File_write_at, PMPI_File_write_at, MPI_File_write_at_c, PMPI_File_write_at_c, Dir::Write, offset, status);
io_both!(MPI_File_read_at_all, PMPI_File_read_at_all, MPI_File_read_at_all_c, PMPI_File_read_at_all_c, Dir::Read, offset, status);
io_both!(MPI_File_write_at_all, PMPI_File_write_at_all, MPI_File_write_at_all_c, PMPI_File_write_at_all_c, Dir::Write, offset, status);
io_both!(MPI_File_iread_at, PMPI_File_iread_at, MPI_File_iread_at_c, PMPI_File_iread_at_c, Dir::Read, offset, request);
io_both!(MPI_File_iwrite_at, PMPI_File_iwrite_at, MPI_File_iwrite_at_c, PMPI_File_iwrite_at_c, Dir::Write, offset, request);
io_both!(MPI_File_iread_at_all, PMPI_File_iread_at_all, MPI_File_iread_at_all_c, PMPI_File_iread_at_all_c, Dir::Read, offset, request);
io_both!(MPI_File_iwrite_at_all, PMPI_File_iwrite_at_all, MPI_File_iwrite_at_all_c, PMPI_File_iwrite_at_all_c, Dir::Write, offset, request);
io_both!(MPI_File_read_at_all_begin, PMPI_File_read_at_all_begin, MPI_File_read_at_all_begin_c, PMPI_File_read_at_all_begin_c, Dir::Read, offset, begin);
io_both!(MPI_File_write_at_all_begin, PMPI_File_write_at_all_begin, MPI_File_write_at_all_begin_c, PMPI_File_write_at_all_begin_c, Dir::Write, offset, begin);
io_end!(MPI_File_read_at_all_end, PMPI_File_read_at_all_end);
io_end!(MPI_File_write_at_all_end, PMPI_File_write_at_all_end);

// The individual file pointer.
io_both!(MPI_File_read, PMPI_File_read, MPI_File_read_c, PMPI_File_read_c, Dir::Read, At::Individual, status);
io_both!(MPI_File_write, PMPI_File_write, MPI_File_write_c, PMPI_File_write_c, Dir::Write, At::Individual, status);
io_both!(MPI_File_read_all, PMPI_File_read_all, MPI_File_read_all_c, PMPI_File_read_all_c, Dir::Read, At::Individual, status);
io_both!(MPI_File_write_all, PMPI_File_write_all, MPI_File_write_all_c, PMPI_File_write_all_c, Dir::Write, At::Individual, status);
io_both!(MPI_File_iread, PMPI_File_iread, MPI_File_iread_c, PMPI_File_iread_c, Dir::Read, At::Individual, request);
io_both!(MPI_File_iwrite, PMPI_File_iwrite, MPI_File_iwrite_c, PMPI_File_iwrite_c, Dir::Write, At::Individual, request);
io_both!(MPI_File_iread_all, PMPI_File_iread_all, MPI_File_iread_all_c, PMPI_File_iread_all_c, Dir::Read, At::Individual, request);
io_both!(MPI_File_iwrite_all, PMPI_File_iwrite_all, MPI_File_iwrite_all_c, PMPI_File_iwrite_all_c, Dir::Write, At::Individual, request);
io_both!(MPI_File_read_all_begin, PMPI_File_read_all_begin, MPI_File_read_all_begin_c, PMPI_File_read_all_begin_c, Dir::Read, At::Individual, begin);
io_both!(MPI_File_write_all_begin, PMPI_File_write_all_begin, MPI_File_write_all_begin_c, PMPI_File_write_all_begin_c, Dir::Write, At::Individual, begin);
io_end!(MPI_File_read_all_end, PMPI_File_read_all_end);
io_end!(MPI_File_write_all_end, PMPI_File_write_all_end);

// The shared file pointer.
io_both!(MPI_File_read_shared, PMPI_File_read_shared, MPI_File_read_shared_c, PMPI_File_read_shared_c, Dir::Read, At::Shared, status);
io_both!(MPI_File_write_shared, PMPI_File_write_shared, MPI_File_write_shared_c, PMPI_File_write_shared_c, Dir::Write, At::Shared, status);
io_both!(MPI_File_iread_shared, PMPI_File_iread_shared, MPI_File_iread_shared_c, PMPI_File_iread_shared_c, Dir::Read, At::Shared, request);
io_both!(MPI_File_iwrite_shared, PMPI_File_iwrite_shared, MPI_File_iwrite_shared_c, PMPI_File_iwrite_shared_c, Dir::Write, At::Shared, request);
io_both!(MPI_File_read_ordered, PMPI_File_read_ordered, MPI_File_read_ordered_c, PMPI_File_read_ordered_c, Dir::Read, At::Ordered, status);
io_both!(MPI_File_write_ordered, PMPI_File_write_ordered, MPI_File_write_ordered_c, PMPI_File_write_ordered_c, Dir::Write, At::Ordered, status);
io_both!(MPI_File_read_ordered_begin, PMPI_File_read_ordered_begin, MPI_File_read_ordered_begin_c, PMPI_File_read_ordered_begin_c, Dir::Read, At::Ordered, begin);
io_both!(MPI_File_write_ordered_begin, PMPI_File_write_ordered_begin, MPI_File_write_ordered_begin_c, PMPI_File_write_ordered_begin_c, Dir::Write, At::Ordered, begin);
io_end!(MPI_File_read_ordered_end, PMPI_File_read_ordered_end);
io_end!(MPI_File_write_ordered_end, PMPI_File_write_ordered_end);

crate::mpi_export! { MPI_File_get_type_extent_c, PMPI_File_get_type_extent_c, (fh: MPI_File, datatype: MPI_Datatype, extent: *mut MPI_Count) {
    file_call("MPI_File_get_type_extent_c", fh, move |rt| {
        let o = out_arg(extent, "extent")?;
        *o = crate::io::viewing::type_extent(rt, fh, datatype)? as MPI_Count;
        Ok(())
    })
}}
