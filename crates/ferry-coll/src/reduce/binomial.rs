//! Binomial-tree reduce (MPICH `reduce_intra_binomial.c`): in step k, rank r with bit k set
//! sends its partial result to r - 2^k; the others receive from r + 2^k and append it
//! (`acc = acc (op) received`). The tree is rooted at rank 0 so every partial result covers
//! consecutive ranks in order; rank 0 then hands the result to the root when that is
//! another rank (MPICH does the same for non-commutative operations).
//!
//! Restrictions: none; keeps operand order. Steps: ceil(log2 p), plus one when root != 0.
//! Bytes: n per step on the critical path; rank 0 receives n ceil(log2 p).

use crate::shape::ceil_log;
use crate::{BufferId, Cost, Operands, Params, Range, Rounds, Schedule};

pub const ID: &str = "reduce.binomial";
pub const DESCRIPTION: &str = "binomial tree rooted at 0, then to the root; keeps operand order";
pub const RESTRICTIONS: &str = "none";
pub const VARYING: bool = false;
pub const IN_PLACE: bool = true;

pub fn schedule(q: &Params) -> Schedule {
    let (p, r, root, n) = (q.size, q.rank, q.root, q.blocks[0]);
    let is_root = r == root;
    let send_len = if is_root && q.in_place { 0 } else { n };
    let mut s = Schedule::new(r, p, send_len, if is_root { n } else { 0 });
    if n == 0 {
        return s;
    }
    let input = if is_root && q.in_place {
        Range::new(BufferId::Recv, 0, n)
    } else {
        Range::new(BufferId::Send, 0, n)
    };
    let has_children = r % 2 == 0 && r + 1 < p;
    // Where the partial result accumulates; leaves send their input as it is.
    let acc = if is_root {
        Range::new(BufferId::Recv, 0, n)
    } else if has_children {
        Range::new(s.scratch(n), 0, n)
    } else {
        input
    };
    // Children's partial results go to `tmp`, but for the first one when `acc` is not the
    // input (it is received into `acc`, below).
    let mut children = 0;
    let mut mask = 1;
    while mask < p && r & mask == 0 {
        children += (r + mask < p) as usize;
        mask <<= 1;
    }
    let tmp = if children > (acc != input) as usize {
        Some(Range::new(s.scratch(n), 0, n))
    } else {
        None
    };
    let mut rounds = Rounds::new(&mut s, &[]);
    // Until the first child's partial result arrives, `acc` holds nothing: that result is
    // received straight into it and the input reduced into it (`acc = input (op) acc`), which
    // saves copying the input first. An input that already is `acc` (the root in place)
    // receives into `tmp` like every later step.
    let mut acc_empty = acc != input;
    let mut mask = 1;
    while mask < p {
        if r & mask != 0 {
            if acc_empty {
                rounds.copy(input, acc);
                rounds.next();
            }
            rounds.send(r - mask, vec![acc]);
            rounds.next();
            acc_empty = false;
            break;
        }
        if r + mask < p {
            if acc_empty {
                rounds.recv(r + mask, vec![acc]);
                rounds.next();
                rounds.reduce(input, acc, Operands::SrcDst);
                acc_empty = false;
            } else {
                let tmp = tmp.expect("a rank with children has a receive buffer");
                rounds.recv(r + mask, vec![tmp]);
                rounds.next();
                rounds.reduce(tmp, acc, Operands::DstSrc);
            }
            rounds.next();
        }
        mask <<= 1;
    }
    if acc_empty {
        // A root with no children (p = 1, or root 0 alone at the top of nothing).
        rounds.copy(input, acc);
        rounds.next();
    }
    if root != 0 && r == 0 {
        rounds.send(root, vec![acc]);
    } else if root != 0 && is_root {
        rounds.recv(0, vec![acc]);
    }
    s
}

pub fn cost(q: &Params) -> Cost {
    let (p, n) = (q.size, q.blocks[0]);
    if n == 0 || p == 1 {
        return Cost::ZERO;
    }
    let steps = ceil_log(p, 2);
    let extra = (q.root != 0) as usize;
    Cost {
        rounds: steps + extra,
        messages: p - 1 + extra,
        bytes: (steps + extra) * n,
        rank_bytes: steps * n,
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
