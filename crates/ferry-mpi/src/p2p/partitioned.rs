//! MPI-4 partitioned communication (`MPI_Psend_init`, `MPI_Precv_init`, `MPI_Pready*`,
//! `MPI_Parrived`): persistent requests whose buffer is filled part by part. This first
//! version sends the whole buffer as one message once every partition of a run is marked
//! ready, so `MPI_Parrived` sees a partition only when the whole message has arrived.
//! The messages travel on the communicator's internal context, where no ordinary receive
//! can match them.

use std::os::raw::{c_int, c_void};

use ferry_core::engine::matching::Pattern;

use crate::objects::comm::Ranks;
use crate::error::out_arg;
pub use crate::objects::request::Partitioned;
use crate::objects::request::{ApiReq, Body, Outcome, Spec, State};
use crate::consts::*;
use crate::error::{err, MpiResult};
use super::{check_recv, check_send};
use crate::typed_buffer::{recv_target, send_data};
use crate::objects::Runtime;

/// Post the message of one run to the engine.
fn post(rt: &mut Runtime, s: Spec) -> MpiResult<ApiReq> {
    let c = rt.comm(s.comm)?;
    // The peer is a point-to-point rank: of the remote group on an intercommunicator.
    let (ctx, group) = (c.ctx + 1, c.peers().clone());
    let tag = crate::internal::partitioned_tag(s.tag);
    let done = |source| ApiReq::done(s.comm, source);
    if s.peer == MPI_PROC_NULL {
        return Ok(done(if s.send { MPI_ANY_SOURCE } else { MPI_PROC_NULL }));
    }
    let peer = group[s.peer as usize];
    if s.send {
        let data = send_data(rt, s.buf, s.total, s.dt)?;
        // SAFETY: the user's buffer (or the packed copy kept in the request) stays valid until
        // the request completes (MPI's contract for partitioned sends).
        return Ok(match unsafe { rt.engine.isend(peer, ctx, tag, data.ptr, data.len, false) } {
            Some(id) => ApiReq { body: Body::Engine(id), comm: s.comm, group: Ranks::None, unpack: None, keep: data.keep },
            None => done(MPI_ANY_SOURCE),
        });
    }
    let target = recv_target(rt, s.buf, s.total, s.dt)?;
    let pat = Pattern { ctx, src: Some(peer), tag: Some(tag) };
    // SAFETY: the receive buffer (or the unpack buffer in the request) stays valid until the
    // request completes.
    let id = unsafe { rt.engine.irecv(pat, target.ptr, target.cap) };
    Ok(ApiReq { body: Body::Engine(id), comm: s.comm, group: Ranks::Group(group), unpack: target.unpack, keep: None })
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn init(rt: &mut Runtime, send: bool, buf: *mut c_void, partitions: c_int, count: MPI_Count, dt: MPI_Datatype, peer: c_int, tag: c_int, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) -> MpiResult<()> {
    let o = out_arg(req, "request")?;
    rt.comm(comm)?;
    if partitions < 0 {
        return err(MPI_ERR_ARG, format!("partitions {partitions} is negative"));
    }
    if count < 0 {
        return err(MPI_ERR_COUNT, format!("count {count} is negative"));
    }
    let total = (partitions as MPI_Count).checked_mul(count).and_then(|t| c_int::try_from(t).ok());
    let Some(total) = total else {
        return err(MPI_ERR_COUNT, format!("{partitions} partitions of {count} elements exceed an int count"));
    };
    if send {
        check_send(rt, buf, total, dt, peer, tag, comm)?;
    } else {
        if peer == MPI_ANY_SOURCE {
            return err(MPI_ERR_RANK, "a partitioned receive needs a source rank, not MPI_ANY_SOURCE");
        }
        if tag == MPI_ANY_TAG {
            return err(MPI_ERR_TAG, "a partitioned receive needs a tag, not MPI_ANY_TAG");
        }
        check_recv(rt, buf, total, dt, peer, tag, comm)?;
    }
    crate::info::optional(rt, info)?;
    let spec = Spec { send, buf, total, dt, peer, tag, comm };
    let p = Partitioned { spec, partitions: partitions as usize, state: State::Inactive };
    *o = rt.add_req(ApiReq { body: Body::Partitioned(Box::new(p)), comm, group: Ranks::None, unpack: None, keep: None });
    Ok(())
}

fn partitioned_mut(rt: &mut Runtime, h: MPI_Request) -> MpiResult<&mut Partitioned> {
    if h == MPI_REQUEST_NULL {
        return err(MPI_ERR_REQUEST, "MPI_REQUEST_NULL is not a partitioned request");
    }
    match rt.reqs.get_mut(&h).map(|r| &mut r.body) {
        Some(Body::Partitioned(p)) => Ok(p),
        Some(_) => err(MPI_ERR_REQUEST, format!("request {h:#x} is not a partitioned request")),
        None => err(MPI_ERR_REQUEST, format!("invalid request handle {h:#x}")),
    }
}

/// `MPI_Start` of the inactive partitioned request `h`: a receive is posted at once, a send
/// once its partitions are ready.
pub fn start(rt: &mut Runtime, h: MPI_Request) -> MpiResult<()> {
    let p = partitioned_mut(rt, h)?;
    let (spec, n) = (p.spec, p.partitions);
    if spec.send && n > 0 {
        p.state = State::Filling(vec![false; n], n);
        return Ok(());
    }
    let a = post(rt, spec).map_err(|e| e.on_comm(spec.comm))?;
    partitioned_mut(rt, h)?.state = State::InFlight(Box::new(a));
    Ok(())
}

/// Finish the completed run of `h` (the Wait/Test family): its outcome, with the user's tag.
pub fn finish(rt: &mut Runtime, h: MPI_Request) -> Outcome {
    let Ok(p) = partitioned_mut(rt, h) else { return Outcome::empty() };
    let spec = p.spec;
    let Some(a) = p.take_in_flight() else { return Outcome::empty() };
    let mut o = rt.finish_api_req(*a);
    if !spec.send && spec.peer != MPI_PROC_NULL && !o.cancelled {
        o.tag = spec.tag;
    }
    o
}

/// `MPI_Pready` and its kin: mark `parts` of the send `h` ready; the last one sends.
pub(crate) fn ready(rt: &mut Runtime, parts: impl Iterator<Item = c_int>, h: MPI_Request) -> MpiResult<()> {
    let p = partitioned_mut(rt, h)?;
    if !p.spec.send {
        return err(MPI_ERR_REQUEST, "MPI_Pready applies to partitioned sends, not receives");
    }
    let n = p.partitions;
    let State::Filling(ready, left) = &mut p.state else {
        return err(MPI_ERR_REQUEST, format!("partitioned send {h:#x} is not started, or all its partitions are ready already"));
    };
    // Check them all first, so that an error marks nothing.
    let mut marked = ready.clone();
    for i in parts {
        if i < 0 || i as usize >= n {
            return err(MPI_ERR_ARG, format!("partition {i} is not in 0..{n}"));
        }
        if std::mem::replace(&mut marked[i as usize], true) {
            return err(MPI_ERR_ARG, format!("partition {i} is already marked ready"));
        }
    }
    *left = marked.iter().filter(|r| !**r).count();
    *ready = marked;
    if *left > 0 {
        return Ok(());
    }
    let spec = p.spec;
    let a = post(rt, spec)?;
    partitioned_mut(rt, h)?.state = State::InFlight(Box::new(a));
    Ok(())
}

pub(crate) fn parrived(rt: &mut Runtime, h: MPI_Request, partition: c_int, flag: *mut c_int) -> MpiResult<()> {
    let flag = out_arg(flag, "flag")?;
    let p = partitioned_mut(rt, h)?;
    if p.spec.send {
        return err(MPI_ERR_REQUEST, "MPI_Parrived applies to partitioned receives, not sends");
    }
    if partition < 0 || partition as usize >= p.partitions {
        return err(MPI_ERR_ARG, format!("partition {partition} is not in 0..{}", p.partitions));
    }
    if p.is_inactive() {
        // Nothing in flight: what the last run received is all there.
        *flag = 1;
        return Ok(());
    }
    rt.progress_once()?;
    *flag = rt.req_done(h) as c_int;
    Ok(())
}

/// The communicator of request `h`, for the error handler (`MPI_COMM_WORLD` if none).
pub(crate) fn comm_of(h: MPI_Request) -> MPI_Comm {
    // Only a look: `call` reports a runtime held elsewhere (a user reduction function).
    crate::objects::threads::Locked::try_lock().and_then(|rt| rt.reqs.get(&h).map(|r| r.comm)).unwrap_or(MPI_COMM_WORLD)
}
