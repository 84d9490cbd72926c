//! Derived datatypes at the C boundary: constructors, commit, free and queries. The type
//! maps themselves live in `ferry_data::datatype`.

use std::os::raw::c_int;

use ferry_data::datatype::Datatype;

use crate::boundary::call;
use crate::comm::out_arg;
use crate::consts::*;
use crate::error::{err, MpiError, MpiResult};
use crate::runtime::Runtime;

fn nonneg(v: c_int, what: &str) -> MpiResult<usize> {
    if v < 0 {
        return err(if what == "count" { MPI_ERR_COUNT } else { MPI_ERR_ARG }, format!("{what} {v} is negative"));
    }
    Ok(v as usize)
}

fn slice<'a, T>(p: *const T, n: usize, what: &str) -> MpiResult<&'a [T]> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return err(MPI_ERR_ARG, format!("{what} is NULL"));
    }
    // SAFETY: MPI passes arrays of `count` entries for these arguments.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

fn made(rt: &mut Runtime, t: Result<Datatype, ferry_data::datatype::TypeError>, newtype: *mut MPI_Datatype) -> MpiResult<()> {
    let o = out_arg(newtype, "newtype")?;
    let t = t.map_err(|e| MpiError::new(MPI_ERR_ARG, e.to_string()))?;
    *o = rt.add_type(t);
    Ok(())
}

fn with_handle(h: *mut MPI_Datatype) -> MpiResult<i32> {
    Ok(*out_arg(h, "datatype")?)
}

fn extent_of(rt: &mut Runtime, dt: MPI_Datatype, lb: *mut MPI_Aint, extent: *mut MPI_Aint, true_extent: bool) -> MpiResult<()> {
    let t = rt.any_datatype(dt)?;
    let (l, e) = if true_extent { (t.true_lb(), t.true_extent()) } else { (t.lb(), t.extent()) };
    *out_arg(lb, "lb")? = l as MPI_Aint;
    *out_arg(extent, "extent")? = e as MPI_Aint;
    Ok(())
}

crate::mpi_export! { MPI_Type_contiguous, PMPI_Type_contiguous, (count: c_int, old: MPI_Datatype, newtype: *mut MPI_Datatype) {
    call("MPI_Type_contiguous", MPI_COMM_WORLD, |rt| {
        let n = nonneg(count, "count")?;
        let o = rt.any_datatype(old)?;
        made(rt, Datatype::contiguous(n, &o), newtype)
    })
}}

crate::mpi_export! { MPI_Type_vector, PMPI_Type_vector, (count: c_int, blocklen: c_int, stride: c_int, old: MPI_Datatype, newtype: *mut MPI_Datatype) {
    call("MPI_Type_vector", MPI_COMM_WORLD, |rt| {
        let (n, b) = (nonneg(count, "count")?, nonneg(blocklen, "blocklength")?);
        let o = rt.any_datatype(old)?;
        made(rt, Datatype::vector(n, b, stride as isize, &o), newtype)
    })
}}

crate::mpi_export! { MPI_Type_create_hvector, PMPI_Type_create_hvector, (count: c_int, blocklen: c_int, stride: MPI_Aint, old: MPI_Datatype, newtype: *mut MPI_Datatype) {
    call("MPI_Type_create_hvector", MPI_COMM_WORLD, |rt| {
        let (n, b) = (nonneg(count, "count")?, nonneg(blocklen, "blocklength")?);
        let o = rt.any_datatype(old)?;
        made(rt, Datatype::hvector(n, b, stride as isize, &o), newtype)
    })
}}

crate::mpi_export! { MPI_Type_indexed, PMPI_Type_indexed, (count: c_int, blocklens: *const c_int, displs: *const c_int, old: MPI_Datatype, newtype: *mut MPI_Datatype) {
    call("MPI_Type_indexed", MPI_COMM_WORLD, |rt| {
        let n = nonneg(count, "count")?;
        let bl = slice(blocklens, n, "array_of_blocklengths")?.iter().map(|&b| nonneg(b, "blocklength")).collect::<MpiResult<Vec<_>>>()?;
        let ds: Vec<isize> = slice(displs, n, "array_of_displacements")?.iter().map(|&d| d as isize).collect();
        let o = rt.any_datatype(old)?;
        made(rt, Datatype::indexed(&bl, &ds, &o), newtype)
    })
}}

crate::mpi_export! { MPI_Type_create_struct, PMPI_Type_create_struct, (count: c_int, blocklens: *const c_int, displs: *const MPI_Aint, types: *const MPI_Datatype, newtype: *mut MPI_Datatype) {
    call("MPI_Type_create_struct", MPI_COMM_WORLD, |rt| {
        let n = nonneg(count, "count")?;
        let bl = slice(blocklens, n, "array_of_blocklengths")?.iter().map(|&b| nonneg(b, "blocklength")).collect::<MpiResult<Vec<_>>>()?;
        let ds: Vec<isize> = slice(displs, n, "array_of_displacements")?.iter().map(|&d| d as isize).collect();
        let ts = slice(types, n, "array_of_types")?.iter().map(|&t| rt.any_datatype(t)).collect::<MpiResult<Vec<_>>>()?;
        made(rt, Datatype::create_struct(&bl, &ds, &ts), newtype)
    })
}}

crate::mpi_export! { MPI_Type_create_resized, PMPI_Type_create_resized, (old: MPI_Datatype, lb: MPI_Aint, extent: MPI_Aint, newtype: *mut MPI_Datatype) {
    call("MPI_Type_create_resized", MPI_COMM_WORLD, |rt| {
        let o = rt.any_datatype(old)?;
        made(rt, Datatype::resized(&o, lb as isize, extent as isize), newtype)
    })
}}

crate::mpi_export! { MPI_Type_dup, PMPI_Type_dup, (old: MPI_Datatype, newtype: *mut MPI_Datatype) {
    let rc = call("MPI_Type_dup", MPI_COMM_WORLD, |rt| {
        let committed = Runtime::is_predefined_type(old) || rt.types.get(&old).map_or(false, |t| t.1);
        let o = rt.any_datatype(old)?;
        made(rt, Ok(o), newtype)?;
        // A duplicate is committed when the original is.
        let h = *out_arg(newtype, "newtype")?;
        if let Some(t) = rt.types.get_mut(&h) { t.1 = committed; }
        Ok(())
    });
    if rc != MPI_SUCCESS { return rc; }
    // SAFETY: checked non-null and written by the call above.
    let new = unsafe { *newtype };
    crate::attr::after_dup("MPI_Type_dup", crate::attr::Kind::Type, old, new, |rt| {
        rt.types.remove(&new);
        // SAFETY: as above.
        unsafe { *newtype = MPI_DATATYPE_NULL };
    })
}}

crate::mpi_export! { MPI_Type_commit, PMPI_Type_commit, (dt: *mut MPI_Datatype) {
    call("MPI_Type_commit", MPI_COMM_WORLD, |rt| {
        let h = with_handle(dt)?;
        if Runtime::is_predefined_type(h) { return Ok(()); }
        match rt.types.get_mut(&h) {
            Some(t) => { t.1 = true; Ok(()) }
            None => err(MPI_ERR_TYPE, format!("invalid datatype handle {h:#x}")),
        }
    })
}}

crate::mpi_export! { MPI_Type_free, PMPI_Type_free, (dt: *mut MPI_Datatype) {
    // SAFETY: MPI passes a pointer to the caller's handle; checked for NULL first.
    let h = if dt.is_null() { MPI_DATATYPE_NULL } else { unsafe { *dt } };
    let rc = crate::attr::before_free("MPI_Type_free", crate::attr::Kind::Type, h);
    if rc != MPI_SUCCESS { return rc; }
    call("MPI_Type_free", MPI_COMM_WORLD, |rt| {
        let h = with_handle(dt)?;
        if Runtime::is_predefined_type(h) {
            return err(MPI_ERR_TYPE, "predefined datatypes cannot be freed");
        }
        // Pending operations hold their own reference to the type map.
        rt.types.remove(&h).ok_or_else(|| MpiError::new(MPI_ERR_TYPE, format!("invalid datatype handle {h:#x}")))?;
        *out_arg(dt, "datatype")? = MPI_DATATYPE_NULL;
        Ok(())
    })
}}

crate::mpi_export! { MPI_Type_size, PMPI_Type_size, (dt: MPI_Datatype, size: *mut c_int) {
    call("MPI_Type_size", MPI_COMM_WORLD, |rt| {
        let s = rt.any_datatype(dt)?.size();
        *out_arg(size, "size")? = if s > c_int::MAX as usize { MPI_UNDEFINED } else { s as c_int };
        Ok(())
    })
}}

crate::mpi_export! { MPI_Type_get_extent, PMPI_Type_get_extent, (dt: MPI_Datatype, lb: *mut MPI_Aint, extent: *mut MPI_Aint) {
    call("MPI_Type_get_extent", MPI_COMM_WORLD, |rt| extent_of(rt, dt, lb, extent, false))
}}

crate::mpi_export! { MPI_Type_get_true_extent, PMPI_Type_get_true_extent, (dt: MPI_Datatype, lb: *mut MPI_Aint, extent: *mut MPI_Aint) {
    call("MPI_Type_get_true_extent", MPI_COMM_WORLD, |rt| extent_of(rt, dt, lb, extent, true))
}}
