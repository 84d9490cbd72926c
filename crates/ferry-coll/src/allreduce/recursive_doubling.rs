//! Recursive-doubling allreduce (Thakur, Rabenseifner, Gropp 2005; MPICH
//! `allreduce_intra_recursive_doubling.c`): in step k rank r exchanges its partial result
//! with r xor 2^k and combines, the lower rank's operand first. For p not a power of two,
//! with rem = p - 2^floor(log2 p), odd ranks below 2 rem first hand their input to the even
//! rank below and get the result back at the end; since every partial result covers
//! consecutive ranks, operand order is kept.
//!
//! Restrictions: none; keeps operand order. Steps: log2 p, or floor(log2 p) + 2.
//! Bytes: n per step: log p (alpha + n beta). Short messages.

use super::start;
use crate::shape::floor_pow2;
use crate::{Cost, Operands, Params, Range, Rounds, Schedule};

pub const ID: &str = "allreduce.recursive_doubling";
pub const DESCRIPTION: &str = "recursive doubling, whole vector per step; keeps operand order";
pub const RESTRICTIONS: &str = "none; short messages";
pub const VARYING: bool = false;
pub const IN_PLACE: bool = true;

pub fn schedule(q: &Params) -> Schedule {
    let (p, r, n) = (q.size, q.rank, q.blocks[0]);
    let (mut s, acc, copied) = start(q);
    if n == 0 || p == 1 {
        return s;
    }
    let tmp = Range::new(s.scratch(n), 0, n);
    let mut rounds = Rounds::new(&mut s, &copied);
    let all: Vec<usize> = (0..p).collect();
    among(&mut rounds, &all, r, acc, tmp);
    s
}

/// Recursive doubling among `members` (ranks of the call, in the order whose operands are
/// combined), of which this rank is `members[me]`: `acc` holds its operand and ends with the
/// result; `tmp` (as long) receives the partners'.
pub(crate) fn among(rounds: &mut Rounds<'_>, members: &[usize], me: usize, acc: Range, tmp: Range) {
    let p = members.len();
    let q2 = floor_pow2(p);
    let rem = p - q2;
    let r = me;
    if r < 2 * rem && r % 2 == 1 {
        rounds.send(members[r - 1], vec![acc]);
        rounds.next();
        rounds.recv(members[r - 1], vec![acc]);
        return;
    }
    if r < 2 * rem {
        rounds.recv(members[r + 1], vec![tmp]);
        rounds.next();
        rounds.reduce(tmp, acc, Operands::DstSrc);
        rounds.next();
    }
    let me = if r < 2 * rem { r / 2 } else { r - rem };
    let real = |v: usize| members[if v < rem { 2 * v } else { v + rem }];
    let mut mask = 1;
    while mask < q2 {
        let peer = me ^ mask;
        rounds.send(real(peer), vec![acc]);
        rounds.recv(real(peer), vec![tmp]);
        rounds.next();
        let order = if peer > me {
            Operands::DstSrc
        } else {
            Operands::SrcDst
        };
        rounds.reduce(tmp, acc, order);
        rounds.next();
        mask <<= 1;
    }
    if r < 2 * rem {
        rounds.send(members[r + 1], vec![acc]);
    }
}

/// Messages member `i` of `p` sends (and as many it receives) in [`among`].
pub(crate) fn exchanges(p: usize, i: usize) -> usize {
    let q2 = floor_pow2(p);
    let (steps, rem) = (q2.trailing_zeros() as usize, p - q2);
    match i {
        _ if i < 2 * rem && i % 2 == 1 => 1,
        _ if i < 2 * rem => steps + 1,
        _ => steps,
    }
}

pub fn cost(q: &Params) -> Cost {
    let (p, n) = (q.size, q.blocks[0]);
    if n == 0 || p == 1 {
        return Cost::ZERO;
    }
    let q2 = floor_pow2(p);
    let steps = q2.trailing_zeros() as usize;
    let rem = p - q2;
    let rounds = steps + if rem > 0 { 2 } else { 0 };
    let busiest = steps + (rem > 0) as usize;
    Cost {
        rounds,
        messages: q2 * steps + 2 * rem,
        bytes: rounds * n,
        rank_bytes: busiest * n,
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
