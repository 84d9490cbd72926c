//! Status-based sequential gather (SEEDS.md S1, the mirror of the status-based scatter):
//! the root receives its blocks in the order the senders are ready, not in rank order. It
//! posts p - 1 receives at once, each from any of the other ranks; every sender is matched
//! by the earliest receive still open, and its block lands at its own displacement. (A
//! chain of one receive at a time, each posted when the previous one completed, would pay
//! a whole message latency per block.)
//!
//! Restrictions: none; serves gatherv. Steps: p - 1. Bytes: as `gather.linear`. The root's
//! schedule names (p - 1)^2 ranges.

use super::{empty, new_schedule, own, target};
use crate::{Cost, Params, Range, Schedule};

pub const ID: &str = "gather.status_linear";
pub const DESCRIPTION: &str = "root receives each block directly, in arrival order (S1)";
pub const RESTRICTIONS: &str = "none";
pub const VARYING: bool = true;
pub const IN_PLACE: bool = true;

pub fn schedule(q: &Params) -> Schedule {
    let mut s = new_schedule(q);
    if empty(q) {
        return s;
    }
    if q.rank != q.root {
        s.send(q.root, vec![own(q)], &[]);
        return s;
    }
    if !q.in_place {
        s.copy(own(q), target(q, q.root), &[]);
    }
    let from: Vec<(usize, Vec<Range>)> = (0..q.size)
        .filter(|&i| i != q.root)
        .map(|i| (i, vec![target(q, i)]))
        .collect();
    for _ in 1..q.size {
        s.recv_any(from.clone(), &[]);
    }
    s
}

pub fn cost(q: &Params) -> Cost {
    crate::scatter::linear_cost(q)
}

#[cfg(test)]
mod tests {
    use crate::conformance::{check, info};

    #[test]
    fn conformance() {
        check(info(super::ID));
    }
}
