//! Allgather(v): every rank's `Send` block reaches every rank's `Recv` buffer at
//! `displs[i]` (in place: the own block is already there). Every algorithm here receives
//! each block exactly once, straight into its final place (messages gather several blocks,
//! so Bruck-style algorithms need no final rotation), and serves allgatherv.

pub mod shm;
pub mod bruck;
pub mod double_bruck;
pub mod double_ring;
pub mod k_bruck;
pub mod neighbor_exchange;
pub mod recursive_doubling;
pub mod ring;

use crate::{coalesce, BufferId, OpId, Params, Range, Schedule};

/// Block i in the receive buffer.
pub(crate) fn block(q: &Params, i: usize) -> Range {
    Range::new(BufferId::Recv, q.displs[i], q.blocks[i])
}

/// Where this rank reads block i from when it sends it (its own: the send buffer).
pub(crate) fn held(q: &Params, i: usize) -> Range {
    if i == q.rank && !q.in_place {
        Range::new(BufferId::Send, 0, q.blocks[i])
    } else {
        block(q, i)
    }
}

/// Blocks `ids` as one message: from where they are held, or into their places.
pub(crate) fn blocks_held(q: &Params, ids: impl IntoIterator<Item = usize>) -> Vec<Range> {
    coalesce(ids.into_iter().map(|i| held(q, i)))
}
pub(crate) fn blocks_in(q: &Params, ids: impl IntoIterator<Item = usize>) -> Vec<Range> {
    coalesce(ids.into_iter().map(|i| block(q, i)))
}

/// A schedule with the declared buffers; copies the own block into place unless in place.
pub(crate) fn start(q: &Params) -> (Schedule, Option<OpId>) {
    let mut s = Schedule::new(
        q.rank,
        q.size,
        if q.in_place { 0 } else { q.blocks[q.rank] },
        q.extent(),
    );
    let copy = (!q.in_place && !empty(q)).then(|| s.copy(held(q, q.rank), block(q, q.rank), &[]));
    (s, copy)
}

/// Nothing to move (known to all only when blocks are equal).
pub(crate) fn empty(q: &Params) -> bool {
    q.is_uniform() && q.blocks[0] == 0
}

/// Largest block.
pub(crate) fn largest(q: &Params) -> usize {
    q.blocks.iter().copied().max().unwrap_or(0)
}

/// Bytes the busiest rank sends or receives, counted from the schedules (for algorithms
/// whose traffic per rank has no short closed form with irregular blocks).
pub(crate) fn rank_bytes(q: &Params, build: fn(&Params) -> Schedule) -> usize {
    let mut sent = vec![0; q.size];
    let mut recv = vec![0; q.size];
    for r in 0..q.size {
        for n in build(&q.for_rank(r)).nodes() {
            match &n.op {
                crate::Op::Send { data, .. } => sent[r] += crate::span_len(data),
                crate::Op::Recv { data, .. } => recv[r] += crate::span_len(data),
                _ => {}
            }
        }
    }
    (0..q.size).map(|r| sent[r].max(recv[r])).max().unwrap_or(0)
}
