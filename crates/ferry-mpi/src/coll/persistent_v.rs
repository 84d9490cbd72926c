//! The MPI-4 persistent collectives whose counts, displacements or datatypes come as arrays
//! (Gatherv, Scatterv, Allgatherv, Alltoallv, Alltoallw, Reduce_scatter and the neighbourhood
//! ones). Like those of `persistent.rs`, every MPI_Start runs the non-blocking call; the
//! arrays, though, are copied at init and each start reads the copies: a program may free or
//! reuse its arrays once the init returns (mpi4py passes temporary arrays that it frees at
//! once), as other MPI libraries allow. Later changes to them have no effect.

use std::os::raw::{c_int, c_void};

use super::alltoallw::alltoallw;
use super::movers::{allgatherv_args, alltoallv_args, gatherv_args, scatterv_args};
use super::{neighbor, neighbor_w};
use super::persistent::{check_common, check_data, is_root, starter};
use super::reductions::reduce_scatter;
use super::{check_count, in_place, Counts, Displs};
use crate::consts::*;
use crate::error::MpiResult;
use super::persistent::register;
use crate::objects::Runtime;
use crate::objects::threads::Locked;

/// `n` entries of a C array, copied; `None` for a NULL array (each start then reports it as
/// the non-blocking call does).
struct Kept<T>(Option<Vec<T>>);

impl<T: Copy> Kept<T> {
    fn of(p: *const T, n: usize) -> Kept<T> {
        if p.is_null() {
            return Kept(None);
        }
        // SAFETY: MPI passes `n` entries (one per rank or neighbour) in a non-NULL array.
        Kept(Some(unsafe { std::slice::from_raw_parts(p, n) }.to_vec()))
    }

    /// Only where this rank reads the array (the root's side of Gatherv and Scatterv, the
    /// send side unless it is MPI_IN_PLACE): elsewhere it may be anything.
    fn of_if(used: bool, p: *const T, n: usize) -> Kept<T> {
        if used { Kept::of(p, n) } else { Kept(None) }
    }

    fn ptr(&self) -> *const T {
        self.0.as_ref().map_or(std::ptr::null(), |v| v.as_ptr())
    }
}

impl Kept<MPI_Count> {
    /// Counts of either width, kept as `MPI_Count`s where this rank reads them.
    fn counts_if(used: bool, c: Counts, n: usize) -> Kept<MPI_Count> {
        Kept(if used { c.widened(n) } else { None })
    }

    fn counts(&self) -> Counts {
        Counts::Big(self.ptr())
    }
}

impl Kept<MPI_Aint> {
    /// Displacements of either width, kept as `MPI_Aint`s where this rank reads them.
    fn displs_if(used: bool, d: Displs, n: usize) -> Kept<MPI_Aint> {
        Kept(if used { d.widened(n) } else { None })
    }

    fn displs(&self) -> Displs {
        Displs::Big(self.ptr())
    }
}

/// Entries of a per-rank array: one per rank of the group the ranks name (the remote group
/// of an intercommunicator).
fn peer_count(rt: &Runtime, comm: MPI_Comm) -> MpiResult<usize> {
    Ok(rt.comm(comm)?.peer_size() as usize)
}

/// Entries of Reduce_scatter's counts: one per rank of the local group (the group the
/// result is scattered over, also on an intercommunicator).
fn local_count(rt: &Runtime, comm: MPI_Comm) -> MpiResult<usize> {
    Ok(rt.comm(comm)?.size() as usize)
}

/// Gatherv_init, with int or large-count arrays (kept as the latter).
#[allow(clippy::too_many_arguments)]
pub(crate) fn gatherv_init(
    rt: &mut Locked, sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void, rcounts: Counts, rdispls: Displs,
    rtype: MPI_Datatype, root: c_int, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request,
) -> MpiResult<()> {
    check_common(rt, comm, info, Some(root), req)?;
    let root_here = is_root(rt, comm, root);
    check_data(rt, sbuf, scount, stype)?;
    if root_here {
        rt.datatype(rtype)?;
    }
    let n = peer_count(rt, comm)?;
    let (c, d) = (Kept::counts_if(root_here, rcounts, n), Kept::displs_if(root_here, rdispls, n));
    register(rt, comm, starter(move |rt, r| gatherv_args(rt, sbuf, scount, stype, rbuf, c.counts(), d.displs(), rtype, root, comm, r)), req)
}

/// Scatterv_init, with int or large-count arrays (kept as the latter).
#[allow(clippy::too_many_arguments)]
pub(crate) fn scatterv_init(
    rt: &mut Locked, sbuf: *const c_void, scounts: Counts, sdispls: Displs, stype: MPI_Datatype, rbuf: *mut c_void, rcount: c_int,
    rtype: MPI_Datatype, root: c_int, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request,
) -> MpiResult<()> {
    check_common(rt, comm, info, Some(root), req)?;
    let root_here = is_root(rt, comm, root);
    if root_here {
        rt.datatype(stype)?;
    }
    check_data(rt, rbuf, rcount, rtype)?;
    let n = peer_count(rt, comm)?;
    let (c, d) = (Kept::counts_if(root_here, scounts, n), Kept::displs_if(root_here, sdispls, n));
    register(rt, comm, starter(move |rt, r| scatterv_args(rt, sbuf, c.counts(), d.displs(), stype, rbuf, rcount, rtype, root, comm, r)), req)
}

/// Allgatherv_init, with int or large-count arrays (kept as the latter).
#[allow(clippy::too_many_arguments)]
pub(crate) fn allgatherv_init(
    rt: &mut Locked, sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void, rcounts: Counts, rdispls: Displs,
    rtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request,
) -> MpiResult<()> {
    check_common(rt, comm, info, None, req)?;
    check_data(rt, sbuf, scount, stype)?;
    rt.datatype(rtype)?;
    let n = peer_count(rt, comm)?;
    let (c, d) = (Kept::counts_if(true, rcounts, n), Kept::displs_if(true, rdispls, n));
    register(rt, comm, starter(move |rt, r| allgatherv_args(rt, sbuf, scount, stype, rbuf, c.counts(), d.displs(), rtype, comm, r)), req)
}

/// Alltoallv_init, with int or large-count arrays (kept as the latter).
#[allow(clippy::too_many_arguments)]
pub(crate) fn alltoallv_init(
    rt: &mut Locked, sbuf: *const c_void, scounts: Counts, sdispls: Displs, stype: MPI_Datatype, rbuf: *mut c_void, rcounts: Counts,
    rdispls: Displs, rtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request,
) -> MpiResult<()> {
    check_common(rt, comm, info, None, req)?;
    let sends = !in_place(sbuf);
    if sends {
        rt.datatype(stype)?;
    }
    rt.datatype(rtype)?;
    let n = peer_count(rt, comm)?;
    let (sc, sd) = (Kept::counts_if(sends, scounts, n), Kept::displs_if(sends, sdispls, n));
    let (rc, rd) = (Kept::counts_if(true, rcounts, n), Kept::displs_if(true, rdispls, n));
    register(rt, comm, starter(move |rt, r| alltoallv_args(rt, sbuf, sc.counts(), sd.displs(), stype, rbuf, rc.counts(), rd.displs(), rtype, comm, r)), req)
}

/// Alltoallw_init, with int or large-count arrays (kept as the latter).
#[allow(clippy::too_many_arguments)]
pub(crate) fn alltoallw_init(
    rt: &mut Locked, sbuf: *const c_void, scounts: Counts, sdispls: Displs, stypes: *const MPI_Datatype, rbuf: *mut c_void, rcounts: Counts,
    rdispls: Displs, rtypes: *const MPI_Datatype, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request,
) -> MpiResult<()> {
    check_common(rt, comm, info, None, req)?;
    let sends = !in_place(sbuf);
    let n = peer_count(rt, comm)?;
    let (sc, sd, st) = (Kept::counts_if(sends, scounts, n), Kept::displs_if(sends, sdispls, n), Kept::of_if(sends, stypes, n));
    let (rc, rd, rty) = (Kept::counts_if(true, rcounts, n), Kept::displs_if(true, rdispls, n), Kept::of(rtypes, n));
    register(rt, comm, starter(move |rt, r| alltoallw(rt, sbuf, sc.counts(), sd.displs(), st.ptr(), rbuf, rc.counts(), rd.displs(), rty.ptr(), comm, r)), req)
}

/// Reduce_scatter_init, with int counts or `MPI_Count`s (kept as the latter).
#[allow(clippy::too_many_arguments)]
pub(crate) fn reduce_scatter_init(
    rt: &mut Locked, sbuf: *const c_void, rbuf: *mut c_void, rcounts: Counts, dt: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, info: MPI_Info,
    req: *mut MPI_Request,
) -> MpiResult<()> {
    check_common(rt, comm, info, None, req)?;
    crate::op::reduction(rt, op, dt)?;
    let c = Kept::counts_if(true, rcounts, local_count(rt, comm)?);
    register(rt, comm, starter(move |rt, r| reduce_scatter(rt, sbuf, rbuf, c.counts(), dt, op, comm, r)), req)
}

/// The neighbourhood inits: the communicator must carry a topology, and both datatypes
/// exist. Returns (in-degree, out-degree): the lengths of the receive and send arrays.
pub(crate) fn check_neighbor(rt: &mut Runtime, comm: MPI_Comm, info: MPI_Info, stype: MPI_Datatype, rtype: MPI_Datatype, req: *mut MPI_Request) -> MpiResult<(usize, usize)> {
    check_common(rt, comm, info, None, req)?;
    let topo = crate::objects::comm::topology(rt, comm)?;
    rt.datatype(stype)?;
    rt.datatype(rtype)?;
    let (sources, dests) = topo.neighbors(rt.comm(comm)?.rank);
    Ok((sources.len(), dests.len()))
}

/// Neighbor_allgatherv_init, with int or large-count arrays (kept as the latter).
#[allow(clippy::too_many_arguments)]
pub(crate) fn neighbor_allgatherv_init(
    rt: &mut Locked, sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void, rcounts: Counts, displs: Displs,
    rtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request,
) -> MpiResult<()> {
    let (indegree, _) = check_neighbor(rt, comm, info, stype, rtype, req)?;
    check_count(scount)?;
    let (c, d) = (Kept::counts_if(true, rcounts, indegree), Kept::displs_if(true, displs, indegree));
    register(rt, comm, starter(move |rt, r| neighbor::allgatherv(rt, sbuf, scount, stype, rbuf, c.counts(), d.displs(), rtype, comm, r)), req)
}

/// Neighbor_alltoallv_init, with int or large-count arrays (kept as the latter).
#[allow(clippy::too_many_arguments)]
pub(crate) fn neighbor_alltoallv_init(
    rt: &mut Locked, sbuf: *const c_void, scounts: Counts, sdispls: Displs, stype: MPI_Datatype, rbuf: *mut c_void, rcounts: Counts,
    rdispls: Displs, rtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request,
) -> MpiResult<()> {
    let (indegree, outdegree) = check_neighbor(rt, comm, info, stype, rtype, req)?;
    let (sc, sd) = (Kept::counts_if(true, scounts, outdegree), Kept::displs_if(true, sdispls, outdegree));
    let (rc, rd) = (Kept::counts_if(true, rcounts, indegree), Kept::displs_if(true, rdispls, indegree));
    register(rt, comm, starter(move |rt, r| neighbor::alltoallv(rt, sbuf, sc.counts(), sd.displs(), stype, rbuf, rc.counts(), rd.displs(), rtype, comm, r)), req)
}

/// Neighbor_alltoallw_init, with int or large counts (kept as the latter).
#[allow(clippy::too_many_arguments)]
pub(crate) fn neighbor_alltoallw_init(
    rt: &mut Locked, sbuf: *const c_void, scounts: Counts, sdispls: *const MPI_Aint, stypes: *const MPI_Datatype, rbuf: *mut c_void,
    rcounts: Counts, rdispls: *const MPI_Aint, rtypes: *const MPI_Datatype, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request,
) -> MpiResult<()> {
    check_common(rt, comm, info, None, req)?;
    let (sources, dests) = crate::objects::comm::topology(rt, comm)?.neighbors(rt.comm(comm)?.rank);
    let (indegree, outdegree) = (sources.len(), dests.len());
    let (sc, sd, st) = (Kept::counts_if(true, scounts, outdegree), Kept::of(sdispls, outdegree), Kept::of(stypes, outdegree));
    let (rc, rd, rty) = (Kept::counts_if(true, rcounts, indegree), Kept::of(rdispls, indegree), Kept::of(rtypes, indegree));
    register(rt, comm, starter(move |rt, r| neighbor_w::alltoallw(rt, sbuf, sc.counts(), sd.ptr(), st.ptr(), rbuf, rc.counts(), rd.ptr(), rty.ptr(), comm, r)), req)
}
