//! Recursive-doubling allgather (Thakur, Rabenseifner, Gropp, "Optimization of collective
//! communication operations in MPICH", 2005; SEEDS.md S3): in step k rank r exchanges all
//! it has with r xor 2^k, doubling its data. For p not a power of two, with q the largest
//! power of two below p, rank q + i first hands its block to rank i, ranks 0..q run the
//! exchange carrying both blocks, and rank i finally sends everything to q + i.
//!
//! Restrictions: none; serves allgatherv. Steps: log2 p for powers of two, else
//! floor(log2 p) + 2. Bytes: log2 p alpha + n (p - 1) beta for powers of two.

use super::{blocks_held, blocks_in, empty, largest, start};
use crate::shape::floor_pow2;
use crate::{Cost, Params, Rounds, Schedule};

pub const ID: &str = "allgather.recursive_doubling";
pub const DESCRIPTION: &str = "recursive doubling; extra ranks fold in for non-powers of two";
pub const RESTRICTIONS: &str = "none; best for powers of two";
pub const VARYING: bool = true;
pub const IN_PLACE: bool = true;

/// Blocks that ranks [lo, hi) of the power-of-two part carry (theirs and their extras').
fn carried(lo: usize, hi: usize, q2: usize, p: usize) -> Vec<usize> {
    (lo..hi)
        .flat_map(|j| std::iter::once(j).chain((j + q2 < p).then_some(j + q2)))
        .collect()
}

pub fn schedule(q: &Params) -> Schedule {
    let (mut s, _) = start(q);
    let (p, r) = (q.size, q.rank);
    if empty(q) || p == 1 {
        return s;
    }
    let q2 = floor_pow2(p);
    if r >= q2 {
        s.send(r - q2, blocks_held(q, [r]), &[]);
        s.recv(r - q2, blocks_in(q, (0..p).filter(|&i| i != r)), &[]);
        return s;
    }
    let mut rounds = Rounds::new(&mut s, &[]);
    if r + q2 < p {
        rounds.recv(r + q2, blocks_in(q, [r + q2]));
        rounds.next();
    }
    let mut k = 1;
    while k < q2 {
        let (mine, theirs) = (r & !(k - 1), (r ^ k) & !(k - 1));
        rounds.send(r ^ k, blocks_held(q, carried(mine, mine + k, q2, p)));
        rounds.recv(r ^ k, blocks_in(q, carried(theirs, theirs + k, q2, p)));
        rounds.next();
        k <<= 1;
    }
    if r + q2 < p {
        rounds.send(r + q2, blocks_held(q, (0..p).filter(|&i| i != r + q2)));
    }
    s
}

pub fn cost(q: &Params) -> Cost {
    let p = q.size;
    if empty(q) || p == 1 {
        return Cost::ZERO;
    }
    let q2 = floor_pow2(p);
    let steps = q2.trailing_zeros() as usize;
    let extras = p - q2;
    let b = largest(q);
    let (rounds, bytes) = if extras == 0 {
        (steps, (q2 - 1) * b)
    } else {
        (
            steps + 2,
            b + 2 * (q2 - 1) * b + (q.total() - q.blocks.iter().min().copied().unwrap_or(0)),
        )
    };
    Cost {
        rounds,
        messages: q2 * steps + 2 * extras,
        bytes,
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
