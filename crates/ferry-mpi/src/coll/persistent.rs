//! MPI-4 persistent collectives (`MPI_Bcast_init` and kin): the init call checks what it can
//! without talking to anyone and keeps the call; every MPI_Start makes the same call as the
//! non-blocking collective, so each run is a fresh schedule counted in the communicator's
//! collective sequence at its start, like any other collective. The request table entry is
//! the persistent kind of `persistent.rs`.

use std::os::raw::{c_int, c_void};

use ferry_coll::Collective;

use super::movers::{allgather_args, alltoall_args, barrier, bcast, gather_args, scatter_args};
use super::reductions::reduce;
use super::{check_count, in_place};
use crate::boundary::call;
use crate::comm::out_arg;
use crate::consts::*;
use crate::error::{err, MpiResult};
use crate::persistent::{register, Starter};
use crate::runtime::Runtime;
use crate::threads::Locked;

/// What every init checks: the communicator, the info (kept by nobody: Ferry takes no hints
/// here yet), the request pointer, and the root where there is one.
pub(super) fn check_common(rt: &Runtime, comm: MPI_Comm, info: MPI_Info, root: Option<c_int>, req: *mut MPI_Request) -> MpiResult<()> {
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
pub(super) fn check_data(rt: &mut Runtime, buf: *const c_void, count: c_int, dt: MPI_Datatype) -> MpiResult<()> {
    if in_place(buf) {
        return Ok(());
    }
    check_count(count)?;
    rt.datatype(dt)?;
    Ok(())
}

/// Each start runs the non-blocking call `f` and takes its request out of the table: the
/// persistent request holds it while it runs.
pub(super) fn starter(f: impl Fn(&mut Locked, *mut MPI_Request) -> MpiResult<()> + 'static) -> Starter {
    Box::new(move |rt| {
        let mut h = MPI_REQUEST_NULL;
        f(rt, &mut h)?;
        Ok(rt.reqs.remove(&h).expect("a started collective registers its request"))
    })
}

/// Whether this process's root-side buffer matters (intercommunicators: MPI_ROOT).
pub(super) fn is_root(rt: &Runtime, comm: MPI_Comm, root: c_int) -> bool {
    rt.comm(comm).is_ok_and(|c| if c.is_inter() { root == MPI_ROOT } else { c.rank == root })
}

/// Whether this process is in the root's group of an intercommunicator but not the root.
pub(super) fn is_bystander(rt: &Runtime, comm: MPI_Comm, root: Option<c_int>) -> bool {
    root == Some(MPI_PROC_NULL) && rt.comm(comm).is_ok_and(|c| c.is_inter())
}

/// Whether this process's non-root buffer matters (intercommunicators: not in the root's group).
pub(super) fn is_leaf(rt: &Runtime, comm: MPI_Comm, root: c_int) -> bool {
    rt.comm(comm).is_ok_and(|c| !c.is_inter() || root >= 0)
}

crate::mpi_export! { MPI_Barrier_init, PMPI_Barrier_init, (comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) {
    call("MPI_Barrier_init", comm, |rt| {
        check_common(rt, comm, info, None, req)?;
        register(rt, comm, starter(move |rt, r| barrier(rt, comm, r)), req)
    })
}}

crate::mpi_export! { MPI_Bcast_init, PMPI_Bcast_init, (buf: *mut c_void, count: c_int, dt: MPI_Datatype, root: c_int, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) {
    call("MPI_Bcast_init", comm, |rt| {
        check_common(rt, comm, info, Some(root), req)?;
        if !is_bystander(rt, comm, Some(root)) {
            check_count(count)?;
            rt.datatype(dt)?;
        }
        register(rt, comm, starter(move |rt, r| bcast(rt, buf, count, dt, root, comm, r)), req)
    })
}}

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

crate::mpi_export! { MPI_Reduce_init, PMPI_Reduce_init, (sbuf: *const c_void, rbuf: *mut c_void, count: c_int, dt: MPI_Datatype, op: MPI_Op, root: c_int, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) {
    call("MPI_Reduce_init", comm, |rt| reduce_init(rt, Collective::Reduce, sbuf, rbuf, count.into(), dt, op, Some(root), comm, info, req))
}}
crate::mpi_export! { MPI_Allreduce_init, PMPI_Allreduce_init, (sbuf: *const c_void, rbuf: *mut c_void, count: c_int, dt: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) {
    call("MPI_Allreduce_init", comm, |rt| reduce_init(rt, Collective::Allreduce, sbuf, rbuf, count.into(), dt, op, None, comm, info, req))
}}
crate::mpi_export! { MPI_Scan_init, PMPI_Scan_init, (sbuf: *const c_void, rbuf: *mut c_void, count: c_int, dt: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) {
    call("MPI_Scan_init", comm, |rt| reduce_init(rt, Collective::Scan, sbuf, rbuf, count.into(), dt, op, None, comm, info, req))
}}
crate::mpi_export! { MPI_Exscan_init, PMPI_Exscan_init, (sbuf: *const c_void, rbuf: *mut c_void, count: c_int, dt: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) {
    call("MPI_Exscan_init", comm, |rt| reduce_init(rt, Collective::Exscan, sbuf, rbuf, count.into(), dt, op, None, comm, info, req))
}}
crate::mpi_export! { MPI_Reduce_scatter_block_init, PMPI_Reduce_scatter_block_init, (sbuf: *const c_void, rbuf: *mut c_void, count: c_int, dt: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) {
    call("MPI_Reduce_scatter_block_init", comm, |rt| reduce_init(rt, Collective::ReduceScatter, sbuf, rbuf, count.into(), dt, op, None, comm, info, req))
}}

crate::mpi_export! { MPI_Allgather_init, PMPI_Allgather_init, (sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void,
        rcount: c_int, rtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) {
    call("MPI_Allgather_init", comm, |rt| {
        check_common(rt, comm, info, None, req)?;
        check_data(rt, sbuf, scount, stype)?;
        check_data(rt, rbuf, rcount, rtype)?;
        register(rt, comm, starter(move |rt, r| allgather_args(rt, sbuf, scount, stype, rbuf, rcount, rtype, comm, r)), req)
    })
}}
crate::mpi_export! { MPI_Alltoall_init, PMPI_Alltoall_init, (sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void,
        rcount: c_int, rtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) {
    call("MPI_Alltoall_init", comm, |rt| {
        check_common(rt, comm, info, None, req)?;
        check_data(rt, sbuf, scount, stype)?;
        check_data(rt, rbuf, rcount, rtype)?;
        register(rt, comm, starter(move |rt, r| alltoall_args(rt, sbuf, scount, stype, rbuf, rcount, rtype, comm, r)), req)
    })
}}
crate::mpi_export! { MPI_Gather_init, PMPI_Gather_init, (sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void,
        rcount: c_int, rtype: MPI_Datatype, root: c_int, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) {
    call("MPI_Gather_init", comm, |rt| {
        check_common(rt, comm, info, Some(root), req)?;
        if is_leaf(rt, comm, root) {
            check_data(rt, sbuf, scount, stype)?;
        }
        if is_root(rt, comm, root) {
            check_data(rt, rbuf, rcount, rtype)?;
        }
        register(rt, comm, starter(move |rt, r| gather_args(rt, sbuf, scount, stype, rbuf, rcount, rtype, root, comm, r)), req)
    })
}}
crate::mpi_export! { MPI_Scatter_init, PMPI_Scatter_init, (sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void,
        rcount: c_int, rtype: MPI_Datatype, root: c_int, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) {
    call("MPI_Scatter_init", comm, |rt| {
        check_common(rt, comm, info, Some(root), req)?;
        if is_root(rt, comm, root) {
            check_data(rt, sbuf, scount, stype)?;
        }
        if is_leaf(rt, comm, root) {
            check_data(rt, rbuf, rcount, rtype)?;
        }
        register(rt, comm, starter(move |rt, r| scatter_args(rt, sbuf, scount, stype, rbuf, rcount, rtype, root, comm, r)), req)
    })
}}
