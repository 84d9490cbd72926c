//! Partitioned point-to-point communication (MPI-4.1 chapter 4): the partitioned send and
//! receive inits, `MPI_Pready` and its range and list forms, and `MPI_Parrived`.

use std::os::raw::{c_int, c_void};

use crate::boundary::call;
use crate::consts::*;
use crate::error::err;
use crate::p2p::partitioned::*;

crate::mpi_export! { MPI_Psend_init, PMPI_Psend_init, (buf: *const c_void, partitions: c_int, count: MPI_Count, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) {
    call("MPI_Psend_init", comm, move |rt| init(rt, true, buf as *mut c_void, partitions, count, dt, dest, tag, comm, info, req))
}}
crate::mpi_export! { MPI_Precv_init, PMPI_Precv_init, (buf: *mut c_void, partitions: c_int, count: MPI_Count, dt: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) {
    call("MPI_Precv_init", comm, move |rt| init(rt, false, buf, partitions, count, dt, source, tag, comm, info, req))
}}
crate::mpi_export! { MPI_Pready, PMPI_Pready, (partition: c_int, req: MPI_Request) {
    call("MPI_Pready", comm_of(req), |rt| ready(rt, std::iter::once(partition), req))
}}
crate::mpi_export! { MPI_Pready_range, PMPI_Pready_range, (low: c_int, high: c_int, req: MPI_Request) {
    call("MPI_Pready_range", comm_of(req), |rt| {
        if low > high {
            return err(MPI_ERR_ARG, format!("partition_low {low} is above partition_high {high}"));
        }
        ready(rt, low..=high, req)
    })
}}
crate::mpi_export! { MPI_Pready_list, PMPI_Pready_list, (length: c_int, list: *mut c_int, req: MPI_Request) {
    call("MPI_Pready_list", comm_of(req), |rt| {
        if length < 0 {
            return err(MPI_ERR_ARG, format!("length {length} is negative"));
        }
        let parts = crate::error::slice(list, length as usize, "array_of_partitions")?;
        ready(rt, parts.iter().copied(), req)
    })
}}
crate::mpi_export! { MPI_Parrived, PMPI_Parrived, (req: MPI_Request, partition: c_int, flag: *mut c_int) {
    call("MPI_Parrived", comm_of(req), |rt| parrived(rt, req, partition, flag))
}}
