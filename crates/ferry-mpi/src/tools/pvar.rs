//! Performance variables, read from what the library keeps anyway (no counting is added
//! to any path for them):
//!
//! - `ferry_coll_calls`: the collective calls begun on a communicator (bound to
//!   `MPI_T_BIND_MPI_COMM`; its collective sequence number), class COUNTER, `MPI_UNSIGNED`;
//! - `ferry_requests_active`: the requests the library holds for the process now
//!   (non-blocking, persistent, generalized), class LEVEL, `MPI_UNSIGNED_LONG_LONG`.
//!
//! Both are continuous and read-only: they cannot be started, stopped, written or reset.
//! Sessions own their handles; freeing a session frees them. No enumerations exist.

use std::os::raw::{c_int, c_void};

use super::{state, State};
use crate::consts::*;
use crate::objects::Runtime;

/// `MPI_T_PVAR_ALL_HANDLES`: a handle value no pvar handle can take, MPICH's data object.
#[repr(transparent)]
pub struct AllHandles(*const u8);
// SAFETY: the pointer is a constant address that is only compared, never dereferenced.
unsafe impl Sync for AllHandles {}
static ALL_HANDLES_TARGET: u8 = 0;
#[no_mangle]
pub static MPI_T_PVAR_ALL_HANDLES: AllHandles = AllHandles(&ALL_HANDLES_TARGET);

/// One performance variable.
pub(crate) struct Pvar {
    pub(crate) name: &'static str,
    pub(crate) meaning: &'static str,
    pub(crate) class: c_int,
    pub(crate) datatype: MPI_Datatype,
    pub(crate) bind: c_int,
    read: fn(&Runtime, Option<MPI_Comm>) -> Option<u64>,
}

pub(crate) const PVARS: &[Pvar] = &[
    Pvar {
        name: "ferry_coll_calls",
        meaning: "collective calls begun on the communicator (blocking, non-blocking and persistent starts), modulo 2^32",
        class: MPI_T_PVAR_CLASS_COUNTER,
        datatype: MPI_UNSIGNED,
        bind: MPI_T_BIND_MPI_COMM,
        read: |rt, comm| rt.comms.get(&comm?).map(|c| c.coll_seq.total() as u64),
    },
    Pvar {
        name: "ferry_requests_active",
        meaning: "requests the library holds for this process: non-blocking operations in flight, persistent and generalized requests not yet freed",
        class: MPI_T_PVAR_CLASS_LEVEL,
        datatype: MPI_UNSIGNED_LONG_LONG,
        bind: MPI_T_BIND_NO_OBJECT,
        read: |rt, _| Some((rt.reqs.len() + rt.done_recvs.len()) as u64),
    },
];

/// A handle: the variable, the communicator it is bound to, its session.
pub(crate) struct Handle {
    pub(crate) pvar: usize,
    pub(crate) comm: Option<MPI_Comm>,
    pub(crate) session: usize,
}

/// A session: the handles allocated in it.
#[derive(Default)]
pub(crate) struct Session {
    pub(crate) handles: Vec<usize>,
}

/// How many performance variables there are (all in the one category).
pub(crate) fn count() -> usize {
    PVARS.len()
}

pub(crate) fn pvar(index: c_int) -> Result<&'static Pvar, c_int> {
    usize::try_from(index).ok().and_then(|i| PVARS.get(i)).ok_or(MPI_T_ERR_INVALID_INDEX)
}

pub(crate) fn session<'a>(s: &State, p: *mut c_void) -> Result<&'a mut Session, c_int> {
    if !s.sessions.contains(&(p as usize)) {
        return Err(MPI_T_ERR_INVALID_SESSION);
    }
    // SAFETY: a live session is a leaked Box<Session> (session_create), freed only by
    // session_free, which removes it from the set first; the state lock is held.
    Ok(unsafe { &mut *(p as *mut Session) })
}

/// The handle `h` of session `sp`.
pub(crate) fn handle<'a>(s: &State, sp: *mut c_void, h: *mut c_void) -> Result<&'a Handle, c_int> {
    let sess = session(s, sp)?;
    if !sess.handles.contains(&(h as usize)) {
        return Err(MPI_T_ERR_INVALID_HANDLE);
    }
    // SAFETY: a handle listed in a live session is a leaked Box<Handle> (handle_alloc).
    Ok(unsafe { &*(h as *const Handle) })
}

fn is_all(h: *mut c_void) -> bool {
    std::ptr::eq(h as *const u8, MPI_T_PVAR_ALL_HANDLES.0)
}

/// Read a variable from the runtime: `None` when the bound object is gone. Before
/// `MPI_Init` and after `MPI_Finalize` no object exists and no request is held.
pub(crate) fn read_value(p: &Pvar, comm: Option<MPI_Comm>) -> Result<Option<u64>, c_int> {
    // A user's reduction function runs inside an MPI call that holds the runtime.
    if crate::op::in_user_function() {
        return Err(MPI_T_ERR_INVALID);
    }
    if let Some(rt) = crate::generalized::reentered() {
        // SAFETY: a generalized request's callback runs inside an MPI call on this thread,
        // which lent its runtime for the callback's duration.
        return Ok((p.read)(unsafe { &*rt }, comm));
    }
    let rt = crate::objects::runtime::lock();
    Ok(match rt.as_ref() {
        Some(rt) => (p.read)(rt, comm),
        None if p.bind == MPI_T_BIND_NO_OBJECT => Some(0),
        None => None,
    })
}

/// Start and stop: the variables are continuous, so there is nothing to start or stop;
/// for `MPI_T_PVAR_ALL_HANDLES` that is success, as the standard says.
pub(crate) fn start_stop(session_p: *mut c_void, h: *mut c_void) -> Result<(), c_int> {
    let s = state()?;
    if is_all(h) {
        return session(&s, session_p).map(drop);
    }
    handle(&s, session_p, h)?;
    Err(MPI_T_ERR_PVAR_NO_STARTSTOP)
}

/// Write and reset: the variables are read-only.
pub(crate) fn write_reset(session_p: *mut c_void, h: *mut c_void, all_allowed: bool) -> Result<(), c_int> {
    let s = state()?;
    if all_allowed && is_all(h) {
        return session(&s, session_p).map(drop);
    }
    handle(&s, session_p, h)?;
    Err(MPI_T_ERR_PVAR_NO_WRITE)
}
