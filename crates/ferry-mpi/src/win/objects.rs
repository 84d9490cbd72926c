//! What a window carries besides its memory: the predefined attributes, its name, info
//! hints, error handler and group, and the memory attached to a dynamic window.

use std::os::raw::{c_int, c_void};

use super::target;
use crate::consts::*;
use crate::error::{err, MpiResult};
use crate::objects::Runtime;

/// Whether `key` is one of the predefined window attributes.
pub fn is_window_key(key: c_int) -> bool {
    [MPI_WIN_BASE, MPI_WIN_SIZE, MPI_WIN_DISP_UNIT, MPI_WIN_CREATE_FLAVOR, MPI_WIN_MODEL].contains(&key)
}

/// The value `MPI_Win_get_attr` gives for a predefined key: the base itself for
/// `MPI_WIN_BASE`, a pointer to the value for the others.
pub fn window_attr(rt: &Runtime, win: MPI_Win, key: c_int) -> MpiResult<*mut c_void> {
    let w = rt.win(win)?;
    Ok(match key {
        MPI_WIN_BASE => w.base,
        MPI_WIN_SIZE => &*w.attr_size as *const MPI_Aint as *mut c_void,
        MPI_WIN_DISP_UNIT => &*w.attr_disp_unit as *const c_int as *mut c_void,
        MPI_WIN_CREATE_FLAVOR => &*w.attr_flavor as *const c_int as *mut c_void,
        MPI_WIN_MODEL => &*w.attr_model as *const c_int as *mut c_void,
        _ => return err(MPI_ERR_KEYVAL, format!("{key:#x} is not a predefined window attribute")),
    })
}

/// `MPI_Win_errhandler_function`: `void (MPI_Win *, int *, ...)`, the ABI of a
/// communicator's handler (both handles are ints).
pub(crate) type WinErrhandlerFn = crate::errhandler::CommErrhandlerFn;

pub(crate) fn dynamic_memory(rt: &mut Runtime, win: MPI_Win, f: impl FnOnce(&mut Vec<(usize, usize)>) -> MpiResult<()>) -> MpiResult<()> {
    let w = rt.win(win)?;
    if w.flavor != MPI_WIN_FLAVOR_DYNAMIC {
        return err(MPI_ERR_RMA_FLAVOR, "memory is attached to dynamic windows only (MPI_Win_create_dynamic)");
    }
    let ctx = w.ctx;
    let mut t = target::lock(&super::wins(rt).shared);
    let x = t.wins.get_mut(&ctx).expect("a window's exposure lives as long as it");
    f(&mut x.mem.attached)
}
