//! The tools information interface, `crate::tools::registration`'s calls.

use std::os::raw::{c_int, c_void};
use std::sync::{Arc, Mutex};
use std::sync::atomic::Ordering;

use crate::consts::*;
use crate::exports::tools::run;
use crate::tools::{initialised, new_info, put, with_runtime};
use crate::tools::event::event_type;
use crate::tools::registration::*;

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
