//! Binomial-tree broadcast, as in MPICH (`bcast_intra_binomial.c`) and the textbook
//! (Chan, Heimlich, Purkayastha, van de Geijn, "Collective communication: theory, practice,
//! and experience", 2007). Ranks are renumbered relative to the root; virtual rank v receives
//! from v - lowbit(v) and sends to v + 2^k for every 2^k < lowbit(v) (largest subtree first).
//!
//! Restrictions: none. Steps: ceil(log2 p). Bytes: every non-root receives n once; the root
//! sends n ceil(log2 p) times; the critical path carries n per step:
//! ceil(log2 p) alpha + n ceil(log2 p) beta.

use crate::shape::{ceil_log, unvrank, vrank};
use crate::{BufferId, Cost, Params, Range, Schedule};

pub const ID: &str = "bcast.binomial";
pub const DESCRIPTION: &str = "binomial tree; ceil(log2 p) steps, the whole message per step";
pub const RESTRICTIONS: &str = "none";
pub const VARYING: bool = false;
pub const IN_PLACE: bool = false;

pub fn schedule(q: &Params) -> Schedule {
    let (p, root) = (q.size, q.root);
    let n = q.blocks[root];
    let mut s = Schedule::new(q.rank, p, 0, n);
    if n == 0 || p == 1 {
        return s;
    }
    let v = vrank(q.rank, root, p);
    let whole = Range::new(BufferId::Recv, 0, n);
    let mut after = Vec::new();
    let mut mask = 1;
    while mask < p {
        if v & mask != 0 {
            after.push(s.recv(unvrank(v - mask, root, p), vec![whole], &[]));
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    while mask > 0 {
        if v + mask < p {
            s.send(unvrank(v + mask, root, p), vec![whole], &after);
        }
        mask >>= 1;
    }
    s
}

pub fn cost(q: &Params) -> Cost {
    let (p, n) = (q.size, q.blocks[q.root]);
    if n == 0 || p == 1 {
        return Cost::ZERO;
    }
    let steps = ceil_log(p, 2);
    Cost {
        rounds: steps,
        messages: p - 1,
        bytes: steps * n,
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
