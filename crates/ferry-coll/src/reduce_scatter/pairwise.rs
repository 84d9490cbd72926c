//! Pairwise-exchange reduce-scatter (Thakur, Rabenseifner, Gropp 2005; MPICH
//! `reduce_scatter_intra_pairwise.c`): in step s = 1..p-1 rank r sends block r + s of its
//! input to rank r + s and receives block r of rank r - s's input, combining it into its
//! own block. Works for any p and irregular blocks.
//!
//! Restrictions: commutative operations. Steps: p - 1. Bytes: (p-1) alpha + n (p-1)/p beta
//! for a vector of n split evenly.

use crate::{BufferId, Cost, Operands, Params, Range, Rounds, Schedule};

pub const ID: &str = "reduce_scatter.pairwise";
pub const DESCRIPTION: &str = "pairwise exchange, p-1 steps, one block per step";
pub const RESTRICTIONS: &str = "commutative operations";
pub const VARYING: bool = true;
pub const IN_PLACE: bool = true;

pub fn schedule(q: &Params) -> Schedule {
    let (p, r) = (q.size, q.rank);
    let (e, b) = (q.extent(), q.blocks[r]);
    let mut s = if q.in_place {
        Schedule::new(r, p, 0, e)
    } else {
        Schedule::new(r, p, e, b)
    };
    if q.is_uniform() && q.blocks[0] == 0 {
        return s;
    }
    let buf = if q.in_place {
        BufferId::Recv
    } else {
        BufferId::Send
    };
    let input = |i: usize| Range::new(buf, q.displs[i], q.blocks[i]);
    let acc = Range::new(s.scratch(b), 0, b);
    let tmp = Range::new(s.scratch(b), 0, b);
    let mut rounds = Rounds::new(&mut s, &[]);
    rounds.copy(input(r), acc);
    rounds.next();
    for step in 1..p {
        let (to, from) = ((r + step) % p, (r + p - step) % p);
        rounds.send(to, vec![input(to)]);
        rounds.recv(from, vec![tmp]);
        rounds.next();
        rounds.reduce(tmp, acc, Operands::SrcDst);
        rounds.next();
    }
    rounds.copy(acc, Range::new(BufferId::Recv, 0, b));
    s
}

pub fn cost(q: &Params) -> Cost {
    let p = q.size;
    if p == 1 || (q.is_uniform() && q.blocks[0] == 0) {
        return Cost::ZERO;
    }
    let total = q.total();
    let largest = q.blocks.iter().copied().max().unwrap_or(0);
    let rank_bytes = q
        .blocks
        .iter()
        .map(|&b| (total - b).max((p - 1) * b))
        .max()
        .unwrap_or(0);
    Cost {
        rounds: p - 1,
        messages: p * (p - 1),
        bytes: (p - 1) * largest,
        rank_bytes,
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
