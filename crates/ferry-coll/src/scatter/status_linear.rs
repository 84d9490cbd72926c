//! Status-based sequential scatter (SEEDS.md S1): the linear scatter, but the root serves
//! the ranks free-first (`Params::free_first`, busy ones last) instead of in rank order.
//! Receivers only ever hear from the root, so the order stays the root's business and the
//! schedule is static.
//!
//! Restrictions: none; serves scatterv; an absent or malformed order means rank order.
//! Steps: p - 1. Bytes: as `scatter.linear`.

use crate::{Cost, Params, Schedule};

pub const ID: &str = "scatter.status_linear";
pub const DESCRIPTION: &str = "root sends each block directly, free ranks first (S1)";
pub const RESTRICTIONS: &str = "none; needs a free-first order from the status source";
pub const VARYING: bool = true;
pub const IN_PLACE: bool = true;

pub fn schedule(q: &Params) -> Schedule {
    super::linear(q, crate::bcast::status_binomial::table(q).into_iter())
}

pub fn cost(q: &Params) -> Cost {
    super::linear_cost(q)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conformance::{check, info};
    use crate::Op;

    #[test]
    fn conformance() {
        check(info(ID));
    }

    #[test]
    fn serves_free_ranks_first() {
        let q = Params::uniform(2, 6, 2, 8).free_first(vec![4, 2, 0, 5, 1, 3]);
        let peers: Vec<usize> = schedule(&q)
            .nodes()
            .iter()
            .filter_map(|n| match n.op {
                Op::Send { peer, .. } => Some(peer),
                _ => None,
            })
            .collect();
        assert_eq!(peers, vec![4, 0, 5, 1, 3]);
    }
}
