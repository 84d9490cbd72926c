//! Collective communication (MPI-4.1 chapter 6): the blocking and non-blocking collectives,
//! `MPI_Alltoallw` and its non-blocking form, and user-defined reduction operations. The
//! small blocking barrier, bcast, reduce, allreduce, allgather, gather, scatter and alltoall
//! of a communicator on one host try the shared-memory collectives' direct path first
//! (`coll::onhost`, `coll::onhost_movers`).

use std::os::raw::{c_int, c_void};

use ferry_coll::Collective;
use ferry_data::reduce_op::PredefinedOp;

use crate::boundary::call;
use crate::coll::{BLOCKING, Counts, Displs, req_out};
use crate::coll::alltoallw::*;
use crate::coll::{onhost, onhost_movers};
use crate::coll::movers::*;
use crate::coll::reductions::*;
use crate::consts::*;
use crate::error::{err, out_arg};
use crate::op::*;

crate::mpi_export! { MPI_Barrier, PMPI_Barrier, (comm: MPI_Comm) {
    call("MPI_Barrier", comm, move |rt| onhost::try_barrier(rt, comm).unwrap_or_else(|| barrier(rt, comm, BLOCKING)))
}}
crate::mpi_export! { MPI_Ibarrier, PMPI_Ibarrier, (comm: MPI_Comm, req: *mut MPI_Request) {
    call("MPI_Ibarrier", comm, move |rt| { let req = req_out(rt, comm, req)?; barrier(rt, comm, req) })
}}
crate::mpi_export! { MPI_Bcast, PMPI_Bcast, (buf: *mut c_void, count: c_int, dt: MPI_Datatype, root: c_int, comm: MPI_Comm) {
    call("MPI_Bcast", comm, move |rt| onhost::try_bcast(rt, buf, count, dt, root, comm).unwrap_or_else(|| bcast(rt, buf, count, dt, root, comm, BLOCKING)))
}}
crate::mpi_export! { MPI_Ibcast, PMPI_Ibcast, (buf: *mut c_void, count: c_int, dt: MPI_Datatype, root: c_int, comm: MPI_Comm, req: *mut MPI_Request) {
    call("MPI_Ibcast", comm, move |rt| { let req = req_out(rt, comm, req)?; bcast(rt, buf, count, dt, root, comm, req) })
}}
crate::mpi_export! { MPI_Gather, PMPI_Gather, (sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void,
        rcount: c_int, rtype: MPI_Datatype, root: c_int, comm: MPI_Comm) {
    call("MPI_Gather", comm, move |rt| {
        onhost_movers::try_rooted(rt, true, sbuf, scount, stype, rbuf, rcount, rtype, root, comm).unwrap_or_else(|| gather_args(rt, sbuf, scount, stype, rbuf, rcount, rtype, root, comm, BLOCKING))
    })
}}
crate::mpi_export! { MPI_Igather, PMPI_Igather, (sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void,
        rcount: c_int, rtype: MPI_Datatype, root: c_int, comm: MPI_Comm, req: *mut MPI_Request) {
    call("MPI_Igather", comm, move |rt| { let req = req_out(rt, comm, req)?; gather_args(rt, sbuf, scount, stype, rbuf, rcount, rtype, root, comm, req) })
}}
crate::mpi_export! { MPI_Gatherv, PMPI_Gatherv, (sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void,
        rcounts: *const c_int, rdispls: *const c_int, rtype: MPI_Datatype, root: c_int, comm: MPI_Comm) {
    call("MPI_Gatherv", comm, move |rt| gatherv_args(rt, sbuf, scount, stype, rbuf, Counts::Int(rcounts), Displs::Int(rdispls), rtype, root, comm, BLOCKING))
}}
crate::mpi_export! { MPI_Igatherv, PMPI_Igatherv, (sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void,
        rcounts: *const c_int, rdispls: *const c_int, rtype: MPI_Datatype, root: c_int, comm: MPI_Comm, req: *mut MPI_Request) {
    call("MPI_Igatherv", comm, move |rt| { let req = req_out(rt, comm, req)?; gatherv_args(rt, sbuf, scount, stype, rbuf, Counts::Int(rcounts), Displs::Int(rdispls), rtype, root, comm, req) })
}}
crate::mpi_export! { MPI_Allgather, PMPI_Allgather, (sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void,
        rcount: c_int, rtype: MPI_Datatype, comm: MPI_Comm) {
    call("MPI_Allgather", comm, move |rt| {
        onhost::try_allgather(rt, sbuf, scount, stype, rbuf, rcount, rtype, comm).unwrap_or_else(|| allgather_args(rt, sbuf, scount, stype, rbuf, rcount, rtype, comm, BLOCKING))
    })
}}
crate::mpi_export! { MPI_Iallgather, PMPI_Iallgather, (sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void,
        rcount: c_int, rtype: MPI_Datatype, comm: MPI_Comm, req: *mut MPI_Request) {
    call("MPI_Iallgather", comm, move |rt| { let req = req_out(rt, comm, req)?; allgather_args(rt, sbuf, scount, stype, rbuf, rcount, rtype, comm, req) })
}}
crate::mpi_export! { MPI_Allgatherv, PMPI_Allgatherv, (sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void,
        rcounts: *const c_int, rdispls: *const c_int, rtype: MPI_Datatype, comm: MPI_Comm) {
    call("MPI_Allgatherv", comm, move |rt| allgatherv_args(rt, sbuf, scount, stype, rbuf, Counts::Int(rcounts), Displs::Int(rdispls), rtype, comm, BLOCKING))
}}
crate::mpi_export! { MPI_Iallgatherv, PMPI_Iallgatherv, (sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void,
        rcounts: *const c_int, rdispls: *const c_int, rtype: MPI_Datatype, comm: MPI_Comm, req: *mut MPI_Request) {
    call("MPI_Iallgatherv", comm, move |rt| { let req = req_out(rt, comm, req)?; allgatherv_args(rt, sbuf, scount, stype, rbuf, Counts::Int(rcounts), Displs::Int(rdispls), rtype, comm, req) })
}}
crate::mpi_export! { MPI_Scatter, PMPI_Scatter, (sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void,
        rcount: c_int, rtype: MPI_Datatype, root: c_int, comm: MPI_Comm) {
    call("MPI_Scatter", comm, move |rt| {
        onhost_movers::try_rooted(rt, false, sbuf, scount, stype, rbuf, rcount, rtype, root, comm).unwrap_or_else(|| scatter_args(rt, sbuf, scount, stype, rbuf, rcount, rtype, root, comm, BLOCKING))
    })
}}
crate::mpi_export! { MPI_Iscatter, PMPI_Iscatter, (sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void,
        rcount: c_int, rtype: MPI_Datatype, root: c_int, comm: MPI_Comm, req: *mut MPI_Request) {
    call("MPI_Iscatter", comm, move |rt| { let req = req_out(rt, comm, req)?; scatter_args(rt, sbuf, scount, stype, rbuf, rcount, rtype, root, comm, req) })
}}
crate::mpi_export! { MPI_Scatterv, PMPI_Scatterv, (sbuf: *const c_void, scounts: *const c_int, sdispls: *const c_int, stype: MPI_Datatype,
        rbuf: *mut c_void, rcount: c_int, rtype: MPI_Datatype, root: c_int, comm: MPI_Comm) {
    call("MPI_Scatterv", comm, move |rt| scatterv_args(rt, sbuf, Counts::Int(scounts), Displs::Int(sdispls), stype, rbuf, rcount, rtype, root, comm, BLOCKING))
}}
crate::mpi_export! { MPI_Iscatterv, PMPI_Iscatterv, (sbuf: *const c_void, scounts: *const c_int, sdispls: *const c_int, stype: MPI_Datatype,
        rbuf: *mut c_void, rcount: c_int, rtype: MPI_Datatype, root: c_int, comm: MPI_Comm, req: *mut MPI_Request) {
    call("MPI_Iscatterv", comm, move |rt| { let req = req_out(rt, comm, req)?; scatterv_args(rt, sbuf, Counts::Int(scounts), Displs::Int(sdispls), stype, rbuf, rcount, rtype, root, comm, req) })
}}
crate::mpi_export! { MPI_Alltoall, PMPI_Alltoall, (sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void,
        rcount: c_int, rtype: MPI_Datatype, comm: MPI_Comm) {
    call("MPI_Alltoall", comm, move |rt| {
        onhost_movers::try_alltoall(rt, sbuf, scount, stype, rbuf, rcount, rtype, comm).unwrap_or_else(|| alltoall_args(rt, sbuf, scount, stype, rbuf, rcount, rtype, comm, BLOCKING))
    })
}}
crate::mpi_export! { MPI_Ialltoall, PMPI_Ialltoall, (sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void,
        rcount: c_int, rtype: MPI_Datatype, comm: MPI_Comm, req: *mut MPI_Request) {
    call("MPI_Ialltoall", comm, move |rt| { let req = req_out(rt, comm, req)?; alltoall_args(rt, sbuf, scount, stype, rbuf, rcount, rtype, comm, req) })
}}
crate::mpi_export! { MPI_Alltoallv, PMPI_Alltoallv, (sbuf: *const c_void, scounts: *const c_int, sdispls: *const c_int, stype: MPI_Datatype,
        rbuf: *mut c_void, rcounts: *const c_int, rdispls: *const c_int, rtype: MPI_Datatype, comm: MPI_Comm) {
    call("MPI_Alltoallv", comm, move |rt| alltoallv_args(rt, sbuf, Counts::Int(scounts), Displs::Int(sdispls), stype, rbuf, Counts::Int(rcounts), Displs::Int(rdispls), rtype, comm, BLOCKING))
}}
crate::mpi_export! { MPI_Ialltoallv, PMPI_Ialltoallv, (sbuf: *const c_void, scounts: *const c_int, sdispls: *const c_int, stype: MPI_Datatype,
        rbuf: *mut c_void, rcounts: *const c_int, rdispls: *const c_int, rtype: MPI_Datatype, comm: MPI_Comm, req: *mut MPI_Request) {
    call("MPI_Ialltoallv", comm, move |rt| { let req = req_out(rt, comm, req)?; alltoallv_args(rt, sbuf, Counts::Int(scounts), Displs::Int(sdispls), stype, rbuf, Counts::Int(rcounts), Displs::Int(rdispls), rtype, comm, req) })
}}
crate::mpi_export! { MPI_Reduce, PMPI_Reduce, (sbuf: *const c_void, rbuf: *mut c_void, count: c_int, dt: MPI_Datatype, op: MPI_Op, root: c_int, comm: MPI_Comm) {
    call("MPI_Reduce", comm, move |rt| {
        onhost::try_reduce(rt, sbuf, rbuf, count, dt, op, Some(root), comm).unwrap_or_else(|| reduce(rt, Collective::Reduce, sbuf, rbuf, count.into(), dt, op, root, comm, BLOCKING))
    })
}}
crate::mpi_export! { MPI_Ireduce, PMPI_Ireduce, (sbuf: *const c_void, rbuf: *mut c_void, count: c_int, dt: MPI_Datatype, op: MPI_Op, root: c_int, comm: MPI_Comm, req: *mut MPI_Request) {
    call("MPI_Ireduce", comm, move |rt| { let req = req_out(rt, comm, req)?; reduce(rt, Collective::Reduce, sbuf, rbuf, count.into(), dt, op, root, comm, req) })
}}
crate::mpi_export! { MPI_Allreduce, PMPI_Allreduce, (sbuf: *const c_void, rbuf: *mut c_void, count: c_int, dt: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) {
    call("MPI_Allreduce", comm, move |rt| {
        onhost::try_reduce(rt, sbuf, rbuf, count, dt, op, None, comm).unwrap_or_else(|| reduce(rt, Collective::Allreduce, sbuf, rbuf, count.into(), dt, op, 0, comm, BLOCKING))
    })
}}
crate::mpi_export! { MPI_Iallreduce, PMPI_Iallreduce, (sbuf: *const c_void, rbuf: *mut c_void, count: c_int, dt: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, req: *mut MPI_Request) {
    call("MPI_Iallreduce", comm, move |rt| { let req = req_out(rt, comm, req)?; reduce(rt, Collective::Allreduce, sbuf, rbuf, count.into(), dt, op, 0, comm, req) })
}}
crate::mpi_export! { MPI_Reduce_scatter_block, PMPI_Reduce_scatter_block, (sbuf: *const c_void, rbuf: *mut c_void, count: c_int, dt: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) {
    call("MPI_Reduce_scatter_block", comm, move |rt| reduce(rt, Collective::ReduceScatter, sbuf, rbuf, count.into(), dt, op, 0, comm, BLOCKING))
}}
crate::mpi_export! { MPI_Ireduce_scatter_block, PMPI_Ireduce_scatter_block, (sbuf: *const c_void, rbuf: *mut c_void, count: c_int, dt: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, req: *mut MPI_Request) {
    call("MPI_Ireduce_scatter_block", comm, move |rt| { let req = req_out(rt, comm, req)?; reduce(rt, Collective::ReduceScatter, sbuf, rbuf, count.into(), dt, op, 0, comm, req) })
}}
crate::mpi_export! { MPI_Reduce_scatter, PMPI_Reduce_scatter, (sbuf: *const c_void, rbuf: *mut c_void, rcounts: *const c_int, dt: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) {
    call("MPI_Reduce_scatter", comm, move |rt| reduce_scatter(rt, sbuf, rbuf, Counts::Int(rcounts), dt, op, comm, BLOCKING))
}}
crate::mpi_export! { MPI_Ireduce_scatter, PMPI_Ireduce_scatter, (sbuf: *const c_void, rbuf: *mut c_void, rcounts: *const c_int, dt: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, req: *mut MPI_Request) {
    call("MPI_Ireduce_scatter", comm, move |rt| { let req = req_out(rt, comm, req)?; reduce_scatter(rt, sbuf, rbuf, Counts::Int(rcounts), dt, op, comm, req) })
}}
crate::mpi_export! { MPI_Scan, PMPI_Scan, (sbuf: *const c_void, rbuf: *mut c_void, count: c_int, dt: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) {
    call("MPI_Scan", comm, move |rt| reduce(rt, Collective::Scan, sbuf, rbuf, count.into(), dt, op, 0, comm, BLOCKING))
}}
crate::mpi_export! { MPI_Iscan, PMPI_Iscan, (sbuf: *const c_void, rbuf: *mut c_void, count: c_int, dt: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, req: *mut MPI_Request) {
    call("MPI_Iscan", comm, move |rt| { let req = req_out(rt, comm, req)?; reduce(rt, Collective::Scan, sbuf, rbuf, count.into(), dt, op, 0, comm, req) })
}}
crate::mpi_export! { MPI_Exscan, PMPI_Exscan, (sbuf: *const c_void, rbuf: *mut c_void, count: c_int, dt: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) {
    call("MPI_Exscan", comm, move |rt| reduce(rt, Collective::Exscan, sbuf, rbuf, count.into(), dt, op, 0, comm, BLOCKING))
}}
crate::mpi_export! { MPI_Iexscan, PMPI_Iexscan, (sbuf: *const c_void, rbuf: *mut c_void, count: c_int, dt: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, req: *mut MPI_Request) {
    call("MPI_Iexscan", comm, move |rt| { let req = req_out(rt, comm, req)?; reduce(rt, Collective::Exscan, sbuf, rbuf, count.into(), dt, op, 0, comm, req) })
}}
crate::mpi_export! { MPI_Alltoallw, PMPI_Alltoallw, (sbuf: *const c_void, scounts: *const c_int, sdispls: *const c_int, stypes: *const MPI_Datatype,
        rbuf: *mut c_void, rcounts: *const c_int, rdispls: *const c_int, rtypes: *const MPI_Datatype, comm: MPI_Comm) {
    call("MPI_Alltoallw", comm, move |rt| alltoallw(rt, sbuf, Counts::Int(scounts), Displs::Int(sdispls), stypes, rbuf, Counts::Int(rcounts), Displs::Int(rdispls), rtypes, comm, BLOCKING))
}}
crate::mpi_export! { MPI_Ialltoallw, PMPI_Ialltoallw, (sbuf: *const c_void, scounts: *const c_int, sdispls: *const c_int, stypes: *const MPI_Datatype,
        rbuf: *mut c_void, rcounts: *const c_int, rdispls: *const c_int, rtypes: *const MPI_Datatype, comm: MPI_Comm, req: *mut MPI_Request) {
    call("MPI_Ialltoallw", comm, move |rt| { let req = req_out(rt, comm, req)?; alltoallw(rt, sbuf, Counts::Int(scounts), Displs::Int(sdispls), stypes, rbuf, Counts::Int(rcounts), Displs::Int(rdispls), rtypes, comm, req) })
}}
crate::mpi_export! { MPI_Op_create, PMPI_Op_create, (user_fn: Option<MPI_User_function>, commute: c_int, op: *mut MPI_Op) {
    call("MPI_Op_create", MPI_COMM_WORLD, move |rt| {
        let out = out_arg(op, "op")?;
        let Some(f) = user_fn else { return err(MPI_ERR_ARG, "user function is NULL") };
        *out = rt.add_op(UserOp { f: UserFn::Int(f), commute: commute != 0 })?;
        Ok(())
    })
}}
crate::mpi_export! { MPI_Op_create_c, PMPI_Op_create_c, (user_fn: Option<MPI_User_function_c>, commute: c_int, op: *mut MPI_Op) {
    call("MPI_Op_create_c", MPI_COMM_WORLD, move |rt| {
        let out = out_arg(op, "op")?;
        let Some(f) = user_fn else { return err(MPI_ERR_ARG, "user function is NULL") };
        *out = rt.add_op(UserOp { f: UserFn::Large(f), commute: commute != 0 })?;
        Ok(())
    })
}}
crate::mpi_export! { MPI_Op_free, PMPI_Op_free, (op: *mut MPI_Op) {
    call("MPI_Op_free", MPI_COMM_WORLD, move |rt| {
        let o = out_arg(op, "op")?;
        if PredefinedOp::from_handle(*o).is_some() {
            return err(MPI_ERR_OP, format!("cannot free the predefined operation {:#x}", *o));
        }
        // Calls in flight keep their own copy of the function: freeing cannot disturb them.
        if rt.ops.remove(&*o).is_none() {
            return err(MPI_ERR_OP, if *o == MPI_OP_NULL { "MPI_OP_NULL is not an operation".to_string() } else { format!("invalid operation {:#x}", *o) });
        }
        *o = MPI_OP_NULL;
        Ok(())
    })
}}
crate::mpi_export! { MPI_Op_commutative, PMPI_Op_commutative, (op: MPI_Op, commute: *mut c_int) {
    call("MPI_Op_commutative", MPI_COMM_WORLD, move |rt| {
        let o = out_arg(commute, "commute")?;
        *o = match rt.ops.get(&op) {
            Some(u) => u.commute as c_int,
            None if PredefinedOp::from_handle(op).is_some() => 1,
            None => return err(MPI_ERR_OP, format!("invalid operation {op:#x}")),
        };
        Ok(())
    })
}}
crate::mpi_export! { MPI_Reduce_local, PMPI_Reduce_local, (inbuf: *const c_void, inoutbuf: *mut c_void, count: c_int, dt: MPI_Datatype, op: MPI_Op) {
    call("MPI_Reduce_local", MPI_COMM_WORLD, move |rt| reduce_local(rt, inbuf, inoutbuf, count.into(), dt, op))
}}
