//! Linear gather (MPICH `gather_intra_linear`-style, Open MPI "basic linear"): every rank
//! sends its block to the root, which receives them all (posted in rank order) in place.
//!
//! Restrictions: none; serves gatherv. Steps: p - 1 at the root. Bytes: the root receives
//! every other block: (p - 1) alpha + n (p - 1) beta.

use super::{empty, new_schedule, own, target};
use crate::{Cost, Params, Schedule};

pub const ID: &str = "gather.linear";
pub const DESCRIPTION: &str = "every rank sends its block directly to the root";
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
    for i in (1..q.size).map(|i| (q.root + i) % q.size) {
        s.recv(i, vec![target(q, i)], &[]);
    }
    if !q.in_place {
        s.copy(own(q), target(q, q.root), &[]);
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
