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
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use super::event::{event_type, EVENTS};
use super::{initialised, new_info, put, run, with_runtime};
use crate::consts::*;
use crate::info::Hints;

pub(super) type EventFn = unsafe extern "C" fn(*mut c_void, *mut c_void, c_int, *mut c_void);
type FreeFn = unsafe extern "C" fn(*mut c_void, c_int, *mut c_void);
type DroppedFn = unsafe extern "C" fn(MPI_Count, *mut c_void, c_int, c_int, *mut c_void);

/// The safety levels, from the least demanding of the callback to the most.
const LEVELS: usize = 4;

/// A callback registered for one safety level.
#[derive(Clone)]
pub(super) struct Callback {
    pub function: EventFn,
    pub user_data: usize,
    hints: Hints,
}

/// What changes in a registration.
#[derive(Default)]
struct Changing {
    hints: Hints,
    callbacks: [Option<Callback>; LEVELS],
    /// Kept to honour the registration; Ferry delivers every event it raises, so it is
    /// never called.
    dropped: Option<DroppedFn>,
    /// Set by MPI_T_event_handle_free: called once the last delivery holding the
    /// registration has returned.
    free: Option<(Option<FreeFn>, usize)>,
}

pub(super) struct Registration {
    pub event: usize,
    /// The communicator of an event type bound to communicators.
    pub comm: Option<MPI_Comm>,
    changing: Mutex<Changing>,
}

impl Registration {
    fn lock(&self) -> MutexGuard<'_, Changing> {
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
pub(super) static ARMED: [AtomicU32; 2] = [AtomicU32::new(0), AtomicU32::new(0)];
const _: () = assert!(EVENTS.len() == 2, "one ARMED counter per event type");

fn live() -> MutexGuard<'static, BTreeMap<usize, Arc<Registration>>> {
    LIVE.lock().unwrap_or_else(|p| p.into_inner())
}

/// The live registrations of event type `event` on `comm` (all of them for an event type
/// bound to no object).
pub(super) fn registered(event: usize, comm: MPI_Comm) -> Vec<Held> {
    live().values().filter(|r| r.event == event && r.comm.is_none_or(|c| c == comm)).map(|r| Held(Some(r.clone()))).collect()
}

fn registration(h: *mut c_void) -> Result<Held, c_int> {
    let r = live().get(&(h as usize)).cloned().ok_or(MPI_T_ERR_INVALID_HANDLE)?;
    Ok(Held(Some(r)))
}

/// A registration held by a delivery or by an MPI_T call: the last holder of a freed one
/// calls its free callback when it lets go, holding no lock of this module then.
pub(super) struct Held(Option<Arc<Registration>>);

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

/// The hints of an info argument. Before `MPI_Init` and after `MPI_Finalize` no info object
/// exists and the argument is not looked at, as the standard allows.
fn hints_of(info: MPI_Info) -> Result<Hints, c_int> {
    if info == MPI_INFO_NULL {
        return Ok(Vec::new());
    }
    with_runtime(|rt| match rt {
        Some(rt) => crate::info::hints(rt, info).map_err(|_| MPI_ERR_INFO),
        None => Ok(Vec::new()),
    })?
}

/// Merge `new` into `hints`: each key takes its new value.
fn merge(hints: &mut Hints, new: Hints) {
    for (k, v) in new {
        crate::info::set(hints, &k, &v);
    }
}

fn level(cb_safety: c_int) -> Result<usize, c_int> {
    usize::try_from(cb_safety).ok().filter(|l| *l < LEVELS).ok_or(MPI_T_ERR_INVALID)
}

crate::mpi_export! { MPI_T_event_handle_alloc, PMPI_T_event_handle_alloc, (index: c_int, obj: *mut c_void, info: MPI_Info, out: *mut *mut c_void) {
    run(|| {
        initialised()?;
        let e = event_type(index)?;
        if out.is_null() {
            return Err(MPI_T_ERR_INVALID);
        }
        let comm = match e.bind {
            MPI_T_BIND_MPI_COMM => {
                // SAFETY: for an event type bound to communicators, MPI passes a pointer to one.
                let c = unsafe { (obj as *const MPI_Comm).as_ref() }.copied().ok_or(MPI_T_ERR_INVALID_HANDLE)?;
                // The communicator must exist now (no communicator exists outside MPI).
                if !with_runtime(|rt| rt.is_some_and(|rt| rt.comms.contains_key(&c)))? {
                    return Err(MPI_T_ERR_INVALID_HANDLE);
                }
                Some(c)
            }
            _ => None,
        };
        let hints = hints_of(info)?;
        let r = Arc::new(Registration { event: index as usize, comm, changing: Mutex::new(Changing { hints, ..Changing::default() }) });
        let h = r.handle();
        live().insert(h as usize, r);
        ARMED[index as usize].fetch_add(1, Ordering::Release);
        put(out, h);
        Ok(())
    })
}}

crate::mpi_export! { MPI_T_event_handle_free, PMPI_T_event_handle_free, (h: *mut c_void, user_data: *mut c_void, free_cb: Option<FreeFn>) {
    run(|| {
        initialised()?;
        let r = live().remove(&(h as usize)).ok_or(MPI_T_ERR_INVALID_HANDLE)?;
        ARMED[r.event].fetch_sub(1, Ordering::Release);
        r.lock().free = Some((free_cb, user_data as usize));
        // The free callback runs now, or when the last delivery to it returns.
        drop(Held(Some(r)));
        Ok(())
    })
}}

crate::mpi_export! { MPI_T_event_handle_set_info, PMPI_T_event_handle_set_info, (h: *mut c_void, info: MPI_Info) {
    run(|| {
        initialised()?;
        let r = registration(h)?;
        let new = hints_of(info)?;
        merge(&mut r.lock().hints, new);
        Ok(())
    })
}}

crate::mpi_export! { MPI_T_event_handle_get_info, PMPI_T_event_handle_get_info, (h: *mut c_void, info_used: *mut MPI_Info) {
    run(|| {
        initialised()?;
        let r = registration(h)?;
        if info_used.is_null() {
            return Err(MPI_T_ERR_INVALID);
        }
        let hints = r.lock().hints.clone();
        put(info_used, new_info(hints)?);
        Ok(())
    })
}}

crate::mpi_export! { MPI_T_event_register_callback, PMPI_T_event_register_callback, (h: *mut c_void, cb_safety: c_int, info: MPI_Info,
        user_data: *mut c_void, function: Option<EventFn>) {
    run(|| {
        initialised()?;
        let r = registration(h)?;
        let l = level(cb_safety)?;
        let hints = hints_of(info)?;
        // A NULL function takes the level's callback away.
        r.lock().callbacks[l] = function.map(|function| Callback { function, user_data: user_data as usize, hints });
        Ok(())
    })
}}

crate::mpi_export! { MPI_T_event_callback_set_info, PMPI_T_event_callback_set_info, (h: *mut c_void, cb_safety: c_int, info: MPI_Info) {
    run(|| {
        initialised()?;
        let r = registration(h)?;
        let l = level(cb_safety)?;
        let new = hints_of(info)?;
        let done = r.lock().callbacks[l].as_mut().map(|cb| merge(&mut cb.hints, new)).ok_or(MPI_T_ERR_INVALID);
        done
    })
}}

crate::mpi_export! { MPI_T_event_callback_get_info, PMPI_T_event_callback_get_info, (h: *mut c_void, cb_safety: c_int, info_used: *mut MPI_Info) {
    run(|| {
        initialised()?;
        let r = registration(h)?;
        let l = level(cb_safety)?;
        if info_used.is_null() {
            return Err(MPI_T_ERR_INVALID);
        }
        let hints = r.lock().callbacks[l].as_ref().map(|cb| cb.hints.clone());
        put(info_used, new_info(hints.ok_or(MPI_T_ERR_INVALID)?)?);
        Ok(())
    })
}}

crate::mpi_export! { MPI_T_event_set_dropped_handler, PMPI_T_event_set_dropped_handler, (h: *mut c_void, handler: Option<DroppedFn>) {
    run(|| {
        initialised()?;
        let r = registration(h)?;
        r.lock().dropped = handler;
        Ok(())
    })
}}
