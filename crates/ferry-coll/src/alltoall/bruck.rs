//! Bruck's index algorithm (Bruck, Ho, Kipnis, Upfal, Weathersby, "Efficient algorithms for
//! all-to-all communications in multiport message-passing systems", 1997; MPICH
//! `alltoall_intra_brucks.c`): after a local rotation, position i holds the block for rank
//! r + i; in step k every rank sends to r + 2^k, in one message, the positions whose index
//! has bit k set, and receives the same positions from r - 2^k. After the last step
//! position i holds the block from rank r - i, and an inverse rotation puts it in place.
//!
//! Here the rotations are only an addressing: the first send of a block reads it from the
//! user's buffer, a block still to travel lands in one of two scratch buffers (alternating,
//! so a step never overwrites what it sends), and a block's last hop lands straight in its
//! final place in `Recv`, which is the inverse rotation. In place, `Recv` is first staged.
//!
//! Restrictions: uniform blocks (alltoall); with irregular blocks it runs
//! `alltoall.pairwise`. Steps: ceil(log2 p). Bytes: about n p/2 per step:
//! ceil(log2 p) alpha + n (p/2) ceil(log2 p) beta for blocks of n. Short messages.

use super::{block, empty, pairwise, start};
use crate::shape::ceil_log;
use crate::{coalesce, BufferId, Cost, Params, Range, Rounds, Schedule};

pub const ID: &str = "alltoall.bruck";
pub const DESCRIPTION: &str = "Bruck's index algorithm, ceil(log2 p) steps of about p/2 blocks";
pub const RESTRICTIONS: &str = "uniform blocks (runs alltoall.pairwise otherwise); short messages";
pub const VARYING: bool = false;
pub const IN_PLACE: bool = true;

/// Blocks of one size on both sides (what every rank can rely on).
fn uniform(q: &Params) -> bool {
    let (sb, _) = q.sends();
    q.send_blocks.is_none() && q.is_uniform() && sb.iter().all(|&b| b == q.blocks[0])
}

pub fn schedule(q: &Params) -> Schedule {
    if !uniform(q) {
        return pairwise::schedule(q);
    }
    let (p, r, n) = (q.size, q.rank, q.blocks[0]);
    let (mut s, src, staged) = start(q);
    if empty(q) || p == 1 {
        return s;
    }
    let steps = ceil_log(p, 2);
    // Scratch k holds, at i n, position i after its (k+1)-th, (k+3)-th, ... hop.
    let hops = (1..p).map(|i| i.count_ones()).max().unwrap_or(0);
    let bufs: Vec<BufferId> = (0..hops.min(3) as usize - 1)
        .map(|_| s.scratch(p * n))
        .collect();
    // Where position i lies after `done` of its hops.
    let at = |i: usize, done: u32| -> Range {
        if done == 0 {
            src.block(q, (r + i) % p)
        } else if done == i.count_ones() {
            block(q, (r + p - i) % p)
        } else {
            Range::new(bufs[(done as usize - 1) % 2], i * n, n)
        }
    };
    let mut rounds = Rounds::new(&mut s, &staged);
    for k in 0..steps {
        let bit = 1 << k;
        let moving: Vec<usize> = (1..p).filter(|i| i & bit != 0).collect();
        let done = |i: usize| (i & (bit - 1)).count_ones();
        let out = coalesce(moving.iter().map(|&i| at(i, done(i))));
        let inn = coalesce(moving.iter().map(|&i| at(i, done(i) + 1)));
        rounds.send((r + bit) % p, out);
        rounds.recv((r + p - bit) % p, inn);
        rounds.next();
    }
    s
}

pub fn cost(q: &Params) -> Cost {
    if !uniform(q) {
        return pairwise::cost(q);
    }
    let (p, n) = (q.size, q.blocks[0]);
    if empty(q) || p == 1 {
        return Cost::ZERO;
    }
    let steps = ceil_log(p, 2);
    let moved: usize = (0..steps)
        .map(|k| (1..p).filter(|i| i & (1 << k) != 0).count() * n)
        .sum();
    Cost {
        rounds: steps,
        messages: p * steps,
        bytes: moved,
        rank_bytes: moved,
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
