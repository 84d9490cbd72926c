//! The tools information interface, `crate::tools::category`'s calls.

use std::os::raw::{c_char, c_int};

use ferry_core::config::KNOBS;

use crate::consts::*;
use crate::exports::tools::run;
use crate::tools::{initialised, name_arg, put, put_str};
use crate::tools::category::*;

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
        put(num_pvars, crate::tools::pvar::count() as c_int);
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
        members(index, len, indices, crate::tools::pvar::count())
    })
}}
crate::mpi_export! { MPI_T_category_get_num_events, PMPI_T_category_get_num_events, (index: c_int, num: *mut c_int) {
    run(|| {
        initialised()?;
        check(index)?;
        if num.is_null() {
            return Err(MPI_T_ERR_INVALID);
        }
        put(num, crate::tools::event::EVENTS.len() as c_int);
        Ok(())
    })
}}
crate::mpi_export! { MPI_T_category_get_events, PMPI_T_category_get_events, (index: c_int, len: c_int, indices: *mut c_int) {
    run(|| {
        initialised()?;
        members(index, len, indices, crate::tools::event::EVENTS.len())
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
