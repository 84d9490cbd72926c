//! Derived datatypes at the C boundary: constructors, commit, free and queries. The type
//! maps themselves live in `ferry_data::datatype`.

use std::os::raw::c_int;

use ferry_data::datatype::{Datatype, Distribution, Order};

use crate::boundary::call;
use crate::comm::out_arg;
use crate::consts::*;
use crate::error::{err, MpiError, MpiResult};
use crate::op_queries::answer;
use crate::runtime::Runtime;
use crate::typeinfo::{child, child_list, Contents, TypeInfo};

pub(crate) fn nonneg(v: c_int, what: &str) -> MpiResult<usize> {
    if v < 0 {
        return err(if what == "count" { MPI_ERR_COUNT } else { MPI_ERR_ARG }, format!("{what} {v} is negative"));
    }
    Ok(v as usize)
}

pub(crate) fn slice<'a, T>(p: *const T, n: usize, what: &str) -> MpiResult<&'a [T]> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return err(MPI_ERR_ARG, format!("{what} is NULL"));
    }
    // SAFETY: MPI passes arrays of `count` entries for these arguments.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

/// Registers a new type with the constructor call that made it (for `MPI_Type_get_contents`).
pub(crate) fn made(rt: &mut Runtime, t: Result<Datatype, ferry_data::datatype::TypeError>, newtype: *mut MPI_Datatype, contents: Contents) -> MpiResult<()> {
    let o = out_arg(newtype, "newtype")?;
    let t = t.map_err(|e| MpiError::new(MPI_ERR_ARG, e.to_string()))?;
    *o = rt.add_type(t);
    rt.type_info.insert(*o, TypeInfo { contents: Some(std::sync::Arc::new(contents)), name: None });
    Ok(())
}

fn with_handle(h: *mut MPI_Datatype) -> MpiResult<i32> {
    Ok(*out_arg(h, "datatype")?)
}

pub(crate) fn extent_of(rt: &mut Runtime, dt: MPI_Datatype, lb: *mut MPI_Aint, extent: *mut MPI_Aint, true_extent: bool) -> MpiResult<()> {
    extent_of_type(&rt.any_datatype(dt)?, lb, extent, true_extent)
}

fn extent_of_type(t: &Datatype, lb: *mut MPI_Aint, extent: *mut MPI_Aint, true_extent: bool) -> MpiResult<()> {
    let (l, e) = if true_extent { (t.true_lb(), t.true_extent()) } else { (t.lb(), t.extent()) };
    *out_arg(lb, "lb")? = l as MPI_Aint;
    *out_arg(extent, "extent")? = e as MPI_Aint;
    Ok(())
}

crate::mpi_export! { MPI_Type_contiguous, PMPI_Type_contiguous, (count: c_int, old: MPI_Datatype, newtype: *mut MPI_Datatype) {
    call("MPI_Type_contiguous", MPI_COMM_WORLD, |rt| {
        let n = nonneg(count, "count")?;
        let (o, c) = child(rt, old)?;
        made(rt, Datatype::contiguous(n, &o), newtype, Contents::new(MPI_COMBINER_CONTIGUOUS, vec![count], vec![], vec![c]))
    })
}}

crate::mpi_export! { MPI_Type_vector, PMPI_Type_vector, (count: c_int, blocklen: c_int, stride: c_int, old: MPI_Datatype, newtype: *mut MPI_Datatype) {
    call("MPI_Type_vector", MPI_COMM_WORLD, |rt| {
        let (n, b) = (nonneg(count, "count")?, nonneg(blocklen, "blocklength")?);
        let (o, c) = child(rt, old)?;
        made(rt, Datatype::vector(n, b, stride as isize, &o), newtype, Contents::new(MPI_COMBINER_VECTOR, vec![count, blocklen, stride], vec![], vec![c]))
    })
}}

crate::mpi_export! { MPI_Type_create_hvector, PMPI_Type_create_hvector, (count: c_int, blocklen: c_int, stride: MPI_Aint, old: MPI_Datatype, newtype: *mut MPI_Datatype) {
    call("MPI_Type_create_hvector", MPI_COMM_WORLD, |rt| {
        let (n, b) = (nonneg(count, "count")?, nonneg(blocklen, "blocklength")?);
        let (o, c) = child(rt, old)?;
        made(rt, Datatype::hvector(n, b, stride as isize, &o), newtype, Contents::new(MPI_COMBINER_HVECTOR, vec![count, blocklen], vec![stride], vec![c]))
    })
}}

crate::mpi_export! { MPI_Type_indexed, PMPI_Type_indexed, (count: c_int, blocklens: *const c_int, displs: *const c_int, old: MPI_Datatype, newtype: *mut MPI_Datatype) {
    call("MPI_Type_indexed", MPI_COMM_WORLD, |rt| {
        let n = nonneg(count, "count")?;
        let bl = slice(blocklens, n, "array_of_blocklengths")?.iter().map(|&b| nonneg(b, "blocklength")).collect::<MpiResult<Vec<_>>>()?;
        let ds: Vec<isize> = slice(displs, n, "array_of_displacements")?.iter().map(|&d| d as isize).collect();
        let (o, c) = child(rt, old)?;
        let ints = [&[count][..], slice(blocklens, n, "")?, slice(displs, n, "")?].concat();
        made(rt, Datatype::indexed(&bl, &ds, &o), newtype, Contents::new(MPI_COMBINER_INDEXED, ints, vec![], vec![c]))
    })
}}

crate::mpi_export! { MPI_Type_create_struct, PMPI_Type_create_struct, (count: c_int, blocklens: *const c_int, displs: *const MPI_Aint, types: *const MPI_Datatype, newtype: *mut MPI_Datatype) {
    call("MPI_Type_create_struct", MPI_COMM_WORLD, |rt| {
        let n = nonneg(count, "count")?;
        let bl = slice(blocklens, n, "array_of_blocklengths")?.iter().map(|&b| nonneg(b, "blocklength")).collect::<MpiResult<Vec<_>>>()?;
        let ds: Vec<isize> = slice(displs, n, "array_of_displacements")?.iter().map(|&d| d as isize).collect();
        let (ts, cs) = child_list(rt, slice(types, n, "array_of_types")?)?;
        let ints = [&[count][..], slice(blocklens, n, "")?].concat();
        made(rt, Datatype::create_struct(&bl, &ds, &ts), newtype, Contents::new(MPI_COMBINER_STRUCT, ints, ds.clone(), cs))
    })
}}

crate::mpi_export! { MPI_Type_create_resized, PMPI_Type_create_resized, (old: MPI_Datatype, lb: MPI_Aint, extent: MPI_Aint, newtype: *mut MPI_Datatype) {
    call("MPI_Type_create_resized", MPI_COMM_WORLD, |rt| {
        let (o, c) = child(rt, old)?;
        made(rt, Datatype::resized(&o, lb as isize, extent as isize), newtype, Contents::new(MPI_COMBINER_RESIZED, vec![], vec![lb, extent], vec![c]))
    })
}}

crate::mpi_export! { MPI_Type_dup, PMPI_Type_dup, (old: MPI_Datatype, newtype: *mut MPI_Datatype) {
    let rc = call("MPI_Type_dup", MPI_COMM_WORLD, |rt| {
        let committed = Runtime::is_predefined_type(old) || rt.types.get(&old).map_or(false, |t| t.1);
        let (o, c) = child(rt, old)?;
        made(rt, Ok(o), newtype, Contents::new(MPI_COMBINER_DUP, vec![], vec![], vec![c]))?;
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
        if Runtime::is_predefined_type(h) || crate::f90types::is_f90(h) {
            return err(MPI_ERR_TYPE, "predefined datatypes cannot be freed");
        }
        // Pending operations hold their own reference to the type map.
        rt.types.remove(&h).ok_or_else(|| MpiError::new(MPI_ERR_TYPE, format!("invalid datatype handle {h:#x}")))?;
        rt.type_info.remove(&h);
        *out_arg(dt, "datatype")? = MPI_DATATYPE_NULL;
        Ok(())
    })
}}

crate::mpi_export! { MPI_Type_size, PMPI_Type_size, (dt: MPI_Datatype, size: *mut c_int) {
    let size_of = |t: Datatype| -> MpiResult<()> {
        let s = t.size();
        *out_arg(size, "size")? = if s > c_int::MAX as usize { MPI_UNDEFINED } else { s as c_int };
        Ok(())
    };
    if let Some(rc) = answer(|v| size_of(v.datatype(dt)?)) {
        return rc;
    }
    call("MPI_Type_size", MPI_COMM_WORLD, |rt| {
        let s = rt.any_datatype(dt)?.size();
        *out_arg(size, "size")? = if s > c_int::MAX as usize { MPI_UNDEFINED } else { s as c_int };
        Ok(())
    })
}}

crate::mpi_export! { MPI_Type_get_extent, PMPI_Type_get_extent, (dt: MPI_Datatype, lb: *mut MPI_Aint, extent: *mut MPI_Aint) {
    if let Some(rc) = answer(|v| extent_of_type(&v.datatype(dt)?, lb, extent, false)) {
        return rc;
    }
    call("MPI_Type_get_extent", MPI_COMM_WORLD, |rt| extent_of(rt, dt, lb, extent, false))
}}

crate::mpi_export! { MPI_Type_get_true_extent, PMPI_Type_get_true_extent, (dt: MPI_Datatype, lb: *mut MPI_Aint, extent: *mut MPI_Aint) {
    if let Some(rc) = answer(|v| extent_of_type(&v.datatype(dt)?, lb, extent, true)) {
        return rc;
    }
    call("MPI_Type_get_true_extent", MPI_COMM_WORLD, |rt| extent_of(rt, dt, lb, extent, true))
}}

crate::mpi_export! { MPI_Type_create_hindexed, PMPI_Type_create_hindexed, (count: c_int, blocklens: *const c_int, displs: *const MPI_Aint, old: MPI_Datatype, newtype: *mut MPI_Datatype) {
    call("MPI_Type_create_hindexed", MPI_COMM_WORLD, |rt| {
        let n = nonneg(count, "count")?;
        let bl = slice(blocklens, n, "array_of_blocklengths")?.iter().map(|&b| nonneg(b, "blocklength")).collect::<MpiResult<Vec<_>>>()?;
        let ds = slice(displs, n, "array_of_displacements")?.to_vec();
        let (o, c) = child(rt, old)?;
        let ints = [&[count][..], slice(blocklens, n, "")?].concat();
        made(rt, Datatype::hindexed(&bl, &ds, &o), newtype, Contents::new(MPI_COMBINER_HINDEXED, ints, ds, vec![c]))
    })
}}

crate::mpi_export! { MPI_Type_create_indexed_block, PMPI_Type_create_indexed_block, (count: c_int, blocklen: c_int, displs: *const c_int, old: MPI_Datatype, newtype: *mut MPI_Datatype) {
    call("MPI_Type_create_indexed_block", MPI_COMM_WORLD, |rt| {
        let (n, b) = (nonneg(count, "count")?, nonneg(blocklen, "blocklength")?);
        let raw = slice(displs, n, "array_of_displacements")?;
        let ds: Vec<isize> = raw.iter().map(|&d| d as isize).collect();
        let (o, c) = child(rt, old)?;
        let ints = [&[count, blocklen][..], raw].concat();
        made(rt, Datatype::indexed_block(b, &ds, &o), newtype, Contents::new(MPI_COMBINER_INDEXED_BLOCK, ints, vec![], vec![c]))
    })
}}

crate::mpi_export! { MPI_Type_create_hindexed_block, PMPI_Type_create_hindexed_block, (count: c_int, blocklen: c_int, displs: *const MPI_Aint, old: MPI_Datatype, newtype: *mut MPI_Datatype) {
    call("MPI_Type_create_hindexed_block", MPI_COMM_WORLD, |rt| {
        let (n, b) = (nonneg(count, "count")?, nonneg(blocklen, "blocklength")?);
        let ds = slice(displs, n, "array_of_displacements")?.to_vec();
        let (o, c) = child(rt, old)?;
        made(rt, Datatype::hindexed_block(b, &ds, &o), newtype, Contents::new(MPI_COMBINER_HINDEXED_BLOCK, vec![count, blocklen], ds, vec![c]))
    })
}}

pub(crate) fn order_of(order: c_int) -> MpiResult<Order> {
    match order {
        MPI_ORDER_C => Ok(Order::C),
        MPI_ORDER_FORTRAN => Ok(Order::Fortran),
        o => err(MPI_ERR_ARG, format!("order {o} is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN")),
    }
}

/// An array argument of `n` entries, each at least `min`.
pub(crate) fn dims<'a>(p: *const c_int, n: usize, min: c_int, what: &str) -> MpiResult<&'a [c_int]> {
    let v = slice(p, n, what)?;
    match v.iter().position(|&x| x < min) {
        Some(i) => err(MPI_ERR_ARG, format!("{what}[{i}] = {} is below {min}", v[i])),
        None => Ok(v),
    }
}

fn ndims_of(ndims: c_int) -> MpiResult<usize> {
    if ndims <= 0 {
        return err(MPI_ERR_ARG, format!("ndims {ndims} is not positive"));
    }
    Ok(ndims as usize)
}

crate::mpi_export! { MPI_Type_create_subarray, PMPI_Type_create_subarray, (ndims: c_int, sizes: *const c_int, subsizes: *const c_int, starts: *const c_int, order: c_int, old: MPI_Datatype, newtype: *mut MPI_Datatype) {
    call("MPI_Type_create_subarray", MPI_COMM_WORLD, |rt| {
        let n = ndims_of(ndims)?;
        let (sz, sub, st) = (dims(sizes, n, 1, "array_of_sizes")?, dims(subsizes, n, 1, "array_of_subsizes")?, dims(starts, n, 0, "array_of_starts")?);
        let ord = order_of(order)?;
        let (o, c) = child(rt, old)?;
        let us = |v: &[c_int]| v.iter().map(|&x| x as usize).collect::<Vec<_>>();
        let t = Datatype::subarray(&us(sz), &us(sub), &us(st), ord, &o);
        let ints = [&[ndims][..], sz, sub, st, &[order]].concat();
        made(rt, t, newtype, Contents::new(MPI_COMBINER_SUBARRAY, ints, vec![], vec![c]))
    })
}}

/// The distribution of each dimension of a darray from its `distribs` and `dargs` entries.
pub(crate) fn distributions(ds: &[c_int], da: &[c_int]) -> MpiResult<Vec<Distribution>> {
    let mut dist = Vec::with_capacity(ds.len());
    for d in 0..ds.len() {
        let arg = match da[d] {
            MPI_DISTRIBUTE_DFLT_DARG => None,
            a if a > 0 => Some(a as usize),
            a => return err(MPI_ERR_ARG, format!("array_of_dargs[{d}] = {a} is not positive")),
        };
        dist.push(match ds[d] {
            MPI_DISTRIBUTE_BLOCK => Distribution::Block(arg),
            MPI_DISTRIBUTE_CYCLIC => Distribution::Cyclic(arg),
            MPI_DISTRIBUTE_NONE => Distribution::None,
            x => return err(MPI_ERR_ARG, format!("array_of_distribs[{d}] = {x} is no distribution")),
        });
    }
    Ok(dist)
}

crate::mpi_export! { MPI_Type_create_darray, PMPI_Type_create_darray, (size: c_int, rank: c_int, ndims: c_int, gsizes: *const c_int, distribs: *const c_int, dargs: *const c_int, psizes: *const c_int, order: c_int, old: MPI_Datatype, newtype: *mut MPI_Datatype) {
    call("MPI_Type_create_darray", MPI_COMM_WORLD, |rt| {
        if size <= 0 || rank < 0 || rank >= size {
            return err(MPI_ERR_ARG, format!("rank {rank} of size {size}"));
        }
        let n = ndims_of(ndims)?;
        let (gs, ps) = (dims(gsizes, n, 1, "array_of_gsizes")?, dims(psizes, n, 1, "array_of_psizes")?);
        let (ds, da) = (slice(distribs, n, "array_of_distribs")?, slice(dargs, n, "array_of_dargs")?);
        let dist = distributions(ds, da)?;
        let ord = order_of(order)?;
        let (o, c) = child(rt, old)?;
        let us = |v: &[c_int]| v.iter().map(|&x| x as usize).collect::<Vec<_>>();
        let t = Datatype::darray(size as usize, rank as usize, &us(gs), &dist, &us(ps), ord, &o);
        let ints = [&[size, rank, ndims][..], gs, ds, da, ps, &[order]].concat();
        made(rt, t, newtype, Contents::new(MPI_COMBINER_DARRAY, ints, vec![], vec![c]))
    })
}}
