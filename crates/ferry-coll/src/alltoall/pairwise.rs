//! Pairwise-exchange alltoall (Thakur, Rabenseifner, Gropp 2005; MPICH
//! `alltoall_intra_pairwise.c`): in step s = 1..p-1 rank r exchanges one block with one
//! peer: with r xor s when p is a power of two (a true exchange), otherwise it sends to
//! r + s and receives from r - s. Each step waits for the previous one, so a rank has one
//! message in each direction in flight.
//!
//! Restrictions: none; serves alltoallv (every pair exchanges a message, empty ones too).
//! Steps: p - 1. Bytes: (p - 1) alpha + n (p - 1) beta for blocks of n. Long messages.

use super::{block, direct_cost, empty, start};
use crate::{Cost, Params, Rounds, Schedule};

pub const ID: &str = "alltoall.pairwise";
pub const DESCRIPTION: &str = "pairwise exchange, p-1 steps, one block each way per step";
pub const RESTRICTIONS: &str = "none; long messages";
pub const VARYING: bool = true;
pub const IN_PLACE: bool = true;

pub fn schedule(q: &Params) -> Schedule {
    let (p, r) = (q.size, q.rank);
    let (mut s, src, staged) = start(q);
    if empty(q) || p == 1 {
        return s;
    }
    let mut rounds = Rounds::new(&mut s, &staged);
    for step in 1..p {
        let (to, from) = if p.is_power_of_two() {
            (r ^ step, r ^ step)
        } else {
            ((r + step) % p, (r + p - step) % p)
        };
        rounds.send(to, vec![src.block(q, to)]);
        rounds.recv(from, vec![block(q, from)]);
        rounds.next();
    }
    s
}

pub fn cost(q: &Params) -> Cost {
    direct_cost(q, q.size.saturating_sub(1))
}

#[cfg(test)]
mod tests {
    use crate::conformance::{check, info};

    #[test]
    fn conformance() {
        check(info(super::ID));
    }
}
