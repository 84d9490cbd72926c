//! Allreduce: every rank's `Recv` gets x_0 (op) ... (op) x_{p-1}, element-wise.

pub mod hier;
pub mod shm;
pub mod rabenseifner;
pub mod recursive_doubling;
pub mod ring;

use crate::{BufferId, OpId, Params, Range, Schedule};

/// A schedule whose `Recv` holds this rank's input (copied there unless in place).
pub(crate) fn start(q: &Params) -> (Schedule, Range, Vec<OpId>) {
    let n = q.blocks[0];
    let mut s = Schedule::new(q.rank, q.size, if q.in_place { 0 } else { n }, n);
    let acc = Range::new(BufferId::Recv, 0, n);
    let copied = if q.in_place || n == 0 {
        vec![]
    } else {
        vec![s.copy(Range::new(BufferId::Send, 0, n), acc, &[])]
    };
    (s, acc, copied)
}

/// As [`start`], without the copy: `Recv` holds nothing yet (the input stays in `Send`).
pub(crate) fn start_empty(q: &Params) -> (Schedule, Range, Vec<OpId>) {
    let n = q.blocks[0];
    let s = Schedule::new(q.rank, q.size, if q.in_place { 0 } else { n }, n);
    (s, Range::new(BufferId::Recv, 0, n), vec![])
}
