//! Persistent collective operations (MPI-4.1 chapter 6.13): the `MPI_<collective>_init`
//! calls, with fixed and with varying counts.

use std::os::raw::{c_int, c_void};

use ferry_coll::Collective;

use crate::boundary::call;
use crate::coll::{check_count, Counts, Displs, neighbor};
use crate::coll::movers::{allgather_args, alltoall_args, barrier, bcast, gather_args, scatter_args};
use crate::coll::persistent::*;
use crate::coll::persistent_v::*;
use crate::consts::*;

crate::mpi_export! { MPI_Barrier_init, PMPI_Barrier_init, (comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) {
    call("MPI_Barrier_init", comm, move |rt| {
        check_common(rt, comm, info, None, req)?;
        register(rt, comm, starter(move |rt, r| barrier(rt, comm, r)), req)
    })
}}
crate::mpi_export! { MPI_Bcast_init, PMPI_Bcast_init, (buf: *mut c_void, count: c_int, dt: MPI_Datatype, root: c_int, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) {
    call("MPI_Bcast_init", comm, move |rt| {
        check_common(rt, comm, info, Some(root), req)?;
        if !is_bystander(rt, comm, Some(root)) {
            check_count(count)?;
            rt.datatype(dt)?;
        }
        register(rt, comm, starter(move |rt, r| bcast(rt, buf, count, dt, root, comm, r)), req)
    })
}}
crate::mpi_export! { MPI_Reduce_init, PMPI_Reduce_init, (sbuf: *const c_void, rbuf: *mut c_void, count: c_int, dt: MPI_Datatype, op: MPI_Op, root: c_int, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) {
    call("MPI_Reduce_init", comm, move |rt| reduce_init(rt, Collective::Reduce, sbuf, rbuf, count.into(), dt, op, Some(root), comm, info, req))
}}
crate::mpi_export! { MPI_Allreduce_init, PMPI_Allreduce_init, (sbuf: *const c_void, rbuf: *mut c_void, count: c_int, dt: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) {
    call("MPI_Allreduce_init", comm, move |rt| reduce_init(rt, Collective::Allreduce, sbuf, rbuf, count.into(), dt, op, None, comm, info, req))
}}
crate::mpi_export! { MPI_Scan_init, PMPI_Scan_init, (sbuf: *const c_void, rbuf: *mut c_void, count: c_int, dt: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) {
    call("MPI_Scan_init", comm, move |rt| reduce_init(rt, Collective::Scan, sbuf, rbuf, count.into(), dt, op, None, comm, info, req))
}}
crate::mpi_export! { MPI_Exscan_init, PMPI_Exscan_init, (sbuf: *const c_void, rbuf: *mut c_void, count: c_int, dt: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) {
    call("MPI_Exscan_init", comm, move |rt| reduce_init(rt, Collective::Exscan, sbuf, rbuf, count.into(), dt, op, None, comm, info, req))
}}
crate::mpi_export! { MPI_Reduce_scatter_block_init, PMPI_Reduce_scatter_block_init, (sbuf: *const c_void, rbuf: *mut c_void, count: c_int, dt: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) {
    call("MPI_Reduce_scatter_block_init", comm, move |rt| reduce_init(rt, Collective::ReduceScatter, sbuf, rbuf, count.into(), dt, op, None, comm, info, req))
}}
crate::mpi_export! { MPI_Allgather_init, PMPI_Allgather_init, (sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void,
        rcount: c_int, rtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) {
    call("MPI_Allgather_init", comm, move |rt| {
        check_common(rt, comm, info, None, req)?;
        check_data(rt, sbuf, scount, stype)?;
        check_data(rt, rbuf, rcount, rtype)?;
        register(rt, comm, starter(move |rt, r| allgather_args(rt, sbuf, scount, stype, rbuf, rcount, rtype, comm, r)), req)
    })
}}
crate::mpi_export! { MPI_Alltoall_init, PMPI_Alltoall_init, (sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void,
        rcount: c_int, rtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) {
    call("MPI_Alltoall_init", comm, move |rt| {
        check_common(rt, comm, info, None, req)?;
        check_data(rt, sbuf, scount, stype)?;
        check_data(rt, rbuf, rcount, rtype)?;
        register(rt, comm, starter(move |rt, r| alltoall_args(rt, sbuf, scount, stype, rbuf, rcount, rtype, comm, r)), req)
    })
}}
crate::mpi_export! { MPI_Gather_init, PMPI_Gather_init, (sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void,
        rcount: c_int, rtype: MPI_Datatype, root: c_int, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) {
    call("MPI_Gather_init", comm, move |rt| {
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
    call("MPI_Scatter_init", comm, move |rt| {
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
crate::mpi_export! { MPI_Gatherv_init, PMPI_Gatherv_init, (sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void,
        rcounts: *const c_int, rdispls: *const c_int, rtype: MPI_Datatype, root: c_int, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) {
    call("MPI_Gatherv_init", comm, move |rt| gatherv_init(rt, sbuf, scount, stype, rbuf, Counts::Int(rcounts), Displs::Int(rdispls), rtype, root, comm, info, req))
}}
crate::mpi_export! { MPI_Scatterv_init, PMPI_Scatterv_init, (sbuf: *const c_void, scounts: *const c_int, sdispls: *const c_int, stype: MPI_Datatype,
        rbuf: *mut c_void, rcount: c_int, rtype: MPI_Datatype, root: c_int, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) {
    call("MPI_Scatterv_init", comm, move |rt| scatterv_init(rt, sbuf, Counts::Int(scounts), Displs::Int(sdispls), stype, rbuf, rcount, rtype, root, comm, info, req))
}}
crate::mpi_export! { MPI_Allgatherv_init, PMPI_Allgatherv_init, (sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void,
        rcounts: *const c_int, rdispls: *const c_int, rtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) {
    call("MPI_Allgatherv_init", comm, move |rt| allgatherv_init(rt, sbuf, scount, stype, rbuf, Counts::Int(rcounts), Displs::Int(rdispls), rtype, comm, info, req))
}}
crate::mpi_export! { MPI_Alltoallv_init, PMPI_Alltoallv_init, (sbuf: *const c_void, scounts: *const c_int, sdispls: *const c_int, stype: MPI_Datatype,
        rbuf: *mut c_void, rcounts: *const c_int, rdispls: *const c_int, rtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) {
    call("MPI_Alltoallv_init", comm, move |rt| alltoallv_init(rt, sbuf, Counts::Int(scounts), Displs::Int(sdispls), stype, rbuf, Counts::Int(rcounts),
        Displs::Int(rdispls), rtype, comm, info, req))
}}
crate::mpi_export! { MPI_Alltoallw_init, PMPI_Alltoallw_init, (sbuf: *const c_void, scounts: *const c_int, sdispls: *const c_int, stypes: *const MPI_Datatype,
        rbuf: *mut c_void, rcounts: *const c_int, rdispls: *const c_int, rtypes: *const MPI_Datatype, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) {
    call("MPI_Alltoallw_init", comm, move |rt| alltoallw_init(rt, sbuf, Counts::Int(scounts), Displs::Int(sdispls), stypes, rbuf, Counts::Int(rcounts),
        Displs::Int(rdispls), rtypes, comm, info, req))
}}
crate::mpi_export! { MPI_Reduce_scatter_init, PMPI_Reduce_scatter_init, (sbuf: *const c_void, rbuf: *mut c_void, rcounts: *const c_int, dt: MPI_Datatype,
        op: MPI_Op, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) {
    call("MPI_Reduce_scatter_init", comm, move |rt| reduce_scatter_init(rt, sbuf, rbuf, Counts::Int(rcounts), dt, op, comm, info, req))
}}
crate::mpi_export! { MPI_Neighbor_allgather_init, PMPI_Neighbor_allgather_init, (sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void,
        rcount: c_int, rtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) {
    call("MPI_Neighbor_allgather_init", comm, move |rt| {
        check_neighbor(rt, comm, info, stype, rtype, req)?;
        check_count(scount)?;
        check_count(rcount)?;
        register(rt, comm, starter(move |rt, r| neighbor::allgather(rt, sbuf, scount, stype, rbuf, rcount, rtype, comm, r)), req)
    })
}}
crate::mpi_export! { MPI_Neighbor_allgatherv_init, PMPI_Neighbor_allgatherv_init, (sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void,
        rcounts: *const c_int, displs: *const c_int, rtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) {
    call("MPI_Neighbor_allgatherv_init", comm, move |rt| neighbor_allgatherv_init(rt, sbuf, scount, stype, rbuf, Counts::Int(rcounts), Displs::Int(displs), rtype,
        comm, info, req))
}}
crate::mpi_export! { MPI_Neighbor_alltoall_init, PMPI_Neighbor_alltoall_init, (sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void,
        rcount: c_int, rtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) {
    call("MPI_Neighbor_alltoall_init", comm, move |rt| {
        check_neighbor(rt, comm, info, stype, rtype, req)?;
        check_count(scount)?;
        check_count(rcount)?;
        register(rt, comm, starter(move |rt, r| neighbor::alltoall(rt, sbuf, scount, stype, rbuf, rcount, rtype, comm, r)), req)
    })
}}
crate::mpi_export! { MPI_Neighbor_alltoallv_init, PMPI_Neighbor_alltoallv_init, (sbuf: *const c_void, scounts: *const c_int, sdispls: *const c_int,
        stype: MPI_Datatype, rbuf: *mut c_void, rcounts: *const c_int, rdispls: *const c_int, rtype: MPI_Datatype, comm: MPI_Comm,
        info: MPI_Info, req: *mut MPI_Request) {
    call("MPI_Neighbor_alltoallv_init", comm, move |rt| neighbor_alltoallv_init(rt, sbuf, Counts::Int(scounts), Displs::Int(sdispls), stype, rbuf,
        Counts::Int(rcounts), Displs::Int(rdispls), rtype, comm, info, req))
}}
crate::mpi_export! { MPI_Neighbor_alltoallw_init, PMPI_Neighbor_alltoallw_init, (sbuf: *const c_void, scounts: *const c_int, sdispls: *const MPI_Aint,
        stypes: *const MPI_Datatype, rbuf: *mut c_void, rcounts: *const c_int, rdispls: *const MPI_Aint, rtypes: *const MPI_Datatype, comm: MPI_Comm,
        info: MPI_Info, req: *mut MPI_Request) {
    call("MPI_Neighbor_alltoallw_init", comm, move |rt| neighbor_alltoallw_init(rt, sbuf, Counts::Int(scounts), sdispls, stypes, rbuf, Counts::Int(rcounts), rdispls,
        rtypes, comm, info, req))
}}
