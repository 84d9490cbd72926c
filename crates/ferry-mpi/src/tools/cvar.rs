//! Control variables: one per `FERRY_*` knob, in registry order, each a string (`MPI_CHAR`)
//! bound to no object. Its value is the one written through the interface, else the
//! environment's, else the default, which is what `MPI_Init` reads. The knobs the
//! collective layer can change while the job runs (`FERRY_<COLL>_ALGORITHM`,
//! `FERRY_ALLGATHER_RADIX`) can be written between `MPI_Init` and `MPI_Finalize`, by every
//! rank alike (scope `MPI_T_SCOPE_ALL_EQ`); the others are fixed for the process's life
//! (`MPI_T_SCOPE_CONSTANT`, `MPI_T_ERR_CVAR_SET_NEVER`).

use std::os::raw::{c_int, c_void};

use ferry_core::config::{Knob, KNOBS};

use super::State;
use crate::consts::*;

/// What a handle stands for: the knob, and the room a read needs (in chars).
pub(crate) struct Handle {
    pub(crate) knob: usize,
    pub(crate) count: usize,
}

/// The least room a string variable's handle asks for, so that a value written later fits
/// too; small enough for the buffers tools keep for string values (MPICH's `mpivars` reads
/// those needing fewer than 512 chars).
pub(crate) const MIN_COUNT: usize = 256;

pub(crate) fn knob(index: c_int) -> Result<&'static Knob, c_int> {
    usize::try_from(index).ok().and_then(|i| KNOBS.get(i)).ok_or(MPI_T_ERR_INVALID_INDEX)
}

pub(crate) fn value(s: &State, k: &Knob) -> String {
    match s.written.iter().find(|(n, _)| *n == k.name) {
        Some((_, v)) => v.clone(),
        None => k.value(),
    }
}

pub(crate) fn handle(s: &State, h: *mut c_void) -> Result<&'static Handle, c_int> {
    if !s.cvar_handles.contains(&(h as usize)) {
        return Err(MPI_T_ERR_INVALID_HANDLE);
    }
    // SAFETY: a live handle is a leaked `Box<Handle>` (handle_alloc), freed only by
    // handle_free, which removes it from the set first.
    Ok(unsafe { &*(h as *const Handle) })
}
