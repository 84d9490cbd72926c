//! Categories: one, `FERRY`, holding every control and performance variable and every event
//! type; it has no subcategories, and never changes.

use std::os::raw::c_int;


use crate::consts::*;

pub(crate) const NAME: &str = "FERRY";
pub(crate) const DESCRIPTION: &str = "Ferry's FERRY_* knobs, as `ferry info` lists them, its performance variables and its event types";

pub(crate) fn check(index: c_int) -> Result<(), c_int> {
    if index != 0 {
        return Err(MPI_T_ERR_INVALID_INDEX);
    }
    Ok(())
}

/// Fill `indices` with up to `len` of the category's members `0..n`.
pub(crate) fn members(index: c_int, len: c_int, indices: *mut c_int, n: usize) -> Result<(), c_int> {
    check(index)?;
    if len < 0 || (len > 0 && indices.is_null()) {
        return Err(MPI_ERR_ARG);
    }
    for i in 0..(len as usize).min(n) {
        // SAFETY: the caller's array holds `len` ints (MPI's contract).
        unsafe { *indices.add(i) = i as c_int };
    }
    Ok(())
}
