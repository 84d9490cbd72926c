//! Neighbor-exchange allgather (Chen, Zhang, et al., "Performance evaluation of Allgather
//! algorithms on terascale Linux cluster with fast Ethernet", 2005; Open MPI's
//! `allgather_intra_neighborexchange`): ranks pair up (2i, 2i+1) and swap blocks; then, in
//! each of the p/2 - 1 further steps, a rank swaps the two blocks it received last with its
//! other neighbour, alternating sides.
//!
//! Restrictions: even p; for odd p it runs `allgather.ring`. Serves allgatherv.
//! Steps: p/2. Bytes: one block, then two per step: p/2 alpha + n (p - 1) beta.

use super::{blocks_held, blocks_in, empty, largest, start};
use crate::{Cost, Params, Rounds, Schedule};

pub const ID: &str = "allgather.neighbor_exchange";
pub const DESCRIPTION: &str = "pairwise swaps with alternating neighbours, p/2 steps";
pub const RESTRICTIONS: &str = "even p (odd p: ring)";
pub const VARYING: bool = true;
pub const IN_PLACE: bool = true;

/// The partner of rank r in step t: the pair partner first, then alternately the other side.
fn partner(r: usize, t: usize, p: usize) -> usize {
    let first = if r.is_multiple_of(2) {
        (r + 1) % p
    } else {
        (r + p - 1) % p
    };
    let second = if r.is_multiple_of(2) {
        (r + p - 1) % p
    } else {
        (r + 1) % p
    };
    if t.is_multiple_of(2) {
        first
    } else {
        second
    }
}

/// For every step t >= 1, the pair of blocks each rank forwards (the pair it got last).
fn forwarded(p: usize) -> Vec<Vec<usize>> {
    let mut last: Vec<usize> = (0..p).map(|r| r / 2).collect();
    let mut out = Vec::new();
    for t in 1..p / 2 {
        out.push(last.clone());
        last = (0..p).map(|r| last[partner(r, t, p)]).collect();
    }
    out
}

pub fn schedule(q: &Params) -> Schedule {
    let p = q.size;
    if !p.is_multiple_of(2) {
        return super::ring::schedule(q);
    }
    let (mut s, _) = start(q);
    let r = q.rank;
    if empty(q) {
        return s;
    }
    let mut rounds = Rounds::new(&mut s, &[]);
    let n0 = partner(r, 0, p);
    rounds.send(n0, blocks_held(q, [r]));
    rounds.recv(n0, blocks_in(q, [n0]));
    rounds.next();
    for (t, last) in forwarded(p).iter().enumerate().map(|(i, l)| (i + 1, l)) {
        let n = partner(r, t, p);
        rounds.send(n, blocks_held(q, [2 * last[r], 2 * last[r] + 1]));
        rounds.recv(n, blocks_in(q, [2 * last[n], 2 * last[n] + 1]));
        rounds.next();
    }
    s
}

pub fn cost(q: &Params) -> Cost {
    let p = q.size;
    if !p.is_multiple_of(2) {
        return super::ring::cost(q);
    }
    if empty(q) {
        return Cost::ZERO;
    }
    let b = largest(q);
    Cost {
        rounds: p / 2,
        messages: p * (p / 2),
        bytes: b + (p / 2 - 1) * 2 * b,
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
