//! Ring allgather (MPICH `allgather_intra_ring.c`; SEEDS.md S3): in step s every rank
//! sends to its right neighbour the block it received in step s - 1 (first its own) and
//! receives from its left neighbour.
//!
//! Restrictions: none; serves allgatherv. Steps: p - 1. Bytes: every rank sends and
//! receives all blocks but one: (p - 1) alpha + n (p - 1) beta for blocks of n.

use super::{block, empty, held, largest, start};
use crate::{Cost, Params, Schedule};

pub const ID: &str = "allgather.ring";
pub const DESCRIPTION: &str = "ring, p-1 steps, one block per step";
pub const RESTRICTIONS: &str = "none; long messages";
pub const VARYING: bool = true;
pub const IN_PLACE: bool = true;

pub fn schedule(q: &Params) -> Schedule {
    let (mut s, _) = start(q);
    let (p, r) = (q.size, q.rank);
    if empty(q) || p == 1 {
        return s;
    }
    let (right, left) = ((r + 1) % p, (r + p - 1) % p);
    let mut last = None;
    for step in 0..p - 1 {
        let out = (r + p - step) % p;
        let inn = (r + 2 * p - step - 1) % p;
        let deps: Vec<_> = last.into_iter().collect();
        s.send(right, vec![held(q, out)], &deps);
        last = Some(s.recv(left, vec![block(q, inn)], &[]));
    }
    s
}

pub fn cost(q: &Params) -> Cost {
    let p = q.size;
    if empty(q) || p == 1 {
        return Cost::ZERO;
    }
    let total = q.total();
    let rank_bytes = (0..p)
        .map(|r| (total - q.blocks[(r + 1) % p]).max(total - q.blocks[r]))
        .max()
        .unwrap_or(0);
    Cost {
        rounds: p - 1,
        messages: p * (p - 1),
        bytes: (p - 1) * largest(q),
        rank_bytes,
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
