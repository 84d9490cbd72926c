//! Event sources: one, the process's monotonic clock. Every event is raised on the thread of
//! the MPI call that caused it, with the runtime held, and time-stamped then: the events of
//! the process reach their callbacks in the order of their timestamps (`MPI_T_SOURCE_ORDERED`).

use std::os::raw::{c_char, c_int};
use std::sync::OnceLock;
use std::time::Instant;

use super::{initialised, new_info, put, put_str, run};
use crate::consts::*;

const NAME: &str = "ferry_monotonic_clock";
const DESCRIPTION: &str = "the process's monotonic clock (CLOCK_MONOTONIC), in nanoseconds since the process first used it; every Ferry event is stamped by it";
const TICKS_PER_SECOND: MPI_Count = 1_000_000_000;

/// The index of the one source.
pub(super) const CLOCK: c_int = 0;

/// The clock's origin: its first reading in the process.
static EPOCH: OnceLock<Instant> = OnceLock::new();

/// Now, in ticks of the clock. It would wrap after 292 years: `max_ticks` is MPI_Count's top.
pub(super) fn now() -> MPI_Count {
    let epoch = *EPOCH.get_or_init(Instant::now);
    epoch.elapsed().as_nanos().min(MPI_Count::MAX as u128) as MPI_Count
}

fn check(index: c_int) -> Result<(), c_int> {
    if index != CLOCK {
        return Err(MPI_T_ERR_INVALID_INDEX);
    }
    Ok(())
}

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
