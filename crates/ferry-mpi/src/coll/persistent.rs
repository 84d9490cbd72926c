//! MPI-4 persistent collectives (`MPI_Bcast_init` and kin): the init call checks what it can
//! without talking to anyone and keeps the call; every MPI_Start makes the same call as the
//! non-blocking collective, so each run is a fresh schedule, under the number that its init
//! call took in the communicator's sequence of persistent collectives. The request table entry is
//! the persistent kind that MPI_Start starts (`p2p/persistent.rs`).

use std::os::raw::{c_int, c_void};

use ferry_coll::Collective;

use super::reductions::reduce;
use super::{check_count, in_place};
use crate::error::out_arg;
use crate::consts::*;
use crate::error::{err, MpiResult};
use crate::objects::request::Starter;
use crate::objects::Runtime;
use crate::objects::threads::Locked;

/// What every init checks: the communicator, the info (kept by nobody: Ferry takes no hints
/// here yet), the request pointer, and the root where there is one.
pub(crate) fn check_common(rt: &Runtime, comm: MPI_Comm, info: MPI_Info, root: Option<c_int>, req: *mut MPI_Request) -> MpiResult<()> {
    let c = rt.comm(comm)?;
    let (size, inter) = (c.peer_size(), c.is_inter());
    crate::info::optional(rt, info)?;
    out_arg(req, "request")?;
    match root {
        // An intercommunicator's root is MPI_ROOT, MPI_PROC_NULL or a remote rank.
        Some(MPI_ROOT | MPI_PROC_NULL) if inter => Ok(()),
        Some(r) if r < 0 || r >= size => err(MPI_ERR_ROOT, format!("invalid root {r} (communicator size {size})")),
        _ => Ok(()),
    }
}

/// A count and a datatype that matter on this rank.
pub(crate) fn check_data(rt: &mut Runtime, buf: *const c_void, count: c_int, dt: MPI_Datatype) -> MpiResult<()> {
    if in_place(buf) {
        return Ok(());
    }
    check_count(count)?;
    rt.datatype(dt)?;
    Ok(())
}

/// Register an inactive persistent request on `comm` and write its handle (MPI_Start runs
/// `start`). The request takes its number in the communicator's sequence of persistent
/// collectives here, at the init call, which every member makes in the same order (MPI-4.0
/// 6.13: inits follow the ordering rules of collectives), and every start runs under that
/// number, in tags of its own: so the ranks may start their persistent collectives in
/// different orders, and a start takes no number from the non-blocking calls begun beside
/// it. An init that fails counts as no call.
pub(crate) fn register(rt: &mut Runtime, comm: MPI_Comm, mut start: Starter, req: *mut MPI_Request) -> MpiResult<()> {
    out_arg(req, "request")?;
    let seq = rt.comms.get_mut(&comm).map(|c| c.coll_seq.next_persistent());
    let pinned: Starter = Box::new(move |rt| {
        let pin = |rt: &mut Locked, seq| {
            if let Some(c) = rt.comms.get_mut(&comm) {
                c.coll_seq.pin(seq);
            }
        };
        pin(rt, seq);
        let started = start(rt);
        pin(rt, None);
        started
    });
    *out_arg(req, "request")? = rt.add_persistent(comm, pinned);
    Ok(())
}

/// Each start runs the non-blocking call `f` and takes its request out of the table: the
/// persistent request holds it while it runs.
pub(crate) fn starter(f: impl Fn(&mut Locked, *mut MPI_Request) -> MpiResult<()> + 'static) -> Starter {
    Box::new(move |rt| {
        let mut h = MPI_REQUEST_NULL;
        f(rt, &mut h)?;
        Ok(rt.reqs.remove(&h).expect("a started collective registers its request"))
    })
}

/// Whether this process's root-side buffer matters (intercommunicators: MPI_ROOT).
pub(crate) fn is_root(rt: &Runtime, comm: MPI_Comm, root: c_int) -> bool {
    rt.comm(comm).is_ok_and(|c| if c.is_inter() { root == MPI_ROOT } else { c.rank == root })
}

/// Whether this process is in the root's group of an intercommunicator but not the root.
pub(crate) fn is_bystander(rt: &Runtime, comm: MPI_Comm, root: Option<c_int>) -> bool {
    root == Some(MPI_PROC_NULL) && rt.comm(comm).is_ok_and(|c| c.is_inter())
}

/// Whether this process's non-root buffer matters (intercommunicators: not in the root's group).
pub(crate) fn is_leaf(rt: &Runtime, comm: MPI_Comm, root: c_int) -> bool {
    rt.comm(comm).is_ok_and(|c| !c.is_inter() || root >= 0)
}

/// Reduce, Allreduce, Scan, Exscan and Reduce_scatter_block.
#[allow(clippy::too_many_arguments)]
pub(crate) fn reduce_init(
    rt: &mut Locked, coll: Collective, sbuf: *const c_void, rbuf: *mut c_void, count: MPI_Count, dt: MPI_Datatype, op: MPI_Op, root: Option<c_int>,
    comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request,
) -> MpiResult<()> {
    check_common(rt, comm, info, root, req)?;
    if rt.comm(comm)?.is_inter() && matches!(coll, Collective::Scan | Collective::Exscan) {
        return super::inter::refuse(coll.name());
    }
    // An intercommunicator's bystander (MPI_PROC_NULL) passes nothing meaningful.
    if !is_bystander(rt, comm, root) {
        check_count(count)?;
        crate::op::reduction(rt, op, dt)?;
    }
    let root = root.unwrap_or(0);
    register(rt, comm, starter(move |rt, r| reduce(rt, coll, sbuf, rbuf, count, dt, op, root, comm, r)), req)
}
