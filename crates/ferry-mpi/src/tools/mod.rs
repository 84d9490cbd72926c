//! The MPI tools information interface (`MPI_T_*`): its control variables are Ferry's
//! `FERRY_*` knobs, from the one registry `ferry info` prints (`ferry_core::config::KNOBS`);
//! a few performance variables read what the library keeps anyway; event types report what
//! the library does as it does it, time-stamped by one source; all in one category. No
//! enumerations exist.
//!
//! The interface has its own state, apart from the MPI runtime: it may be initialised
//! before `MPI_Init` and after `MPI_Finalize`, and its functions return their error codes
//! without calling error handlers, as the standard says.

pub(crate) mod category;
pub(crate) mod cvar;
pub(crate) mod event;
pub(crate) mod instance;
pub(crate) mod pvar;
pub(crate) mod registration;
pub(crate) mod source;

use std::collections::BTreeSet;
use std::os::raw::{c_char, c_int};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, MutexGuard};

use crate::consts::*;
use crate::objects::Runtime;

pub(crate) use instance::{collective_begun, requests_left};

/// What the interface keeps between calls.
pub(crate) struct State {
    /// MPI_T_init_thread calls not yet matched by MPI_T_finalize.
    pub(crate) inits: u32,
    /// Live control-variable handles (the addresses of their boxes).
    pub(crate) cvar_handles: BTreeSet<usize>,
    /// Live performance-variable sessions (the addresses of their boxes).
    pub(crate) sessions: BTreeSet<usize>,
    /// Values written through the interface, by knob name: they replace the environment's.
    pub(crate) written: Vec<(&'static str, String)>,
}

pub(crate) static STATE: Mutex<State> = Mutex::new(State { inits: 0, cvar_handles: BTreeSet::new(), sessions: BTreeSet::new(), written: Vec::new() });

/// `State::inits`, readable without the lock: an event callback runs inside an MPI call,
/// where waiting for a lock another thread holds while it waits for the runtime would hang.
pub(crate) static INITS: AtomicU32 = AtomicU32::new(0);

/// The interface's state, when it is initialised.
pub(crate) fn state() -> Result<MutexGuard<'static, State>, c_int> {
    let s = STATE.lock().unwrap_or_else(|p| p.into_inner());
    if s.inits == 0 {
        return Err(MPI_T_ERR_NOT_INITIALIZED);
    }
    Ok(s)
}

/// Whether the interface is initialised (`MPI_T_ERR_NOT_INITIALIZED` if not).
pub(crate) fn initialised() -> Result<(), c_int> {
    if INITS.load(Ordering::Acquire) == 0 {
        return Err(MPI_T_ERR_NOT_INITIALIZED);
    }
    Ok(())
}

/// Run `f` on the MPI runtime, `None` before `MPI_Init` and after `MPI_Finalize`. Inside an
/// event or generalized-request callback the runtime is the one the running MPI call lent;
/// inside a reduction function it is held by the collective, and this is `MPI_T_ERR_INVALID`.
pub(crate) fn with_runtime<R>(f: impl FnOnce(Option<&mut Runtime>) -> R) -> Result<R, c_int> {
    if crate::op::in_user_function() {
        return Err(MPI_T_ERR_INVALID);
    }
    if let Some(rt) = crate::generalized::reentered() {
        // SAFETY: a callback runs inside an MPI call on this thread, which lent its runtime
        // and touches it again only once the callback returns.
        return Ok(f(Some(unsafe { &mut *rt })));
    }
    let mut rt = crate::objects::runtime::lock();
    Ok(f(rt.as_mut()))
}

/// A new info object holding `hints`, for the caller to free (info objects exist with or
/// without the runtime).
pub(crate) fn new_info(hints: crate::objects::records::Hints) -> Result<MPI_Info, c_int> {
    Ok(crate::info::add(hints))
}

/// Return a string the MPI_T way: `len` holds the buffer's size on entry; with no buffer (or
/// a size of 0) it receives the length the string needs, NUL included, else the string is
/// written (cut to fit) and `len` receives what was written, NUL included. A NULL `len`
/// asks for nothing.
pub(crate) fn put_str(s: &str, buf: *mut c_char, len: *mut c_int) {
    if len.is_null() {
        return;
    }
    // SAFETY: a non-NULL `len` points to an int (MPI's contract).
    let room = unsafe { *len };
    if buf.is_null() || room <= 0 {
        // SAFETY: as above.
        unsafe { *len = (s.len() + 1) as c_int };
        return;
    }
    let n = s.len().min(room as usize - 1);
    // SAFETY: `buf` holds `room` chars (MPI's contract) and n + 1 <= room.
    unsafe {
        std::ptr::copy_nonoverlapping(s.as_ptr() as *const c_char, buf, n);
        *buf.add(n) = 0;
        *len = (n + 1) as c_int;
    }
}

/// Write through an output argument the caller may leave NULL (MPI_T allows it for the
/// parts of an info query it does not want).
pub(crate) fn put<T>(p: *mut T, v: T) {
    // SAFETY: a non-NULL output argument points to caller storage for one T.
    if let Some(p) = unsafe { p.as_mut() } {
        *p = v;
    }
}

/// A NUL-terminated name argument.
pub(crate) fn name_arg(p: *const c_char) -> Result<String, c_int> {
    if p.is_null() {
        return Err(MPI_T_ERR_INVALID_NAME);
    }
    // SAFETY: MPI passes a NUL-terminated string (checked non-NULL above).
    Ok(unsafe { std::ffi::CStr::from_ptr(p) }.to_string_lossy().into_owned())
}
