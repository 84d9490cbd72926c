//! Raising events, and the event instances callbacks receive. An event is raised on the
//! thread of the MPI call that caused it: its record and timestamp live on that call's stack,
//! and the instance handle is valid on that thread while the callbacks run, no longer.
//!
//! When no registration exists for an event type, raising it costs one atomic load. The
//! callbacks run with the runtime lent to the MPI calls they make, as a generalized
//! request's callbacks do, and one at a time (the runtime is held): so every safety level is
//! allowed, and the callback registered for the least demanding one is called.

use std::cell::RefCell;
use std::os::raw::{c_int, c_void};
use std::sync::atomic::Ordering;

use super::event::{EventType, COLL_BEGIN, EVENTS, REQUEST_LEFT};
use super::registration::{registered, ARMED};
use super::{initialised, source};
use crate::consts::*;
use crate::objects::Runtime;

/// The largest record of an event type.
pub(super) const RECORD: usize = 16;

/// One raised event.
pub(crate) struct Instance {
    pub(crate) event: &'static EventType,
    pub(crate) timestamp: MPI_Count,
    pub(crate) record: [u8; RECORD],
}

thread_local! {
    /// The instances whose callbacks run on this thread now (nested when a callback's MPI
    /// call raises another event).
    static LIVE: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

/// The instance of handle `h`, while its callbacks run on this thread.
pub(crate) fn instance<'a>(h: *mut c_void) -> Result<&'a Instance, c_int> {
    if !LIVE.with(|l| l.borrow().contains(&(h as usize))) {
        return Err(MPI_T_ERR_INVALID_HANDLE);
    }
    // SAFETY: a live instance is on the stack of `raise`, below this call on this thread,
    // and is removed from the list before `raise` returns.
    Ok(unsafe { &*(h as *const Instance) })
}

/// A collective call began on `comm`: number `seq` of its sequence, blocking or not, in a
/// group of `size` where this process is `rank`.
#[inline]
pub(crate) fn collective_begun(rt: &mut Runtime, comm: MPI_Comm, seq: u32, blocking: bool, size: usize, rank: i32) {
    if ARMED[COLL_BEGIN].load(Ordering::Acquire) == 0 {
        return;
    }
    let mut record = [0u8; RECORD];
    record[0..4].copy_from_slice(&seq.to_ne_bytes());
    record[4..8].copy_from_slice(&(blocking as i32).to_ne_bytes());
    record[8..12].copy_from_slice(&(size as i32).to_ne_bytes());
    record[12..16].copy_from_slice(&rank.to_ne_bytes());
    raise(rt, COLL_BEGIN, comm, record);
}

/// `MPI_Finalize` is about to take the runtime down: one event per request the program
/// still holds, in handle order. (Requests it freed are no longer its own to report.)
pub(crate) fn requests_left(rt: &mut Runtime) {
    if ARMED[REQUEST_LEFT].load(Ordering::Acquire) == 0 {
        return;
    }
    let mut left: Vec<(MPI_Request, MPI_Comm)> = rt.reqs.iter().filter(|(h, _)| !crate::objects::request::is_shared_done(*h)).map(|(h, r)| (h, r.comm)).collect();
    left.extend(rt.done_recvs.iter().map(|(h, d)| (h, d.comm)));
    left.sort_unstable();
    for (h, comm) in left {
        let mut record = [0u8; RECORD];
        record[0..4].copy_from_slice(&h.to_ne_bytes());
        record[4..8].copy_from_slice(&comm.to_ne_bytes());
        raise(rt, REQUEST_LEFT, MPI_COMM_NULL, record);
    }
}

/// Call the callbacks of every registration of `event` on `comm`.
#[cold]
#[inline(never)]
fn raise(rt: &mut Runtime, event: usize, comm: MPI_Comm, record: [u8; RECORD]) {
    // After MPI_T_finalize the registrations stay, silent, until the interface is used again.
    if initialised().is_err() {
        return;
    }
    let regs = registered(event, comm);
    if regs.is_empty() {
        return;
    }
    let inst = Instance { event: &EVENTS[event], timestamp: source::now(), record };
    let h = &inst as *const Instance as usize;
    LIVE.with(|l| l.borrow_mut().push(h));
    crate::generalized::with_callback(rt, || {
        for r in regs {
            // A registration freed by an earlier callback of this event gets no more.
            if let Some((level, cb)) = r.callback() {
                // SAFETY: a tool's event callback, with the arguments MPI defines for it.
                unsafe { (cb.function)(h as *mut c_void, r.handle(), level, cb.user_data as *mut c_void) };
            }
            // Dropped here, inside the lent runtime: the free callback of a registration freed
            // during its own callback runs now.
            drop(r);
        }
    });
    LIVE.with(|l| l.borrow_mut().retain(|x| *x != h));
}
