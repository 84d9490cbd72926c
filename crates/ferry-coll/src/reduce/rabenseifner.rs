//! Rabenseifner's reduce (Rabenseifner, "Optimization of collective reduction operations",
//! ICCS 2004; Thakur, Rabenseifner, Gropp 2005; MPICH `reduce_intra_reduce_scatter_gather.c`):
//! the reduce-scatter of `allreduce.rabenseifner` (recursive halving over
//! p' = 2^floor(log2 p) ranks, odd ranks below 2 rem, rem = p - p', folded onto the even
//! rank below), then a binomial gather of the chunks to the root: in the step with
//! distance d = 1, 2, ..., p'/2 the participant whose label differs from the root's in bit
//! d (labels xor the root's) sends the chunks it holds to its partner and stops. A folded
//! root gets the result from the even rank below, which gathers in its place.
//!
//! Restrictions: commutative operations. Steps: 2 log2 p', plus one to fold and one to
//! hand the result to a folded root. Bytes: 2 n (p'-1)/p' per rank plus n per fold step:
//! 2 log p' alpha + 2 n (p'-1)/p' beta. Long messages.

use crate::allreduce::rabenseifner::Halving;
use crate::{BufferId, Cost, Operands, Params, Range, Rounds, Schedule};

pub const ID: &str = "reduce.rabenseifner";
pub const DESCRIPTION: &str = "reduce-scatter by recursive halving, then binomial gather";
pub const RESTRICTIONS: &str = "commutative operations; long messages";
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
    let result = Range::new(BufferId::Recv, 0, n);
    if p == 1 {
        if input != result {
            s.copy(input, result, &[]);
        }
        return s;
    }
    let h = Halving::new(q);
    // The participant that gathers: the root, or the even rank below a folded root.
    let gatherer = if h.virt(root).is_some() {
        root
    } else {
        root - 1
    };
    let Some(v) = h.virt(r) else {
        let mut rounds = Rounds::new(&mut s, &[]);
        rounds.send(r - 1, vec![input]);
        rounds.next();
        if is_root {
            rounds.recv(gatherer, vec![result]);
        }
        return s;
    };
    let vroot = h.virt(gatherer).expect("the gatherer participates");
    let folds = r < 2 * h.rem;
    let acc = if is_root {
        result
    } else {
        Range::new(s.scratch(n), 0, n)
    };
    let tmp_len = if folds { n } else { h.offset(h.pof2 / 2) };
    let tmp = Range::new(s.scratch(tmp_len), 0, tmp_len);
    let mut rounds = Rounds::new(&mut s, &[]);
    if acc != input {
        rounds.copy(input, acc);
        rounds.next();
    }
    if folds {
        rounds.recv(r + 1, vec![tmp]);
        rounds.next();
        rounds.reduce(tmp, acc, Operands::SrcDst);
        rounds.next();
    }
    h.reduce_scatter(&mut rounds, v, acc, tmp);
    let mut d = 1;
    while d < h.pof2 {
        let peer = h.real(v ^ d);
        if (v ^ vroot) & d != 0 {
            let (lo, hi) = Halving::around(v, d);
            rounds.send(peer, vec![h.chunks(acc, lo, hi)]);
            rounds.next();
            return s;
        }
        let (lo, hi) = Halving::around(v ^ d, d);
        rounds.recv(peer, vec![h.chunks(acc, lo, hi)]);
        rounds.next();
        d *= 2;
    }
    if r != root {
        rounds.send(root, vec![acc]);
    }
    s
}

pub fn cost(q: &Params) -> Cost {
    let (p, n) = (q.size, q.blocks[0]);
    if n == 0 || p == 1 {
        return Cost::ZERO;
    }
    let h = Halving::new(q);
    let steps = h.steps();
    let fold = (h.rem > 0) as usize;
    let handover = h.virt(q.root).is_none() as usize;
    Cost {
        rounds: 2 * steps + fold + handover,
        messages: h.pof2 * steps + h.pof2 - 1 + h.rem + handover,
        bytes: 2 * h.phase_bytes() + (fold + handover) * n,
        rank_bytes: crate::allgather::rank_bytes(q, schedule),
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
