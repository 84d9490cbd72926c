//! Derived datatypes at the C boundary: constructors, commit, free and queries. The type
//! maps themselves live in `ferry_data::datatype`.

use std::os::raw::c_int;

use ferry_data::datatype::{Datatype, Distribution, Order, TypeError};

use crate::error::{out_arg, slice};
use crate::consts::*;
use crate::error::{err, MpiError, MpiResult};
use crate::objects::Runtime;
use crate::objects::records::{Contents, TypeInfo};

pub(crate) fn nonneg(v: c_int, what: &str) -> MpiResult<usize> {
    if v < 0 {
        return err(if what == "count" { MPI_ERR_COUNT } else { MPI_ERR_ARG }, format!("{what} {v} is negative"));
    }
    Ok(v as usize)
}

/// Registers a new type with the constructor call that made it (for `MPI_Type_get_contents`).
pub(crate) fn made(rt: &mut Runtime, t: Result<Datatype, ferry_data::datatype::TypeError>, newtype: *mut MPI_Datatype, contents: Contents) -> MpiResult<()> {
    let o = out_arg(newtype, "newtype")?;
    let t = t.map_err(|e| MpiError::new(MPI_ERR_ARG, e.to_string()))?;
    *o = rt.add_type(t);
    rt.type_info.insert(*o, TypeInfo { contents: Some(std::sync::Arc::new(contents)), name: None });
    Ok(())
}

/// `MPI_Type_create_struct` (and MPI-1's `MPI_Type_struct`) given MPI-1's bound markers, as
/// MPICH-built programs still pass them: an `MPI_LB` entry sets the lower bound (the least
/// such displacement, beside any bound a child set explicitly), an `MPI_UB` entry the upper;
/// the other entries make the type map, whose own bound stands where no marker set one (0
/// when no entry holds data). The result keeps its bounds in the types built from it, as the
/// markers did.
pub(crate) fn create_struct(bl: &[usize], ds: &[isize], handles: &[MPI_Datatype], ts: &[Datatype]) -> Result<Datatype, TypeError> {
    let is_marker = |i: usize| handles[i] == MPI_LB || handles[i] == MPI_UB;
    let at = |h: MPI_Datatype| (0..handles.len()).filter(move |&i| handles[i] == h && bl[i] > 0).map(|i| ds[i]);
    let data: Vec<usize> = (0..handles.len()).filter(|&i| !is_marker(i)).collect();
    let t = Datatype::create_struct(
        &data.iter().map(|&i| bl[i]).collect::<Vec<_>>(),
        &data.iter().map(|&i| ds[i]).collect::<Vec<_>>(),
        &data.iter().map(|&i| &ts[i]).collect::<Vec<_>>(),
    )?;
    let (lbs, ubs): (Vec<isize>, Vec<isize>) = (at(MPI_LB).collect(), at(MPI_UB).collect());
    if lbs.is_empty() && ubs.is_empty() {
        return Ok(t);
    }
    let explicit = t.has_markers();
    let lb = if lbs.is_empty() { t.lb() } else { lbs.into_iter().chain(explicit.then(|| t.lb())).min().expect("one marker at least") };
    let ub = if ubs.is_empty() { t.ub() } else { ubs.into_iter().chain(explicit.then(|| t.ub())).max().expect("one marker at least") };
    Datatype::resized(&t, lb, ub.checked_sub(lb).ok_or(TypeError::Overflow)?)
}

pub(crate) fn with_handle(h: *mut MPI_Datatype) -> MpiResult<i32> {
    Ok(*out_arg(h, "datatype")?)
}

pub(crate) fn extent_of(rt: &mut Runtime, dt: MPI_Datatype, lb: *mut MPI_Aint, extent: *mut MPI_Aint, true_extent: bool) -> MpiResult<()> {
    extent_of_type(&rt.any_datatype(dt)?, lb, extent, true_extent)
}

pub(crate) fn extent_of_type(t: &Datatype, lb: *mut MPI_Aint, extent: *mut MPI_Aint, true_extent: bool) -> MpiResult<()> {
    let (l, e) = if true_extent { (t.true_lb(), t.true_extent()) } else { (t.lb(), t.extent()) };
    *out_arg(lb, "lb")? = l as MPI_Aint;
    *out_arg(extent, "extent")? = e as MPI_Aint;
    Ok(())
}

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

pub(crate) fn ndims_of(ndims: c_int) -> MpiResult<usize> {
    if ndims <= 0 {
        return err(MPI_ERR_ARG, format!("ndims {ndims} is not positive"));
    }
    Ok(ndims as usize)
}

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
