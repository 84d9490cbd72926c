//! Large-count datatype queries, status counts and packing: 64-bit values throughout, on
//! the same type maps and packing code as the int-count functions.

use std::os::raw::{c_char, c_void};

use crate::boundary::call;
use crate::error::out_arg;
use crate::consts::*;
use crate::error::{MpiError, MpiResult};
use crate::op_queries::answer;
use crate::objects::Runtime;

fn extent(rt: &mut Runtime, dt: MPI_Datatype, lb: *mut MPI_Count, extent: *mut MPI_Count, true_extent: bool) -> MpiResult<()> {
    extent_of(&rt.any_datatype(dt)?, lb, extent, true_extent)
}

fn extent_of(t: &ferry_data::datatype::Datatype, lb: *mut MPI_Count, extent: *mut MPI_Count, true_extent: bool) -> MpiResult<()> {
    let (l, e) = if true_extent { (t.true_lb(), t.true_extent()) } else { (t.lb(), t.extent()) };
    *out_arg(lb, "lb")? = l as MPI_Count;
    *out_arg(extent, "extent")? = e as MPI_Count;
    Ok(())
}

/// A size or position as an `MPI_Count` (a buffer in memory never exceeds one).
fn count(v: usize) -> MPI_Count {
    v as MPI_Count
}

// Inside a user reduction function (mpi4py asks the large-count forms there) these three
// are answered from the reduction's snapshot, as their int twins are (op_queries.rs).
crate::mpi_export! { MPI_Type_size_c, PMPI_Type_size_c, (dt: MPI_Datatype, size: *mut MPI_Count) {
    if let Some(rc) = answer(|v| { *out_arg(size, "size")? = count(v.datatype(dt)?.size()); Ok(()) }) {
        return rc;
    }
    call("MPI_Type_size_c", MPI_COMM_WORLD, move |rt| {
        let s = rt.any_datatype(dt)?.size();
        *out_arg(size, "size")? = count(s);
        Ok(())
    })
}}
crate::mpi_export! { MPI_Type_get_extent_c, PMPI_Type_get_extent_c, (dt: MPI_Datatype, lb: *mut MPI_Count, ext: *mut MPI_Count) {
    if let Some(rc) = answer(|v| extent_of(&v.datatype(dt)?, lb, ext, false)) {
        return rc;
    }
    call("MPI_Type_get_extent_c", MPI_COMM_WORLD, move |rt| extent(rt, dt, lb, ext, false))
}}
crate::mpi_export! { MPI_Type_get_true_extent_c, PMPI_Type_get_true_extent_c, (dt: MPI_Datatype, lb: *mut MPI_Count, ext: *mut MPI_Count) {
    if let Some(rc) = answer(|v| extent_of(&v.datatype(dt)?, lb, ext, true)) {
        return rc;
    }
    call("MPI_Type_get_true_extent_c", MPI_COMM_WORLD, move |rt| extent(rt, dt, lb, ext, true))
}}

crate::mpi_export! { MPI_Get_count_c, PMPI_Get_count_c, (status: *const MPI_Status, dt: MPI_Datatype, n: *mut MPI_Count) {
    call("MPI_Get_count_c", MPI_COMM_WORLD, move |rt| {
        let o = out_arg(n, "count")?;
        // SAFETY: MPI passes a status filled by a completion call.
        let st = unsafe { status.as_ref() }.ok_or_else(|| MpiError::new(MPI_ERR_ARG, "status is NULL"))?;
        let t = rt.any_datatype(dt)?;
        *o = t.count_of(crate::completion::status_bytes(st)).map_or(MPI_UNDEFINED as MPI_Count, count);
        Ok(())
    })
}}
crate::mpi_export! { MPI_Get_elements_c, PMPI_Get_elements_c, (status: *const MPI_Status, dt: MPI_Datatype, n: *mut MPI_Count) {
    call("MPI_Get_elements_c", MPI_COMM_WORLD, move |rt| {
        let o = out_arg(n, "count")?;
        *o = crate::p2p::get_elements(rt, status, dt)?.map_or(MPI_UNDEFINED as MPI_Count, count);
        Ok(())
    })
}}

crate::mpi_export! { MPI_Pack_c, PMPI_Pack_c, (inbuf: *const c_void, incount: MPI_Count, dt: MPI_Datatype, outbuf: *mut c_void, outsize: MPI_Count, position: *mut MPI_Count, comm: MPI_Comm) {
    call("MPI_Pack_c", comm, move |rt| crate::pack::pack(rt, inbuf, incount, dt, outbuf, outsize, out_arg(position, "position")?, comm))
}}
crate::mpi_export! { MPI_Unpack_c, PMPI_Unpack_c, (inbuf: *const c_void, insize: MPI_Count, position: *mut MPI_Count, outbuf: *mut c_void, outcount: MPI_Count, dt: MPI_Datatype, comm: MPI_Comm) {
    call("MPI_Unpack_c", comm, move |rt| crate::pack::unpack(rt, inbuf, insize, out_arg(position, "position")?, outbuf, outcount, dt, comm))
}}
crate::mpi_export! { MPI_Pack_size_c, PMPI_Pack_size_c, (incount: MPI_Count, dt: MPI_Datatype, comm: MPI_Comm, size: *mut MPI_Count) {
    call("MPI_Pack_size_c", comm, move |rt| {
        let o = out_arg(size, "size")?;
        *o = count(crate::pack::pack_size(rt, incount, dt, comm)?);
        Ok(())
    })
}}
crate::mpi_export! { MPI_Pack_external_c, PMPI_Pack_external_c, (datarep: *const c_char, inbuf: *const c_void, incount: MPI_Count, dt: MPI_Datatype, outbuf: *mut c_void, outsize: MPI_Count, position: *mut MPI_Count) {
    call("MPI_Pack_external_c", MPI_COMM_WORLD, move |rt| crate::pack::pack_external(rt, datarep, inbuf, incount, dt, outbuf, outsize, out_arg(position, "position")?))
}}
crate::mpi_export! { MPI_Unpack_external_c, PMPI_Unpack_external_c, (datarep: *const c_char, inbuf: *const c_void, insize: MPI_Count, position: *mut MPI_Count, outbuf: *mut c_void, outcount: MPI_Count, dt: MPI_Datatype) {
    call("MPI_Unpack_external_c", MPI_COMM_WORLD, move |rt| crate::pack::unpack_external(rt, datarep, inbuf, insize, out_arg(position, "position")?, outbuf, outcount, dt))
}}
crate::mpi_export! { MPI_Pack_external_size_c, PMPI_Pack_external_size_c, (datarep: *const c_char, incount: MPI_Count, dt: MPI_Datatype, size: *mut MPI_Count) {
    call("MPI_Pack_external_size_c", MPI_COMM_WORLD, move |rt| {
        let o = out_arg(size, "size")?;
        *o = count(crate::pack::pack_external_size(rt, datarep, incount, dt)?);
        Ok(())
    })
}}
