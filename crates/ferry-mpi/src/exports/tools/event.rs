//! The tools information interface, `crate::tools::event`'s calls.

use std::os::raw::{c_char, c_int, c_void};

use crate::consts::*;
use crate::exports::tools::run;
use crate::tools::{initialised, name_arg, new_info, put, put_str};
use crate::tools::event::*;

crate::mpi_export! { MPI_T_event_get_num, PMPI_T_event_get_num, (num: *mut c_int) {
    run(|| {
        initialised()?;
        if num.is_null() {
            return Err(MPI_T_ERR_INVALID);
        }
        put(num, EVENTS.len() as c_int);
        Ok(())
    })
}}
crate::mpi_export! { MPI_T_event_get_info, PMPI_T_event_get_info, (index: c_int, name: *mut c_char, name_len: *mut c_int, verbosity: *mut c_int,
        datatypes: *mut MPI_Datatype, displacements: *mut MPI_Aint, num_elements: *mut c_int, enumtype: *mut *mut c_void, info: *mut MPI_Info,
        desc: *mut c_char, desc_len: *mut c_int, bind: *mut c_int) {
    run(|| {
        initialised()?;
        let e = event_type(index)?;
        put_str(e.name, name, name_len);
        put(verbosity, MPI_T_VERBOSITY_TUNER_BASIC);
        // `num_elements` holds the room of the two arrays on entry (either may be NULL) and
        // receives the number of elements; only what fits is written.
        // SAFETY: a non-NULL `num_elements` points to an int (MPI's contract).
        if let Some(n) = unsafe { num_elements.as_mut() } {
            let room = (*n).max(0) as usize;
            for (i, el) in e.elements.iter().take(room).enumerate() {
                // SAFETY: each non-NULL array holds `room` entries (MPI's contract), i < room.
                unsafe {
                    if !datatypes.is_null() {
                        *datatypes.add(i) = el.datatype;
                    }
                    if !displacements.is_null() {
                        *displacements.add(i) = el.displacement as MPI_Aint;
                    }
                }
            }
            *n = e.elements.len() as c_int;
        }
        put(enumtype, std::ptr::null_mut());
        // No hints describe an event type: a new, empty info object (see `new_info`).
        if !info.is_null() {
            put(info, new_info(Vec::new())?);
        }
        put_str(e.meaning, desc, desc_len);
        put(bind, e.bind);
        Ok(())
    })
}}
crate::mpi_export! { MPI_T_event_get_index, PMPI_T_event_get_index, (name: *const c_char, index: *mut c_int) {
    run(|| {
        initialised()?;
        let n = name_arg(name)?;
        let i = EVENTS.iter().position(|e| e.name == n).ok_or(MPI_T_ERR_INVALID_NAME)?;
        if index.is_null() {
            return Err(MPI_T_ERR_INVALID);
        }
        put(index, i as c_int);
        Ok(())
    })
}}
