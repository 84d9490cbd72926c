//! Gather: every rank's `Send` block reaches the root's `Recv` buffer at `displs[i]`.
//! Gatherv: non-roots know only their own block, so only algorithms marked `VARYING`
//! serve it.

pub mod binomial;
pub mod linear;
pub mod shm;
pub mod status_linear;

use crate::{BufferId, Params, Range, Schedule};

/// Block i in the root's receive buffer.
pub(crate) fn target(q: &Params, i: usize) -> Range {
    Range::new(BufferId::Recv, q.displs[i], q.blocks[i])
}

/// This rank's own block as it sends it.
pub(crate) fn own(q: &Params) -> Range {
    Range::new(BufferId::Send, 0, q.blocks[q.rank])
}

pub(crate) fn new_schedule(q: &Params) -> Schedule {
    let root = q.rank == q.root;
    let send = if root && q.in_place {
        0
    } else {
        q.blocks[q.rank]
    };
    let recv = if root { q.extent() } else { 0 };
    Schedule::new(q.rank, q.size, send, recv)
}

/// Whether there is nothing to move (every rank knows it only for equal blocks).
pub(crate) fn empty(q: &Params) -> bool {
    !q.vcall && q.is_uniform() && q.blocks[0] == 0
}
