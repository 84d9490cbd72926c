//! External interfaces (MPI-4.1 chapter 13): generalized requests.

use std::os::raw::{c_int, c_void};

use crate::boundary::call;
use crate::consts::*;
use crate::generalized::*;

crate::mpi_export! { MPI_Grequest_start, PMPI_Grequest_start, (query: Option<QueryFn>, free: Option<FreeFn>, cancel: Option<CancelFn>, extra: *mut c_void, req: *mut MPI_Request) {
    call("MPI_Grequest_start", MPI_COMM_WORLD, move |rt| grequest_start(rt, query, free, cancel, extra, req))
}}
crate::mpi_export! { MPI_Grequest_complete, PMPI_Grequest_complete, (req: MPI_Request) {
    call("MPI_Grequest_complete", MPI_COMM_WORLD, move |rt| grequest_complete(rt, req))
}}
crate::mpi_export! { MPI_Status_set_elements, PMPI_Status_set_elements, (status: *mut MPI_Status, dt: MPI_Datatype, count: c_int) {
    call("MPI_Status_set_elements", MPI_COMM_WORLD, move |rt| set_elements(rt, status, dt, count as MPI_Count))
}}
crate::mpi_export! { MPI_Status_set_elements_x, PMPI_Status_set_elements_x, (status: *mut MPI_Status, dt: MPI_Datatype, count: MPI_Count) {
    call("MPI_Status_set_elements_x", MPI_COMM_WORLD, move |rt| set_elements(rt, status, dt, count))
}}
crate::mpi_export! { MPI_Status_set_cancelled, PMPI_Status_set_cancelled, (status: *mut MPI_Status, flag: c_int) {
    call("MPI_Status_set_cancelled", MPI_COMM_WORLD, |_| {
        let st = status_mut(status)?;
        st.count_hi_and_cancelled = (st.count_hi_and_cancelled & !1) | (flag != 0) as c_int;
        Ok(())
    })
}}
