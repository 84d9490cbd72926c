//! Event types: what Ferry reports as it happens, each a fixed record of elements:
//! `ferry_coll_begin`, a collective call began on a communicator (raised where the call is
//! numbered in the communicator's collective sequence, see `crate::coll`), and
//! `ferry_request_left`, a request the program still held at `MPI_Finalize` (raised where
//! the runtime goes down, see `crate::objects::runtime`).

use std::os::raw::c_int;

use crate::consts::*;

/// One element of an event's record: its datatype, size and place.
pub(crate) struct Element {
    pub datatype: MPI_Datatype,
    pub size: usize,
    pub displacement: usize,
}

/// One event type.
pub(crate) struct EventType {
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
pub(crate) const COLL_BEGIN: usize = 0;
/// The index of `ferry_request_left`.
pub(crate) const REQUEST_LEFT: usize = 1;

pub(crate) const EVENTS: &[EventType] = &[
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
pub(crate) fn event_type(index: c_int) -> Result<&'static EventType, c_int> {
    usize::try_from(index).ok().and_then(|i| EVENTS.get(i)).ok_or(MPI_T_ERR_INVALID_INDEX)
}

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
