//! Event sources: one, the process's monotonic clock. Every event is raised on the thread of
//! the MPI call that caused it, with the runtime held, and time-stamped then: the events of
//! the process reach their callbacks in the order of their timestamps (`MPI_T_SOURCE_ORDERED`).

use std::os::raw::c_int;
use std::sync::OnceLock;
use std::time::Instant;

use crate::consts::*;

pub(crate) const NAME: &str = "ferry_monotonic_clock";
pub(crate) const DESCRIPTION: &str = "the process's monotonic clock (CLOCK_MONOTONIC), in nanoseconds since the process first used it; every Ferry event is stamped by it";
pub(crate) const TICKS_PER_SECOND: MPI_Count = 1_000_000_000;

/// The index of the one source.
pub(crate) const CLOCK: c_int = 0;

/// The clock's origin: its first reading in the process.
static EPOCH: OnceLock<Instant> = OnceLock::new();

/// Now, in ticks of the clock. It would wrap after 292 years: `max_ticks` is MPI_Count's top.
pub(crate) fn now() -> MPI_Count {
    let epoch = *EPOCH.get_or_init(Instant::now);
    epoch.elapsed().as_nanos().min(MPI_Count::MAX as u128) as MPI_Count
}

pub(crate) fn check(index: c_int) -> Result<(), c_int> {
    if index != CLOCK {
        return Err(MPI_T_ERR_INVALID_INDEX);
    }
    Ok(())
}
