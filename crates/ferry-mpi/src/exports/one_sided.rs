//! One-sided communication (MPI-4.1 chapter 12): window creation, attributes and names,
//! and the communication calls.

use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_void};

use crate::boundary::call;
use crate::consts::*;
use crate::error::{err, MpiResult, out_arg};
use crate::objects::Runtime;
use crate::win::*;
use crate::win::objects::*;
use crate::win::ops::*;
use crate::win::shared::*;

/// Run `f`, kept out of line: the general way of a call whose common case its exported
/// function does itself, so that the common case pays for no more than it uses.
#[cold]
#[inline(never)]
pub(crate) fn cold<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// Run an MPI call on window `win`: an error goes to the window's error handler (a bad handle
/// to `MPI_COMM_WORLD`'s, as for any call without a valid object).
pub(crate) fn win_call(name: &'static str, win: MPI_Win, body: impl FnOnce(&mut Runtime) -> MpiResult<()>) -> c_int {
    let mut raised = None;
    let rc = call(name, MPI_COMM_WORLD, |rt| match body(rt) {
        Ok(()) => Ok(()),
        Err(e) => match crate::win::wins(rt).table.get(&win).map(|w| w.errhandler) {
            None => Err(e),
            // MPI_ERRORS_ABORT may end all the job's processes, as the fatal handler does.
            Some(eh) if eh == MPI_ERRORS_ARE_FATAL || eh == MPI_ERRORS_ABORT => crate::boundary::fatal(rt, name, &e),
            Some(eh) => {
                raised = Some((crate::errhandler::user_handler(eh), e.class));
                Ok(())
            }
        },
    });
    match raised {
        Some((f, class)) => {
            if let Some(f) = f {
                crate::errhandler::invoke(f, win, class);
            }
            class
        }
        None => rc,
    }
}

crate::mpi_export! { MPI_Win_create, PMPI_Win_create, (base: *mut c_void, size: MPI_Aint, disp_unit: c_int, info: MPI_Info, comm: MPI_Comm, win: *mut MPI_Win) {
    call("MPI_Win_create", comm, move |rt| {
        let o = out_arg(win, "win")?;
        if base.is_null() && size > 0 {
            return err(MPI_ERR_ARG, format!("base is NULL with size {size}"));
        }
        *o = create(rt, comm, base, size, disp_unit, info, MPI_WIN_FLAVOR_CREATE, None)?;
        Ok(())
    })
}}
crate::mpi_export! { MPI_Win_allocate, PMPI_Win_allocate, (size: MPI_Aint, disp_unit: c_int, info: MPI_Info, comm: MPI_Comm, baseptr: *mut c_void, win: *mut MPI_Win) {
    call("MPI_Win_allocate", comm, move |rt| {
        let o = out_arg(win, "win")?;
        let b = out_arg(baseptr as *mut *mut c_void, "baseptr")?;
        let (h, base) = allocate_window(rt, size, disp_unit, info, comm)?;
        *o = h;
        *b = base;
        Ok(())
    })
}}
crate::mpi_export! { MPI_Win_create_dynamic, PMPI_Win_create_dynamic, (info: MPI_Info, comm: MPI_Comm, win: *mut MPI_Win) {
    call("MPI_Win_create_dynamic", comm, move |rt| {
        let o = out_arg(win, "win")?;
        *o = create(rt, comm, MPI_BOTTOM, 0, 1, info, MPI_WIN_FLAVOR_DYNAMIC, None)?;
        Ok(())
    })
}}
crate::mpi_export! { MPI_Win_free, PMPI_Win_free, (win: *mut MPI_Win) {
    // SAFETY: MPI passes a pointer to the caller's handle; NULL is checked.
    let h = match unsafe { win.as_ref() } { Some(h) => *h, None => return call("MPI_Win_free", MPI_COMM_WORLD, |_| err(MPI_ERR_ARG, "win is NULL")) };
    let rc = win_call("MPI_Win_free", h, move |rt| check_free(rt, h));
    if rc != MPI_SUCCESS {
        return rc;
    }
    // The attributes' delete callbacks run first, without the lock (they may call MPI).
    let rc = crate::exports::caching::before_free("MPI_Win_free", crate::attr::Kind::Win, h);
    if rc != MPI_SUCCESS {
        return rc;
    }
    let rc = win_call("MPI_Win_free", h, move |rt| free(rt, h));
    if rc == MPI_SUCCESS {
        // SAFETY: checked non-NULL above.
        unsafe { *win = MPI_WIN_NULL };
    }
    rc
}}
crate::mpi_export! { MPI_Win_set_name, PMPI_Win_set_name, (win: MPI_Win, name: *const c_char) {
    win_call("MPI_Win_set_name", win, move |rt| {
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
    win_call("MPI_Win_get_name", win, move |rt| {
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
    win_call("MPI_Win_set_info", win, move |rt| {
        let h = crate::info::hints(rt, info)?;
        let w = rt.win_mut(win)?;
        for (k, v) in h {
            crate::info::set(&mut w.hints, &k, &v);
        }
        Ok(())
    })
}}
crate::mpi_export! { MPI_Win_get_info, PMPI_Win_get_info, (win: MPI_Win, info: *mut MPI_Info) {
    win_call("MPI_Win_get_info", win, move |rt| {
        let o = out_arg(info, "info_used")?;
        let h = rt.win(win)?.hints.clone();
        *o = crate::info::add(h);
        Ok(())
    })
}}
crate::mpi_export! { MPI_Win_get_group, PMPI_Win_get_group, (win: MPI_Win, group: *mut MPI_Group) {
    win_call("MPI_Win_get_group", win, move |rt| {
        let o = out_arg(group, "group")?;
        let g = rt.win(win)?.group.clone();
        *o = rt.add_group(g);
        Ok(())
    })
}}
crate::mpi_export! { MPI_Win_create_errhandler, PMPI_Win_create_errhandler, (f: Option<WinErrhandlerFn>, eh: *mut MPI_Errhandler) {
    // One table of user handlers serves communicators and windows alike.
    crate::exports::environment::PMPI_Comm_create_errhandler(f, eh)
}}
crate::mpi_export! { MPI_Win_set_errhandler, PMPI_Win_set_errhandler, (win: MPI_Win, eh: MPI_Errhandler) {
    win_call("MPI_Win_set_errhandler", win, move |rt| {
        rt.win(win)?;
        crate::errhandler::check_errhandler(eh)?;
        rt.win_mut(win)?.errhandler = eh;
        Ok(())
    })
}}
crate::mpi_export! { MPI_Win_get_errhandler, PMPI_Win_get_errhandler, (win: MPI_Win, eh: *mut MPI_Errhandler) {
    win_call("MPI_Win_get_errhandler", win, move |rt| {
        let o = out_arg(eh, "errhandler")?;
        *o = crate::errhandler::got(rt.win(win)?.errhandler);
        Ok(())
    })
}}
crate::mpi_export! { MPI_Win_call_errhandler, PMPI_Win_call_errhandler, (win: MPI_Win, code: c_int) {
    let valid = win_call("MPI_Win_call_errhandler", win, move |rt| rt.win(win).map(|_| ()));
    if valid != MPI_SUCCESS {
        return valid;
    }
    // The handler runs as for an error inside an MPI call on `win`; it returned, so did we.
    win_call("MPI_Win_call_errhandler", win, |_| err(code, format!("error code {code} raised by the program")));
    MPI_SUCCESS
}}
crate::mpi_export! { MPI_Win_attach, PMPI_Win_attach, (win: MPI_Win, base: *mut c_void, size: MPI_Aint) {
    win_call("MPI_Win_attach", win, move |rt| {
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
    win_call("MPI_Win_detach", win, move |rt| {
        dynamic_memory(rt, win, |m| match m.iter().position(|&(b, _)| b == base as usize) {
            Some(i) => {
                m.remove(i);
                Ok(())
            }
            None => err(MPI_ERR_RMA_ATTACH, "no memory is attached at that address"),
        })
    })
}}
crate::mpi_export! { MPI_Win_allocate_shared, PMPI_Win_allocate_shared, (size: MPI_Aint, disp_unit: c_int, info: MPI_Info, comm: MPI_Comm, baseptr: *mut c_void, win: *mut MPI_Win) {
    call("MPI_Win_allocate_shared", comm, move |rt| {
        let o = out_arg(win, "win")?;
        let b = out_arg(baseptr as *mut *mut c_void, "baseptr")?;
        let (h, base) = allocate_shared(rt, size, disp_unit, info, comm)?;
        *o = h;
        *b = base;
        Ok(())
    })
}}
crate::mpi_export! { MPI_Win_shared_query, PMPI_Win_shared_query, (win: MPI_Win, rank: c_int, size: *mut MPI_Aint, disp_unit: *mut c_int, baseptr: *mut c_void) {
    win_call("MPI_Win_shared_query", win, move |rt| {
        let s = out_arg(size, "size")?;
        let d = out_arg(disp_unit, "disp_unit")?;
        let b = out_arg(baseptr as *mut *mut c_void, "baseptr")?;
        let w = rt.win(win)?;
        let Some(mem) = &w.shared_mem else { return err(MPI_ERR_RMA_FLAVOR, "MPI_Win_shared_query needs a window of MPI_Win_allocate_shared") };
        // MPI_PROC_NULL: the first member with memory.
        let r = if rank == MPI_PROC_NULL { w.sizes.iter().position(|&x| x > 0).unwrap_or(0) } else { w.target(rank)? };
        *s = w.sizes[r] as MPI_Aint;
        *d = w.disp_units[r] as c_int;
        *b = mem.part(r) as *mut c_void;
        Ok(())
    })
}}
crate::mpi_export! { MPI_Put, PMPI_Put, (obuf: *const c_void, ocount: c_int, otype: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: c_int, ttype: MPI_Datatype, win: MPI_Win) {
    if ocount == tcount && otype == ttype && lean::with(win, |l| l.copy(obuf as *mut c_void, ocount, otype, rank, disp, true)) == Some(true) {
        return MPI_SUCCESS;
    }
    cold(move || win_call("MPI_Put", win, move |rt| put(rt, obuf, ocount, otype, rank, disp, tcount, ttype, win, false)))
}}
crate::mpi_export! { MPI_Get, PMPI_Get, (obuf: *mut c_void, ocount: c_int, otype: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: c_int, ttype: MPI_Datatype, win: MPI_Win) {
    if ocount == tcount && otype == ttype && lean::with(win, |l| l.copy(obuf, ocount, otype, rank, disp, false)) == Some(true) {
        return MPI_SUCCESS;
    }
    cold(move || win_call("MPI_Get", win, move |rt| get(rt, obuf, ocount, otype, rank, disp, tcount, ttype, win, false).map(|_| ())))
}}
crate::mpi_export! { MPI_Accumulate, PMPI_Accumulate, (obuf: *const c_void, ocount: c_int, otype: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: c_int, ttype: MPI_Datatype, op: MPI_Op, win: MPI_Win) {
    if ocount == tcount && otype == ttype && lean::with(win, |l| if ocount == 1 { l.accumulate(obuf, None, ttype, rank, disp, op) } else { l.accumulate_many(obuf, ocount, ttype, rank, disp, op) }) == Some(true) {
        return MPI_SUCCESS;
    }
    cold(move || win_call("MPI_Accumulate", win, move |rt| accumulate(rt, obuf, ocount, otype, rank, disp, tcount, ttype, op, win, false)))
}}
crate::mpi_export! { MPI_Get_accumulate, PMPI_Get_accumulate, (obuf: *const c_void, ocount: c_int, otype: MPI_Datatype, rbuf: *mut c_void, rcount: c_int, rtype: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: c_int, ttype: MPI_Datatype, op: MPI_Op, win: MPI_Win) {
    if ocount == 1 && rcount == 1 && tcount == 1 && otype == ttype && rtype == ttype && lean::with(win, |l| l.accumulate(obuf, Some(rbuf), ttype, rank, disp, op)) == Some(true) {
        return MPI_SUCCESS;
    }
    cold(move || win_call("MPI_Get_accumulate", win, move |rt| get_accumulate(rt, obuf, ocount, otype, rbuf, rcount, rtype, rank, disp, tcount, ttype, op, win, false).map(|_| ())))
}}
crate::mpi_export! { MPI_Fetch_and_op, PMPI_Fetch_and_op, (obuf: *const c_void, rbuf: *mut c_void, dt: MPI_Datatype, rank: c_int, disp: MPI_Aint, op: MPI_Op, win: MPI_Win) {
    if lean::with(win, |l| l.accumulate(obuf, Some(rbuf), dt, rank, disp, op)) == Some(true) {
        return MPI_SUCCESS;
    }
    cold(move || win_call("MPI_Fetch_and_op", win, move |rt| get_accumulate(rt, obuf, 1, dt, rbuf, 1, dt, rank, disp, 1, dt, op, win, false).map(|_| ())))
}}
crate::mpi_export! { MPI_Compare_and_swap, PMPI_Compare_and_swap, (obuf: *const c_void, cbuf: *const c_void, rbuf: *mut c_void, dt: MPI_Datatype, rank: c_int, disp: MPI_Aint, win: MPI_Win) {
    if lean::with(win, |l| l.compare_and_swap(obuf, cbuf, rbuf, dt, rank, disp)) == Some(true) {
        return MPI_SUCCESS;
    }
    cold(move || win_call("MPI_Compare_and_swap", win, move |rt| compare_and_swap(rt, obuf, cbuf, rbuf, dt, rank, disp, win)))
}}
crate::mpi_export! { MPI_Rput, PMPI_Rput, (obuf: *const c_void, ocount: c_int, otype: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: c_int, ttype: MPI_Datatype, win: MPI_Win, req: *mut MPI_Request) {
    win_call("MPI_Rput", win, move |rt| {
        let o = out_arg(req, "request")?;
        put(rt, obuf, ocount, otype, rank, disp, tcount, ttype, win, true)?;
        request_out(rt, o, None);
        Ok(())
    })
}}
crate::mpi_export! { MPI_Rget, PMPI_Rget, (obuf: *mut c_void, ocount: c_int, otype: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: c_int, ttype: MPI_Datatype, win: MPI_Win, req: *mut MPI_Request) {
    win_call("MPI_Rget", win, move |rt| {
        let o = out_arg(req, "request")?;
        let h = get(rt, obuf, ocount, otype, rank, disp, tcount, ttype, win, true)?;
        request_out(rt, o, h);
        Ok(())
    })
}}
crate::mpi_export! { MPI_Raccumulate, PMPI_Raccumulate, (obuf: *const c_void, ocount: c_int, otype: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: c_int, ttype: MPI_Datatype, op: MPI_Op, win: MPI_Win, req: *mut MPI_Request) {
    win_call("MPI_Raccumulate", win, move |rt| {
        let o = out_arg(req, "request")?;
        accumulate(rt, obuf, ocount, otype, rank, disp, tcount, ttype, op, win, true)?;
        request_out(rt, o, None);
        Ok(())
    })
}}
crate::mpi_export! { MPI_Rget_accumulate, PMPI_Rget_accumulate, (obuf: *const c_void, ocount: c_int, otype: MPI_Datatype, rbuf: *mut c_void, rcount: c_int, rtype: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: c_int, ttype: MPI_Datatype, op: MPI_Op, win: MPI_Win, req: *mut MPI_Request) {
    win_call("MPI_Rget_accumulate", win, move |rt| {
        let o = out_arg(req, "request")?;
        let h = get_accumulate(rt, obuf, ocount, otype, rbuf, rcount, rtype, rank, disp, tcount, ttype, op, win, true)?;
        request_out(rt, o, h);
        Ok(())
    })
}}
