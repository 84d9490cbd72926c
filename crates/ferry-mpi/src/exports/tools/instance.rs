//! The tools information interface, `crate::tools::instance`'s calls.

use std::os::raw::{c_int, c_void};

use crate::consts::*;
use crate::exports::tools::run;
use crate::tools::{initialised, put, source};
use crate::tools::instance::*;

crate::mpi_export! { MPI_T_event_read, PMPI_T_event_read, (h: *mut c_void, element: c_int, buffer: *mut c_void) {
    run(|| {
        initialised()?;
        let inst = instance(h)?;
        let el = usize::try_from(element).ok().and_then(|i| inst.event.elements.get(i)).ok_or(MPI_T_ERR_INVALID_INDEX)?;
        if buffer.is_null() {
            return Err(MPI_T_ERR_INVALID);
        }
        // SAFETY: the buffer holds one element of the element's datatype (MPI's contract).
        unsafe { std::ptr::copy_nonoverlapping(inst.record[el.displacement..].as_ptr(), buffer as *mut u8, el.size) };
        Ok(())
    })
}}
crate::mpi_export! { MPI_T_event_copy, PMPI_T_event_copy, (h: *mut c_void, buffer: *mut c_void) {
    run(|| {
        initialised()?;
        let inst = instance(h)?;
        if buffer.is_null() {
            return Err(MPI_T_ERR_INVALID);
        }
        // SAFETY: the buffer holds the whole record, laid out by the displacements
        // MPI_T_event_get_info gives (MPI's contract).
        unsafe { std::ptr::copy_nonoverlapping(inst.record.as_ptr(), buffer as *mut u8, inst.event.record_size()) };
        Ok(())
    })
}}
crate::mpi_export! { MPI_T_event_get_timestamp, PMPI_T_event_get_timestamp, (h: *mut c_void, timestamp: *mut MPI_Count) {
    run(|| {
        initialised()?;
        let inst = instance(h)?;
        if timestamp.is_null() {
            return Err(MPI_T_ERR_INVALID);
        }
        put(timestamp, inst.timestamp);
        Ok(())
    })
}}
crate::mpi_export! { MPI_T_event_get_source, PMPI_T_event_get_source, (h: *mut c_void, source_index: *mut c_int) {
    run(|| {
        initialised()?;
        instance(h)?;
        if source_index.is_null() {
            return Err(MPI_T_ERR_INVALID);
        }
        put(source_index, source::CLOCK);
        Ok(())
    })
}}
