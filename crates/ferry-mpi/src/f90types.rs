//! Fortran 90 parameterized types (`MPI_Type_create_f90_integer`/`_real`/`_complex`): the
//! predefined type of the smallest kind with the requested decimal range and precision.
//! As in MPICH, each (combiner, p, r) has one handle, predefined in all but name: usable at
//! once, never freed, its envelope `MPI_COMBINER_F90_*` with (p, r) or (r) as contents.

use std::os::raw::c_int;
use std::sync::Arc;

use crate::consts::*;
use crate::error::{err, MpiResult};
use crate::objects::Runtime;
use crate::objects::records::{Contents, TypeInfo};

/// Handles of these types: MPICH's "direct" datatype range above its pair types, with the
/// combiner and the arguments in the low bits, so a second call finds the first's handle.
const BASE: i32 = 0x8c80_0000u32 as i32;
/// `MPI_UNDEFINED` (precision or range not asked for) in a handle's 10-bit fields.
const UNDEF: i32 = 1023;

/// Precision and range of the real kinds Ferry maps (IEEE single, double and quad, gfortran's
/// kinds 4, 8 and 16; its x87 kind 10 has no MPI handle).
const REALS: &[(c_int, c_int, MPI_Datatype, MPI_Datatype)] =
    &[(6, 37, MPI_REAL4, MPI_COMPLEX8), (15, 307, MPI_REAL8, MPI_COMPLEX16), (33, 4931, MPI_REAL16, MPI_COMPLEX32)];
/// Decimal range of the integer kinds.
pub(crate) const INTEGERS: &[(c_int, MPI_Datatype)] = &[(2, MPI_INTEGER1), (4, MPI_INTEGER2), (9, MPI_INTEGER4), (18, MPI_INTEGER8)];

/// Whether `h` is one of these types (which cannot be freed).
pub fn is_f90(h: MPI_Datatype) -> bool {
    h & !0x003f_ffff == BASE
}

fn field(v: c_int) -> i32 {
    if v == MPI_UNDEFINED { UNDEF } else { v }
}

/// The handle for `base` asked as (combiner, ints), made on first use.
pub(crate) fn handle(rt: &mut Runtime, combiner: c_int, ints: Vec<c_int>, base: MPI_Datatype) -> MpiResult<MPI_Datatype> {
    let (p, r) = if ints.len() == 2 { (ints[0], ints[1]) } else { (UNDEF, ints[0]) };
    let h = BASE | ((combiner - MPI_COMBINER_F90_REAL) << 20) | (field(p) << 10) | field(r);
    if !rt.types.contains_key(&h) {
        let t = rt.any_datatype(base)?;
        rt.types.insert(h, (t, true));
        rt.type_info.insert(h, TypeInfo { contents: Some(Arc::new(Contents::new(combiner, ints, Vec::new(), Vec::new()))), name: None });
    }
    Ok(h)
}

/// The (p, r) of the real and complex constructors: each non-negative or `MPI_UNDEFINED`,
/// not both undefined. Values above 1022 select nothing anyway.
fn check_pr(p: c_int, r: c_int) -> MpiResult<()> {
    if p == MPI_UNDEFINED && r == MPI_UNDEFINED {
        return err(MPI_ERR_ARG, "precision and range are both MPI_UNDEFINED");
    }
    for (what, v) in [("precision", p), ("range", r)] {
        if v != MPI_UNDEFINED && v < 0 {
            return err(MPI_ERR_ARG, format!("{what} {v} is negative"));
        }
    }
    Ok(())
}

pub(crate) fn real_kind(p: c_int, r: c_int) -> MpiResult<(MPI_Datatype, MPI_Datatype)> {
    check_pr(p, r)?;
    REALS
        .iter()
        .find(|k| (p == MPI_UNDEFINED || p <= k.0) && (r == MPI_UNDEFINED || r <= k.1))
        .map(|k| (k.2, k.3))
        .ok_or_else(|| crate::error::MpiError::new(MPI_ERR_ARG, format!("no real kind has precision {p} and range {r} (Ferry has REAL4, REAL8 and REAL16)")))
}
