//! Point-to-point: the send modes, receives, probes, cancel, and buffered-send buffers; in
//! `p2p/`, the requests built on them: persistent (and MPI_Start), partitioned, and MPI-4's
//! non-blocking send-receive.

pub(crate) mod isendrecv;
pub(crate) mod partitioned;
pub(crate) mod persistent;

use std::os::raw::{c_int, c_void};
use crate::objects::comm::Ranks;
use crate::objects::threads::Locked;

use ferry_core::engine::matching::Pattern;

use crate::objects::Comm;
use crate::error::out_arg;
use crate::completion::{check, is_done_recv, status_bytes, write_status, ApiReq, Body, Outcome};
use crate::consts::*;
use crate::error::{err, MpiError, MpiResult};
use crate::objects::runtime::{ApiMessage, Runtime};
use crate::typed_buffer::{recv_target, send_data, SendData};

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Standard,
    Synchronous,
    Ready,
    Buffered,
}

fn check_count(count: c_int) -> MpiResult<()> {
    if count < 0 {
        return err(MPI_ERR_COUNT, format!("count {count} is negative"));
    }
    Ok(())
}

fn check_dest(c: &Comm, r: c_int) -> MpiResult<()> {
    // On an intercommunicator, ranks name members of the remote group.
    if r == MPI_PROC_NULL || (0..c.peer_size()).contains(&r) {
        Ok(())
    } else {
        err(MPI_ERR_RANK, format!("invalid rank {r} (communicator size {})", c.peer_size()))
    }
}

fn check_source(c: &Comm, r: c_int) -> MpiResult<()> {
    if r == MPI_ANY_SOURCE {
        Ok(())
    } else {
        check_dest(c, r)
    }
}

fn check_send_tag(tag: c_int) -> MpiResult<()> {
    if tag < 0 {
        return err(MPI_ERR_TAG, format!("invalid send tag {tag} (tags are 0 ..= {})", i32::MAX));
    }
    Ok(())
}

fn check_recv_tag(tag: c_int) -> MpiResult<()> {
    if tag < 0 && tag != MPI_ANY_TAG {
        return err(MPI_ERR_TAG, format!("invalid receive tag {tag}"));
    }
    Ok(())
}

fn check_buf(buf: *const c_void, count: c_int, dt: MPI_Datatype) -> MpiResult<()> {
    // MPI_BOTTOM (NULL) is legal with derived types that hold absolute addresses.
    if buf.is_null() && count > 0 && Runtime::is_predefined_type(dt) {
        return err(MPI_ERR_BUFFER, format!("buffer is NULL with count {count}"));
    }
    Ok(())
}

/// Start a send in any mode; returns the request handle.
pub fn start_send(rt: &mut Runtime, buf: *const c_void, count: c_int, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, mode: Mode) -> MpiResult<i32> {
    Ok(match post_send(rt, buf, count, dt, dest, tag, comm, mode)? {
        None => crate::completion::DONE_SEND,
        Some((id, keep)) => rt.add_req(ApiReq { body: Body::Engine(id), comm, group: Ranks::None, unpack: None, keep }),
    })
}

/// The argument checks of every send (also of MPI_Send_init, before anything is sent).
#[allow(clippy::too_many_arguments)]
pub fn check_send(rt: &mut Runtime, buf: *const c_void, count: c_int, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) -> MpiResult<()> {
    let c = rt.comm(comm)?;
    check_count(count)?;
    check_dest(c, dest)?;
    check_send_tag(tag)?;
    check_buf(buf, count, dt)?;
    rt.type_shape(dt).map(|_| ())
}

/// The argument checks of every receive (also of MPI_Recv_init).
pub fn check_recv(rt: &mut Runtime, buf: *const c_void, count: c_int, dt: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm) -> MpiResult<()> {
    let c = rt.comm(comm)?;
    check_count(count)?;
    check_source(c, source)?;
    check_recv_tag(tag)?;
    check_buf(buf, count, dt)?;
    rt.type_shape(dt).map(|_| ())
}

/// Start a send in any mode; returns the request, not yet registered under a handle.
#[allow(clippy::too_many_arguments)]
pub fn send_req(rt: &mut Runtime, buf: *const c_void, count: c_int, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, mode: Mode) -> MpiResult<ApiReq> {
    Ok(match post_send(rt, buf, count, dt, dest, tag, comm, mode)? {
        None => ApiReq::done(comm, MPI_ANY_SOURCE),
        Some((id, keep)) => ApiReq { body: Body::Engine(id), comm, group: Ranks::None, unpack: None, keep },
    })
}

/// Start a send in any mode: `None` when it is complete already (copied out by its route,
/// buffered, or to `MPI_PROC_NULL`), else the engine's request and the packed copy it reads.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn post_send(rt: &mut Runtime, buf: *const c_void, count: c_int, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, mode: Mode) -> MpiResult<Option<(u64, Option<Vec<u8>>)>> {
    // The checks of `check_send`, with one lookup of the communicator; `send_data` checks
    // the datatype.
    let c = rt.comm(comm)?;
    check_count(count)?;
    check_dest(c, dest)?;
    check_send_tag(tag)?;
    check_buf(buf, count, dt)?;
    let (ctx, to) = (c.ctx, if dest == MPI_PROC_NULL { 0 } else { c.world(dest) });
    let data = send_data(rt, buf, count, dt)?;
    if dest == MPI_PROC_NULL {
        return Ok(None);
    }
    if mode == Mode::Buffered {
        return post_bsend(rt, data, to, ctx, tag).map(|()| None);
    }
    // SAFETY: the user buffer (or `keep`) stays valid until the request completes.
    // `None`: copied out by the route already, nothing to wait for.
    Ok(unsafe { rt.engine.isend(to, ctx, tag, data.ptr, data.len, mode == Mode::Synchronous) }.map(|id| (id, data.keep)))
}

/// A buffered send: a copy in the attached buffer's reckoning goes out, and the send is
/// complete. Apart from `post_send`, whose common path it would weigh down.
#[cold]
#[inline(never)]
fn post_bsend(rt: &mut Runtime, data: SendData, to: u32, ctx: u32, tag: c_int) -> MpiResult<()> {
    // Let finished buffered sends return their space before judging the room left.
    rt.progress_once()?;
    reap_bsends(rt);
    let need = data.len + MPI_BSEND_OVERHEAD as usize;
    let used: usize = rt.bsend.pending.iter().map(|p| p.1).sum();
    if rt.bsend.size < used + need {
        return err(MPI_ERR_BUFFER, format!("buffered send of {} bytes does not fit: attached buffer {} bytes, {} in use", data.len, rt.bsend.size, used));
    }
    let copy = match data.keep {
        Some(v) => v,
        None if data.len == 0 => Vec::new(),
        // SAFETY: the send buffer holds `len` bytes.
        None => unsafe { std::slice::from_raw_parts(data.ptr, data.len) }.to_vec(),
    };
    // SAFETY: `copy` lives in the pending list until the engine request completes.
    if let Some(id) = unsafe { rt.engine.isend(to, ctx, tag, copy.as_ptr(), copy.len(), false) } {
        rt.bsend.pending.push((id, need, copy));
    }
    Ok(())
}

pub fn start_recv(rt: &mut Runtime, buf: *mut c_void, count: c_int, dt: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm) -> MpiResult<i32> {
    Ok(match begin_recv(rt, buf, count, dt, source, tag, comm)? {
        Begun::Done(o) => rt.add_done_recv(o, comm),
        Begun::InFlight(r) => rt.add_req(r),
    })
}

/// Start a receive; returns the request, not yet registered under a handle.
pub fn recv_req(rt: &mut Runtime, buf: *mut c_void, count: c_int, dt: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm) -> MpiResult<ApiReq> {
    Ok(match begin_recv(rt, buf, count, dt, source, tag, comm)? {
        Begun::Done(o) => ApiReq { body: Body::Finished(o), comm, group: Ranks::None, unpack: None, keep: None },
        Begun::InFlight(r) => r,
    })
}

/// A receive just started.
enum Begun {
    /// Its message was here: received, with this outcome.
    Done(Outcome),
    /// In the engine's hands (or complete from the start with `MPI_PROC_NULL`).
    InFlight(ApiReq),
}

#[inline(always)]
fn begin_recv(rt: &mut Runtime, buf: *mut c_void, count: c_int, dt: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm) -> MpiResult<Begun> {
    if source == MPI_ANY_SOURCE && crate::objects::fault::recovery() {
        rt.any_source_allowed(comm, MPIX_ERR_PROC_FAILED_PENDING)?;
    }
    // The checks of `check_recv`, with one lookup of the communicator; `recv_target` checks
    // the datatype.
    let c = rt.comm(comm)?;
    check_count(count)?;
    check_source(c, source)?;
    check_recv_tag(tag)?;
    check_buf(buf, count, dt)?;
    let pat = Pattern { ctx: c.ctx, src: (source >= 0).then(|| c.world(source)), tag: (tag != MPI_ANY_TAG).then_some(tag) };
    let target = recv_target(rt, buf, count, dt)?;
    if source == MPI_PROC_NULL {
        return Ok(Begun::InFlight(ApiReq::done(comm, MPI_PROC_NULL)));
    }
    if target.unpack.is_none() {
        // SAFETY: the receive buffer stays valid until the request completes.
        return Ok(match unsafe { rt.engine.irecv_now(pat, target.ptr, target.cap) } {
            // It was here already: the request is complete from the start. A receive from
            // one source names it as the program did.
            Ok(st) if source >= 0 => Begun::Done(crate::completion::outcome_of_rank(source, &st)),
            Ok(st) => Begun::Done(crate::completion::outcome_of(rt.comms.get(&comm).expect("checked above").sources(), &st)),
            Err(id) => Begun::InFlight(ApiReq { body: Body::Engine(id), comm, group: rt.comms.get(&comm).expect("checked above").ranks(), unpack: None, keep: None }),
        });
    }
    let group = rt.comms.get(&comm).expect("checked above").ranks();
    // SAFETY: the unpack buffer inside the request stays valid until the request completes.
    let id = unsafe { rt.engine.irecv(pat, target.ptr, target.cap) };
    Ok(Begun::InFlight(ApiReq { body: Body::Engine(id), comm, group, unpack: target.unpack, keep: None }))
}

/// Forget buffered sends that have completed.
pub fn reap_bsends(rt: &mut Runtime) {
    let engine = &mut rt.engine;
    rt.bsend.pending.retain(|(id, _, _)| {
        if engine.is_done(*id) {
            let _ = engine.take(*id);
            false
        } else {
            true
        }
    });
}

/// The ids of the buffered sends in flight, for a wait on all of them.
pub fn bsend_ids(rt: &Runtime) -> Vec<u64> {
    rt.bsend.pending.iter().map(|p| p.0).collect()
}

pub(crate) fn send(rt: &mut Locked, buf: *const c_void, count: c_int, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, mode: Mode) -> MpiResult<()> {
    let Some((id, keep)) = post_send(rt, buf, count, dt, dest, tag, comm, mode)? else {
        // Copied out by the route already: nothing to wait for.
        return Ok(());
    };
    let o = rt.wait_unregistered(ApiReq { body: Body::Engine(id), comm, group: Ranks::None, unpack: None, keep })?;
    check(o, comm).map(|_| ())
}

pub(crate) fn isend(rt: &mut Runtime, buf: *const c_void, count: c_int, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, mode: Mode, req: *mut MPI_Request) -> MpiResult<()> {
    let o = out_arg(req, "request")?;
    *o = start_send(rt, buf, count, dt, dest, tag, comm, mode)?;
    Ok(())
}

pub(crate) fn recv(rt: &mut Locked, buf: *mut c_void, count: c_int, dt: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, status: *mut MPI_Status) -> MpiResult<()> {
    if source == MPI_ANY_SOURCE && crate::objects::fault::recovery() {
        rt.any_source_allowed(comm, MPIX_ERR_PROC_FAILED)?;
    }
    // The same checks, in the same order, as a non-blocking receive; no request record.
    let c = rt.comm(comm)?;
    check_count(count)?;
    check_source(c, source)?;
    check_recv_tag(tag)?;
    check_buf(buf, count, dt)?;
    let pat = Pattern { ctx: c.ctx, src: (source >= 0).then(|| c.world(source)), tag: (tag != MPI_ANY_TAG).then_some(tag) };
    // With MPI_THREAD_MULTIPLE another thread may free the communicator while this one
    // waits: keep its peer group for the status (not otherwise: a reference count costs).
    let kept = (rt.thread_level == MPI_THREAD_MULTIPLE).then(|| c.ranks());
    let target = recv_target(rt, buf, count, dt)?;
    if source == MPI_PROC_NULL {
        write_status(status, &Outcome { source: MPI_PROC_NULL, tag: MPI_ANY_TAG, ..Outcome::empty() }, false);
        return Ok(());
    }
    let id = if target.unpack.is_none() {
        // Without MPI_THREAD_MULTIPLE the receive may first watch its source's ring with the
        // lock held (other threads would wait for it).
        // SAFETY: the receive buffer outlives the wait below.
        let now = if kept.is_none() { unsafe { rt.engine.recv_now_or_soon(pat, target.ptr, target.cap) } } else { unsafe { rt.engine.irecv_now(pat, target.ptr, target.cap) } };
        match now {
            Ok(st) => {
                // It was here already: received, nothing to wait for. A receive from one
                // source names it as the program did.
                let rt: &mut Runtime = rt;
                let o = if source >= 0 {
                    crate::completion::outcome_of_rank(source, &st)
                } else {
                    crate::completion::outcome_of(rt.comms.get(&comm).expect("checked above, and the lock was kept").sources(), &st)
                };
                write_status(status, &o, o.error != MPI_SUCCESS);
                return check(o, comm).map(|_| ());
            }
            Err(id) => id,
        }
    } else {
        // SAFETY: the unpack buffer in `target` outlives the wait below.
        unsafe { rt.engine.irecv(pat, target.ptr, target.cap) }
    };
    rt.wait_until(|e| e.is_done(id)).map_err(|e| MpiError::from(e).on_comm(comm))?;
    rt.reap_orphans();
    let rt: &mut Runtime = rt;
    let group = match &kept {
        Some(g) => g.view(),
        None => rt.comms.get(&comm).expect("no other thread frees it below MPI_THREAD_MULTIPLE").sources(),
    };
    let mut o = crate::completion::engine_outcome(&mut rt.engine, id, target.unpack, group);
    if o.error == MPIX_ERR_PROC_FAILED_PENDING {
        // A blocking receive from any source reports the failure itself (nothing stays pending).
        o.error = MPIX_ERR_PROC_FAILED;
    }
    // The status tells what arrived, also when it was truncated.
    write_status(status, &o, o.error != MPI_SUCCESS);
    check(o, comm).map(|_| ())
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn sendrecv(
    rt: &mut Locked, sbuf: *const c_void, scount: c_int, sdt: MPI_Datatype, dest: c_int, stag: c_int,
    rbuf: *mut c_void, rcount: c_int, rdt: MPI_Datatype, source: c_int, rtag: c_int, comm: MPI_Comm, status: *mut MPI_Status,
) -> MpiResult<()> {
    let r = start_recv(rt, rbuf, rcount, rdt, source, rtag, comm)?;
    let s = start_send(rt, sbuf, scount, sdt, dest, stag, comm, Mode::Standard)?;
    rt.wait_req(s)?;
    let (o, comm) = rt.wait_raw(r)?;
    write_status(status, &o, o.error != MPI_SUCCESS);
    check(o, comm).map(|_| ())
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn sendrecv_replace(rt: &mut Locked, buf: *mut c_void, count: c_int, dt: MPI_Datatype, dest: c_int, stag: c_int, source: c_int, rtag: c_int, comm: MPI_Comm, status: *mut MPI_Status) -> MpiResult<()> {
    check_count(count)?;
    check_buf(buf, count, dt)?;
    let t = rt.datatype(dt)?;
    let n = t.size() * count as usize;
    // Receive into a packed buffer first: the send still reads the user's buffer.
    let mut packed_in = vec![0u8; n];
    let mut packed_out = vec![0u8; n];
    // SAFETY: `buf` holds `count` elements of `t`.
    unsafe { t.pack(buf as *const u8, count as usize, &mut packed_out) };
    let r = start_recv(rt, packed_in.as_mut_ptr() as *mut c_void, n as c_int, MPI_BYTE, source, rtag, comm)?;
    let s = start_send(rt, packed_out.as_ptr() as *const c_void, n as c_int, MPI_BYTE, dest, stag, comm, Mode::Standard)?;
    rt.wait_req(s)?;
    let (o, comm) = rt.wait_raw(r)?;
    // SAFETY: as above; unpack only what arrived.
    unsafe { t.unpack(&packed_in[..o.bytes], buf as *mut u8, count as usize) };
    write_status(status, &o, o.error != MPI_SUCCESS);
    check(o, comm).map(|_| ())
}

fn pattern(rt: &Runtime, source: c_int, tag: c_int, comm: MPI_Comm) -> MpiResult<(Pattern, std::sync::Arc<Vec<u32>>)> {
    let c = rt.comm(comm)?;
    check_source(c, source)?;
    check_recv_tag(tag)?;
    Ok((Pattern { ctx: c.ctx, src: (source >= 0).then(|| c.world(source)), tag: (tag != MPI_ANY_TAG).then_some(tag) }, c.peers().clone()))
}

fn probe_outcome(group: &[u32], st: &ferry_core::engine::Status) -> Outcome {
    Outcome { source: crate::objects::comm::rank_in(group, st.source), tag: st.tag, bytes: st.bytes, cancelled: false, error: MPI_SUCCESS, lost: None }
}

fn proc_null_status(status: *mut MPI_Status) {
    write_status(status, &Outcome { source: MPI_PROC_NULL, ..Outcome::empty() }, false);
}

pub(crate) fn iprobe(rt: &mut Runtime, source: c_int, tag: c_int, comm: MPI_Comm, flag: *mut c_int, status: *mut MPI_Status) -> MpiResult<()> {
    let flag = out_arg(flag, "flag")?;
    let (pat, group) = pattern(rt, source, tag, comm)?;
    if source == MPI_PROC_NULL {
        *flag = 1;
        proc_null_status(status);
        return Ok(());
    }
    rt.progress_once()?;
    match rt.engine.peek(&pat) {
        Some(st) => {
            *flag = 1;
            write_status(status, &probe_outcome(&group, &st), false);
        }
        None => *flag = 0,
    }
    Ok(())
}

pub(crate) fn probe(rt: &mut Locked, source: c_int, tag: c_int, comm: MPI_Comm, status: *mut MPI_Status) -> MpiResult<()> {
    let (pat, group) = pattern(rt, source, tag, comm)?;
    if source == MPI_PROC_NULL {
        proc_null_status(status);
        return Ok(());
    }
    let mut found = None;
    rt.wait_until(|e| {
        found = e.peek(&pat);
        found.is_some()
    })?;
    write_status(status, &probe_outcome(&group, &found.expect("wait ended on a match")), false);
    Ok(())
}

pub(crate) fn improbe(rt: &mut Locked, source: c_int, tag: c_int, comm: MPI_Comm, flag: *mut c_int, message: *mut MPI_Message, status: *mut MPI_Status, block: bool) -> MpiResult<()> {
    let (pat, group) = pattern(rt, source, tag, comm)?;
    let m = out_arg(message, "message")?;
    if source == MPI_PROC_NULL {
        if !flag.is_null() {
            *out_arg(flag, "flag")? = 1;
        }
        *m = MPI_MESSAGE_NO_PROC;
        proc_null_status(status);
        return Ok(());
    }
    if block {
        rt.wait_until(|e| e.peek(&pat).is_some())?;
    } else {
        rt.progress_once()?;
    }
    match rt.engine.improbe(&pat) {
        Some((mid, st)) => {
            if !flag.is_null() {
                *out_arg(flag, "flag")? = 1;
            }
            *m = rt.add_msg(ApiMessage { mid, comm });
            write_status(status, &probe_outcome(&group, &st), false);
        }
        None => *out_arg(flag, "flag")? = 0,
    }
    Ok(())
}

pub(crate) fn imrecv(rt: &mut Runtime, buf: *mut c_void, count: c_int, dt: MPI_Datatype, message: *mut MPI_Message) -> MpiResult<i32> {
    let m = out_arg(message, "message")?;
    check_count(count)?;
    check_buf(buf, count, dt)?;
    if *m == MPI_MESSAGE_NO_PROC {
        *m = MPI_MESSAGE_NULL;
        return Ok(rt.add_req(ApiReq::done(MPI_COMM_WORLD, MPI_PROC_NULL)));
    }
    let Some(msg) = rt.msgs.remove(m) else { return err(MPI_ERR_REQUEST, format!("invalid message handle {:#x}", *m)) };
    *m = MPI_MESSAGE_NULL;
    let group = rt.comm(msg.comm).map_or(Ranks::None, |c| c.ranks());
    let target = recv_target(rt, buf, count, dt)?;
    // SAFETY: as for irecv.
    let id = unsafe { rt.engine.imrecv(msg.mid, target.ptr, target.cap) };
    Ok(rt.add_req(ApiReq { body: Body::Engine(id), comm: msg.comm, group, unpack: target.unpack, keep: None }))
}

pub(crate) fn cancel(rt: &mut Runtime, req: *mut MPI_Request) -> MpiResult<()> {
    let h = *out_arg(req, "request")?;
    if is_done_recv(h) {
        // Complete already: the cancel fails, and the Wait reports the message received.
        return rt.check_req(h);
    }
    let Some(r) = rt.reqs.get_mut(&h) else { return err(MPI_ERR_REQUEST, format!("invalid request handle {h:#x}")) };
    if r.inactive() {
        return err(MPI_ERR_REQUEST, "an inactive persistent request cannot be cancelled; start it first");
    }
    if matches!(r.body, Body::Generalized(_)) {
        return crate::generalized::cancel(rt, h);
    }
    let r = r.operation_mut();
    if matches!(r.body, Body::Coll(_)) {
        return err(MPI_ERR_REQUEST, "a non-blocking collective cannot be cancelled");
    }
    // Only receives can be cancelled; cancelling a send is allowed to fail, and does.
    let parts = match &r.body {
        Body::Multi(parts, _) => parts.iter().collect(),
        _ => vec![&*r],
    };
    let receives: Vec<u64> = parts.iter().filter(|p| !matches!(p.group, Ranks::None)).filter_map(|p| match p.body { Body::Engine(id) => Some(id), _ => None }).collect();
    for id in receives {
        rt.engine.cancel(id);
    }
    Ok(())
}

pub(crate) fn buffer_attach(rt: &mut Runtime, buf: *mut c_void, size: c_int) -> MpiResult<()> {
    if size < 0 {
        return err(MPI_ERR_ARG, format!("buffer size {size} is negative"));
    }
    if rt.bsend.size > 0 {
        return err(MPI_ERR_BUFFER, "a buffer is already attached");
    }
    rt.bsend.addr = buf as usize;
    rt.bsend.size = size as usize;
    Ok(())
}

pub(crate) fn buffer_detach(rt: &mut Locked, buf: *mut c_void, size: *mut c_int) -> MpiResult<()> {
    // Until none is left: other threads may buffer more sends while this one waits.
    loop {
        reap_bsends(rt);
        let ids = bsend_ids(rt);
        if ids.is_empty() {
            break;
        }
        rt.wait_until(|e| ids.iter().all(|id| e.is_done(*id)))?;
    }
    let b = out_arg(buf as *mut *mut c_void, "buffer")?;
    let s = out_arg(size, "size")?;
    *b = rt.bsend.addr as *mut c_void;
    *s = rt.bsend.size as c_int;
    rt.bsend.addr = 0;
    rt.bsend.size = 0;
    Ok(())
}

// ----- exports ---------------------------------------------------------------------------

/// Elements of `dt` in a status's byte count (MPI_Get_count).
pub fn get_count(rt: &mut Runtime, status: *const MPI_Status, dt: MPI_Datatype) -> MpiResult<c_int> {
    // SAFETY: MPI passes a status filled by a completion call.
    let st = unsafe { status.as_ref() }.ok_or_else(|| MpiError::new(MPI_ERR_ARG, "status is NULL"))?;
    let t = rt.any_datatype(dt)?;
    let bytes = status_bytes(st);
    Ok(match t.count_of(bytes) {
        Some(n) if n <= c_int::MAX as usize => n as c_int,
        _ => MPI_UNDEFINED,
    })
}

pub fn get_elements(rt: &mut Runtime, status: *const MPI_Status, dt: MPI_Datatype) -> MpiResult<Option<usize>> {
    // SAFETY: as in get_count.
    let st = unsafe { status.as_ref() }.ok_or_else(|| MpiError::new(MPI_ERR_ARG, "status is NULL"))?;
    let t = rt.any_datatype(dt)?;
    Ok(t.elements(status_bytes(st)))
}
