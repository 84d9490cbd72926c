//! Double-ring allgather (SEEDS.md S3): two rings in opposite directions at once; each
//! block travels the shorter way round, clockwise for distances 1..=ceil((p-1)/2),
//! counter-clockwise for 1..=floor((p-1)/2).
//!
//! Restrictions: none; serves allgatherv. Steps: floor(p/2), each with one message per
//! direction (the two rings use different links at the same time). Bytes: every rank
//! still receives all blocks but one: floor(p/2) alpha + n floor(p/2) beta per link.

use super::{block, empty, held, largest, start};
use crate::{Cost, Params, Schedule};

pub const ID: &str = "allgather.double_ring";
pub const DESCRIPTION: &str = "two opposite rings at once, floor(p/2) steps (S3)";
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
    let (clockwise, counter) = (p / 2, (p - 1) / 2);
    let (mut cw, mut ccw) = (None, None);
    for step in 0..clockwise {
        let deps: Vec<_> = cw.into_iter().collect();
        s.send(right, vec![held(q, (r + p - step) % p)], &deps);
        cw = Some(s.recv(left, vec![block(q, (r + 2 * p - step - 1) % p)], &[]));
        if step < counter {
            let deps: Vec<_> = ccw.into_iter().collect();
            s.send(left, vec![held(q, (r + step) % p)], &deps);
            ccw = Some(s.recv(right, vec![block(q, (r + step + 1) % p)], &[]));
        }
    }
    s
}

pub fn cost(q: &Params) -> Cost {
    let p = q.size;
    if empty(q) || p == 1 {
        return Cost::ZERO;
    }
    Cost {
        rounds: p / 2,
        messages: p * (p - 1),
        bytes: (p / 2) * largest(q),
        rank_bytes: super::rank_bytes(q, schedule),
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
