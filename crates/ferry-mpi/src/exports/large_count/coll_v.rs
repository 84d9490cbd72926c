//! Large-count collectives with per-rank (or per-neighbour) count and displacement arrays.
//! All go to the implementation with their arrays as they are; it checks them as it checks
//! int ones, and the inits keep copies. A single count (gatherv's send count, scatterv's
//! receive count) beyond INT_MAX goes as one element of a made type in the blocking and
//! non-blocking calls, as in `coll`, and is narrowed (MPI_ERR_COUNT beyond INT_MAX) in the
//! persistent inits, whose requests would have to keep a made type.

use std::os::raw::{c_int, c_void};

use super::coll::{coll_convert, in_place, narrow_if, size_and_root, Count, Seq};
use super::{converted, Counted};
use crate::boundary::call;
use crate::coll::{self, Counts, Displs};
use crate::consts::*;
use crate::error::MpiResult;
use crate::objects::Runtime;

/// The one count of a v-collective (gatherv's send count, scatterv's receive count), where
/// this rank reads it (`reads`): beyond INT_MAX as one element of a made type.
#[allow(clippy::too_many_arguments)]
fn scalar(
    name: &'static str, comm: MPI_Comm, seq: Seq, buf: *const c_void, count: MPI_Count, dt: MPI_Datatype, what: &str,
    reads: impl FnOnce(&Runtime) -> MpiResult<bool>,
) -> Result<Counted, c_int> {
    let n = coll_convert(name, comm, seq, |rt| Count::of(reads(rt)?, count, what, true))?;
    n.counted(name, comm, seq, buf, dt)
}

/// Gatherv's and allgatherv's send count is read unless the root gathers in place.
fn gathers_sendcount(rt: &Runtime, comm: MPI_Comm, root: Option<c_int>, sbuf: *const c_void) -> MpiResult<bool> {
    let (_, is_root) = size_and_root(rt, comm, root.unwrap_or(MPI_ROOT))?;
    Ok(!(is_root && in_place(sbuf)))
}

// The blocking and non-blocking v-collectives go to the implementation with their MPI_Count
// and MPI_Aint arrays as they are; it checks them as it checks int ones.

crate::mpi_export! { MPI_Gatherv_c, PMPI_Gatherv_c, (sbuf: *const c_void, scount: MPI_Count, stype: MPI_Datatype, rbuf: *mut c_void,
        rcounts: *const MPI_Count, displs: *const MPI_Aint, rtype: MPI_Datatype, root: c_int, comm: MPI_Comm) {
    let n = "MPI_Gatherv_c";
    let s = converted!(scalar(n, comm, Seq::Blocking, sbuf, scount, stype, "sendcount", |rt| gathers_sendcount(rt, comm, Some(root), sbuf)));
    call(n, comm, |rt| coll::gatherv_args(rt, sbuf, s.count, s.dt, rbuf, Counts::Big(rcounts), Displs::Big(displs), rtype, root, comm, coll::BLOCKING))
}}
crate::mpi_export! { MPI_Igatherv_c, PMPI_Igatherv_c, (sbuf: *const c_void, scount: MPI_Count, stype: MPI_Datatype, rbuf: *mut c_void,
        rcounts: *const MPI_Count, displs: *const MPI_Aint, rtype: MPI_Datatype, root: c_int, comm: MPI_Comm, req: *mut MPI_Request) {
    let n = "MPI_Igatherv_c";
    let s = converted!(scalar(n, comm, Seq::Nonblocking, sbuf, scount, stype, "sendcount", |rt| gathers_sendcount(rt, comm, Some(root), sbuf)));
    call(n, comm, |rt| { let req = coll::req_out(rt, comm, req)?; coll::gatherv_args(rt, sbuf, s.count, s.dt, rbuf, Counts::Big(rcounts), Displs::Big(displs), rtype, root, comm, req) })
}}
crate::mpi_export! { MPI_Allgatherv_c, PMPI_Allgatherv_c, (sbuf: *const c_void, scount: MPI_Count, stype: MPI_Datatype, rbuf: *mut c_void,
        rcounts: *const MPI_Count, displs: *const MPI_Aint, rtype: MPI_Datatype, comm: MPI_Comm) {
    let n = "MPI_Allgatherv_c";
    let s = converted!(scalar(n, comm, Seq::Blocking, sbuf, scount, stype, "sendcount", |rt| gathers_sendcount(rt, comm, None, sbuf)));
    call(n, comm, |rt| coll::allgatherv_args(rt, sbuf, s.count, s.dt, rbuf, Counts::Big(rcounts), Displs::Big(displs), rtype, comm, coll::BLOCKING))
}}
crate::mpi_export! { MPI_Iallgatherv_c, PMPI_Iallgatherv_c, (sbuf: *const c_void, scount: MPI_Count, stype: MPI_Datatype, rbuf: *mut c_void,
        rcounts: *const MPI_Count, displs: *const MPI_Aint, rtype: MPI_Datatype, comm: MPI_Comm, req: *mut MPI_Request) {
    let n = "MPI_Iallgatherv_c";
    let s = converted!(scalar(n, comm, Seq::Nonblocking, sbuf, scount, stype, "sendcount", |rt| gathers_sendcount(rt, comm, None, sbuf)));
    call(n, comm, |rt| { let req = coll::req_out(rt, comm, req)?; coll::allgatherv_args(rt, sbuf, s.count, s.dt, rbuf, Counts::Big(rcounts), Displs::Big(displs), rtype, comm, req) })
}}

/// Scatterv's receive count is read unless the root scatters in place.
fn scatters_recvcount(rt: &Runtime, comm: MPI_Comm, root: c_int, rbuf: *const c_void) -> MpiResult<bool> {
    let (_, is_root) = size_and_root(rt, comm, root)?;
    Ok(!(is_root && in_place(rbuf)))
}

crate::mpi_export! { MPI_Scatterv_c, PMPI_Scatterv_c, (sbuf: *const c_void, scounts: *const MPI_Count, displs: *const MPI_Aint, stype: MPI_Datatype,
        rbuf: *mut c_void, rcount: MPI_Count, rtype: MPI_Datatype, root: c_int, comm: MPI_Comm) {
    let n = "MPI_Scatterv_c";
    let r = converted!(scalar(n, comm, Seq::Blocking, rbuf, rcount, rtype, "recvcount", |rt| scatters_recvcount(rt, comm, root, rbuf)));
    call(n, comm, |rt| coll::scatterv_args(rt, sbuf, Counts::Big(scounts), Displs::Big(displs), stype, rbuf, r.count, r.dt, root, comm, coll::BLOCKING))
}}
crate::mpi_export! { MPI_Iscatterv_c, PMPI_Iscatterv_c, (sbuf: *const c_void, scounts: *const MPI_Count, displs: *const MPI_Aint, stype: MPI_Datatype,
        rbuf: *mut c_void, rcount: MPI_Count, rtype: MPI_Datatype, root: c_int, comm: MPI_Comm, req: *mut MPI_Request) {
    let n = "MPI_Iscatterv_c";
    let r = converted!(scalar(n, comm, Seq::Nonblocking, rbuf, rcount, rtype, "recvcount", |rt| scatters_recvcount(rt, comm, root, rbuf)));
    call(n, comm, |rt| { let req = coll::req_out(rt, comm, req)?; coll::scatterv_args(rt, sbuf, Counts::Big(scounts), Displs::Big(displs), stype, rbuf, r.count, r.dt, root, comm, req) })
}}

crate::mpi_export! { MPI_Alltoallv_c, PMPI_Alltoallv_c, (sbuf: *const c_void, scounts: *const MPI_Count, sdispls: *const MPI_Aint, stype: MPI_Datatype,
        rbuf: *mut c_void, rcounts: *const MPI_Count, rdispls: *const MPI_Aint, rtype: MPI_Datatype, comm: MPI_Comm) {
    call("MPI_Alltoallv_c", comm, move |rt| coll::alltoallv_args(rt, sbuf, Counts::Big(scounts), Displs::Big(sdispls), stype, rbuf, Counts::Big(rcounts),
        Displs::Big(rdispls), rtype, comm, coll::BLOCKING))
}}
crate::mpi_export! { MPI_Ialltoallv_c, PMPI_Ialltoallv_c, (sbuf: *const c_void, scounts: *const MPI_Count, sdispls: *const MPI_Aint, stype: MPI_Datatype,
        rbuf: *mut c_void, rcounts: *const MPI_Count, rdispls: *const MPI_Aint, rtype: MPI_Datatype, comm: MPI_Comm, req: *mut MPI_Request) {
    call("MPI_Ialltoallv_c", comm, move |rt| { let req = coll::req_out(rt, comm, req)?; coll::alltoallv_args(rt, sbuf, Counts::Big(scounts), Displs::Big(sdispls), stype, rbuf, Counts::Big(rcounts),
        Displs::Big(rdispls), rtype, comm, req) })
}}
crate::mpi_export! { MPI_Alltoallw_c, PMPI_Alltoallw_c, (sbuf: *const c_void, scounts: *const MPI_Count, sdispls: *const MPI_Aint, stypes: *const MPI_Datatype,
        rbuf: *mut c_void, rcounts: *const MPI_Count, rdispls: *const MPI_Aint, rtypes: *const MPI_Datatype, comm: MPI_Comm) {
    call("MPI_Alltoallw_c", comm, move |rt| coll::alltoallw(rt, sbuf, Counts::Big(scounts), Displs::Big(sdispls), stypes, rbuf, Counts::Big(rcounts),
        Displs::Big(rdispls), rtypes, comm, coll::BLOCKING))
}}
crate::mpi_export! { MPI_Ialltoallw_c, PMPI_Ialltoallw_c, (sbuf: *const c_void, scounts: *const MPI_Count, sdispls: *const MPI_Aint, stypes: *const MPI_Datatype,
        rbuf: *mut c_void, rcounts: *const MPI_Count, rdispls: *const MPI_Aint, rtypes: *const MPI_Datatype, comm: MPI_Comm, req: *mut MPI_Request) {
    call("MPI_Ialltoallw_c", comm, move |rt| { let req = coll::req_out(rt, comm, req)?; coll::alltoallw(rt, sbuf, Counts::Big(scounts), Displs::Big(sdispls), stypes, rbuf, Counts::Big(rcounts),
        Displs::Big(rdispls), rtypes, comm, req) })
}}

// Reduce_scatter: onto the implementation itself, which takes `MPI_Count` counts.
crate::mpi_export! { MPI_Reduce_scatter_c, PMPI_Reduce_scatter_c, (sbuf: *const c_void, rbuf: *mut c_void, rcounts: *const MPI_Count, dt: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) {
    call("MPI_Reduce_scatter_c", comm, move |rt| coll::reduce_scatter(rt, sbuf, rbuf, Counts::Big(rcounts), dt, op, comm, coll::BLOCKING))
}}
crate::mpi_export! { MPI_Ireduce_scatter_c, PMPI_Ireduce_scatter_c, (sbuf: *const c_void, rbuf: *mut c_void, rcounts: *const MPI_Count, dt: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, req: *mut MPI_Request) {
    call("MPI_Ireduce_scatter_c", comm, move |rt| { let req = coll::req_out(rt, comm, req)?; coll::reduce_scatter(rt, sbuf, rbuf, Counts::Big(rcounts), dt, op, comm, req) })
}}

crate::mpi_export! { MPI_Neighbor_allgatherv_c, PMPI_Neighbor_allgatherv_c, (sbuf: *const c_void, scount: MPI_Count, stype: MPI_Datatype, rbuf: *mut c_void,
        rcounts: *const MPI_Count, displs: *const MPI_Aint, rtype: MPI_Datatype, comm: MPI_Comm) {
    let n = "MPI_Neighbor_allgatherv_c";
    let s = converted!(scalar(n, comm, Seq::Blocking, sbuf, scount, stype, "sendcount", |_| Ok(true)));
    call(n, comm, |rt| coll::neighbor_allgatherv(rt, sbuf, s.count, s.dt, rbuf, Counts::Big(rcounts), Displs::Big(displs), rtype, comm, coll::BLOCKING))
}}
crate::mpi_export! { MPI_Ineighbor_allgatherv_c, PMPI_Ineighbor_allgatherv_c, (sbuf: *const c_void, scount: MPI_Count, stype: MPI_Datatype, rbuf: *mut c_void,
        rcounts: *const MPI_Count, displs: *const MPI_Aint, rtype: MPI_Datatype, comm: MPI_Comm, req: *mut MPI_Request) {
    let n = "MPI_Ineighbor_allgatherv_c";
    let s = converted!(scalar(n, comm, Seq::Nonblocking, sbuf, scount, stype, "sendcount", |_| Ok(true)));
    call(n, comm, |rt| { let req = coll::req_out(rt, comm, req)?; coll::neighbor_allgatherv(rt, sbuf, s.count, s.dt, rbuf, Counts::Big(rcounts), Displs::Big(displs), rtype, comm, req) })
}}
crate::mpi_export! { MPI_Neighbor_alltoallv_c, PMPI_Neighbor_alltoallv_c, (sbuf: *const c_void, scounts: *const MPI_Count, sdispls: *const MPI_Aint, stype: MPI_Datatype,
        rbuf: *mut c_void, rcounts: *const MPI_Count, rdispls: *const MPI_Aint, rtype: MPI_Datatype, comm: MPI_Comm) {
    call("MPI_Neighbor_alltoallv_c", comm, move |rt| coll::neighbor_alltoallv(rt, sbuf, Counts::Big(scounts), Displs::Big(sdispls), stype, rbuf,
        Counts::Big(rcounts), Displs::Big(rdispls), rtype, comm, coll::BLOCKING))
}}
crate::mpi_export! { MPI_Ineighbor_alltoallv_c, PMPI_Ineighbor_alltoallv_c, (sbuf: *const c_void, scounts: *const MPI_Count, sdispls: *const MPI_Aint, stype: MPI_Datatype,
        rbuf: *mut c_void, rcounts: *const MPI_Count, rdispls: *const MPI_Aint, rtype: MPI_Datatype, comm: MPI_Comm, req: *mut MPI_Request) {
    call("MPI_Ineighbor_alltoallv_c", comm, move |rt| { let req = coll::req_out(rt, comm, req)?; coll::neighbor_alltoallv(rt, sbuf, Counts::Big(scounts), Displs::Big(sdispls), stype, rbuf,
        Counts::Big(rcounts), Displs::Big(rdispls), rtype, comm, req) })
}}

// ----- persistent inits (each start counts in the non-blocking sequence, the init nothing) --

crate::mpi_export! { MPI_Gatherv_init_c, PMPI_Gatherv_init_c, (sbuf: *const c_void, scount: MPI_Count, stype: MPI_Datatype, rbuf: *mut c_void,
        rcounts: *const MPI_Count, displs: *const MPI_Aint, rtype: MPI_Datatype, root: c_int, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) {
    let n = "MPI_Gatherv_init_c";
    let s = converted!(coll_convert(n, comm, Seq::Init, |rt| narrow_if(gathers_sendcount(rt, comm, Some(root), sbuf)?, scount, "sendcount")));
    call(n, comm, |rt| coll::gatherv_init(rt, sbuf, s, stype, rbuf, Counts::Big(rcounts), Displs::Big(displs), rtype, root, comm, info, req))
}}
crate::mpi_export! { MPI_Allgatherv_init_c, PMPI_Allgatherv_init_c, (sbuf: *const c_void, scount: MPI_Count, stype: MPI_Datatype, rbuf: *mut c_void,
        rcounts: *const MPI_Count, displs: *const MPI_Aint, rtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) {
    let n = "MPI_Allgatherv_init_c";
    let s = converted!(coll_convert(n, comm, Seq::Init, |rt| narrow_if(gathers_sendcount(rt, comm, None, sbuf)?, scount, "sendcount")));
    call(n, comm, |rt| coll::allgatherv_init(rt, sbuf, s, stype, rbuf, Counts::Big(rcounts), Displs::Big(displs), rtype, comm, info, req))
}}
crate::mpi_export! { MPI_Scatterv_init_c, PMPI_Scatterv_init_c, (sbuf: *const c_void, scounts: *const MPI_Count, displs: *const MPI_Aint, stype: MPI_Datatype,
        rbuf: *mut c_void, rcount: MPI_Count, rtype: MPI_Datatype, root: c_int, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) {
    let n = "MPI_Scatterv_init_c";
    let r = converted!(coll_convert(n, comm, Seq::Init, |rt| narrow_if(scatters_recvcount(rt, comm, root, rbuf)?, rcount, "recvcount")));
    call(n, comm, |rt| coll::scatterv_init(rt, sbuf, Counts::Big(scounts), Displs::Big(displs), stype, rbuf, r, rtype, root, comm, info, req))
}}
crate::mpi_export! { MPI_Alltoallv_init_c, PMPI_Alltoallv_init_c, (sbuf: *const c_void, scounts: *const MPI_Count, sdispls: *const MPI_Aint, stype: MPI_Datatype,
        rbuf: *mut c_void, rcounts: *const MPI_Count, rdispls: *const MPI_Aint, rtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) {
    call("MPI_Alltoallv_init_c", comm, move |rt| coll::alltoallv_init(rt, sbuf, Counts::Big(scounts), Displs::Big(sdispls), stype, rbuf, Counts::Big(rcounts),
        Displs::Big(rdispls), rtype, comm, info, req))
}}
crate::mpi_export! { MPI_Alltoallw_init_c, PMPI_Alltoallw_init_c, (sbuf: *const c_void, scounts: *const MPI_Count, sdispls: *const MPI_Aint, stypes: *const MPI_Datatype,
        rbuf: *mut c_void, rcounts: *const MPI_Count, rdispls: *const MPI_Aint, rtypes: *const MPI_Datatype, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) {
    call("MPI_Alltoallw_init_c", comm, move |rt| coll::alltoallw_init(rt, sbuf, Counts::Big(scounts), Displs::Big(sdispls), stypes, rbuf, Counts::Big(rcounts),
        Displs::Big(rdispls), rtypes, comm, info, req))
}}
crate::mpi_export! { MPI_Reduce_scatter_init_c, PMPI_Reduce_scatter_init_c, (sbuf: *const c_void, rbuf: *mut c_void, rcounts: *const MPI_Count, dt: MPI_Datatype,
        op: MPI_Op, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) {
    call("MPI_Reduce_scatter_init_c", comm, move |rt| coll::reduce_scatter_init(rt, sbuf, rbuf, Counts::Big(rcounts), dt, op, comm, info, req))
}}
crate::mpi_export! { MPI_Neighbor_allgatherv_init_c, PMPI_Neighbor_allgatherv_init_c, (sbuf: *const c_void, scount: MPI_Count, stype: MPI_Datatype, rbuf: *mut c_void,
        rcounts: *const MPI_Count, displs: *const MPI_Aint, rtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) {
    let n = "MPI_Neighbor_allgatherv_init_c";
    let s = converted!(coll_convert(n, comm, Seq::Init, |_| narrow_if(true, scount, "sendcount")));
    call(n, comm, |rt| coll::neighbor_allgatherv_init(rt, sbuf, s, stype, rbuf, Counts::Big(rcounts), Displs::Big(displs), rtype, comm, info, req))
}}
crate::mpi_export! { MPI_Neighbor_alltoallv_init_c, PMPI_Neighbor_alltoallv_init_c, (sbuf: *const c_void, scounts: *const MPI_Count, sdispls: *const MPI_Aint, stype: MPI_Datatype,
        rbuf: *mut c_void, rcounts: *const MPI_Count, rdispls: *const MPI_Aint, rtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) {
    call("MPI_Neighbor_alltoallv_init_c", comm, move |rt| coll::neighbor_alltoallv_init(rt, sbuf, Counts::Big(scounts), Displs::Big(sdispls), stype, rbuf,
        Counts::Big(rcounts), Displs::Big(rdispls), rtype, comm, info, req))
}}

// ----- neighbour alltoallw: byte displacements are MPI_Aint in both forms ------------------

crate::mpi_export! { MPI_Neighbor_alltoallw_c, PMPI_Neighbor_alltoallw_c, (sbuf: *const c_void, scounts: *const MPI_Count, sdispls: *const MPI_Aint, stypes: *const MPI_Datatype,
        rbuf: *mut c_void, rcounts: *const MPI_Count, rdispls: *const MPI_Aint, rtypes: *const MPI_Datatype, comm: MPI_Comm) {
    call("MPI_Neighbor_alltoallw_c", comm, move |rt| coll::neighbor_alltoallw(rt, sbuf, Counts::Big(scounts), sdispls, stypes, rbuf, Counts::Big(rcounts), rdispls,
        rtypes, comm, coll::BLOCKING))
}}
crate::mpi_export! { MPI_Ineighbor_alltoallw_c, PMPI_Ineighbor_alltoallw_c, (sbuf: *const c_void, scounts: *const MPI_Count, sdispls: *const MPI_Aint, stypes: *const MPI_Datatype,
        rbuf: *mut c_void, rcounts: *const MPI_Count, rdispls: *const MPI_Aint, rtypes: *const MPI_Datatype, comm: MPI_Comm, req: *mut MPI_Request) {
    call("MPI_Ineighbor_alltoallw_c", comm, move |rt| { let req = coll::req_out(rt, comm, req)?; coll::neighbor_alltoallw(rt, sbuf, Counts::Big(scounts), sdispls, stypes, rbuf, Counts::Big(rcounts), rdispls,
        rtypes, comm, req) })
}}
crate::mpi_export! { MPI_Neighbor_alltoallw_init_c, PMPI_Neighbor_alltoallw_init_c, (sbuf: *const c_void, scounts: *const MPI_Count, sdispls: *const MPI_Aint, stypes: *const MPI_Datatype,
        rbuf: *mut c_void, rcounts: *const MPI_Count, rdispls: *const MPI_Aint, rtypes: *const MPI_Datatype, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) {
    call("MPI_Neighbor_alltoallw_init_c", comm, move |rt| coll::neighbor_alltoallw_init(rt, sbuf, Counts::Big(scounts), sdispls, stypes, rbuf, Counts::Big(rcounts),
        rdispls, rtypes, comm, info, req))
}}

// The int-count implementations, by their C symbols (their modules are private to `coll`).
extern "C" {
}
