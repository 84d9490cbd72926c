//! Recursive-doubling exscan (MPICH `exscan_intra_recursive_doubling.c`): as
//! `scan.recursive_doubling`, but the prefix starts empty, so the first contribution from
//! below is copied rather than combined, and the own input never enters it.
//!
//! Restrictions: none; keeps operand order. Steps: ceil(log2 p). Bytes: n per step.

use crate::{Cost, Params, Schedule};

pub const ID: &str = "exscan.recursive_doubling";
pub const DESCRIPTION: &str = "recursive doubling exclusive prefix reduction; keeps operand order";
pub const RESTRICTIONS: &str = "none";
pub const VARYING: bool = false;
pub const IN_PLACE: bool = true;

pub fn schedule(q: &Params) -> Schedule {
    crate::scan::recursive_doubling::build(q, true)
}

pub fn cost(q: &Params) -> Cost {
    crate::scan::recursive_doubling::build_cost(q)
}

#[cfg(test)]
mod tests {
    use crate::conformance::{check, info};

    #[test]
    fn conformance() {
        check(info(super::ID));
    }
}
