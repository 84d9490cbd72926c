//! The test the neighbourhood algorithms pass: every rank of topologies with the awkward
//! cases (MPI_PROC_NULL slots, edges to itself, several edges between one pair, ranks
//! without edges), sizes 1..=17, blocks of 0, 1 and 7 elements, allgather-style (one send
//! block for every destination) and alltoallv-style (per-edge sizes, shuffled layouts with
//! gaps) run together in the in-memory executor; results are compared with the edges'
//! pairing rule, schedules validated before and after, and `cost` checked against what
//! the executor measured.

use super::NeighborParams;
use crate::conformance::{garbage, pattern, ELEM};
use crate::executor::{run, Buffers, RunConfig};
use crate::validate::{validate, validate_rank};
use crate::{Cost, Schedule};

/// Out-edges of rank `s` in a `p`-rank topology.
fn dests(s: usize, p: usize) -> Vec<Option<usize>> {
    vec![Some((s + 1) % p), Some((s + p - 1) % p), None, Some(s), Some((s * 7 + 3) % p), Some((s + 1) % p)]
        .into_iter()
        .filter(|d| s % 3 != 2 || d.is_none()) // every third rank sends nothing
        .collect()
}

/// In-edges of rank `r`: every edge into it, per source in the order the source sends
/// them, sources in descending order, with a MPI_PROC_NULL slot in the middle.
fn sources(r: usize, p: usize) -> Vec<Option<usize>> {
    let mut v: Vec<Option<usize>> = (0..p).rev().flat_map(|s| dests(s, p).into_iter().filter(move |d| *d == Some(r)).map(move |_| Some(s))).collect();
    v.insert(v.len() / 2, None);
    v
}

/// Bytes of the k-th edge from s to r.
fn edge_len(s: usize, r: usize, k: usize, count: usize, allgather: bool) -> usize {
    if allgather {
        ELEM * count * (s % 3 + 1)
    } else {
        ELEM * (count * ((s * 3 + r * 5 + k * 7 + 1) % 4) / 2)
    }
}

/// Which occurrence of `peer` slot `at` of `list` is.
fn occurrence(list: &[Option<usize>], at: usize) -> usize {
    list[..at].iter().filter(|x| **x == list[at]).count()
}

/// Offsets for blocks with 3-byte gaps, laid out in reverse slot order when `reverse`.
fn layout(blocks: &[usize], reverse: bool) -> Vec<usize> {
    let mut order: Vec<usize> = (0..blocks.len()).collect();
    if reverse {
        order.reverse();
    }
    let mut displs = vec![0; blocks.len()];
    let mut at = 3;
    for i in order {
        displs[i] = at;
        at += blocks[i] + 3;
    }
    displs
}

fn params(r: usize, p: usize, count: usize, allgather: bool) -> NeighborParams {
    let (src, dst) = (sources(r, p), dests(r, p));
    let recv_blocks: Vec<usize> = (0..src.len()).map(|i| src[i].map_or(ELEM, |s| edge_len(s, r, occurrence(&src, i), count, allgather))).collect();
    let send_blocks: Vec<usize> = (0..dst.len()).map(|j| dst[j].map_or(if allgather { edge_len(r, 0, 0, count, true) } else { ELEM }, |d| edge_len(r, d, occurrence(&dst, j), count, allgather))).collect();
    let recv_displs = layout(&recv_blocks, true);
    let send_displs = if allgather { vec![0; dst.len()] } else { layout(&send_blocks, false) };
    NeighborParams { rank: r, size: p, sources: src, recv_blocks, recv_displs, dests: dst, send_blocks, send_displs }
}

/// What every rank's receive buffer holds afterwards by the pairing rule.
fn reference(qs: &[NeighborParams], inputs: &[Buffers]) -> Vec<Vec<u8>> {
    qs.iter()
        .zip(inputs)
        .map(|(q, b)| {
            let mut out = b.recv.clone();
            for (i, s) in q.sources.iter().enumerate() {
                let Some(s) = *s else { continue };
                let k = occurrence(&q.sources, i);
                let from = &qs[s];
                let j = (0..from.dests.len()).filter(|&j| from.dests[j] == Some(q.rank)).nth(k).expect("paired edge");
                let n = q.recv_blocks[i];
                let at = from.send_displs[j];
                out[q.recv_displs[i]..q.recv_displs[i] + n].copy_from_slice(&inputs[s].send[at..at + n]);
            }
            out
        })
        .collect()
}

pub(crate) fn check(schedule: fn(&NeighborParams) -> Schedule, cost: fn(&NeighborParams) -> Cost) {
    for p in 1..=17 {
        for count in [0, 1, 7] {
            for allgather in [false, true] {
                let qs: Vec<NeighborParams> = (0..p).map(|r| params(r, p, count, allgather)).collect();
                let ctx = format!("p={p} count={count} allgather={allgather}");
                let scheds: Vec<Schedule> = qs.iter().map(schedule).collect();
                for s in &scheds {
                    validate_rank(s).unwrap_or_else(|e| panic!("{ctx}: {e}"));
                }
                validate(&scheds).unwrap_or_else(|e| panic!("{ctx}: {e}"));
                let inputs: Vec<Buffers> = qs.iter().map(|q| Buffers { send: pattern(q.rank, q.send_extent()), recv: garbage(q.rank, q.recv_extent()) }).collect();
                let want = reference(&qs, &inputs);
                let no_reduction = |_: crate::ReduceId, _: &[u8], _: &mut [u8]| panic!("{ctx}: a neighbourhood collective reduced");
                let out = run(scheds, inputs, &no_reduction, &RunConfig { seed: Some(p as u64 * 31 + count as u64), max_steps: 1_000_000 })
                    .unwrap_or_else(|e| panic!("{ctx}: {e}"));
                for (r, (got, want)) in out.buffers.iter().zip(&want).enumerate() {
                    assert!(got.recv == *want, "{ctx}: rank {r} received the wrong bytes");
                }
                validate(&out.resolved).unwrap_or_else(|e| panic!("{ctx} after the run: {e}"));
                let costs: Vec<Cost> = qs.iter().map(cost).collect();
                let m = out.measured;
                assert_eq!(costs.iter().map(|c| c.messages).sum::<usize>(), m.messages, "{ctx}: messages");
                assert_eq!(costs.iter().map(|c| c.rank_bytes).max().unwrap_or(0), m.rank_bytes, "{ctx}: rank bytes");
                assert!(m.depth <= costs.iter().map(|c| c.rounds).max().unwrap_or(0), "{ctx}: depth {}", m.depth);
                assert!(m.path_bytes <= costs.iter().map(|c| c.bytes).max().unwrap_or(0), "{ctx}: path bytes {}", m.path_bytes);
            }
        }
    }
}
