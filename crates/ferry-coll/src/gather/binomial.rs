//! Binomial-tree gather (MPICH `gather_intra_binomial.c`), the mirror of
//! `scatter.binomial`: relative to the root, virtual rank v collects the blocks of its
//! subtree from its children into scratch, then sends its own block followed by them to
//! v - lowbit(v) in one message. The root receives straight into place.
//!
//! Restrictions: equal blocks (plain gather; gatherv goes to `gather.linear`).
//! Steps: ceil(log2 p). Bytes: the root receives n (p - 1) in ceil(log2 p) messages.

use super::{new_schedule, own, target};
use crate::scatter::binomial::{children, subtree};
use crate::shape::{ceil_log, unvrank, vrank};
use crate::{coalesce, Cost, Params, Range, Schedule};

pub const ID: &str = "gather.binomial";
pub const DESCRIPTION: &str = "binomial tree; subtrees' blocks travel together";
pub const RESTRICTIONS: &str = "equal blocks only";
pub const VARYING: bool = false;
pub const IN_PLACE: bool = true;

pub fn schedule(q: &Params) -> Schedule {
    let mut s = new_schedule(q);
    let (p, root) = (q.size, q.root);
    let b = q.blocks[0];
    if b == 0 {
        return s;
    }
    let v = vrank(q.rank, root, p);
    let sub = subtree(v, p);
    let keep = if v == 0 {
        None
    } else {
        Some(Range::new(s.scratch((sub - 1) * b), 0, (sub - 1) * b))
    };
    // Where virtual rank w's block lands on this rank.
    let place = |w: usize| match keep {
        None => target(q, unvrank(w, root, p)),
        Some(k) => k.sub((w - v - 1) * b, b),
    };
    let mut got = Vec::new();
    for c in children(v, p).into_iter().rev() {
        let data = coalesce((c..c + subtree(c, p)).map(place));
        got.push(s.recv(unvrank(c, root, p), data, &[]));
    }
    match keep {
        None if !q.in_place => {
            s.copy(own(q), target(q, root), &[]);
        }
        None => {}
        Some(k) => {
            let parent = unvrank(v - (v & v.wrapping_neg()), root, p);
            s.send(parent, coalesce([own(q), k]), &got);
        }
    }
    s
}

pub fn cost(q: &Params) -> Cost {
    let (p, b) = (q.size, q.blocks[0]);
    if p == 1 || b == 0 {
        return Cost::ZERO;
    }
    Cost {
        rounds: ceil_log(p, 2),
        messages: p - 1,
        bytes: (p - 1) * b,
        rank_bytes: (p - 1) * b,
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
