//! Recursive-doubling allreduce (Thakur, Rabenseifner, Gropp 2005; MPICH
//! `allreduce_intra_recursive_doubling.c`): in step k rank r exchanges its partial result
//! with r xor 2^k and combines, the lower rank's operand first. For p not a power of two,
//! with rem = p - 2^floor(log2 p), odd ranks below 2 rem first hand their input to the even
//! rank below and get the result back at the end; since every partial result covers
//! consecutive ranks, operand order is kept.
//!
//! Restrictions: none; keeps operand order. Steps: log2 p, or floor(log2 p) + 2.
//! Bytes: n per step: log p (alpha + n beta). Short messages.

use super::{start, start_empty};
use crate::shape::floor_pow2;
use crate::{BufferId, Cost, Operands, Params, Range, Rounds, Schedule};

pub const ID: &str = "allreduce.recursive_doubling";
pub const DESCRIPTION: &str = "recursive doubling, whole vector per step; keeps operand order";
pub const RESTRICTIONS: &str = "none; short messages";
pub const VARYING: bool = false;
pub const IN_PLACE: bool = true;

pub fn schedule(q: &Params) -> Schedule {
    let (p, r, n) = (q.size, q.rank, q.blocks[0]);
    // Out of place, the input goes out from the send buffer and the first partner's
    // operand comes straight into the receive buffer: no copy of the input first.
    let direct = !q.in_place && n > 0 && p > 1;
    let (mut s, acc, copied) = if direct { start_empty(q) } else { start(q) };
    if n == 0 || p == 1 {
        return s;
    }
    // A rank that exchanges once, with its operand still in the send buffer, receives
    // straight into the receive buffer and needs no scratch space.
    let tmp = if direct && exchanges(p, r) == 1 { Range::new(BufferId::Recv, 0, 0) } else { Range::new(s.scratch(n), 0, n) };
    let input = direct.then(|| Range::new(BufferId::Send, 0, n));
    let mut rounds = Rounds::new(&mut s, &copied);
    let all: Vec<usize> = (0..p).collect();
    among(&mut rounds, &all, r, acc, tmp, input);
    s
}

/// Recursive doubling among `members` (ranks of the call, in the order whose operands are
/// combined), of which this rank is `members[me]`: `acc` ends with the result; `tmp` (as
/// long) receives the partners' operands. This rank's operand is in `input` when that is
/// given (and `acc` then holds nothing yet), else in `acc`.
pub(crate) fn among(rounds: &mut Rounds<'_>, members: &[usize], me: usize, acc: Range, tmp: Range, input: Option<Range>) {
    let p = members.len();
    let q2 = floor_pow2(p);
    let rem = p - q2;
    let r = me;
    let mut input = input;
    if r < 2 * rem && r % 2 == 1 {
        rounds.send(members[r - 1], vec![input.unwrap_or(acc)]);
        rounds.next();
        rounds.recv(members[r - 1], vec![acc]);
        return;
    }
    if r < 2 * rem {
        match input.take() {
            // acc = input (op) the higher rank's operand, received into acc.
            Some(own) => {
                rounds.recv(members[r + 1], vec![acc]);
                rounds.next();
                rounds.reduce(own, acc, Operands::SrcDst);
            }
            None => {
                rounds.recv(members[r + 1], vec![tmp]);
                rounds.next();
                rounds.reduce(tmp, acc, Operands::DstSrc);
            }
        }
        rounds.next();
    }
    let me = if r < 2 * rem { r / 2 } else { r - rem };
    let real = |v: usize| members[if v < rem { 2 * v } else { v + rem }];
    let mut mask = 1;
    while mask < q2 {
        let peer = me ^ mask;
        match input.take() {
            // The partner's operand lands in acc; the lower rank's operand goes first.
            Some(own) => {
                rounds.send(real(peer), vec![own]);
                rounds.recv(real(peer), vec![acc]);
                rounds.next();
                let order = if peer > me { Operands::SrcDst } else { Operands::DstSrc };
                rounds.reduce(own, acc, order);
            }
            None => {
                rounds.send(real(peer), vec![acc]);
                rounds.recv(real(peer), vec![tmp]);
                rounds.next();
                let order = if peer > me { Operands::DstSrc } else { Operands::SrcDst };
                rounds.reduce(tmp, acc, order);
            }
        }
        rounds.next();
        mask <<= 1;
    }
    if let Some(own) = input {
        // Alone (one member): the result is the operand.
        rounds.copy(own, acc);
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
