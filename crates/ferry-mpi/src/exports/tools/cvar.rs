//! The tools information interface, `crate::tools::cvar`'s calls.

use std::os::raw::{c_char, c_int, c_void};

use ferry_core::config::KNOBS;

use crate::objects::coll_selection::Selection;
use crate::consts::*;
use crate::exports::tools::run;
use crate::tools::{initialised, name_arg, put, put_str, state};
use crate::tools::cvar::*;

crate::mpi_export! { MPI_T_cvar_get_num, PMPI_T_cvar_get_num, (num: *mut c_int) {
    run(|| {
        initialised()?;
        if num.is_null() {
            return Err(MPI_ERR_ARG);
        }
        put(num, KNOBS.len() as c_int);
        Ok(())
    })
}}
crate::mpi_export! { MPI_T_cvar_get_info, PMPI_T_cvar_get_info, (index: c_int, name: *mut c_char, name_len: *mut c_int, verbosity: *mut c_int,
        datatype: *mut MPI_Datatype, enumtype: *mut *mut c_void, desc: *mut c_char, desc_len: *mut c_int, bind: *mut c_int, scope: *mut c_int) {
    run(|| {
        initialised()?;
        let k = knob(index)?;
        put_str(k.name, name, name_len);
        put(verbosity, MPI_T_VERBOSITY_TUNER_BASIC);
        put(datatype, MPI_CHAR);
        put(enumtype, std::ptr::null_mut());
        put_str(k.meaning, desc, desc_len);
        put(bind, MPI_T_BIND_NO_OBJECT);
        put(scope, if Selection::settable(k.name) { MPI_T_SCOPE_ALL_EQ } else { MPI_T_SCOPE_CONSTANT });
        Ok(())
    })
}}
crate::mpi_export! { MPI_T_cvar_get_index, PMPI_T_cvar_get_index, (name: *const c_char, index: *mut c_int) {
    run(|| {
        initialised()?;
        let n = name_arg(name)?;
        let i = KNOBS.iter().position(|k| k.name == n).ok_or(MPI_T_ERR_INVALID_NAME)?;
        if index.is_null() {
            return Err(MPI_ERR_ARG);
        }
        put(index, i as c_int);
        Ok(())
    })
}}
crate::mpi_export! { MPI_T_cvar_handle_alloc, PMPI_T_cvar_handle_alloc, (index: c_int, _obj: *mut c_void, handle: *mut *mut c_void, count: *mut c_int) {
    run(|| {
        let mut s = state()?;
        let k = knob(index)?;
        if handle.is_null() || count.is_null() {
            return Err(MPI_ERR_ARG);
        }
        let need = (value(&s, k).len() + 1).max(MIN_COUNT);
        let h = Box::into_raw(Box::new(Handle { knob: index as usize, count: need })) as *mut c_void;
        s.cvar_handles.insert(h as usize);
        put(handle, h);
        put(count, need as c_int);
        Ok(())
    })
}}
crate::mpi_export! { MPI_T_cvar_handle_free, PMPI_T_cvar_handle_free, (handle: *mut *mut c_void) {
    run(|| {
        let mut s = state()?;
        // SAFETY: a non-NULL handle argument points to a handle (MPI's contract).
        let h = unsafe { handle.as_mut() }.ok_or(MPI_T_ERR_INVALID_HANDLE)?;
        if !s.cvar_handles.remove(&(*h as usize)) {
            return Err(MPI_T_ERR_INVALID_HANDLE);
        }
        // SAFETY: it was live (just removed from the set): a leaked Box<Handle>.
        drop(unsafe { Box::from_raw(*h as *mut Handle) });
        *h = std::ptr::null_mut();
        Ok(())
    })
}}
crate::mpi_export! { MPI_T_cvar_read, PMPI_T_cvar_read, (h: *mut c_void, buf: *mut c_void) {
    run(|| {
        let s = state()?;
        let h = handle(&s, h)?;
        if buf.is_null() {
            return Err(MPI_ERR_ARG);
        }
        let mut room = h.count as c_int;
        put_str(&value(&s, &KNOBS[h.knob]), buf as *mut c_char, &mut room);
        Ok(())
    })
}}
crate::mpi_export! { MPI_T_cvar_write, PMPI_T_cvar_write, (h: *mut c_void, buf: *const c_void) {
    run(|| {
        let s = state()?;
        let h = handle(&s, h)?;
        let k = &KNOBS[h.knob];
        if !Selection::settable(k.name) {
            return Err(MPI_T_ERR_CVAR_SET_NEVER);
        }
        if buf.is_null() {
            return Err(MPI_ERR_ARG);
        }
        // SAFETY: the buffer holds a string of at most `count` chars (the handle's count).
        let bytes = unsafe { std::slice::from_raw_parts(buf as *const u8, h.count) };
        let text = String::from_utf8_lossy(bytes.split(|b| *b == 0).next().unwrap_or_default()).into_owned();
        // A user's reduction function, a generalized request's or an event's callback runs
        // inside an MPI call that holds the runtime: waiting for it would never end.
        if crate::op::in_user_function() || crate::generalized::reentered().is_some() {
            return Err(MPI_T_ERR_CVAR_SET_NOT_NOW);
        }
        // The state is let go while the runtime is taken: an MPI call holding the runtime may
        // run an event callback that reads a variable (the lock order is runtime, then state).
        drop(s);
        let mut rt = crate::objects::runtime::lock();
        // Between MPI_Init and MPI_Finalize only: before, the environment decides.
        let rt = rt.as_mut().ok_or(MPI_T_ERR_CVAR_SET_NOT_NOW)?;
        rt.coll.set(k.name, &text).map_err(|_| MPI_T_ERR_INVALID)?;
        let mut s = state()?;
        s.written.retain(|(n, _)| *n != k.name);
        s.written.push((k.name, text));
        Ok(())
    })
}}
