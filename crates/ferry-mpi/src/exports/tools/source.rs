//! The tools information interface, `crate::tools::source`'s calls.

use std::os::raw::{c_char, c_int};

use crate::consts::*;
use crate::exports::tools::run;
use crate::tools::{initialised, new_info, put, put_str};
use crate::tools::source::*;

crate::mpi_export! { MPI_T_source_get_num, PMPI_T_source_get_num, (num: *mut c_int) {
    run(|| {
        initialised()?;
        if num.is_null() {
            return Err(MPI_T_ERR_INVALID);
        }
        put(num, 1);
        Ok(())
    })
}}
crate::mpi_export! { MPI_T_source_get_info, PMPI_T_source_get_info, (index: c_int, name: *mut c_char, name_len: *mut c_int, desc: *mut c_char,
        desc_len: *mut c_int, ordering: *mut c_int, ticks_per_second: *mut MPI_Count, max_ticks: *mut MPI_Count, info: *mut MPI_Info) {
    run(|| {
        initialised()?;
        check(index)?;
        put_str(NAME, name, name_len);
        put_str(DESCRIPTION, desc, desc_len);
        put(ordering, MPI_T_SOURCE_ORDERED);
        put(ticks_per_second, TICKS_PER_SECOND);
        put(max_ticks, MPI_Count::MAX);
        // The source has no hints to describe it; while MPI is up the answer is a new,
        // empty info object the caller frees, as for any info returned.
        if !info.is_null() {
            put(info, new_info(Vec::new())?);
        }
        Ok(())
    })
}}
crate::mpi_export! { MPI_T_source_get_timestamp, PMPI_T_source_get_timestamp, (index: c_int, timestamp: *mut MPI_Count) {
    run(|| {
        initialised()?;
        check(index)?;
        if timestamp.is_null() {
            return Err(MPI_T_ERR_INVALID);
        }
        put(timestamp, now());
        Ok(())
    })
}}
