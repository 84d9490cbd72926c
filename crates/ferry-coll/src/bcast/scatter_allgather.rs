//! Scatter-allgather broadcast of van de Geijn (Barnett, Payne, van de Geijn, Watts,
//! "Broadcasting on meshes with wormhole routing", 1996; MPICH's
//! `bcast_intra_scatter_ring_allgather.c`): the message is cut into p chunks of ceil(n/p)
//! bytes, scattered down a binomial tree (virtual rank v ends with chunk v), then gathered
//! everywhere by a ring. Both phases are relative to the root.
//!
//! Restrictions: none (chunks may be empty when n < p). Steps: ceil(log2 p) + p - 1.
//! Bytes: scatter n (1 - 1/p) at the root, ring (p - 1) chunks per rank:
//! (log p + p - 1) alpha + 2 n (p - 1)/p beta. For long messages.

use crate::shape::{ceil_log, unvrank, vrank};
use crate::{BufferId, Cost, Params, Range, Rounds, Schedule};

pub const ID: &str = "bcast.scatter_allgather";
pub const DESCRIPTION: &str = "binomial scatter of p chunks, then ring allgather (van de Geijn)";
pub const RESTRICTIONS: &str = "none; long messages";
pub const VARYING: bool = false;
pub const IN_PLACE: bool = false;

/// Bytes of chunks [a, b).
fn chunks(n: usize, c: usize, a: usize, b: usize) -> Range {
    let lo = (a * c).min(n);
    Range::new(BufferId::Recv, lo, (b * c).min(n) - lo)
}

/// A transfer of chunks [from, to) to or from a virtual rank: (peer, from, to).
type Transfer = (usize, usize, usize);

/// The binomial scatter seen from virtual rank v: the parent it receives chunks [v, v+k)
/// from, and the children it sends their subtrees to.
fn tree(v: usize, p: usize) -> (Option<Transfer>, Vec<Transfer>) {
    let mut parent = None;
    let mut mask = 1;
    while mask < p {
        if v & mask != 0 {
            parent = Some((v - mask, v, v + mask.min(p - v)));
            break;
        }
        mask <<= 1;
    }
    let mut children = Vec::new();
    mask >>= 1;
    while mask > 0 {
        if v + mask < p {
            let c = v + mask;
            children.push((c, c, c + mask.min(p - c)));
        }
        mask >>= 1;
    }
    (parent, children)
}

pub fn schedule(q: &Params) -> Schedule {
    let (p, root) = (q.size, q.root);
    let n = q.blocks[root];
    let mut s = Schedule::new(q.rank, p, 0, n);
    if n == 0 || p == 1 {
        return s;
    }
    let c = n.div_ceil(p);
    let v = vrank(q.rank, root, p);
    let real = |x: usize| unvrank(x % p, root, p);
    let (parent, children) = tree(v, p);
    let mut scatter = Vec::new();
    let got: Vec<_> = parent
        .iter()
        .map(|&(from, a, b)| s.recv(real(from), vec![chunks(n, c, a, b)], &[]))
        .collect();
    scatter.extend(&got);
    for (to, a, b) in children {
        scatter.push(s.send(real(to), vec![chunks(n, c, a, b)], &got));
    }
    let mut ring = Rounds::new(&mut s, &scatter);
    for step in 0..p - 1 {
        ring.send(
            real(v + 1),
            vec![chunks(n, c, (v + p - step) % p, (v + p - step) % p + 1)],
        );
        let from = (v + 2 * p - step - 1) % p;
        ring.recv(real(v + p - 1), vec![chunks(n, c, from, from + 1)]);
        ring.next();
    }
    s
}

pub fn cost(q: &Params) -> Cost {
    let (p, n) = (q.size, q.blocks[q.root]);
    if n == 0 || p == 1 {
        return Cost::ZERO;
    }
    let c = n.div_ceil(p);
    let len = |a, b| chunks(n, c, a, b).len;
    let mut rank_bytes = 0;
    for v in 0..p {
        let (parent, children) = tree(v, p);
        let mut recv: usize = parent.map_or(0, |(_, a, b)| len(a, b));
        let mut sent: usize = children.iter().map(|&(_, a, b)| len(a, b)).sum();
        recv += n - len(v, v + 1);
        sent += n - len((v + 1) % p, (v + 1) % p + 1);
        rank_bytes = rank_bytes.max(recv.max(sent));
    }
    let steps = ceil_log(p, 2);
    Cost {
        rounds: steps + p - 1,
        messages: (p - 1) + p * (p - 1),
        bytes: (n - len(0, 1)) + (p - 1) * c.min(n),
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
