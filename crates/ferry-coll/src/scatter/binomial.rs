//! Binomial-tree scatter (MPICH `scatter_intra_binomial.c`): relative to the root, virtual
//! rank v receives the blocks of its subtree [v, v + min(lowbit(v), p - v)) from
//! v - lowbit(v), keeps its own and forwards each child's subtree. Messages gather their
//! blocks straight from the root's buffer (no reordering copy even when blocks wrap around
//! rank p-1); intermediate ranks keep their children's blocks in scratch.
//!
//! Restrictions: equal blocks (plain scatter; scatterv goes to `scatter.linear`).
//! Steps: ceil(log2 p). Bytes: the root sends n (p - 1), in ceil(log2 p) messages:
//! log p alpha + n (p - 1) beta.

use super::{new_schedule, source};
use crate::shape::{ceil_log, unvrank, vrank};
use crate::{coalesce, BufferId, Cost, Params, Range, Schedule};

pub const ID: &str = "scatter.binomial";
pub const DESCRIPTION: &str = "binomial tree; subtrees' blocks travel together";
pub const RESTRICTIONS: &str = "equal blocks only";
pub const VARYING: bool = false;
pub const IN_PLACE: bool = true;

/// Size of the subtree rooted at virtual rank v.
pub(crate) fn subtree(v: usize, p: usize) -> usize {
    if v == 0 {
        p
    } else {
        (v & v.wrapping_neg()).min(p - v)
    }
}

/// The children of virtual rank v, largest subtree first.
pub(crate) fn children(v: usize, p: usize) -> Vec<usize> {
    let top = if v == 0 {
        p.next_power_of_two()
    } else {
        v & v.wrapping_neg()
    };
    let mut out = Vec::new();
    let mut mask = top >> 1;
    while mask > 0 {
        if v + mask < p {
            out.push(v + mask);
        }
        mask >>= 1;
    }
    out
}

pub fn schedule(q: &Params) -> Schedule {
    let mut s = new_schedule(q);
    let (p, root) = (q.size, q.root);
    let b = q.blocks[0];
    if b == 0 {
        return s;
    }
    let v = vrank(q.rank, root, p);
    let sub = subtree(v, p);
    let own = Range::new(BufferId::Recv, 0, b);
    // Where virtual rank w's block lies on this rank.
    let (have, after): (Box<dyn Fn(usize) -> Range>, Vec<usize>) = if v == 0 {
        if !q.in_place {
            s.copy(source(q, root), own, &[]);
        }
        (Box::new(|w| source(q, unvrank(w, root, p))), vec![])
    } else {
        let keep = Range::new(s.scratch((sub - 1) * b), 0, (sub - 1) * b);
        let parent = unvrank(v - (v & v.wrapping_neg()), root, p);
        let got = s.recv(parent, coalesce([own, keep]), &[]);
        (Box::new(move |w| keep.sub((w - v - 1) * b, b)), vec![got])
    };
    for c in children(v, p) {
        let data = coalesce((c..c + subtree(c, p)).map(&have));
        s.send(unvrank(c, root, p), data, &after);
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
