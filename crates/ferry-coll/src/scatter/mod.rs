//! Scatter: block i of the root's `Send` buffer (at `displs[i]`) reaches rank i's `Recv`.
//! Scatterv: non-roots know only their own block, so only algorithms marked `VARYING`
//! (those that read `blocks[rank]` alone on non-roots) serve it.

pub mod binomial;
pub mod linear;
pub mod shm;
pub mod status_linear;

use crate::{BufferId, Params, Range, Schedule};

/// Block i in the root's send buffer.
pub(crate) fn source(q: &Params, i: usize) -> Range {
    Range::new(BufferId::Send, q.displs[i], q.blocks[i])
}

/// The root's send buffer and the own receive buffer, as the conventions declare them.
pub(crate) fn new_schedule(q: &Params) -> Schedule {
    let root = q.rank == q.root;
    let send = if root { q.extent() } else { 0 };
    let recv = if root && q.in_place {
        0
    } else {
        q.blocks[q.rank]
    };
    Schedule::new(q.rank, q.size, send, recv)
}

/// Linear scatter in the given order of destinations (every rank but the root).
pub(crate) fn linear(q: &Params, order: impl Iterator<Item = usize>) -> Schedule {
    let mut s = new_schedule(q);
    if !q.vcall && q.is_uniform() && q.blocks[0] == 0 {
        return s;
    }
    let own = Range::new(BufferId::Recv, 0, q.blocks[q.rank]);
    if q.rank == q.root {
        for i in order.filter(|&i| i != q.root) {
            s.send(i, vec![source(q, i)], &[]);
        }
        if !q.in_place {
            s.copy(source(q, q.root), own, &[]);
        }
    } else {
        s.recv(q.root, vec![own], &[]);
    }
    s
}

/// Cost of a linear scatter or gather: the root serves p - 1 blocks one after another.
pub(crate) fn linear_cost(q: &Params) -> crate::Cost {
    if q.size == 1 || (!q.vcall && q.is_uniform() && q.blocks[0] == 0) {
        return crate::Cost::ZERO;
    }
    let others: usize = (0..q.size)
        .filter(|&i| i != q.root)
        .map(|i| q.blocks[i])
        .sum();
    crate::Cost {
        rounds: q.size - 1,
        messages: q.size - 1,
        bytes: others,
        rank_bytes: others,
    }
}
