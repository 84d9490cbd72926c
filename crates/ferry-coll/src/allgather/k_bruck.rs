//! Radix-k Bruck allgather (Bruck, Ho, Kipnis, Upfal, Weathersby, "Efficient algorithms
//! for all-to-all communications in multiport message-passing systems", 1997; MPICH
//! `allgather_intra_k_brucks.c`). Rank r holds blocks r, r+1, ..., r+w-1 (mod p); each
//! step it receives from r + j w (j = 1..k-1) that rank's first min(w, p - j w) blocks and
//! sends its own to r - j w, so w grows k-fold. Blocks land in place: no final rotation.
//!
//! Restrictions: k >= 2 (`Params::radix`, smaller means 2); serves allgatherv.
//! Steps: ceil(log_k p), with up to k-1 messages each. Bytes: every rank receives all
//! blocks but one: log_k p alpha + n (p - 1) beta (k - 1 ports busy per step).

use super::{blocks_held, blocks_in, empty, largest, start};
use crate::shape::ceil_log;
use crate::{Cost, Params, Rounds, Schedule};

pub const ID: &str = "allgather.k_bruck";
pub const DESCRIPTION: &str = "Bruck with radix k (radix parameter), ceil(log_k p) steps";
pub const RESTRICTIONS: &str = "none; short and medium messages";
pub const VARYING: bool = true;
pub const IN_PLACE: bool = true;

/// The exchanges of each step: (distance, blocks), both sides derive the same.
fn plan(p: usize, k: usize) -> Vec<Vec<(usize, usize)>> {
    let mut steps = Vec::new();
    let mut w = 1;
    while w < p {
        let step: Vec<_> = (1..k)
            .filter(|&j| j * w < p)
            .map(|j| (j * w, w.min(p - j * w)))
            .collect();
        w = (w * k).min(p);
        steps.push(step);
    }
    steps
}

pub(crate) fn build(q: &Params, k: usize) -> Schedule {
    let (mut s, _) = start(q);
    let (p, r) = (q.size, q.rank);
    if empty(q) || p == 1 {
        return s;
    }
    let mut rounds = Rounds::new(&mut s, &[]);
    for step in plan(p, k.max(2)) {
        for (d, x) in step {
            rounds.send((r + p - d) % p, blocks_held(q, (0..x).map(|i| (r + i) % p)));
            rounds.recv((r + d) % p, blocks_in(q, (0..x).map(|i| (r + d + i) % p)));
        }
        rounds.next();
    }
    s
}

pub(crate) fn build_cost(q: &Params, k: usize, this: fn(&Params) -> Schedule) -> Cost {
    let p = q.size;
    if empty(q) || p == 1 {
        return Cost::ZERO;
    }
    let steps = plan(p, k.max(2));
    Cost {
        rounds: ceil_log(p, k.max(2)),
        messages: p * steps.iter().map(|s| s.len()).sum::<usize>(),
        bytes: steps.iter().map(|s| s[0].1).sum::<usize>() * largest(q),
        rank_bytes: super::rank_bytes(q, this),
    }
}

pub fn schedule(q: &Params) -> Schedule {
    build(q, q.radix)
}

pub fn cost(q: &Params) -> Cost {
    build_cost(q, q.radix, schedule)
}

#[cfg(test)]
mod tests {
    use crate::conformance::{check, info};

    #[test]
    fn conformance() {
        check(info(super::ID));
    }

    #[test]
    fn other_radixes() {
        use crate::conformance::{check_one, ELEM};
        for k in [2, 3, 5, 8] {
            for p in [1, 2, 7, 9, 16, 25, 31] {
                for count in [0, 3] {
                    let q = crate::Params::uniform(0, p, 0, count * ELEM)
                        .elem_size(ELEM)
                        .radix(k);
                    check_one(info(super::ID), &q, (k * 100 + p) as u64);
                }
            }
        }
    }
}
