//! Recursive-doubling scan (MPICH `scan_intra_recursive_doubling.c`): rank r keeps the
//! reduction of its aligned group (`sum`) and its prefix; in step k it swaps `sum` with
//! r xor 2^k; what comes from below is put in front of both, what comes from above after
//! `sum`. Operand order is kept.
//!
//! Restrictions: none; keeps operand order. Steps: ceil(log2 p). Bytes: n per step.

use crate::shape::ceil_log;
use crate::{BufferId, Cost, Operands, Params, Range, Rounds, Schedule};

pub const ID: &str = "scan.recursive_doubling";
pub const DESCRIPTION: &str = "recursive doubling prefix reduction; keeps operand order";
pub const RESTRICTIONS: &str = "none";
pub const VARYING: bool = false;
pub const IN_PLACE: bool = true;

/// Inclusive (scan) or exclusive (exscan) prefix reduction.
pub(crate) fn build(q: &Params, exclusive: bool) -> Schedule {
    let (p, r, n) = (q.size, q.rank, q.blocks[0]);
    let mut s = Schedule::new(r, p, if q.in_place { 0 } else { n }, n);
    if n == 0 {
        return s;
    }
    let result = Range::new(BufferId::Recv, 0, n);
    let input = if q.in_place {
        result
    } else {
        Range::new(BufferId::Send, 0, n)
    };
    if p == 1 {
        if !exclusive && !q.in_place {
            s.copy(input, result, &[]);
        }
        return s;
    }
    let sum = Range::new(s.scratch(n), 0, n);
    let tmp = Range::new(s.scratch(n), 0, n);
    let mut rounds = Rounds::new(&mut s, &[]);
    rounds.copy(input, sum);
    if !exclusive && !q.in_place {
        rounds.copy(input, result);
    }
    rounds.next();
    let mut have_prefix = !exclusive;
    let mut mask = 1;
    while mask < p {
        let peer = r ^ mask;
        if peer < p {
            rounds.send(peer, vec![sum]);
            rounds.recv(peer, vec![tmp]);
            rounds.next();
            if peer < r {
                if have_prefix {
                    rounds.reduce(tmp, result, Operands::SrcDst);
                } else {
                    rounds.copy(tmp, result);
                    have_prefix = true;
                }
                rounds.reduce(tmp, sum, Operands::SrcDst);
            } else {
                rounds.reduce(tmp, sum, Operands::DstSrc);
            }
            rounds.next();
        }
        mask <<= 1;
    }
    s
}

pub(crate) fn build_cost(q: &Params) -> Cost {
    let (p, n) = (q.size, q.blocks[0]);
    if n == 0 || p == 1 {
        return Cost::ZERO;
    }
    let steps = ceil_log(p, 2);
    let messages = (0..steps)
        .map(|k| (0..p).filter(|r| r ^ (1 << k) < p).count())
        .sum();
    Cost {
        rounds: steps,
        messages,
        bytes: steps * n,
        rank_bytes: steps * n,
    }
}

pub fn schedule(q: &Params) -> Schedule {
    build(q, false)
}

pub fn cost(q: &Params) -> Cost {
    build_cost(q)
}

#[cfg(test)]
mod tests {
    use crate::conformance::{check, info};

    #[test]
    fn conformance() {
        check(info(super::ID));
    }
}
