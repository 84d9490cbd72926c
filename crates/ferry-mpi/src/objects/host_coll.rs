//! A communicator's part in the shared-memory collectives (`coll/onhost.rs`): whether its
//! ranks all share this host's memory, and once a collective needed it, the communicator's
//! host area (its flags and slots) and its count of calls there. It goes with the
//! communicator: freeing the communicator unmaps its area.

use std::sync::Arc;

use ferry_coll::slots::Cursor;
use ferry_core::engine::HostArea;
use ferry_data::reduce_op::{ElemType, PredefinedOp};

use crate::consts::*;

/// Where a communicator stands with the shared-memory collectives.
#[derive(Default)]
pub enum HostColl {
    /// Not looked at yet.
    #[default]
    Unknown,
    /// Its ranks do not all share this host's memory (or its area could not be made, which
    /// all of them learnt together): its collectives run as schedules of messages.
    Off,
    /// Its ranks span several hosts, more than one on some: the hierarchical algorithms
    /// apply (the shared-memory ones do not).
    Hosts,
    /// Its ranks share this host's memory; the area is made by the first call that needs it.
    Eligible,
    /// The area is made.
    Ready(Box<CommArea>),
}

/// A communicator's host area, as one of its ranks holds it.
pub struct CommArea {
    /// Shared with a call that waits without the runtime (MPI_THREAD_MULTIPLE).
    pub area: Arc<HostArea>,
    pub cursor: Cursor,
    /// The last datatype and operation a reduction on the direct path checked, with what they
    /// reduce as (a predefined datatype's handle always means the same).
    pub reduction: Option<(MPI_Datatype, MPI_Op, PredefinedOp, ElemType)>,
}

impl CommArea {
    pub fn new(area: HostArea) -> CommArea {
        CommArea { area: Arc::new(area), cursor: Cursor::default(), reduction: None }
    }
}
