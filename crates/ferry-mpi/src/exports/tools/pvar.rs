//! The tools information interface, `crate::tools::pvar`'s calls.

use std::os::raw::{c_char, c_int, c_void};

use crate::consts::*;
use crate::exports::tools::run;
use crate::tools::{initialised, name_arg, put, put_str, state};
use crate::tools::pvar::*;

crate::mpi_export! { MPI_T_pvar_get_num, PMPI_T_pvar_get_num, (num: *mut c_int) {
    run(|| {
        initialised()?;
        if num.is_null() {
            return Err(MPI_ERR_ARG);
        }
        put(num, PVARS.len() as c_int);
        Ok(())
    })
}}
crate::mpi_export! { MPI_T_pvar_get_info, PMPI_T_pvar_get_info, (index: c_int, name: *mut c_char, name_len: *mut c_int, verbosity: *mut c_int,
        var_class: *mut c_int, datatype: *mut MPI_Datatype, enumtype: *mut *mut c_void, desc: *mut c_char, desc_len: *mut c_int,
        bind: *mut c_int, readonly: *mut c_int, continuous: *mut c_int, atomic: *mut c_int) {
    run(|| {
        initialised()?;
        let p = pvar(index)?;
        put_str(p.name, name, name_len);
        put(verbosity, MPI_T_VERBOSITY_TUNER_BASIC);
        put(var_class, p.class);
        put(datatype, p.datatype);
        put(enumtype, std::ptr::null_mut());
        put_str(p.meaning, desc, desc_len);
        put(bind, p.bind);
        put(readonly, 1);
        put(continuous, 1);
        put(atomic, 0);
        Ok(())
    })
}}
crate::mpi_export! { MPI_T_pvar_get_index, PMPI_T_pvar_get_index, (name: *const c_char, var_class: c_int, index: *mut c_int) {
    run(|| {
        initialised()?;
        let n = name_arg(name)?;
        let i = PVARS.iter().position(|p| p.name == n && p.class == var_class).ok_or(MPI_T_ERR_INVALID_NAME)?;
        if index.is_null() {
            return Err(MPI_ERR_ARG);
        }
        put(index, i as c_int);
        Ok(())
    })
}}
crate::mpi_export! { MPI_T_pvar_session_create, PMPI_T_pvar_session_create, (session_out: *mut *mut c_void) {
    run(|| {
        let mut s = state()?;
        if session_out.is_null() {
            return Err(MPI_ERR_ARG);
        }
        let p = Box::into_raw(Box::<Session>::default()) as *mut c_void;
        s.sessions.insert(p as usize);
        put(session_out, p);
        Ok(())
    })
}}
crate::mpi_export! { MPI_T_pvar_session_free, PMPI_T_pvar_session_free, (session_io: *mut *mut c_void) {
    run(|| {
        let mut s = state()?;
        // SAFETY: a non-NULL session argument points to a session handle (MPI's contract).
        let p = unsafe { session_io.as_mut() }.ok_or(MPI_T_ERR_INVALID_SESSION)?;
        if !s.sessions.remove(&(*p as usize)) {
            return Err(MPI_T_ERR_INVALID_SESSION);
        }
        // SAFETY: it was live (just removed from the set): a leaked Box<Session>, and so
        // is each handle it lists.
        let sess = unsafe { Box::from_raw(*p as *mut Session) };
        for h in sess.handles {
            // SAFETY: as above.
            drop(unsafe { Box::from_raw(h as *mut Handle) });
        }
        *p = std::ptr::null_mut();
        Ok(())
    })
}}
crate::mpi_export! { MPI_T_pvar_handle_alloc, PMPI_T_pvar_handle_alloc, (session_p: *mut c_void, index: c_int, obj: *mut c_void, handle_out: *mut *mut c_void, count: *mut c_int) {
    run(|| {
        initialised()?;
        let p = pvar(index)?;
        if handle_out.is_null() || count.is_null() {
            return Err(MPI_ERR_ARG);
        }
        // Looked at before the state is locked: the runtime may be held by an MPI call whose
        // event callback waits for the state (the lock order is runtime, then state).
        let comm = match p.bind {
            MPI_T_BIND_MPI_COMM => {
                // SAFETY: for a variable bound to a communicator, MPI passes a pointer to one.
                let c = unsafe { (obj as *const MPI_Comm).as_ref() }.copied().ok_or(MPI_T_ERR_INVALID_HANDLE)?;
                // The communicator must exist now.
                read_value(p, Some(c))?.ok_or(MPI_T_ERR_INVALID_HANDLE)?;
                Some(c)
            }
            _ => None,
        };
        let s = state()?;
        let sess = session(&s, session_p)?;
        let h = Box::into_raw(Box::new(Handle { pvar: index as usize, comm, session: session_p as usize })) as *mut c_void;
        sess.handles.push(h as usize);
        put(handle_out, h);
        put(count, 1);
        Ok(())
    })
}}
crate::mpi_export! { MPI_T_pvar_handle_free, PMPI_T_pvar_handle_free, (session_p: *mut c_void, handle_io: *mut *mut c_void) {
    run(|| {
        let s = state()?;
        // SAFETY: a non-NULL handle argument points to a handle (MPI's contract).
        let h = unsafe { handle_io.as_mut() }.ok_or(MPI_T_ERR_INVALID_HANDLE)?;
        let owner = handle(&s, session_p, *h)?.session;
        let sess = session(&s, owner as *mut c_void)?;
        sess.handles.retain(|x| *x != *h as usize);
        // SAFETY: listed in its session until just now: a leaked Box<Handle>.
        drop(unsafe { Box::from_raw(*h as *mut Handle) });
        *h = std::ptr::null_mut();
        Ok(())
    })
}}
crate::mpi_export! { MPI_T_pvar_start, PMPI_T_pvar_start, (session_p: *mut c_void, h: *mut c_void) {
    run(|| start_stop(session_p, h))
}}
crate::mpi_export! { MPI_T_pvar_stop, PMPI_T_pvar_stop, (session_p: *mut c_void, h: *mut c_void) {
    run(|| start_stop(session_p, h))
}}
crate::mpi_export! { MPI_T_pvar_reset, PMPI_T_pvar_reset, (session_p: *mut c_void, h: *mut c_void) {
    run(|| write_reset(session_p, h, true))
}}
crate::mpi_export! { MPI_T_pvar_write, PMPI_T_pvar_write, (session_p: *mut c_void, h: *mut c_void, _buf: *const c_void) {
    run(|| write_reset(session_p, h, false))
}}
crate::mpi_export! { MPI_T_pvar_readreset, PMPI_T_pvar_readreset, (session_p: *mut c_void, h: *mut c_void, _buf: *mut c_void) {
    run(|| write_reset(session_p, h, false))
}}
crate::mpi_export! { MPI_T_pvar_read, PMPI_T_pvar_read, (session_p: *mut c_void, h: *mut c_void, buf: *mut c_void) {
    run(|| {
        let s = state()?;
        let hd = handle(&s, session_p, h)?;
        let (p, comm) = (&PVARS[hd.pvar], hd.comm);
        if buf.is_null() {
            return Err(MPI_ERR_ARG);
        }
        // Not held while the runtime is read (see MPI_T_pvar_handle_alloc).
        drop(s);
        let v = read_value(p, comm)?.ok_or(MPI_T_ERR_INVALID_HANDLE)?;
        // SAFETY: the buffer holds `count` (1) elements of the variable's datatype.
        unsafe {
            if p.datatype == MPI_UNSIGNED {
                *(buf as *mut u32) = v as u32;
            } else {
                *(buf as *mut u64) = v;
            }
        }
        Ok(())
    })
}}
crate::mpi_export! { MPI_T_enum_get_info, PMPI_T_enum_get_info, (_enumtype: *mut c_void, _num: *mut c_int, _name: *mut c_char, _name_len: *mut c_int) {
    run(|| {
        initialised()?;
        Err(MPI_T_ERR_INVALID_HANDLE)
    })
}}
crate::mpi_export! { MPI_T_enum_get_item, PMPI_T_enum_get_item, (_enumtype: *mut c_void, _index: c_int, _value: *mut c_int, _name: *mut c_char, _name_len: *mut c_int) {
    run(|| {
        initialised()?;
        Err(MPI_T_ERR_INVALID_HANDLE)
    })
}}
