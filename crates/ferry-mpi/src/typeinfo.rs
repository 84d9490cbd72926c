//! What a datatype can tell about itself: the constructor call that made it (envelope and
//! contents), its name, its bounds and size as `MPI_Count`, and the predefined type of a
//! given class and size.

use std::os::raw::c_int;
use std::sync::Arc;

use ferry_data::datatype::Datatype;

use crate::error::{out_arg, slice};
use crate::consts::*;
use crate::error::MpiResult;
pub use crate::objects::records::{Child, Contents, TypeInfo};
use crate::objects::Runtime;

/// The type map of `h` and how to name it in the contents of a type built from it.
pub fn child(rt: &mut Runtime, h: MPI_Datatype) -> MpiResult<(Datatype, Child)> {
    let t = rt.any_datatype(h)?;
    if Runtime::is_predefined_type(h) {
        return Ok((t, Child::Named(h)));
    }
    let contents = rt.type_info.get(&h).and_then(|i| i.contents.clone());
    Ok((t.clone(), Child::Derived(t, contents)))
}

pub fn child_list(rt: &mut Runtime, hs: &[MPI_Datatype]) -> MpiResult<(Vec<Datatype>, Vec<Child>)> {
    hs.iter().map(|&h| child(rt, h)).collect::<MpiResult<Vec<_>>>().map(|v| v.into_iter().unzip())
}

pub(crate) fn contents_of(rt: &mut Runtime, dt: MPI_Datatype) -> MpiResult<Option<Arc<Contents>>> {
    rt.any_datatype(dt)?;
    Ok(rt.type_info.get(&dt).and_then(|i| i.contents.clone()))
}

/// Write the contents of a derived type into the caller's arrays (checked large enough);
/// `large` only for the large-count form.
pub(crate) fn fill_contents(rt: &mut Runtime, c: &Contents, integers: *mut c_int, addresses: *mut MPI_Aint, large: *mut MPI_Count, datatypes: *mut MPI_Datatype) -> MpiResult<()> {
    if !c.ints.is_empty() {
        out_slice(integers, c.ints.len(), "array_of_integers")?.copy_from_slice(&c.ints);
    }
    if !c.aints.is_empty() {
        out_slice(addresses, c.aints.len(), "array_of_addresses")?.copy_from_slice(&c.aints);
    }
    if !c.large.is_empty() {
        out_slice(large, c.large.len(), "array_of_large_counts")?.copy_from_slice(&c.large);
    }
    if !c.types.is_empty() {
        let out = out_slice(datatypes, c.types.len(), "array_of_datatypes")?;
        for (o, t) in out.iter_mut().zip(&c.types) {
            // Derived types come back as new handles, which the caller frees.
            *o = match t {
                Child::Named(h) => *h,
                Child::Derived(t, contents) => {
                    let h = rt.add_type(t.clone());
                    rt.types.get_mut(&h).expect("just added").1 = true;
                    rt.type_info.insert(h, TypeInfo { contents: contents.clone(), name: None });
                    h
                }
            };
        }
    }
    Ok(())
}

pub(crate) fn out_slice<'a, T>(p: *mut T, n: usize, what: &str) -> MpiResult<&'a mut [T]> {
    slice(p as *const T, n, what)?;
    // SAFETY: MPI passes output arrays of at least `n` entries (checked non-null above).
    Ok(unsafe { std::slice::from_raw_parts_mut(p, n) })
}

pub(crate) fn extent_x(rt: &mut Runtime, dt: MPI_Datatype, lb: *mut MPI_Count, extent: *mut MPI_Count, true_extent: bool) -> MpiResult<()> {
    extent_x_of(&rt.any_datatype(dt)?, lb, extent, true_extent)
}

pub(crate) fn extent_x_of(t: &Datatype, lb: *mut MPI_Count, extent: *mut MPI_Count, true_extent: bool) -> MpiResult<()> {
    let (l, e) = if true_extent { (t.true_lb(), t.true_extent()) } else { (t.lb(), t.extent()) };
    *out_arg(lb, "lb")? = l as MPI_Count;
    *out_arg(extent, "extent")? = e as MPI_Count;
    Ok(())
}

/// The predefined types `MPI_Type_match_size` chooses from, by class, smallest first: the
/// Fortran ones, as in MPICH (16 bytes of real is `MPI_REAL16`, binary128, not x87's
/// `MPI_LONG_DOUBLE`).
pub(crate) const MATCHES: &[(c_int, &[MPI_Datatype])] = &[
    (MPI_TYPECLASS_REAL, &[MPI_REAL4, MPI_REAL8, MPI_REAL16]),
    (MPI_TYPECLASS_INTEGER, &[MPI_INTEGER1, MPI_INTEGER2, MPI_INTEGER4, MPI_INTEGER8]),
    (MPI_TYPECLASS_COMPLEX, &[MPI_COMPLEX8, MPI_COMPLEX16, MPI_COMPLEX32]),
];
