//! What a window carries besides its memory: the predefined attributes, its name, info
//! hints, error handler and group, and the memory attached to a dynamic window.

use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_void};

use super::{target, win_call};
use crate::comm::out_arg;
use crate::consts::*;
use crate::error::{err, MpiResult};
use crate::runtime::Runtime;

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

crate::mpi_export! { MPI_Win_set_name, PMPI_Win_set_name, (win: MPI_Win, name: *const c_char) {
    win_call("MPI_Win_set_name", win, |rt| {
        if name.is_null() {
            return err(MPI_ERR_ARG, "win_name is NULL");
        }
        // SAFETY: MPI passes a NUL-terminated string.
        let s = unsafe { CStr::from_ptr(name) }.to_string_lossy();
        // Longer names are cut to what MPI_Win_get_name can return.
        let mut s: String = s.into_owned();
        while s.len() > MPI_MAX_OBJECT_NAME as usize - 1 {
            s.pop();
        }
        rt.win_mut(win)?.name = s;
        Ok(())
    })
}}

crate::mpi_export! { MPI_Win_get_name, PMPI_Win_get_name, (win: MPI_Win, name: *mut c_char, len: *mut c_int) {
    win_call("MPI_Win_get_name", win, |rt| {
        let l = out_arg(len, "resultlen")?;
        if name.is_null() {
            return err(MPI_ERR_ARG, "win_name is NULL");
        }
        let s = rt.win(win)?.name.as_bytes();
        // SAFETY: MPI gives room for MPI_MAX_OBJECT_NAME characters; names are shorter.
        unsafe {
            std::ptr::copy_nonoverlapping(s.as_ptr(), name as *mut u8, s.len());
            *name.add(s.len()) = 0;
        }
        *l = s.len() as c_int;
        Ok(())
    })
}}

crate::mpi_export! { MPI_Win_set_info, PMPI_Win_set_info, (win: MPI_Win, info: MPI_Info) {
    win_call("MPI_Win_set_info", win, |rt| {
        let h = crate::info::hints(rt, info)?;
        let w = rt.win_mut(win)?;
        for (k, v) in h {
            crate::info::set(&mut w.hints, &k, &v);
        }
        Ok(())
    })
}}

crate::mpi_export! { MPI_Win_get_info, PMPI_Win_get_info, (win: MPI_Win, info: *mut MPI_Info) {
    win_call("MPI_Win_get_info", win, |rt| {
        let o = out_arg(info, "info_used")?;
        let h = rt.win(win)?.hints.clone();
        *o = rt.infos.add(h);
        Ok(())
    })
}}

crate::mpi_export! { MPI_Win_get_group, PMPI_Win_get_group, (win: MPI_Win, group: *mut MPI_Group) {
    win_call("MPI_Win_get_group", win, |rt| {
        let o = out_arg(group, "group")?;
        let g = rt.win(win)?.group.clone();
        *o = rt.add_group(g);
        Ok(())
    })
}}

/// `MPI_Win_errhandler_function`: `void (MPI_Win *, int *, ...)`, the ABI of a
/// communicator's handler (both handles are ints).
type WinErrhandlerFn = crate::errhandler::CommErrhandlerFn;

crate::mpi_export! { MPI_Win_create_errhandler, PMPI_Win_create_errhandler, (f: Option<WinErrhandlerFn>, eh: *mut MPI_Errhandler) {
    // One table of user handlers serves communicators and windows alike.
    crate::errhandler::PMPI_Comm_create_errhandler(f, eh)
}}

crate::mpi_export! { MPI_Win_set_errhandler, PMPI_Win_set_errhandler, (win: MPI_Win, eh: MPI_Errhandler) {
    win_call("MPI_Win_set_errhandler", win, |rt| {
        rt.win(win)?;
        crate::errhandler::check_errhandler(eh)?;
        rt.win_mut(win)?.errhandler = eh;
        Ok(())
    })
}}

crate::mpi_export! { MPI_Win_get_errhandler, PMPI_Win_get_errhandler, (win: MPI_Win, eh: *mut MPI_Errhandler) {
    win_call("MPI_Win_get_errhandler", win, |rt| {
        let o = out_arg(eh, "errhandler")?;
        *o = crate::errhandler::got(rt.win(win)?.errhandler);
        Ok(())
    })
}}

crate::mpi_export! { MPI_Win_call_errhandler, PMPI_Win_call_errhandler, (win: MPI_Win, code: c_int) {
    let valid = win_call("MPI_Win_call_errhandler", win, |rt| rt.win(win).map(|_| ()));
    if valid != MPI_SUCCESS {
        return valid;
    }
    // The handler runs as for an error inside an MPI call on `win`; it returned, so did we.
    win_call("MPI_Win_call_errhandler", win, |_| err(code, format!("error code {code} raised by the program")));
    MPI_SUCCESS
}}

fn dynamic_memory(rt: &mut Runtime, win: MPI_Win, f: impl FnOnce(&mut Vec<(usize, usize)>) -> MpiResult<()>) -> MpiResult<()> {
    let w = rt.win(win)?;
    if w.flavor != MPI_WIN_FLAVOR_DYNAMIC {
        return err(MPI_ERR_RMA_FLAVOR, "memory is attached to dynamic windows only (MPI_Win_create_dynamic)");
    }
    let ctx = w.ctx;
    let mut t = target::lock(&rt.wins.shared);
    let x = t.wins.get_mut(&ctx).expect("a window's exposure lives as long as it");
    f(&mut x.mem.attached)
}

crate::mpi_export! { MPI_Win_attach, PMPI_Win_attach, (win: MPI_Win, base: *mut c_void, size: MPI_Aint) {
    win_call("MPI_Win_attach", win, |rt| {
        if size < 0 {
            return err(MPI_ERR_SIZE, format!("size {size} is negative"));
        }
        if base.is_null() && size > 0 {
            return err(MPI_ERR_ARG, "base is NULL");
        }
        let (a, n) = (base as usize, size as usize);
        dynamic_memory(rt, win, |m| {
            if m.iter().any(|&(b, s)| a < b + s && b < a + n) {
                return err(MPI_ERR_RMA_ATTACH, "the memory overlaps memory attached already");
            }
            m.push((a, n));
            Ok(())
        })
    })
}}

crate::mpi_export! { MPI_Win_detach, PMPI_Win_detach, (win: MPI_Win, base: *const c_void) {
    win_call("MPI_Win_detach", win, |rt| {
        dynamic_memory(rt, win, |m| match m.iter().position(|&(b, _)| b == base as usize) {
            Some(i) => {
                m.remove(i);
                Ok(())
            }
            None => err(MPI_ERR_RMA_ATTACH, "no memory is attached at that address"),
        })
    })
}}
