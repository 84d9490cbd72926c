//! Linear scatter (MPICH `scatter_intra_linear`-style, Open MPI "basic linear"): the root
//! sends block i to rank i, in rank order, and copies its own block.
//!
//! Restrictions: none; serves scatterv. Steps: p - 1 at the root. Bytes: the root sends
//! every other block: (p - 1) alpha + n (p - 1) beta for blocks of n.

use crate::{Cost, Params, Schedule};

pub const ID: &str = "scatter.linear";
pub const DESCRIPTION: &str = "root sends each block directly, rank order";
pub const RESTRICTIONS: &str = "none";
pub const VARYING: bool = true;
pub const IN_PLACE: bool = true;

pub fn schedule(q: &Params) -> Schedule {
    super::linear(q, (1..q.size).map(|i| (q.root + i) % q.size))
}

pub fn cost(q: &Params) -> Cost {
    super::linear_cost(q)
}

#[cfg(test)]
mod tests {
    use crate::conformance::{check, info};

    #[test]
    fn conformance() {
        check(info(super::ID));
    }
}
