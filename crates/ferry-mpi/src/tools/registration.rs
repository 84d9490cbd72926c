//! Event registrations: a tool's interest in one event type on one object, with at most one
//! callback per safety level. A registration is shared (`Arc`) between the table of live ones
//! and the events being delivered to it, so that freeing it inside its own callback waits
//! for that callback to return before the free callback runs.
//!
//! This table has its own lock, apart from the interface's state: an event is raised with
//! the runtime held, so the lock order is runtime, then this table; no function here holds
//! the table while it takes the runtime.

use std::collections::BTreeMap;
use std::os::raw::{c_int, c_void};
use std::sync::atomic::AtomicU32;
use std::sync::{Arc, Mutex, MutexGuard};

use super::event::EVENTS;
use super::with_runtime;
use crate::consts::*;
use crate::objects::records::Hints;

pub(crate) type EventFn = unsafe extern "C" fn(*mut c_void, *mut c_void, c_int, *mut c_void);
pub(crate) type FreeFn = unsafe extern "C" fn(*mut c_void, c_int, *mut c_void);
pub(crate) type DroppedFn = unsafe extern "C" fn(MPI_Count, *mut c_void, c_int, c_int, *mut c_void);

/// The safety levels, from the least demanding of the callback to the most.
const LEVELS: usize = 4;

/// A callback registered for one safety level.
#[derive(Clone)]
pub(crate) struct Callback {
    pub function: EventFn,
    pub user_data: usize,
    pub(crate) hints: Hints,
}

/// What changes in a registration.
#[derive(Default)]
pub(crate) struct Changing {
    pub(crate) hints: Hints,
    pub(crate) callbacks: [Option<Callback>; LEVELS],
    /// Kept to honour the registration; Ferry delivers every event it raises, so it is
    /// never called.
    pub(crate) dropped: Option<DroppedFn>,
    /// Set by MPI_T_event_handle_free: called once the last delivery holding the
    /// registration has returned.
    pub(crate) free: Option<(Option<FreeFn>, usize)>,
}

pub(crate) struct Registration {
    pub event: usize,
    /// The communicator of an event type bound to communicators.
    pub comm: Option<MPI_Comm>,
    pub(crate) changing: Mutex<Changing>,
}

impl Registration {
    pub(crate) fn lock(&self) -> MutexGuard<'_, Changing> {
        self.changing.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The callback to run for an event, with its level: Ferry raises events in a context
    /// that allows every level (see `instance`), so the one asking least of its callback.
    /// None once the registration is freed.
    pub fn callback(&self) -> Option<(c_int, Callback)> {
        let c = self.lock();
        if c.free.is_some() {
            return None;
        }
        c.callbacks.iter().enumerate().find_map(|(level, cb)| cb.clone().map(|cb| (level as c_int, cb)))
    }

    /// The handle the tool holds for this registration.
    pub fn handle(self: &Arc<Self>) -> *mut c_void {
        Arc::as_ptr(self) as *mut c_void
    }
}

/// The live registrations, by handle.
static LIVE: Mutex<BTreeMap<usize, Arc<Registration>>> = Mutex::new(BTreeMap::new());

/// Live registrations per event type: the one check the raising paths make.
pub(crate) static ARMED: [AtomicU32; 2] = [AtomicU32::new(0), AtomicU32::new(0)];
const _: () = assert!(EVENTS.len() == 2, "one ARMED counter per event type");

pub(crate) fn live() -> MutexGuard<'static, BTreeMap<usize, Arc<Registration>>> {
    LIVE.lock().unwrap_or_else(|p| p.into_inner())
}

/// The live registrations of event type `event` on `comm` (all of them for an event type
/// bound to no object).
pub(crate) fn registered(event: usize, comm: MPI_Comm) -> Vec<Held> {
    live().values().filter(|r| r.event == event && r.comm.is_none_or(|c| c == comm)).map(|r| Held(Some(r.clone()))).collect()
}

pub(crate) fn registration(h: *mut c_void) -> Result<Held, c_int> {
    let r = live().get(&(h as usize)).cloned().ok_or(MPI_T_ERR_INVALID_HANDLE)?;
    Ok(Held(Some(r)))
}

/// A registration held by a delivery or by an MPI_T call: the last holder of a freed one
/// calls its free callback when it lets go, holding no lock of this module then.
pub(crate) struct Held(pub(crate) Option<Arc<Registration>>);

impl std::ops::Deref for Held {
    type Target = Arc<Registration>;
    fn deref(&self) -> &Arc<Registration> {
        self.0.as_ref().expect("held until dropped")
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let Some(r) = self.0.take() else { return };
        let handle = r.handle();
        if let Some(r) = Arc::into_inner(r) {
            if let Some((Some(f), user_data)) = r.changing.into_inner().unwrap_or_else(|p| p.into_inner()).free {
                // SAFETY: a tool's free callback, with the arguments MPI defines for it.
                unsafe { f(handle, MPI_T_CB_REQUIRE_NONE, user_data as *mut c_void) };
            }
        }
    }
}

/// The hints of an info argument (info objects exist with or without the runtime;
/// `MPI_INFO_ENV` only with it).
pub(crate) fn hints_of(info: MPI_Info) -> Result<Hints, c_int> {
    if info == MPI_INFO_NULL {
        return Ok(Vec::new());
    }
    with_runtime(|rt| crate::info::hints_of(rt.as_deref(), info).map_err(|_| MPI_ERR_INFO))?
}

/// Merge `new` into `hints`: each key takes its new value.
pub(crate) fn merge(hints: &mut Hints, new: Hints) {
    for (k, v) in new {
        crate::info::set(hints, &k, &v);
    }
}

pub(crate) fn level(cb_safety: c_int) -> Result<usize, c_int> {
    usize::try_from(cb_safety).ok().filter(|l| *l < LEVELS).ok_or(MPI_T_ERR_INVALID)
}
