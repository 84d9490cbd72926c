//! Persistent requests: MPI_Send_init and its kin check their arguments once and keep how to
//! start the operation; MPI_Start runs it again and again. The Wait/Test family
//! (`completion`) completes each run and leaves the request inactive, ready for the next.
//! MPI_Start also starts the persistent collectives (`coll/persistent.rs`), which keep their
//! start as a closure in the request, and partitioned requests (`partitioned.rs`).

use std::os::raw::{c_int, c_void};

use crate::error::out_arg;
use crate::objects::request::{ApiReq, Body, Starter};
use crate::consts::*;
use crate::error::{err, MpiResult};
use super::{check_recv, check_send, recv_req, send_req, Mode};
use crate::objects::Runtime;
use crate::objects::threads::Locked;

/// Register an inactive persistent request on `comm` and write its handle.
fn register(rt: &mut Runtime, comm: MPI_Comm, start: Starter, req: *mut MPI_Request) -> MpiResult<()> {
    *out_arg(req, "request")? = rt.add_persistent(comm, start);
    Ok(())
}

/// The derived datatype a persistent request was made with, which the request holds: the
/// program may free the handle after the init call, and the type stays usable by the
/// operations that use it (MPI_Type_free). Predefined types need no holding.
fn held(rt: &Runtime, dt: MPI_Datatype) -> Option<ferry_data::datatype::Datatype> {
    rt.types.get(&dt).map(|(t, _)| t.clone())
}

/// Run `start` with a handle for the held type: an entry of its own in the type table for the
/// call, removed after it (operations in flight hold their own reference to the type map).
fn with_held<R>(rt: &mut Runtime, dt: MPI_Datatype, held: &Option<ferry_data::datatype::Datatype>, start: impl FnOnce(&mut Runtime, MPI_Datatype) -> MpiResult<R>) -> MpiResult<R> {
    let Some(t) = held else { return start(rt, dt) };
    let h = rt.types.add((t.clone(), true));
    let started = start(rt, h);
    rt.types.remove(&h);
    started
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn send_init(rt: &mut Runtime, buf: *const c_void, count: c_int, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, mode: Mode, req: *mut MPI_Request) -> MpiResult<()> {
    out_arg(req, "request")?;
    check_send(rt, buf, count, dt, dest, tag, comm)?;
    let t = held(rt, dt);
    register(rt, comm, Box::new(move |rt| with_held(rt, dt, &t, |rt, dt| send_req(rt, buf, count, dt, dest, tag, comm, mode))), req)
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn recv_init(rt: &mut Runtime, buf: *mut c_void, count: c_int, dt: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, req: *mut MPI_Request) -> MpiResult<()> {
    out_arg(req, "request")?;
    check_recv(rt, buf, count, dt, source, tag, comm)?;
    let t = held(rt, dt);
    register(rt, comm, Box::new(move |rt| with_held(rt, dt, &t, |rt, dt| recv_req(rt, buf, count, dt, source, tag, comm))), req)
}

/// Check that `h` is a persistent request MPI_Start may start.
fn startable(rt: &Runtime, h: MPI_Request) -> MpiResult<()> {
    if h == MPI_REQUEST_NULL {
        return err(MPI_ERR_REQUEST, "MPI_REQUEST_NULL cannot be started");
    }
    if crate::completion::is_done_recv(h) {
        rt.check_req(h)?;
        return err(MPI_ERR_REQUEST, format!("request {h:#x} is not persistent"));
    }
    match rt.reqs.get(&h).map(|r| &r.body) {
        None => err(MPI_ERR_REQUEST, format!("invalid request handle {h:#x}")),
        Some(Body::Persistent(p)) if p.active.is_some() => err(MPI_ERR_REQUEST, format!("request {h:#x} is already active; complete it before starting it again")),
        Some(Body::Persistent(_)) => Ok(()),
        Some(Body::Partitioned(p)) if !p.is_inactive() => err(MPI_ERR_REQUEST, format!("partitioned request {h:#x} is already active; complete it before starting it again")),
        Some(Body::Partitioned(_)) => Ok(()),
        Some(_) => err(MPI_ERR_REQUEST, format!("request {h:#x} is not persistent")),
    }
}

fn start_one(rt: &mut Locked, h: MPI_Request) -> MpiResult<()> {
    if matches!(rt.reqs[&h].body, Body::Partitioned(_)) {
        return super::partitioned::start(rt, h);
    }
    // The request leaves its slot while its start runs (which needs the whole runtime); a
    // placeholder keeps the slot, and so the handle, until it is back.
    let slot = rt.reqs.get_mut(&h).expect("checked by startable");
    let comm = slot.comm;
    let mut r = std::mem::replace(slot, ApiReq::done(comm, MPI_ANY_SOURCE));
    let Body::Persistent(p) = &mut r.body else { unreachable!("checked by startable") };
    let run = (p.start)(rt);
    let result = match run {
        Ok(a) => {
            if let Body::Persistent(p) = &mut r.body {
                p.active = Some(Box::new(a));
            }
            Ok(())
        }
        Err(e) => Err(e.on_comm(comm)),
    };
    *rt.reqs.get_mut(&h).expect("the placeholder keeps the slot") = r;
    result
}

pub(crate) fn start(rt: &mut Locked, req: *mut MPI_Request) -> MpiResult<()> {
    let h = *out_arg(req, "request")?;
    startable(rt, h)?;
    start_one(rt, h)
}

pub(crate) fn startall(rt: &mut Locked, count: c_int, reqs: *mut MPI_Request) -> MpiResult<()> {
    if count < 0 {
        return err(MPI_ERR_COUNT, format!("negative count {count}"));
    }
    if count == 0 {
        return Ok(());
    }
    if reqs.is_null() {
        return err(MPI_ERR_REQUEST, "array of requests is NULL");
    }
    // SAFETY: MPI passes an array of `count` request handles.
    let hs = unsafe { std::slice::from_raw_parts(reqs, count as usize) };
    // Check them all first, so that an error starts nothing.
    for (i, &h) in hs.iter().enumerate() {
        startable(rt, h)?;
        if hs[..i].contains(&h) {
            return err(MPI_ERR_REQUEST, format!("request {h:#x} appears twice in the array"));
        }
    }
    // A start that fails (on this rank only, perhaps) does not keep the others from starting:
    // a persistent collective counts in its communicator's sequence when it starts, and the
    // other ranks count theirs. The first error is the call's.
    let mut first = Ok(());
    for &h in hs {
        let r = start_one(rt, h);
        if first.is_ok() {
            first = r;
        }
    }
    first
}
