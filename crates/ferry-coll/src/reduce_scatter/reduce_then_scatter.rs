//! Reduce-then-scatter (MPICH's fallback for non-commutative `MPI_Reduce_scatter`:
//! `reduce_scatter_intra_noncommutative` needs a power of two and equal blocks, so for the
//! general case MPICH reduces to one rank and scatters): every rank packs its blocks in rank
//! order, the packed vectors are reduced to rank 0 along the binomial tree of
//! `reduce.binomial` (each partial result covers consecutive ranks, so operand order is
//! kept), and rank 0 sends each rank its block of the result.
//!
//! Restrictions: none; keeps operand order; serves irregular blocks (`MPI_Reduce_scatter`).
//! Steps: ceil(log2 p) + (number of other ranks with a non-empty block). Bytes: n per
//! reduce step, then every other block from rank 0:
//! (log p + p - 1) alpha + n (log p + (p-1)/p) beta for a vector of n split evenly. The
//! fallback for non-commutative operations, not a fast path.

use crate::shape::ceil_log;
use crate::{coalesce, BufferId, Cost, Operands, Params, Range, Rounds, Schedule};

pub const ID: &str = "reduce_scatter.reduce_then_scatter";
pub const DESCRIPTION: &str =
    "binomial reduce of the packed blocks to rank 0, then rank 0 sends each block; keeps operand order";
pub const RESTRICTIONS: &str = "none";
pub const VARYING: bool = true;
pub const IN_PLACE: bool = true;

/// Offset of each rank's block in the packed vector (blocks in rank order, no gaps).
fn packed_offsets(q: &Params) -> Vec<usize> {
    q.blocks
        .iter()
        .scan(0, |at, &b| {
            let o = *at;
            *at += b;
            Some(o)
        })
        .collect()
}

pub fn schedule(q: &Params) -> Schedule {
    let (p, r) = (q.size, q.rank);
    let (e, b, total) = (q.extent(), q.blocks[r], q.total());
    let mut s = if q.in_place {
        Schedule::new(r, p, 0, e)
    } else {
        Schedule::new(r, p, e, b)
    };
    if total == 0 {
        return s;
    }
    let buf = if q.in_place {
        BufferId::Recv
    } else {
        BufferId::Send
    };
    let inputs = coalesce((0..p).map(|i| Range::new(buf, q.displs[i], q.blocks[i])));
    let at = packed_offsets(q);
    let own = Range::new(BufferId::Recv, 0, b);
    let has_children = r % 2 == 0 && r + 1 < p;
    let mut rounds = Rounds::new(&mut s, &[]);
    // The packed partial result; a leaf sends its blocks as one gathered message instead.
    let acc = if has_children || p == 1 {
        let acc = Range::new(rounds.schedule().scratch(total), 0, total);
        for (i, &to) in at.iter().enumerate() {
            let from = Range::new(buf, q.displs[i], q.blocks[i]);
            rounds.copy(from, acc.sub(to, q.blocks[i]));
        }
        rounds.next();
        Some(acc)
    } else {
        None
    };
    let tmp = has_children.then(|| Range::new(rounds.schedule().scratch(total), 0, total));
    let mut mask = 1;
    while mask < p {
        if r & mask != 0 {
            let data = match acc {
                Some(a) => vec![a],
                None => inputs.clone(),
            };
            rounds.send(r - mask, data);
            rounds.next();
            break;
        }
        if r + mask < p {
            let (tmp, acc) = (tmp.expect("has children"), acc.expect("has children"));
            rounds.recv(r + mask, vec![tmp]);
            rounds.next();
            rounds.reduce(tmp, acc, Operands::DstSrc);
            rounds.next();
        }
        mask <<= 1;
    }
    if r == 0 {
        let acc = acc.expect("rank 0 accumulates");
        for i in (1..p).filter(|&i| q.blocks[i] > 0) {
            rounds.send(i, vec![acc.sub(at[i], q.blocks[i])]);
        }
        if b > 0 {
            rounds.copy(acc.sub(0, b), own);
        }
    } else if b > 0 {
        rounds.recv(0, vec![own]);
    }
    s
}

pub fn cost(q: &Params) -> Cost {
    let (p, total) = (q.size, q.total());
    if p == 1 || total == 0 {
        return Cost::ZERO;
    }
    let steps = ceil_log(p, 2);
    let others: Vec<usize> = (1..p).map(|i| q.blocks[i]).filter(|&b| b > 0).collect();
    let sent: usize = others.iter().sum();
    Cost {
        rounds: steps + others.len(),
        messages: p - 1 + others.len(),
        bytes: steps * total + sent,
        rank_bytes: (steps * total).max(sent),
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
