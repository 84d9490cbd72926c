//! Linear neighbourhood exchange (the "all at once" scheme of MPICH's
//! `neighbor_alltoall_allcomm_nb.c` and of libNBC's neighbourhood collectives): every rank
//! posts one receive per source and one send per destination at once and leaves the
//! ordering to the network; edges to itself are local copies. Serves all four
//! neighbourhood collectives (allgather: every send block is the same range).
//!
//! Restrictions: none. Steps: 1 (d messages in flight per rank of out-degree d). Bytes: a
//! rank of in-degree k and out-degree d with blocks of n: max(k, d) alpha + n max(k, d) beta.

use super::NeighborParams;
use crate::{BufferId, Cost, Range, Schedule};

pub const ID: &str = "neighbor.linear";
pub const DESCRIPTION: &str = "all neighbour sends and receives posted at once";
pub const RESTRICTIONS: &str = "none";

fn recv_block(q: &NeighborParams, i: usize) -> Range {
    Range::new(BufferId::Recv, q.recv_displs[i], q.recv_blocks[i])
}

fn send_block(q: &NeighborParams, j: usize) -> Range {
    Range::new(BufferId::Send, q.send_displs[j], q.send_blocks[j])
}

pub fn schedule(q: &NeighborParams) -> Schedule {
    let mut s = Schedule::new(q.rank, q.size, q.send_extent(), q.recv_extent());
    let to_self: Vec<usize> = (0..q.dests.len()).filter(|&j| q.dests[j] == Some(q.rank)).collect();
    let from_self: Vec<usize> = (0..q.sources.len()).filter(|&i| q.sources[i] == Some(q.rank)).collect();
    // The k-th block to itself is the k-th block from itself; a surplus on either side has
    // no partner and moves nothing.
    for (&j, &i) in to_self.iter().zip(&from_self) {
        let n = q.send_blocks[j].min(q.recv_blocks[i]);
        if n > 0 {
            s.copy(send_block(q, j).sub(0, n), recv_block(q, i).sub(0, n), &[]);
        }
    }
    for (i, src) in q.sources.iter().enumerate() {
        if let Some(p) = src.filter(|&p| p != q.rank) {
            s.recv(p, vec![recv_block(q, i)], &[]);
        }
    }
    for (j, dst) in q.dests.iter().enumerate() {
        if let Some(p) = dst.filter(|&p| p != q.rank) {
            s.send(p, vec![send_block(q, j)], &[]);
        }
    }
    s
}

/// This rank's view: the messages it sends, its largest message, and the larger of what it
/// sends and what it receives (a rank knows only its own edges).
pub fn cost(q: &NeighborParams) -> Cost {
    let remote = |peers: &[Option<usize>]| -> Vec<usize> {
        (0..peers.len()).filter(|&k| peers[k].is_some_and(|p| p != q.rank)).collect()
    };
    let (ins, outs) = (remote(&q.sources), remote(&q.dests));
    if ins.is_empty() && outs.is_empty() {
        return Cost::ZERO;
    }
    let sent: usize = outs.iter().map(|&j| q.send_blocks[j]).sum();
    let got: usize = ins.iter().map(|&i| q.recv_blocks[i]).sum();
    let largest = outs.iter().map(|&j| q.send_blocks[j]).chain(ins.iter().map(|&i| q.recv_blocks[i])).max().unwrap_or(0);
    Cost { rounds: 1, messages: outs.len(), bytes: largest, rank_bytes: sent.max(got) }
}

#[cfg(test)]
mod tests {
    use super::super::conformance::check;

    #[test]
    fn conformance() {
        check(super::schedule, super::cost);
    }
}
