//! Categories: one, `FERRY`, holding every control and performance variable and every event
//! type; it has no subcategories, and never changes.

use std::os::raw::{c_char, c_int};

use ferry_core::config::KNOBS;

use super::{initialised, name_arg, put, put_str, run};
use crate::consts::*;

const NAME: &str = "FERRY";
const DESCRIPTION: &str = "Ferry's FERRY_* knobs, as `ferry info` lists them, its performance variables and its event types";

fn check(index: c_int) -> Result<(), c_int> {
    if index != 0 {
        return Err(MPI_T_ERR_INVALID_INDEX);
    }
    Ok(())
}

/// Fill `indices` with up to `len` of the category's members `0..n`.
fn members(index: c_int, len: c_int, indices: *mut c_int, n: usize) -> Result<(), c_int> {
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

crate::mpi_export! { MPI_T_category_get_num, PMPI_T_category_get_num, (num: *mut c_int) {
    run(|| {
        initialised()?;
        if num.is_null() {
            return Err(MPI_ERR_ARG);
        }
        put(num, 1);
        Ok(())
    })
}}

crate::mpi_export! { MPI_T_category_get_info, PMPI_T_category_get_info, (index: c_int, name: *mut c_char, name_len: *mut c_int, desc: *mut c_char,
        desc_len: *mut c_int, num_cvars: *mut c_int, num_pvars: *mut c_int, num_categories: *mut c_int) {
    run(|| {
        initialised()?;
        check(index)?;
        put_str(NAME, name, name_len);
        put_str(DESCRIPTION, desc, desc_len);
        put(num_cvars, KNOBS.len() as c_int);
        put(num_pvars, super::pvar::count() as c_int);
        put(num_categories, 0);
        Ok(())
    })
}}

crate::mpi_export! { MPI_T_category_get_index, PMPI_T_category_get_index, (name: *const c_char, index: *mut c_int) {
    run(|| {
        initialised()?;
        if name_arg(name)? != NAME {
            return Err(MPI_T_ERR_INVALID_NAME);
        }
        if index.is_null() {
            return Err(MPI_ERR_ARG);
        }
        put(index, 0);
        Ok(())
    })
}}

crate::mpi_export! { MPI_T_category_get_cvars, PMPI_T_category_get_cvars, (index: c_int, len: c_int, indices: *mut c_int) {
    run(|| {
        initialised()?;
        members(index, len, indices, KNOBS.len())
    })
}}

crate::mpi_export! { MPI_T_category_get_pvars, PMPI_T_category_get_pvars, (index: c_int, len: c_int, indices: *mut c_int) {
    run(|| {
        initialised()?;
        members(index, len, indices, super::pvar::count())
    })
}}

crate::mpi_export! { MPI_T_category_get_num_events, PMPI_T_category_get_num_events, (index: c_int, num: *mut c_int) {
    run(|| {
        initialised()?;
        check(index)?;
        if num.is_null() {
            return Err(MPI_T_ERR_INVALID);
        }
        put(num, super::event::EVENTS.len() as c_int);
        Ok(())
    })
}}

crate::mpi_export! { MPI_T_category_get_events, PMPI_T_category_get_events, (index: c_int, len: c_int, indices: *mut c_int) {
    run(|| {
        initialised()?;
        members(index, len, indices, super::event::EVENTS.len())
    })
}}

crate::mpi_export! { MPI_T_category_get_categories, PMPI_T_category_get_categories, (index: c_int, len: c_int, indices: *mut c_int) {
    run(|| {
        initialised()?;
        members(index, len, indices, 0)
    })
}}

crate::mpi_export! { MPI_T_category_changed, PMPI_T_category_changed, (stamp: *mut c_int) {
    run(|| {
        initialised()?;
        if stamp.is_null() {
            return Err(MPI_ERR_ARG);
        }
        // The categories are fixed when the library is built: one stamp for the process.
        put(stamp, 0);
        Ok(())
    })
}}
