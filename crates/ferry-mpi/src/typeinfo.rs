//! What a datatype can tell about itself: the constructor call that made it (envelope and
//! contents), its name, its bounds and size as `MPI_Count`, and the predefined type of a
//! given class and size.

use std::os::raw::{c_char, c_int};
use std::sync::Arc;

use ferry_data::datatype::Datatype;

use crate::boundary::call;
use crate::comm::out_arg;
use crate::consts::*;
use crate::error::{err, MpiResult};
use crate::op_queries::answer;
use crate::runtime::Runtime;
use crate::types::slice;

/// The arguments of the constructor call that made a derived type, as
/// `MPI_Type_get_contents` returns them.
pub struct Contents {
    pub combiner: c_int,
    pub ints: Vec<c_int>,
    pub aints: Vec<MPI_Aint>,
    /// The `MPI_Count` arguments of a large-count constructor (`MPI_Type_contiguous_c`...),
    /// which only `MPI_Type_get_contents_c` returns.
    pub large: Vec<MPI_Count>,
    pub types: Vec<Child>,
}

impl Contents {
    pub fn new(combiner: c_int, ints: Vec<c_int>, aints: Vec<MPI_Aint>, types: Vec<Child>) -> Contents {
        Contents { combiner, ints, aints, large: Vec::new(), types }
    }

    /// The contents of a type made by a large-count constructor.
    pub fn large(combiner: c_int, ints: Vec<c_int>, large: Vec<MPI_Count>, types: Vec<Child>) -> Contents {
        Contents { combiner, ints, aints: Vec::new(), large, types }
    }

    /// The int-count envelope and contents cannot describe a large-count constructor.
    fn int_form(&self) -> MpiResult<()> {
        if !self.large.is_empty() {
            return err(MPI_ERR_TYPE, "the datatype was made by a large-count constructor: MPI_Type_get_envelope_c and MPI_Type_get_contents_c describe it");
        }
        Ok(())
    }
}

/// A type a constructor was given: predefined ones by handle; derived ones by value, since the
/// user may free their handles while the new type lives on.
pub enum Child {
    Named(MPI_Datatype),
    Derived(Datatype, Option<Arc<Contents>>),
}

/// What the runtime keeps beside a datatype handle's type map.
#[derive(Default)]
pub struct TypeInfo {
    /// `None` for predefined types (which only carry a name here).
    pub contents: Option<Arc<Contents>>,
    pub name: Option<String>,
}

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

crate::mpi_export! { MPI_Type_get_envelope, PMPI_Type_get_envelope, (dt: MPI_Datatype, num_integers: *mut c_int, num_addresses: *mut c_int, num_datatypes: *mut c_int, combiner: *mut c_int) {
    let write = |[ni, na, nd, comb]: [c_int; 4]| -> MpiResult<()> {
        let outs = (out_arg(num_integers, "num_integers")?, out_arg(num_addresses, "num_addresses")?, out_arg(num_datatypes, "num_datatypes")?, out_arg(combiner, "combiner")?);
        (*outs.0, *outs.1, *outs.2, *outs.3) = (ni, na, nd, comb);
        Ok(())
    };
    if let Some(rc) = answer(|v| write(v.envelope(dt)?)) {
        return rc;
    }
    call("MPI_Type_get_envelope", MPI_COMM_WORLD, |rt| {
        let envelope = match &contents_of(rt, dt)? {
            Some(c) => {
                c.int_form()?;
                [c.ints.len() as c_int, c.aints.len() as c_int, c.types.len() as c_int, c.combiner]
            }
            None => [0, 0, 0, MPI_COMBINER_NAMED],
        };
        write(envelope)
    })
}}

crate::mpi_export! { MPI_Type_get_contents, PMPI_Type_get_contents, (dt: MPI_Datatype, max_integers: c_int, max_addresses: c_int, max_datatypes: c_int, integers: *mut c_int, addresses: *mut MPI_Aint, datatypes: *mut MPI_Datatype) {
    call("MPI_Type_get_contents", MPI_COMM_WORLD, |rt| {
        let Some(c) = contents_of(rt, dt)? else {
            return err(MPI_ERR_TYPE, "a predefined datatype has no contents");
        };
        c.int_form()?;
        for (what, max, need) in [("max_integers", max_integers, c.ints.len()), ("max_addresses", max_addresses, c.aints.len()), ("max_datatypes", max_datatypes, c.types.len())] {
            if max < 0 || (max as usize) < need {
                return err(MPI_ERR_ARG, format!("{what} {max} is less than the {need} entries"));
            }
        }
        fill_contents(rt, &c, integers, addresses, std::ptr::null_mut(), datatypes)
    })
}}

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

crate::mpi_export! { MPI_Type_get_name, PMPI_Type_get_name, (dt: MPI_Datatype, name: *mut c_char, resultlen: *mut c_int) {
    call("MPI_Type_get_name", MPI_COMM_WORLD, |rt| {
        rt.any_datatype(dt)?;
        let set = rt.type_info.get(&dt).and_then(|i| i.name.clone());
        let predefined = crate::predefined::predefined_datatype(dt).map(|p| p.0.to_string());
        let text = set.or(predefined).unwrap_or_default();
        let out = out_slice(name, MPI_MAX_OBJECT_NAME as usize, "type_name")?;
        let len = out_arg(resultlen, "resultlen")?;
        let bytes = &text.as_bytes()[..text.len().min(MPI_MAX_OBJECT_NAME as usize - 1)];
        for (o, &b) in out.iter_mut().zip(bytes) { *o = b as c_char; }
        out[bytes.len()] = 0;
        *len = bytes.len() as c_int;
        Ok(())
    })
}}

crate::mpi_export! { MPI_Type_set_name, PMPI_Type_set_name, (dt: MPI_Datatype, name: *const c_char) {
    call("MPI_Type_set_name", MPI_COMM_WORLD, |rt| {
        rt.any_datatype(dt)?;
        if name.is_null() { return err(MPI_ERR_ARG, "type_name is NULL"); }
        // SAFETY: MPI passes a NUL-terminated string (checked non-null above).
        let bytes = unsafe { std::ffi::CStr::from_ptr(name) }.to_bytes();
        // Longer names are cut to what MPI_Type_get_name can return.
        let kept = &bytes[..bytes.len().min(MPI_MAX_OBJECT_NAME as usize - 1)];
        rt.type_info.entry(dt).or_default().name = Some(String::from_utf8_lossy(kept).into_owned());
        Ok(())
    })
}}

crate::mpi_export! { MPI_Type_size_x, PMPI_Type_size_x, (dt: MPI_Datatype, size: *mut MPI_Count) {
    let size_of = |t: Datatype| -> MpiResult<()> {
        *out_arg(size, "size")? = t.size() as MPI_Count;
        Ok(())
    };
    if let Some(rc) = answer(|v| size_of(v.datatype(dt)?)) {
        return rc;
    }
    call("MPI_Type_size_x", MPI_COMM_WORLD, |rt| size_of(rt.any_datatype(dt)?))
}}

fn extent_x(rt: &mut Runtime, dt: MPI_Datatype, lb: *mut MPI_Count, extent: *mut MPI_Count, true_extent: bool) -> MpiResult<()> {
    extent_x_of(&rt.any_datatype(dt)?, lb, extent, true_extent)
}

fn extent_x_of(t: &Datatype, lb: *mut MPI_Count, extent: *mut MPI_Count, true_extent: bool) -> MpiResult<()> {
    let (l, e) = if true_extent { (t.true_lb(), t.true_extent()) } else { (t.lb(), t.extent()) };
    *out_arg(lb, "lb")? = l as MPI_Count;
    *out_arg(extent, "extent")? = e as MPI_Count;
    Ok(())
}

crate::mpi_export! { MPI_Type_get_extent_x, PMPI_Type_get_extent_x, (dt: MPI_Datatype, lb: *mut MPI_Count, extent: *mut MPI_Count) {
    if let Some(rc) = answer(|v| extent_x_of(&v.datatype(dt)?, lb, extent, false)) {
        return rc;
    }
    call("MPI_Type_get_extent_x", MPI_COMM_WORLD, |rt| extent_x(rt, dt, lb, extent, false))
}}

crate::mpi_export! { MPI_Type_get_true_extent_x, PMPI_Type_get_true_extent_x, (dt: MPI_Datatype, lb: *mut MPI_Count, extent: *mut MPI_Count) {
    if let Some(rc) = answer(|v| extent_x_of(&v.datatype(dt)?, lb, extent, true)) {
        return rc;
    }
    call("MPI_Type_get_true_extent_x", MPI_COMM_WORLD, |rt| extent_x(rt, dt, lb, extent, true))
}}

/// The predefined types `MPI_Type_match_size` chooses from, by class, smallest first: the
/// Fortran ones, as in MPICH (16 bytes of real is `MPI_REAL16`, binary128, not x87's
/// `MPI_LONG_DOUBLE`).
const MATCHES: &[(c_int, &[MPI_Datatype])] = &[
    (MPI_TYPECLASS_REAL, &[MPI_REAL4, MPI_REAL8, MPI_REAL16]),
    (MPI_TYPECLASS_INTEGER, &[MPI_INTEGER1, MPI_INTEGER2, MPI_INTEGER4, MPI_INTEGER8]),
    (MPI_TYPECLASS_COMPLEX, &[MPI_COMPLEX8, MPI_COMPLEX16, MPI_COMPLEX32]),
];

crate::mpi_export! { MPI_Type_match_size, PMPI_Type_match_size, (typeclass: c_int, size: c_int, datatype: *mut MPI_Datatype) {
    call("MPI_Type_match_size", MPI_COMM_WORLD, |rt| {
        let o = out_arg(datatype, "datatype")?;
        let Some((_, candidates)) = MATCHES.iter().find(|m| m.0 == typeclass) else {
            return err(MPI_ERR_ARG, format!("typeclass {typeclass} is no MPI_TYPECLASS_"));
        };
        for &h in candidates.iter() {
            if size >= 0 && rt.any_datatype(h)?.size() == size as usize {
                *o = h;
                return Ok(());
            }
        }
        err(MPI_ERR_ARG, format!("no predefined type of class {typeclass} has size {size}"))
    })
}}
