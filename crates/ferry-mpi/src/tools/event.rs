//! Event types: what Ferry reports as it happens, each a fixed record of elements:
//! `ferry_coll_begin`, a collective call began on a communicator (raised where the call is
//! numbered in the communicator's collective sequence, see `crate::coll`), and
//! `ferry_request_left`, a request the program still held at `MPI_Finalize` (raised where
//! the runtime goes down, see `crate::runtime`).

use std::os::raw::{c_char, c_int, c_void};

use super::{initialised, name_arg, new_info, put, put_str, run};
use crate::consts::*;

/// One element of an event's record: its datatype, size and place.
pub(super) struct Element {
    pub datatype: MPI_Datatype,
    pub size: usize,
    pub displacement: usize,
}

/// One event type.
pub(super) struct EventType {
    pub name: &'static str,
    pub meaning: &'static str,
    pub bind: c_int,
    pub elements: &'static [Element],
}

impl EventType {
    /// The size of the whole record (what `MPI_T_event_copy` writes).
    pub fn record_size(&self) -> usize {
        self.elements.iter().map(|e| e.displacement + e.size).max().unwrap_or(0)
    }
}

/// The index of `ferry_coll_begin`.
pub(super) const COLL_BEGIN: usize = 0;
/// The index of `ferry_request_left`.
pub(super) const REQUEST_LEFT: usize = 1;

pub(super) const EVENTS: &[EventType] = &[
    EventType {
    name: "ferry_coll_begin",
    meaning: "a collective call began on the communicator (blocking, non-blocking, or the start of a persistent one); elements: \
              0 its number in the communicator's sequence of such calls (MPI_UNSIGNED, blocking and non-blocking calls are numbered apart), \
              1 whether it is blocking (MPI_INT, 1 or 0), 2 the size of the communicator's (local) group (MPI_INT), \
              3 this process's rank in it (MPI_INT)",
    bind: MPI_T_BIND_MPI_COMM,
    elements: &[
        Element { datatype: MPI_UNSIGNED, size: 4, displacement: 0 },
        Element { datatype: MPI_INT, size: 4, displacement: 4 },
        Element { datatype: MPI_INT, size: 4, displacement: 8 },
        Element { datatype: MPI_INT, size: 4, displacement: 12 },
    ],
    },
    EventType {
        name: "ferry_request_left",
        meaning: "MPI_Finalize found a request the program still held: never completed by a wait or test, or an inactive \
                  persistent or partitioned request never freed; elements: 0 the request's handle (MPI_INT), 1 its communicator's \
                  handle (MPI_INT)",
        bind: MPI_T_BIND_NO_OBJECT,
        elements: &[Element { datatype: MPI_INT, size: 4, displacement: 0 }, Element { datatype: MPI_INT, size: 4, displacement: 4 }],
    },
];

/// The event type of index `index`.
pub(super) fn event_type(index: c_int) -> Result<&'static EventType, c_int> {
    usize::try_from(index).ok().and_then(|i| EVENTS.get(i)).ok_or(MPI_T_ERR_INVALID_INDEX)
}

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

#[cfg(test)]
mod tests {
    use super::*;

    /// Raising copies each record into a fixed buffer and `MPI_T_event_read` copies each
    /// element out by its size: the table must agree with both.
    #[test]
    fn every_record_fits_and_its_elements_do_not_overlap() {
        for e in EVENTS {
            assert!(e.record_size() <= super::super::instance::RECORD, "{}: record too big", e.name);
            let mut end = 0;
            for el in e.elements {
                assert!(el.displacement >= end, "{}: elements overlap", e.name);
                let size = if el.datatype == MPI_INT || el.datatype == MPI_UNSIGNED { 4 } else { 8 };
                assert_eq!(el.size, size, "{}: element size and datatype disagree", e.name);
                end = el.displacement + el.size;
            }
        }
        assert_eq!(EVENTS[COLL_BEGIN].name, "ferry_coll_begin");
        assert_eq!(EVENTS[REQUEST_LEFT].name, "ferry_request_left");
    }
}
