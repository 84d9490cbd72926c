//! Alltoall(v): block j of rank i's `Send` (at `send_displs[j]`) reaches rank j's `Recv` at
//! `displs[i]`. In place, `Recv` holds the outgoing blocks at the receive layout; they are
//! first staged in scratch so that incoming blocks can land straight in their places.
//! Alltoallv layouts are local (a rank knows only its own counts), so plain alltoall alone
//! may skip an empty exchange; for alltoallv every pair exchanges a message, empty or not,
//! and `cost` reports `bytes` and `rank_bytes` as this rank sees them (the collective's are
//! the maxima over ranks).

pub mod bruck;
pub mod linear;
pub mod pairwise;
pub mod shm;

use crate::{BufferId, Cost, OpId, Params, Range, Schedule};

/// Where this rank reads its outgoing blocks from: the user's send buffer, or the staged
/// copy of `Recv` when in place.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Source {
    buf: BufferId,
}

impl Source {
    /// The block for rank j.
    pub(crate) fn block(&self, q: &Params, j: usize) -> Range {
        let (b, d) = q.sends();
        Range::new(self.buf, d[j], b[j])
    }
}

/// Block i (from rank i) in the receive buffer.
pub(crate) fn block(q: &Params, i: usize) -> Range {
    Range::new(BufferId::Recv, q.displs[i], q.blocks[i])
}

/// A schedule with the declared buffers, the source of outgoing blocks and the ops that
/// incoming blocks must wait for (the staging copy in place). Copies the own block.
pub(crate) fn start(q: &Params) -> (Schedule, Source, Vec<OpId>) {
    let (p, r) = (q.size, q.rank);
    let send_len = if q.in_place { 0 } else { q.send_extent() };
    let mut s = Schedule::new(r, p, send_len, q.extent());
    if empty(q) || p == 1 {
        let src = if q.in_place {
            BufferId::Recv
        } else {
            BufferId::Send
        };
        if !q.in_place && !empty(q) {
            s.copy(Source { buf: src }.block(q, r), block(q, r), &[]);
        }
        return (s, Source { buf: src }, Vec::new());
    }
    if q.in_place {
        let e = q.extent();
        let stage = s.scratch(e);
        let copied = s.copy(
            Range::new(BufferId::Recv, 0, e),
            Range::new(stage, 0, e),
            &[],
        );
        (s, Source { buf: stage }, vec![copied])
    } else {
        let src = Source {
            buf: BufferId::Send,
        };
        s.copy(src.block(q, r), block(q, r), &[]);
        (s, src, Vec::new())
    }
}

/// Nothing to move, and every rank knows it (plain alltoall of empty blocks).
pub(crate) fn empty(q: &Params) -> bool {
    q.send_blocks.is_none() && q.is_uniform() && q.blocks[0] == 0
}

/// Largest message this rank sends or receives.
pub(crate) fn largest(q: &Params) -> usize {
    let (sb, _) = q.sends();
    (0..q.size)
        .filter(|&j| j != q.rank)
        .map(|j| sb[j].max(q.blocks[j]))
        .max()
        .unwrap_or(0)
}

/// Cost of the algorithms that send every block straight to its destination in `rounds`
/// steps, at most one message per peer per step.
pub(crate) fn direct_cost(q: &Params, rounds: usize) -> Cost {
    let p = q.size;
    if empty(q) || p == 1 {
        return Cost::ZERO;
    }
    let (sb, _) = q.sends();
    let others = |b: &[usize]| b.iter().sum::<usize>() - b[q.rank];
    Cost {
        rounds,
        messages: p * (p - 1),
        bytes: rounds * largest(q),
        rank_bytes: others(sb).max(others(&q.blocks)),
    }
}
