//! Pipelined chain broadcast (the textbook pipeline; Open MPI's `bcast` "pipeline"): the
//! message is cut into segments of `segment_size` bytes that flow down the chain
//! root -> root+1 -> ... -> root-1; a rank forwards a segment as soon as it has it.
//!
//! Restrictions: none (p = 1 or n = 0: nothing to do). Steps: s + p - 2 for s segments.
//! Bytes: each rank receives and sends n once; critical path (s + p - 2) segments:
//! (s + p - 2) (alpha + seg beta), which approaches n beta for long messages.

use crate::shape::{unvrank, vrank};
use crate::{BufferId, Cost, Params, Range, Schedule};

pub const ID: &str = "bcast.pipelined_chain";
pub const DESCRIPTION: &str = "chain through all ranks, message cut into segments (segment_size)";
pub const RESTRICTIONS: &str = "none; long messages (latency grows with p)";
pub const VARYING: bool = false;
pub const IN_PLACE: bool = false;

fn segments(q: &Params) -> (usize, usize) {
    let n = q.blocks[q.root];
    let seg = q.segment_size.max(1).min(n.max(1));
    (seg, n.div_ceil(seg))
}

pub fn schedule(q: &Params) -> Schedule {
    let (p, root) = (q.size, q.root);
    let n = q.blocks[root];
    let mut s = Schedule::new(q.rank, p, 0, n);
    if n == 0 || p == 1 {
        return s;
    }
    let v = vrank(q.rank, root, p);
    let (seg, count) = segments(q);
    for k in 0..count {
        let piece = Range::new(BufferId::Recv, k * seg, seg.min(n - k * seg));
        let got = if v > 0 {
            vec![s.recv(unvrank(v - 1, root, p), vec![piece], &[])]
        } else {
            vec![]
        };
        if v + 1 < p {
            s.send(unvrank(v + 1, root, p), vec![piece], &got);
        }
    }
    s
}

pub fn cost(q: &Params) -> Cost {
    let (p, n) = (q.size, q.blocks[q.root]);
    if n == 0 || p == 1 {
        return Cost::ZERO;
    }
    let (seg, count) = segments(q);
    let steps = count + p - 2;
    Cost {
        rounds: steps,
        messages: (p - 1) * count,
        bytes: steps * seg,
        rank_bytes: n,
    }
}

#[cfg(test)]
mod tests {
    use crate::conformance::{check, info};

    #[test]
    fn conformance() {
        check(info(super::ID));
    }
}
