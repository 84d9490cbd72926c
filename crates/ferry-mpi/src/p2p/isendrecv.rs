//! MPI-4's non-blocking send-receive (`MPI_Isendrecv`, `MPI_Isendrecv_replace`): a receive
//! and a send started together under one request, complete when both are, whose status is
//! the receive's.

use std::os::raw::{c_int, c_void};

use crate::objects::comm::Ranks;
use crate::error::out_arg;
use crate::objects::request::{ApiReq, Body};
use crate::consts::*;
use crate::error::{err, MpiResult};
use super::{check_recv, check_send, recv_req, send_req, Mode};
use crate::objects::Runtime;

/// The one request of a receive (reported) and a send.
fn pair(comm: MPI_Comm, recv: ApiReq, send: ApiReq) -> ApiReq {
    ApiReq { body: Body::Multi(vec![recv, send], 0), comm, group: Ranks::None, unpack: None, keep: None }
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn isendrecv(
    rt: &mut Runtime, sbuf: *const c_void, scount: c_int, sdt: MPI_Datatype, dest: c_int, stag: c_int,
    rbuf: *mut c_void, rcount: c_int, rdt: MPI_Datatype, source: c_int, rtag: c_int, comm: MPI_Comm, req: *mut MPI_Request,
) -> MpiResult<()> {
    let o = out_arg(req, "request")?;
    // Every check first: an error starts neither half.
    check_send(rt, sbuf, scount, sdt, dest, stag, comm)?;
    check_recv(rt, rbuf, rcount, rdt, source, rtag, comm)?;
    let r = recv_req(rt, rbuf, rcount, rdt, source, rtag, comm)?;
    let s = send_req(rt, sbuf, scount, sdt, dest, stag, comm, Mode::Standard)?;
    *o = rt.add_req(pair(comm, r, s));
    Ok(())
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn isendrecv_replace(rt: &mut Runtime, buf: *mut c_void, count: c_int, dt: MPI_Datatype, dest: c_int, stag: c_int, source: c_int, rtag: c_int, comm: MPI_Comm, req: *mut MPI_Request) -> MpiResult<()> {
    let o = out_arg(req, "request")?;
    check_send(rt, buf, count, dt, dest, stag, comm)?;
    check_recv(rt, buf, count, dt, source, rtag, comm)?;
    let t = rt.datatype(dt)?;
    // The send goes from a packed copy, taken now: the receive may overwrite the buffer
    // before the send has read it.
    let mut packed = vec![0u8; t.size() * count as usize];
    // SAFETY: `buf` holds `count` elements of `t` (MPI's contract for the buffer).
    unsafe { t.pack(buf as *const u8, count as usize, &mut packed) };
    let r = recv_req(rt, buf, count, dt, source, rtag, comm)?;
    let mut s = send_req(rt, packed.as_ptr() as *const c_void, byte_count(packed.len())?, MPI_BYTE, dest, stag, comm, Mode::Standard)?;
    // Moving the vector keeps its heap buffer, which the send reads until it completes.
    if matches!(s.body, Body::Engine(_)) {
        s.keep = Some(packed);
    }
    *o = rt.add_req(pair(comm, r, s));
    Ok(())
}

/// `n` bytes of a packed message as an `MPI_BYTE` count, or `MPI_ERR_COUNT`.
fn byte_count(n: usize) -> MpiResult<c_int> {
    c_int::try_from(n).or_else(|_| err(MPI_ERR_COUNT, format!("{n} bytes exceed an int count")))
}
