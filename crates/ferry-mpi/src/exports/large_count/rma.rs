//! Large-count one-sided calls (`MPI_Put_c`, `MPI_Win_create_c`, ...) onto their int-count
//! twins: counts and displacement units are narrowed to int, and a value beyond INT_MAX is
//! MPI_ERR_COUNT (MPI_ERR_DISP for a unit) through the window's (or communicator's) error
//! handler, so a program learns of the limit instead of moving less than it asked for.

use std::os::raw::{c_int, c_void};

use super::{convert, converted, narrow};
use crate::consts::*;
use crate::error::{MpiError, MpiResult};
use crate::exports::one_sided::win_call;

extern "C" {
    fn PMPI_Win_create(base: *mut c_void, size: MPI_Aint, disp_unit: c_int, info: MPI_Info, comm: MPI_Comm, win: *mut MPI_Win) -> c_int;
    fn PMPI_Win_allocate(size: MPI_Aint, disp_unit: c_int, info: MPI_Info, comm: MPI_Comm, baseptr: *mut c_void, win: *mut MPI_Win) -> c_int;
    fn PMPI_Win_allocate_shared(size: MPI_Aint, disp_unit: c_int, info: MPI_Info, comm: MPI_Comm, baseptr: *mut c_void, win: *mut MPI_Win) -> c_int;
    fn PMPI_Win_shared_query(win: MPI_Win, rank: c_int, size: *mut MPI_Aint, disp_unit: *mut c_int, baseptr: *mut c_void) -> c_int;
    fn PMPI_Put(o: *const c_void, oc: c_int, ot: MPI_Datatype, rank: c_int, disp: MPI_Aint, tc: c_int, tt: MPI_Datatype, win: MPI_Win) -> c_int;
    fn PMPI_Get(o: *mut c_void, oc: c_int, ot: MPI_Datatype, rank: c_int, disp: MPI_Aint, tc: c_int, tt: MPI_Datatype, win: MPI_Win) -> c_int;
    fn PMPI_Accumulate(o: *const c_void, oc: c_int, ot: MPI_Datatype, rank: c_int, disp: MPI_Aint, tc: c_int, tt: MPI_Datatype, op: MPI_Op, win: MPI_Win) -> c_int;
    fn PMPI_Get_accumulate(o: *const c_void, oc: c_int, ot: MPI_Datatype, r: *mut c_void, rc: c_int, rt: MPI_Datatype, rank: c_int, disp: MPI_Aint, tc: c_int, tt: MPI_Datatype, op: MPI_Op, win: MPI_Win) -> c_int;
    fn PMPI_Rput(o: *const c_void, oc: c_int, ot: MPI_Datatype, rank: c_int, disp: MPI_Aint, tc: c_int, tt: MPI_Datatype, win: MPI_Win, req: *mut MPI_Request) -> c_int;
    fn PMPI_Rget(o: *mut c_void, oc: c_int, ot: MPI_Datatype, rank: c_int, disp: MPI_Aint, tc: c_int, tt: MPI_Datatype, win: MPI_Win, req: *mut MPI_Request) -> c_int;
    fn PMPI_Raccumulate(o: *const c_void, oc: c_int, ot: MPI_Datatype, rank: c_int, disp: MPI_Aint, tc: c_int, tt: MPI_Datatype, op: MPI_Op, win: MPI_Win, req: *mut MPI_Request) -> c_int;
    fn PMPI_Rget_accumulate(o: *const c_void, oc: c_int, ot: MPI_Datatype, r: *mut c_void, rc: c_int, rt: MPI_Datatype, rank: c_int, disp: MPI_Aint, tc: c_int, tt: MPI_Datatype, op: MPI_Op, win: MPI_Win, req: *mut MPI_Request) -> c_int;
}

/// A displacement unit narrowed to the int of the int-count implementation.
fn unit(v: MPI_Aint) -> MpiResult<c_int> {
    c_int::try_from(v).map_err(|_| MpiError::new(MPI_ERR_DISP, format!("displacement unit {v} does not fit an int")))
}

/// The counts of an operation on `win`, narrowed; an error goes through the window's handler.
fn counts<const N: usize>(name: &'static str, win: MPI_Win, c: [(MPI_Count, &str); N]) -> Result<[c_int; N], c_int> {
    let mut out = [0; N];
    let rc = win_call(name, win, |_| {
        for (o, (v, what)) in out.iter_mut().zip(c) {
            *o = narrow(v, what)?;
        }
        Ok(())
    });
    if rc == MPI_SUCCESS { Ok(out) } else { Err(rc) }
}

crate::mpi_export! { MPI_Win_create_c, PMPI_Win_create_c, (base: *mut c_void, size: MPI_Aint, disp_unit: MPI_Aint, info: MPI_Info, comm: MPI_Comm, win: *mut MPI_Win) {
    let u = converted!(convert("MPI_Win_create_c", comm, |_| unit(disp_unit)));
    PMPI_Win_create(base, size, u, info, comm, win)
}}
crate::mpi_export! { MPI_Win_allocate_c, PMPI_Win_allocate_c, (size: MPI_Aint, disp_unit: MPI_Aint, info: MPI_Info, comm: MPI_Comm, baseptr: *mut c_void, win: *mut MPI_Win) {
    let u = converted!(convert("MPI_Win_allocate_c", comm, |_| unit(disp_unit)));
    PMPI_Win_allocate(size, u, info, comm, baseptr, win)
}}
crate::mpi_export! { MPI_Win_allocate_shared_c, PMPI_Win_allocate_shared_c, (size: MPI_Aint, disp_unit: MPI_Aint, info: MPI_Info, comm: MPI_Comm, baseptr: *mut c_void, win: *mut MPI_Win) {
    let u = converted!(convert("MPI_Win_allocate_shared_c", comm, |_| unit(disp_unit)));
    PMPI_Win_allocate_shared(size, u, info, comm, baseptr, win)
}}
crate::mpi_export! { MPI_Win_shared_query_c, PMPI_Win_shared_query_c, (win: MPI_Win, rank: c_int, size: *mut MPI_Aint, disp_unit: *mut MPI_Aint, baseptr: *mut c_void) {
    let mut u: c_int = 0;
    let rc = PMPI_Win_shared_query(win, rank, size, &mut u, baseptr);
    if rc == MPI_SUCCESS && !disp_unit.is_null() {
        // SAFETY: a non-NULL output argument points to the caller's MPI_Aint.
        *disp_unit = u as MPI_Aint;
    }
    rc
}}

crate::mpi_export! { MPI_Put_c, PMPI_Put_c, (o: *const c_void, oc: MPI_Count, ot: MPI_Datatype, rank: c_int, disp: MPI_Aint, tc: MPI_Count, tt: MPI_Datatype, win: MPI_Win) {
    let [oc, tc] = converted!(counts("MPI_Put_c", win, [(oc, "origin count"), (tc, "target count")]));
    PMPI_Put(o, oc, ot, rank, disp, tc, tt, win)
}}
crate::mpi_export! { MPI_Get_c, PMPI_Get_c, (o: *mut c_void, oc: MPI_Count, ot: MPI_Datatype, rank: c_int, disp: MPI_Aint, tc: MPI_Count, tt: MPI_Datatype, win: MPI_Win) {
    let [oc, tc] = converted!(counts("MPI_Get_c", win, [(oc, "origin count"), (tc, "target count")]));
    PMPI_Get(o, oc, ot, rank, disp, tc, tt, win)
}}
crate::mpi_export! { MPI_Accumulate_c, PMPI_Accumulate_c, (o: *const c_void, oc: MPI_Count, ot: MPI_Datatype, rank: c_int, disp: MPI_Aint, tc: MPI_Count, tt: MPI_Datatype, op: MPI_Op, win: MPI_Win) {
    let [oc, tc] = converted!(counts("MPI_Accumulate_c", win, [(oc, "origin count"), (tc, "target count")]));
    PMPI_Accumulate(o, oc, ot, rank, disp, tc, tt, op, win)
}}
crate::mpi_export! { MPI_Get_accumulate_c, PMPI_Get_accumulate_c, (o: *const c_void, oc: MPI_Count, ot: MPI_Datatype, r: *mut c_void, rc: MPI_Count, rt: MPI_Datatype,
        rank: c_int, disp: MPI_Aint, tc: MPI_Count, tt: MPI_Datatype, op: MPI_Op, win: MPI_Win) {
    let [oc, rc, tc] = converted!(counts("MPI_Get_accumulate_c", win, [(oc, "origin count"), (rc, "result count"), (tc, "target count")]));
    PMPI_Get_accumulate(o, oc, ot, r, rc, rt, rank, disp, tc, tt, op, win)
}}
crate::mpi_export! { MPI_Rput_c, PMPI_Rput_c, (o: *const c_void, oc: MPI_Count, ot: MPI_Datatype, rank: c_int, disp: MPI_Aint, tc: MPI_Count, tt: MPI_Datatype, win: MPI_Win, req: *mut MPI_Request) {
    let [oc, tc] = converted!(counts("MPI_Rput_c", win, [(oc, "origin count"), (tc, "target count")]));
    PMPI_Rput(o, oc, ot, rank, disp, tc, tt, win, req)
}}
crate::mpi_export! { MPI_Rget_c, PMPI_Rget_c, (o: *mut c_void, oc: MPI_Count, ot: MPI_Datatype, rank: c_int, disp: MPI_Aint, tc: MPI_Count, tt: MPI_Datatype, win: MPI_Win, req: *mut MPI_Request) {
    let [oc, tc] = converted!(counts("MPI_Rget_c", win, [(oc, "origin count"), (tc, "target count")]));
    PMPI_Rget(o, oc, ot, rank, disp, tc, tt, win, req)
}}
crate::mpi_export! { MPI_Raccumulate_c, PMPI_Raccumulate_c, (o: *const c_void, oc: MPI_Count, ot: MPI_Datatype, rank: c_int, disp: MPI_Aint, tc: MPI_Count, tt: MPI_Datatype, op: MPI_Op, win: MPI_Win, req: *mut MPI_Request) {
    let [oc, tc] = converted!(counts("MPI_Raccumulate_c", win, [(oc, "origin count"), (tc, "target count")]));
    PMPI_Raccumulate(o, oc, ot, rank, disp, tc, tt, op, win, req)
}}
crate::mpi_export! { MPI_Rget_accumulate_c, PMPI_Rget_accumulate_c, (o: *const c_void, oc: MPI_Count, ot: MPI_Datatype, r: *mut c_void, rc: MPI_Count, rt: MPI_Datatype,
        rank: c_int, disp: MPI_Aint, tc: MPI_Count, tt: MPI_Datatype, op: MPI_Op, win: MPI_Win, req: *mut MPI_Request) {
    let [oc, rc, tc] = converted!(counts("MPI_Rget_accumulate_c", win, [(oc, "origin count"), (rc, "result count"), (tc, "target count")]));
    PMPI_Rget_accumulate(o, oc, ot, r, rc, rt, rank, disp, tc, tt, op, win, req)
}}
