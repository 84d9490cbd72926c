//! Performance variables: Ferry defines none. Sessions are real objects a tool can create
//! and free; no pvar index, name or handle is valid, so the calls that take one say so, and
//! those given `MPI_T_PVAR_ALL_HANDLES` act on the session's handles, of which there are none.
//! Enumerations: none either (no variable has one).

use std::os::raw::{c_char, c_int, c_void};

use super::{initialised, name_arg, put, run, state, State};
use crate::consts::*;

/// `MPI_T_PVAR_ALL_HANDLES`: a handle value no pvar handle can take, MPICH's data object.
#[repr(transparent)]
pub struct AllHandles(*const u8);
// SAFETY: the pointer is a constant address that is only compared, never dereferenced.
unsafe impl Sync for AllHandles {}
static ALL_HANDLES_TARGET: u8 = 0;
#[no_mangle]
pub static MPI_T_PVAR_ALL_HANDLES: AllHandles = AllHandles(&ALL_HANDLES_TARGET);

/// A session: nothing inside, its address is its identity.
struct Session;

fn session(s: &State, p: *mut c_void) -> Result<(), c_int> {
    if !s.sessions.contains(&(p as usize)) {
        return Err(MPI_T_ERR_INVALID_SESSION);
    }
    Ok(())
}

/// A call on `handle` in a session: the session must be live; the only handle that can be
/// valid is `MPI_T_PVAR_ALL_HANDLES`, where `all` allows it (start, stop, reset).
fn on_handle(session_p: *mut c_void, handle: *mut c_void, all: bool) -> Result<(), c_int> {
    let s = state()?;
    session(&s, session_p)?;
    if all && std::ptr::eq(handle as *const u8, MPI_T_PVAR_ALL_HANDLES.0) {
        return Ok(());
    }
    Err(MPI_T_ERR_INVALID_HANDLE)
}

crate::mpi_export! { MPI_T_pvar_get_num, PMPI_T_pvar_get_num, (num: *mut c_int) {
    run(|| {
        initialised()?;
        if num.is_null() {
            return Err(MPI_ERR_ARG);
        }
        put(num, 0);
        Ok(())
    })
}}

crate::mpi_export! { MPI_T_pvar_get_info, PMPI_T_pvar_get_info, (_index: c_int, _name: *mut c_char, _name_len: *mut c_int, _verbosity: *mut c_int,
        _var_class: *mut c_int, _datatype: *mut MPI_Datatype, _enumtype: *mut *mut c_void, _desc: *mut c_char, _desc_len: *mut c_int,
        _bind: *mut c_int, _readonly: *mut c_int, _continuous: *mut c_int, _atomic: *mut c_int) {
    run(|| {
        initialised()?;
        Err(MPI_T_ERR_INVALID_INDEX)
    })
}}

crate::mpi_export! { MPI_T_pvar_get_index, PMPI_T_pvar_get_index, (name: *const c_char, _var_class: c_int, _index: *mut c_int) {
    run(|| {
        initialised()?;
        name_arg(name)?;
        Err(MPI_T_ERR_INVALID_NAME)
    })
}}

crate::mpi_export! { MPI_T_pvar_session_create, PMPI_T_pvar_session_create, (session_out: *mut *mut c_void) {
    run(|| {
        let mut s = state()?;
        if session_out.is_null() {
            return Err(MPI_ERR_ARG);
        }
        let p = Box::into_raw(Box::new(Session)) as *mut c_void;
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
        // SAFETY: it was live (just removed from the set): a leaked Box<Session>.
        drop(unsafe { Box::from_raw(*p as *mut Session) });
        *p = std::ptr::null_mut();
        Ok(())
    })
}}

crate::mpi_export! { MPI_T_pvar_handle_alloc, PMPI_T_pvar_handle_alloc, (session_p: *mut c_void, _index: c_int, _obj: *mut c_void, _handle: *mut *mut c_void, _count: *mut c_int) {
    run(|| {
        let s = state()?;
        session(&s, session_p)?;
        Err(MPI_T_ERR_INVALID_INDEX)
    })
}}

crate::mpi_export! { MPI_T_pvar_handle_free, PMPI_T_pvar_handle_free, (session_p: *mut c_void, handle: *mut *mut c_void) {
    run(|| {
        // SAFETY: a non-NULL handle argument points to a handle (MPI's contract).
        let h = unsafe { handle.as_ref() }.map_or(std::ptr::null_mut(), |h| *h);
        on_handle(session_p, h, false)
    })
}}

crate::mpi_export! { MPI_T_pvar_start, PMPI_T_pvar_start, (session_p: *mut c_void, handle: *mut c_void) {
    run(|| on_handle(session_p, handle, true))
}}

crate::mpi_export! { MPI_T_pvar_stop, PMPI_T_pvar_stop, (session_p: *mut c_void, handle: *mut c_void) {
    run(|| on_handle(session_p, handle, true))
}}

crate::mpi_export! { MPI_T_pvar_reset, PMPI_T_pvar_reset, (session_p: *mut c_void, handle: *mut c_void) {
    run(|| on_handle(session_p, handle, true))
}}

crate::mpi_export! { MPI_T_pvar_read, PMPI_T_pvar_read, (session_p: *mut c_void, handle: *mut c_void, _buf: *mut c_void) {
    run(|| on_handle(session_p, handle, false))
}}

crate::mpi_export! { MPI_T_pvar_readreset, PMPI_T_pvar_readreset, (session_p: *mut c_void, handle: *mut c_void, _buf: *mut c_void) {
    run(|| on_handle(session_p, handle, false))
}}

crate::mpi_export! { MPI_T_pvar_write, PMPI_T_pvar_write, (session_p: *mut c_void, handle: *mut c_void, _buf: *const c_void) {
    run(|| on_handle(session_p, handle, false))
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
