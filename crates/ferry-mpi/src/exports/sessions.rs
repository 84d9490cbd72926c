//! Sessions (MPI-4.1 chapter 11.3): session init and finalize, process sets, and groups and
//! communicators made from them.

use std::os::raw::{c_char, c_int};
use std::sync::Arc;

use crate::objects::runtime;
use crate::boundary::{call, call_anytime};
use crate::consts::*;
use crate::errhandler::{check_errhandler, CommErrhandlerFn};
use crate::error::{c_string, die, err, MpiError, MpiResult, out_arg};
use crate::objects::Runtime;
use crate::comm::from_group::create_from_group;
use crate::session::*;

/// Run `body` as the MPI function `name`; an error goes to the handler `eh` picks (given the
/// runtime), which a user handler receives with `object` (the session) as its handle.
pub(crate) fn call_with(name: &'static str, object: c_int, eh: impl FnOnce(&Runtime) -> MPI_Errhandler, body: impl FnOnce(&mut Runtime) -> MpiResult<()>) -> c_int {
    let mut failed: Option<(MpiError, MPI_Errhandler)> = None;
    let rc = call(name, MPI_COMM_SELF, |rt| {
        if let Err(e) = body(rt) {
            let h = eh(rt);
            failed = Some((e, h));
        }
        Ok(())
    });
    if rc != MPI_SUCCESS {
        return rc;
    }
    match failed {
        None => MPI_SUCCESS,
        Some((e, h)) => raise(name, object, h, e),
    }
}

/// Apply error handler `eh` to `e` (no lock held).
pub(crate) fn raise(name: &str, object: c_int, eh: MPI_Errhandler, e: MpiError) -> c_int {
    if eh == MPI_ERRORS_RETURN {
        return e.class;
    }
    if let Some(f) = crate::errhandler::user_handler(eh) {
        crate::errhandler::invoke(f, object, e.class);
        return e.class;
    }
    let msg = format!("Fatal error in {name}: {e}");
    let code = e.class.max(1);
    match runtime::lock().as_mut() {
        Some(rt) => rt.abort_job(&msg, code),
        None => die(&msg, code),
    }
}

/// Run `body`, which makes a communicator from groups, as the MPI function `name` and store
/// its result in `newcomm`. There is no communicator yet: errors go to the handler given
/// for the new one when it is valid, else to `MPI_COMM_SELF`'s.
pub(crate) fn call_creating(name: &'static str, errhandler: MPI_Errhandler, newcomm: *mut MPI_Comm, body: impl FnOnce(&mut Runtime) -> MpiResult<MPI_Comm>) -> c_int {
    let pick = |rt: &Runtime| if check_errhandler(errhandler).is_ok() { errhandler } else { rt.errhandler_of(MPI_COMM_SELF) };
    call_with(name, MPI_COMM_NULL, pick, |rt| {
        let o = out_arg(newcomm, "newcomm")?;
        *o = body(rt)?;
        Ok(())
    })
}

crate::mpi_export! { MPI_Session_init, PMPI_Session_init, (info: MPI_Info, errhandler: MPI_Errhandler, session: *mut MPI_Session) {
    // No session (and maybe no runtime) yet: errors go to the handler being installed when it
    // is a valid one, else they are fatal.
    call_anytime("MPI_Session_init", || match crate::lifecycle::session_init(info, errhandler, session) {
        Ok(()) => MPI_SUCCESS,
        Err(e) => {
            let eh = if check_errhandler(errhandler).is_ok() { errhandler } else { MPI_ERRORS_ARE_FATAL };
            raise("MPI_Session_init", MPI_SESSION_NULL, eh, e)
        }
    })
}}
crate::mpi_export! { MPI_Session_finalize, PMPI_Session_finalize, (session: *mut MPI_Session) {
    // SAFETY: MPI passes a pointer to the caller's handle; checked for NULL first.
    let h = if session.is_null() { MPI_SESSION_NULL } else { unsafe { *session } };
    let rc = call_with("MPI_Session_finalize", h, |rt| handler_of(rt, h), |_| {
        let o = out_arg(session, "session")?;
        check_session(h)?;
        with_table(|t| t.sessions.remove(&h));
        *o = MPI_SESSION_NULL;
        Ok(())
    });
    if rc != MPI_SUCCESS {
        return rc;
    }
    // Outside the runtime's lock: the last user takes the runtime down.
    call_anytime("MPI_Session_finalize", || match crate::lifecycle::session_end() {
        Ok(()) => MPI_SUCCESS,
        Err(e) => die(&format!("Fatal error in MPI_Session_finalize: {e}"), 1),
    })
}}
crate::mpi_export! { MPI_Session_get_num_psets, PMPI_Session_get_num_psets, (session: MPI_Session, info: MPI_Info, npset_names: *mut c_int) {
    call_with("MPI_Session_get_num_psets", session, |rt| handler_of(rt, session), |rt| {
        check_session(session)?;
        crate::info::optional(rt, info)?;
        *out_arg(npset_names, "npset_names")? = PSETS.len() as c_int;
        Ok(())
    })
}}
crate::mpi_export! { MPI_Session_get_nth_pset, PMPI_Session_get_nth_pset, (session: MPI_Session, info: MPI_Info, n: c_int, pset_len: *mut c_int, pset_name: *mut c_char) {
    call_with("MPI_Session_get_nth_pset", session, |rt| handler_of(rt, session), |rt| {
        check_session(session)?;
        crate::info::optional(rt, info)?;
        let len = out_arg(pset_len, "pset_len")?;
        let Some(name) = usize::try_from(n).ok().and_then(|i| PSETS.get(i)) else {
            return err(MPI_ERR_ARG, format!("n {n} is not in 0..{}", PSETS.len()));
        };
        if *len < 0 {
            return err(MPI_ERR_ARG, format!("pset_len {} is negative", *len));
        }
        // With room for nothing, only the length (with the NUL) is asked for.
        if *len > 0 {
            if pset_name.is_null() {
                return err(MPI_ERR_ARG, "pset_name is NULL");
            }
            let k = name.len().min(*len as usize - 1);
            // SAFETY: the caller's buffer holds `*len` bytes (MPI's contract); we write k + 1.
            unsafe {
                std::ptr::copy_nonoverlapping(name.as_ptr() as *const c_char, pset_name, k);
                *pset_name.add(k) = 0;
            }
        }
        *len = name.len() as c_int + 1;
        Ok(())
    })
}}
crate::mpi_export! { MPI_Session_get_info, PMPI_Session_get_info, (session: MPI_Session, info_used: *mut MPI_Info) {
    call_with("MPI_Session_get_info", session, |rt| handler_of(rt, session), |rt| {
        check_session(session)?;
        let o = out_arg(info_used, "info_used")?;
        let mut hints = with_table(|t| t.sessions.get(&session).map(|s| s.hints.clone())).unwrap_or_default();
        crate::info::set(&mut hints, "thread_level", thread_level_name(rt.thread_level));
        *o = crate::info::add(hints);
        Ok(())
    })
}}
crate::mpi_export! { MPI_Session_get_pset_info, PMPI_Session_get_pset_info, (session: MPI_Session, pset_name: *const c_char, info: *mut MPI_Info) {
    call_with("MPI_Session_get_pset_info", session, |rt| handler_of(rt, session), |rt| {
        check_session(session)?;
        let o = out_arg(info, "info")?;
        let name = c_string(pset_name, "pset_name", MPI_MAX_PSET_NAME_LEN)?;
        let size = pset_members(rt, &name)?.len();
        *o = crate::info::add(vec![("mpi_size".to_string(), size.to_string())]);
        Ok(())
    })
}}
crate::mpi_export! { MPI_Group_from_session_pset, PMPI_Group_from_session_pset, (session: MPI_Session, pset_name: *const c_char, newgroup: *mut MPI_Group) {
    call_with("MPI_Group_from_session_pset", session, |rt| handler_of(rt, session), |rt| {
        check_session(session)?;
        let o = out_arg(newgroup, "newgroup")?;
        let name = c_string(pset_name, "pset_name", MPI_MAX_PSET_NAME_LEN)?;
        let members = pset_members(rt, &name)?;
        *o = rt.add_group(Arc::new(members));
        Ok(())
    })
}}
crate::mpi_export! { MPI_Comm_create_from_group, PMPI_Comm_create_from_group, (group: MPI_Group, stringtag: *const c_char, info: MPI_Info, errhandler: MPI_Errhandler, newcomm: *mut MPI_Comm) {
    call_creating("MPI_Comm_create_from_group", errhandler, newcomm, |rt| create_from_group(rt, group, stringtag, info, errhandler))
}}
crate::mpi_export! { MPI_Session_create_errhandler, PMPI_Session_create_errhandler, (f: Option<CommErrhandlerFn>, eh: *mut MPI_Errhandler) {
    call_anytime("MPI_Session_create_errhandler", || {
        if eh.is_null() { return MPI_ERR_ARG; }
        let Some(f) = f else { return MPI_ERR_ARG };
        // SAFETY: checked non-null.
        unsafe { *eh = crate::errhandler::register(f) };
        MPI_SUCCESS
    })
}}
crate::mpi_export! { MPI_Session_set_errhandler, PMPI_Session_set_errhandler, (session: MPI_Session, errhandler: MPI_Errhandler) {
    call_with("MPI_Session_set_errhandler", session, |rt| handler_of(rt, session), |_| {
        check_session(session)?;
        check_errhandler(errhandler)?;
        with_table(|t| t.sessions.get_mut(&session).map(|s| s.errhandler = errhandler));
        Ok(())
    })
}}
crate::mpi_export! { MPI_Session_get_errhandler, PMPI_Session_get_errhandler, (session: MPI_Session, errhandler: *mut MPI_Errhandler) {
    call_with("MPI_Session_get_errhandler", session, |rt| handler_of(rt, session), |_| {
        check_session(session)?;
        let o = out_arg(errhandler, "errhandler")?;
        *o = crate::errhandler::got(with_table(|t| t.sessions.get(&session).map(|s| s.errhandler)).unwrap_or(MPI_ERRORS_ARE_FATAL));
        Ok(())
    })
}}
crate::mpi_export! { MPI_Session_call_errhandler, PMPI_Session_call_errhandler, (session: MPI_Session, errorcode: c_int) {
    let valid = call_with("MPI_Session_call_errhandler", session, |rt| handler_of(rt, session), |_| check_session(session));
    if valid != MPI_SUCCESS {
        return valid;
    }
    // The handler runs as for an error inside a call on the session; it returned, so do we.
    call_with("MPI_Session_call_errhandler", session, |rt| handler_of(rt, session), |_| Err(MpiError::new(errorcode, format!("error code {errorcode} raised by the program"))));
    MPI_SUCCESS
}}
crate::mpi_export! { MPI_Info_create_env, PMPI_Info_create_env, (_argc: c_int, _argv: *mut *mut c_char, info: *mut MPI_Info) {
    // Also before MPI_Init, with what is known then (see `info::env_hints`).
    crate::boundary::call_runtime_or_not("MPI_Info_create_env", move |rt| {
        let o = out_arg(info, "info")?;
        let hints = crate::info::env_hints(rt.as_deref().map(|r| &**r));
        *o = crate::info::add(hints);
        Ok(())
    })
}}
