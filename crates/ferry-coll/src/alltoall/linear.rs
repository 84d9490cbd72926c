//! Linear alltoall (MPICH `alltoall_intra_scattered.c` without its throttle; the
//! "isend/irecv" algorithm of Thakur, Rabenseifner, Gropp 2005): every rank posts all its
//! receives and sends at once, in the order r + 1, r + 2, ... to spread the load, and leaves
//! the ordering to the network.
//!
//! Restrictions: none; serves alltoallv (every pair exchanges a message, empty ones too).
//! Steps: 1 (p - 1 messages in flight per rank). Bytes: every rank sends and receives
//! all blocks but its own: (p - 1) alpha + n (p - 1) beta for blocks of n, with contention.

use super::{block, direct_cost, empty, start};
use crate::{Cost, Params, Schedule};

pub const ID: &str = "alltoall.linear";
pub const DESCRIPTION: &str = "all sends and receives posted at once";
pub const RESTRICTIONS: &str = "none; medium messages, small communicators";
pub const VARYING: bool = true;
pub const IN_PLACE: bool = true;

pub fn schedule(q: &Params) -> Schedule {
    let (p, r) = (q.size, q.rank);
    let (mut s, src, staged) = start(q);
    if empty(q) || p == 1 {
        return s;
    }
    for step in 1..p {
        let from = (r + p - step) % p;
        s.recv(from, vec![block(q, from)], &staged);
    }
    for step in 1..p {
        let to = (r + step) % p;
        s.send(to, vec![src.block(q, to)], &staged);
    }
    s
}

pub fn cost(q: &Params) -> Cost {
    direct_cost(q, 1)
}

#[cfg(test)]
mod tests {
    use crate::conformance::{check, info};

    #[test]
    fn conformance() {
        check(info(super::ID));
    }
}
