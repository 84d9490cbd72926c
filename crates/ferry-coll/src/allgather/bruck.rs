//! Bruck allgather (Bruck et al. 1997; MPICH `allgather_intra_brucks.c`; SEEDS.md S3):
//! step k, rank r sends the 2^k blocks it holds (r .. r+2^k-1, mod p) to r - 2^k and
//! receives those of r + 2^k; the last step sends only what is still missing. The radix-2
//! case of `allgather.k_bruck`; blocks land in place, so no final rotation.
//!
//! Restrictions: none; serves allgatherv. Steps: ceil(log2 p). Bytes: every rank receives
//! all blocks but one: ceil(log2 p) alpha + n (p - 1) beta.

use crate::{Cost, Params, Schedule};

pub const ID: &str = "allgather.bruck";
pub const DESCRIPTION: &str = "Bruck, ceil(log2 p) steps, any p";
pub const RESTRICTIONS: &str = "none; short and medium messages";
pub const VARYING: bool = true;
pub const IN_PLACE: bool = true;

pub fn schedule(q: &Params) -> Schedule {
    super::k_bruck::build(q, 2)
}

pub fn cost(q: &Params) -> Cost {
    super::k_bruck::build_cost(q, 2, schedule)
}

#[cfg(test)]
mod tests {
    use crate::conformance::{check, info};

    #[test]
    fn conformance() {
        check(info(super::ID));
    }
}
