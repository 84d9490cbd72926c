//! Status-based binomial broadcast (SEEDS.md S1): the binomial tree keeps its shape
//! (stage k: every logical l < 2^k sends to l + 2^k), but logical positions are mapped to
//! physical ranks per call. The root orders the ranks free-first (`Params::free_first`:
//! busy ranks last, so they become the leaves of the last stage), puts itself at logical 0,
//! and sends the physical<->logical table as a header in front of the payload. A non-root
//! does not know its parent in advance: it receives from any rank (`recv_any`), and a
//! continuation reads the table from the header and sends to its children.
//!
//! Header: p little-endian entries of w bytes (w = 1 up to 256 ranks, 2 up to 65536, else
//! 4), entry l = physical rank of logical position l (in scratch 0 on every rank; each
//! message is header followed by the payload). The narrow entries matter: the header
//! travels on every edge of the tree, and at 4 bytes per rank it would cost more than a
//! small payload.
//! Restrictions: none; an absent or malformed `free_first` means rank order.
//! Steps: ceil(log2 p). Bytes: the root sends (n + w p) ceil(log2 p) times.

use crate::shape::ceil_log;
use crate::{Arrival, BufferId, Continuation, Cost, Params, Range, Schedule};
use std::sync::Arc;

pub const ID: &str = "bcast.status_binomial";
pub const DESCRIPTION: &str =
    "binomial tree mapped free-first at run time; table travels in a header (S1)";
pub const RESTRICTIONS: &str = "none; needs a free-first order from the status source";
pub const VARYING: bool = false;
pub const IN_PLACE: bool = false;

/// Logical -> physical table: root first, then `order` without the root.
pub fn table(q: &Params) -> Vec<usize> {
    let p = q.size;
    let valid = |o: &Vec<usize>| {
        let mut seen = vec![false; p];
        o.len() == p
            && o.iter()
                .all(|&r| r < p && !std::mem::replace(&mut seen[r], true))
    };
    let order: Vec<usize> = match &q.free_first {
        Some(o) if valid(o) => o.clone(),
        _ => (0..p).collect(),
    };
    std::iter::once(q.root)
        .chain(order.into_iter().filter(|&r| r != q.root))
        .collect()
}

/// Logical children of logical position l, in stage order.
pub fn children(l: usize, p: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut d = 1;
    while d < p {
        if d > l && l + d < p {
            out.push(l + d);
        }
        d <<= 1;
    }
    out
}

/// Bytes of one header entry for a communicator of `p` ranks.
pub fn entry_width(p: usize) -> usize {
    match p {
        0..=256 => 1,
        257..=65536 => 2,
        _ => 4,
    }
}

fn encode(table: &[usize]) -> Vec<u8> {
    let w = entry_width(table.len());
    table
        .iter()
        .flat_map(|&r| (r as u32).to_le_bytes().into_iter().take(w))
        .collect()
}

fn decode(bytes: &[u8], p: usize) -> Vec<usize> {
    let w = entry_width(p);
    bytes
        .chunks_exact(w)
        .map(|c| c.iter().rev().fold(0usize, |acc, &b| acc << 8 | b as usize))
        .collect()
}

pub fn schedule(q: &Params) -> Schedule {
    let (p, root) = (q.size, q.root);
    let n = q.blocks[root];
    let mut s = Schedule::new(q.rank, p, 0, n);
    if n == 0 || p == 1 {
        return s;
    }
    let payload = Range::new(BufferId::Recv, 0, n);
    if q.rank == root {
        let t = table(q);
        let hdr = Range::new(s.scratch_with(encode(&t)), 0, entry_width(p) * p);
        for l in children(0, p) {
            s.send(t[l], vec![hdr, payload], &[]);
        }
        return s;
    }
    let hdr_len = entry_width(p) * p;
    let hdr = Range::new(s.scratch(hdr_len), 0, hdr_len);
    let from = (0..p)
        .filter(|&r| r != q.rank)
        .map(|r| (r, vec![hdr, payload]))
        .collect();
    let got = s.recv_any(from, &[]);
    let me = q.rank;
    let forward = move |a: &Arrival<'_>, s: &mut Schedule| {
        let t = decode(a.data, p);
        if let Some(l) = t.iter().position(|&r| r == me) {
            for c in children(l, t.len()) {
                s.send(t[c], vec![hdr, payload], &[got]);
            }
        }
    };
    s.then(
        got,
        Continuation {
            reads: vec![hdr],
            next: Arc::new(forward),
        },
    );
    s
}

pub fn cost(q: &Params) -> Cost {
    let (p, n) = (q.size, q.blocks[q.root]);
    if n == 0 || p == 1 {
        return Cost::ZERO;
    }
    let steps = ceil_log(p, 2);
    let m = n + entry_width(p) * p;
    Cost {
        rounds: steps,
        messages: p - 1,
        bytes: steps * m,
        rank_bytes: steps * m,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conformance::{check, check_one, info, ELEM};

    #[test]
    fn conformance() {
        check(info(ID));
    }

    #[test]
    fn seeds_example_root_7_with_1_to_4_busy() {
        // 8 nodes, root P7, P1..P4 busy: free-first order P0, P5, P6, P7, P1, P2, P3, P4.
        let q = Params::uniform(7, 8, 7, 4).free_first(vec![0, 5, 6, 7, 1, 2, 3, 4]);
        let t = table(&q);
        assert_eq!(t, vec![7, 0, 5, 6, 1, 2, 3, 4]);
        let sends: Vec<usize> = children(0, 8).into_iter().map(|l| t[l]).collect();
        assert_eq!(sends, vec![0, 5, 1]);
        // Busy ranks receive in the last stage only: they are leaves.
        for busy in 1..=4 {
            let l = t.iter().position(|&r| r == busy).unwrap();
            assert!(l >= 4 && children(l, 8).is_empty());
        }
    }

    #[test]
    fn headers_round_trip_at_every_width() {
        for p in [1usize, 2, 255, 256, 257, 300, 65536, 65537, 70000] {
            let t: Vec<usize> = (0..p).rev().collect();
            let bytes = encode(&t);
            assert_eq!(bytes.len(), entry_width(p) * p);
            assert_eq!(decode(&bytes, p), t, "p={p}");
        }
    }

    #[test]
    fn any_free_first_order_broadcasts() {
        let id = info(ID);
        for p in [2, 5, 8, 13] {
            for shift in 0..p {
                let order: Vec<usize> = (0..p).map(|i| (i * 3 + shift) % p).collect();
                let order = if p % 3 == 0 {
                    (0..p).rev().collect()
                } else {
                    order
                };
                let q = Params::uniform(0, p, shift, 7 * ELEM)
                    .elem_size(ELEM)
                    .free_first(order);
                check_one(id, &q, shift as u64);
            }
        }
    }
}
