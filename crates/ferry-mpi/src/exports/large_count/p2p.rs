//! Large-count point-to-point: the send modes, receives, persistent requests, matched
//! receives and the buffered-send buffer, each onto its int-count twin in `exports::p2p`.
//!
//! A send or receive of more than INT_MAX elements goes as one element of a contiguous type
//! of that many, made for the call and freed once it has started: messages carry bytes, so
//! the peer may use any count and type of the same signature, and the status counts bytes,
//! which `MPI_Get_count_c` divides by the caller's own type. A persistent request keeps its
//! type's handle for every start, so persistent inits still take at most INT_MAX, and so does
//! `MPI_Sendrecv_replace_c`, whose implementation stages the data in int-counted messages.

use std::os::raw::{c_int, c_void};

use super::{converted, narrow, report, Counted};
use crate::consts::*;
use crate::exports::p2p::*;

/// The sends and receives share one shape: (buffer, count, type, peer, tag, comm[, request]).
macro_rules! send_like {
    ($($mpi:ident, $pmpi:ident => $base:ident, $buf:ty;)*) => {$(
        crate::mpi_export! { $mpi, $pmpi, (buf: $buf, count: MPI_Count, dt: MPI_Datatype, peer: c_int, tag: c_int, comm: MPI_Comm) {
            let c = converted!(Counted::new(stringify!($mpi), comm, buf as *const c_void, count, dt));
            $base(buf, c.count, c.dt, peer, tag, comm)
        }}
    )*};
}
macro_rules! send_like_req {
    ($($mpi:ident, $pmpi:ident => $base:ident, $buf:ty;)*) => {$(
        crate::mpi_export! { $mpi, $pmpi, (buf: $buf, count: MPI_Count, dt: MPI_Datatype, peer: c_int, tag: c_int, comm: MPI_Comm, req: *mut MPI_Request) {
            let c = converted!(Counted::new(stringify!($mpi), comm, buf as *const c_void, count, dt));
            $base(buf, c.count, c.dt, peer, tag, comm, req)
        }}
    )*};
}
/// Persistent inits: the count narrowed (see the module's doc).
macro_rules! init_like {
    ($($mpi:ident, $pmpi:ident => $base:ident, $buf:ty;)*) => {$(
        crate::mpi_export! { $mpi, $pmpi, (buf: $buf, count: MPI_Count, dt: MPI_Datatype, peer: c_int, tag: c_int, comm: MPI_Comm, req: *mut MPI_Request) {
            let n = converted!(report(stringify!($mpi), comm, narrow(count, "count")));
            $base(buf, n, dt, peer, tag, comm, req)
        }}
    )*};
}

send_like! {
    MPI_Send_c, PMPI_Send_c => PMPI_Send, *const c_void;
    MPI_Ssend_c, PMPI_Ssend_c => PMPI_Ssend, *const c_void;
    MPI_Rsend_c, PMPI_Rsend_c => PMPI_Rsend, *const c_void;
    MPI_Bsend_c, PMPI_Bsend_c => PMPI_Bsend, *const c_void;
}
send_like_req! {
    MPI_Isend_c, PMPI_Isend_c => PMPI_Isend, *const c_void;
    MPI_Issend_c, PMPI_Issend_c => PMPI_Issend, *const c_void;
    MPI_Irsend_c, PMPI_Irsend_c => PMPI_Irsend, *const c_void;
    MPI_Ibsend_c, PMPI_Ibsend_c => PMPI_Ibsend, *const c_void;
    MPI_Irecv_c, PMPI_Irecv_c => PMPI_Irecv, *mut c_void;
}
init_like! {
    MPI_Send_init_c, PMPI_Send_init_c => PMPI_Send_init, *const c_void;
    MPI_Ssend_init_c, PMPI_Ssend_init_c => PMPI_Ssend_init, *const c_void;
    MPI_Rsend_init_c, PMPI_Rsend_init_c => PMPI_Rsend_init, *const c_void;
    MPI_Bsend_init_c, PMPI_Bsend_init_c => PMPI_Bsend_init, *const c_void;
    MPI_Recv_init_c, PMPI_Recv_init_c => PMPI_Recv_init, *mut c_void;
}

crate::mpi_export! { MPI_Recv_c, PMPI_Recv_c, (buf: *mut c_void, count: MPI_Count, dt: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, status: *mut MPI_Status) {
    let c = converted!(Counted::new("MPI_Recv_c", comm, buf, count, dt));
    PMPI_Recv(buf, c.count, c.dt, source, tag, comm, status)
}}

crate::mpi_export! { MPI_Sendrecv_c, PMPI_Sendrecv_c, (sbuf: *const c_void, scount: MPI_Count, sdt: MPI_Datatype, dest: c_int, stag: c_int,
        rbuf: *mut c_void, rcount: MPI_Count, rdt: MPI_Datatype, source: c_int, rtag: c_int, comm: MPI_Comm, status: *mut MPI_Status) {
    let s = converted!(Counted::new("MPI_Sendrecv_c", comm, sbuf, scount, sdt));
    let r = converted!(Counted::new("MPI_Sendrecv_c", comm, rbuf, rcount, rdt));
    PMPI_Sendrecv(sbuf, s.count, s.dt, dest, stag, rbuf, r.count, r.dt, source, rtag, comm, status)
}}

crate::mpi_export! { MPI_Sendrecv_replace_c, PMPI_Sendrecv_replace_c, (buf: *mut c_void, count: MPI_Count, dt: MPI_Datatype, dest: c_int, stag: c_int,
        source: c_int, rtag: c_int, comm: MPI_Comm, status: *mut MPI_Status) {
    let n = converted!(report("MPI_Sendrecv_replace_c", comm, narrow(count, "count")));
    PMPI_Sendrecv_replace(buf, n, dt, dest, stag, source, rtag, comm, status)
}}

crate::mpi_export! { MPI_Mrecv_c, PMPI_Mrecv_c, (buf: *mut c_void, count: MPI_Count, dt: MPI_Datatype, message: *mut MPI_Message, status: *mut MPI_Status) {
    let c = converted!(Counted::new("MPI_Mrecv_c", MPI_COMM_WORLD, buf, count, dt));
    PMPI_Mrecv(buf, c.count, c.dt, message, status)
}}

crate::mpi_export! { MPI_Imrecv_c, PMPI_Imrecv_c, (buf: *mut c_void, count: MPI_Count, dt: MPI_Datatype, message: *mut MPI_Message, req: *mut MPI_Request) {
    let c = converted!(Counted::new("MPI_Imrecv_c", MPI_COMM_WORLD, buf, count, dt));
    PMPI_Imrecv(buf, c.count, c.dt, message, req)
}}

crate::mpi_export! { MPI_Buffer_attach_c, PMPI_Buffer_attach_c, (buf: *mut c_void, size: MPI_Count) {
    let n = converted!(report("MPI_Buffer_attach_c", MPI_COMM_WORLD, narrow(size, "size")));
    PMPI_Buffer_attach(buf, n)
}}

crate::mpi_export! { MPI_Buffer_detach_c, PMPI_Buffer_detach_c, (buf: *mut c_void, size: *mut MPI_Count) {
    if size.is_null() {
        return crate::boundary::call("MPI_Buffer_detach_c", MPI_COMM_WORLD, |_| crate::error::err(MPI_ERR_ARG, "size is NULL"));
    }
    let mut n: c_int = 0;
    let rc = PMPI_Buffer_detach(buf, &mut n);
    if rc == MPI_SUCCESS {
        // SAFETY: checked non-NULL above; MPI's contract: it points to an MPI_Count.
        unsafe { *size = n as MPI_Count };
    }
    rc
}}

crate::mpi_export! { MPI_Isendrecv_c, PMPI_Isendrecv_c, (sbuf: *const c_void, scount: MPI_Count, sdt: MPI_Datatype, dest: c_int, stag: c_int,
        rbuf: *mut c_void, rcount: MPI_Count, rdt: MPI_Datatype, source: c_int, rtag: c_int, comm: MPI_Comm, req: *mut MPI_Request) {
    let s = converted!(Counted::new("MPI_Isendrecv_c", comm, sbuf, scount, sdt));
    let r = converted!(Counted::new("MPI_Isendrecv_c", comm, rbuf, rcount, rdt));
    crate::exports::p2p::PMPI_Isendrecv(sbuf, s.count, s.dt, dest, stag, rbuf, r.count, r.dt, source, rtag, comm, req)
}}

// Like MPI_Sendrecv_replace_c: the implementation stages the data in an int-counted message.
crate::mpi_export! { MPI_Isendrecv_replace_c, PMPI_Isendrecv_replace_c, (buf: *mut c_void, count: MPI_Count, dt: MPI_Datatype, dest: c_int, stag: c_int,
        source: c_int, rtag: c_int, comm: MPI_Comm, req: *mut MPI_Request) {
    let n = converted!(report("MPI_Isendrecv_replace_c", comm, narrow(count, "count")));
    crate::exports::p2p::PMPI_Isendrecv_replace(buf, n, dt, dest, stag, source, rtag, comm, req)
}}
