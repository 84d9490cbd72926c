//! Hierarchical broadcast, by host (the pattern of Open MPI's `han` and MPICH's SMP-aware
//! broadcast): the root, leading its own host, broadcasts to one leader per other host along
//! a binomial tree; each leader then sends to the other ranks of its host. Only the leaders'
//! messages cross the network, each host's once.
//!
//! Restrictions: ranks on several hosts with more than one on some, known to the caller
//! (`Params::hosts`); else a binomial tree. Steps: ceil(log2 h) + 1 for h hosts. Bytes: n
//! per step; a leader sends n to each child and each of its host's ranks.

use super::binomial;
use crate::hier::Hosts;
use crate::shape::ceil_log;
use crate::{BufferId, Cost, Params, Range, Schedule};

pub const ID: &str = "bcast.hier";
pub const DESCRIPTION: &str = "by host: binomial tree among one leader per host, then each leader to its host's ranks";
pub const RESTRICTIONS: &str = "ranks on several hosts, more than one on some (else binomial)";
pub const VARYING: bool = false;
pub const IN_PLACE: bool = false;

/// The leaders that leader `v` of `l` sends to in the binomial tree (largest subtree first).
fn children(v: usize, l: usize) -> impl Iterator<Item = usize> {
    let low = if v == 0 { l.next_power_of_two() } else { v & v.wrapping_neg() };
    (0..usize::BITS).rev().map(|b| 1usize << b).filter(move |&m| m < low && v + m < l).map(move |m| v + m)
}

pub fn schedule(q: &Params) -> Schedule {
    let Some(h) = Hosts::of(q, q.root) else { return binomial::schedule(q) };
    let (p, r) = (q.size, q.rank);
    let n = q.blocks[q.root];
    let mut s = Schedule::new(r, p, 0, n);
    if n == 0 {
        return s;
    }
    let whole = Range::new(BufferId::Recv, 0, n);
    let Some(v) = h.leader_index(r) else {
        s.recv(h.leader, vec![whole], &[]);
        return s;
    };
    let mut after = Vec::new();
    if v > 0 {
        let parent = v - (v & v.wrapping_neg());
        after.push(s.recv(h.leaders[parent], vec![whole], &[]));
    }
    for c in children(v, h.leaders.len()) {
        s.send(h.leaders[c], vec![whole], &after);
    }
    for &f in &h.followers {
        s.send(f, vec![whole], &after);
    }
    s
}

pub fn cost(q: &Params) -> Cost {
    let Some(h) = Hosts::of(q, q.root) else { return binomial::cost(q) };
    let (p, n) = (q.size, q.blocks[q.root]);
    if n == 0 {
        return Cost::ZERO;
    }
    let l = h.leaders.len();
    let busiest = h.leaders.iter().enumerate().map(|(v, &lead)| children(v, l).count() + Hosts::members(q, lead) - 1).max().unwrap_or(0);
    let rounds = ceil_log(l, 2) + 1;
    Cost { rounds, messages: p - 1, bytes: rounds * n, rank_bytes: busiest.max(1) * n }
}

#[cfg(test)]
mod tests {
    use crate::conformance::{check, info};

    #[test]
    fn conformance() {
        check(info(super::ID));
    }

    #[test]
    fn children_form_a_binomial_tree() {
        let kids = |v, l| super::children(v, l).collect::<Vec<_>>();
        assert_eq!(kids(0, 5), vec![4, 2, 1]);
        assert_eq!(kids(2, 5), vec![3]);
        assert_eq!(kids(4, 5), Vec::<usize>::new());
        assert_eq!(kids(0, 2), vec![1]);
        assert_eq!(kids(0, 1), Vec::<usize>::new());
    }
}
