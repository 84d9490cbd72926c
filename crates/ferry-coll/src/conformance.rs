//! The test every algorithm passes: all ranks run together in the in-memory executor for
//! every communicator size 1..=33, roots 0, 1 and size-1, block counts 0, 1, 7 and 1001
//! elements of 4 bytes, in place and not (where allowed), packed and irregular blocks
//! (where the algorithm accepts them; for alltoallv, layouts that differ per rank, with
//! empty blocks and shuffled displacements, symmetric in place); results are compared with
//! a naive reference, every schedule is validated before and after the run, and the
//! algorithm's `cost` must equal the cost the executor measured.

use crate::executor::{run, Buffers, Reduction, RunConfig};
use crate::validate::{validate, validate_rank};
use crate::{goal, AlgorithmInfo, Collective, Cost, Params, ReduceId};

pub(crate) const ELEM: usize = 4;
pub(crate) const COUNTS: [usize; 4] = [0, 1, 7, 1001];
pub(crate) const MAX_SIZE: usize = 33;

/// Contents a rank contributes.
pub(crate) fn pattern(rank: usize, len: usize) -> Vec<u8> {
    (0..len).map(|i| (rank * 29 + i * 13 + 7) as u8).collect()
}

/// Contents a rank contributes to a reduction: as 2x2 byte matrices (see [`matmul`]) with
/// odd determinants, so long products never collapse to zero.
pub(crate) fn operand(rank: usize, len: usize) -> Vec<u8> {
    let mut v = pattern(rank, len);
    for (i, x) in v.iter_mut().enumerate() {
        *x = if i % 4 == 0 || i % 4 == 3 {
            *x | 1
        } else {
            *x & !1
        };
    }
    v
}

/// Contents of a receive buffer before the call (must survive where nothing is received).
pub(crate) fn garbage(rank: usize, len: usize) -> Vec<u8> {
    (0..len).map(|i| ((i * 3 + rank) as u8) ^ 0x5a).collect()
}

fn place(buf: &mut [u8], at: usize, data: &[u8]) {
    buf[at..at + data.len()].copy_from_slice(data);
}

/// Irregular blocks: some empty, sizes differ, gaps between them, order shuffled.
fn irregular(p: usize, count: usize) -> (Vec<usize>, Vec<usize>) {
    let blocks: Vec<usize> = (0..p)
        .map(|i| ELEM * (count * ((i * 7 + 3) % 4) / 2))
        .collect();
    let mut displs = vec![0; p];
    let mut at = 5;
    for i in (0..p).rev() {
        displs[i] = at;
        at += blocks[i] + 3;
    }
    (blocks, displs)
}

/// Alltoallv layouts: rank i sends `bytes(i, j)` to rank j (symmetric for in place, where
/// MPI requires it; otherwise not, with zeros), blocks laid out with gaps in an order that
/// differs per rank and per side.
fn alltoallv(p: usize, count: usize, symmetric: bool) -> Vec<Params> {
    let bytes = |i: usize, j: usize| {
        let k = if symmetric {
            i + j + i * j
        } else {
            i * 5 + j * 3 + 1
        };
        ELEM * (count * (k % 4) / 2)
    };
    let layout = |blocks: &[usize], key: &dyn Fn(usize) -> usize| {
        let mut order: Vec<usize> = (0..p).collect();
        order.sort_by_key(|&i| key(i));
        let mut displs = vec![0; p];
        let mut at = 5;
        for i in order {
            displs[i] = at;
            at += blocks[i] + 3;
        }
        displs
    };
    (0..p)
        .map(|r| {
            let sb: Vec<usize> = (0..p).map(|j| bytes(r, j)).collect();
            let rb: Vec<usize> = (0..p).map(|i| bytes(i, r)).collect();
            let sd = layout(&sb, &|j| (j * 3 + r + 1) % p);
            let rd = layout(&rb, &|i| (p - i + r * 5) % p);
            Params::alltoallv(r, p, sb, sd, rb, rd).in_place(symmetric)
        })
        .collect()
}

/// Every rank's view of one parameter set (the same but for the rank).
pub(crate) fn views(q: &Params) -> Vec<Params> {
    (0..q.size).map(|r| q.for_rank(r)).collect()
}

/// Where the ranks of a call of `p` sit: unknown, and for the hierarchical algorithms'
/// sake, when there are enough ranks, in blocks of two hosts' ranks, round-robin over three
/// hosts, and one crowded host with single ranks elsewhere.
fn host_layouts(p: usize, info: &AlgorithmInfo) -> Vec<Option<std::sync::Arc<Vec<u32>>>> {
    let mut out = vec![None];
    if p >= 3 && info.id.ends_with(".hier") {
        let layout = |f: &dyn Fn(usize) -> u32| Some(std::sync::Arc::new((0..p).map(f).collect::<Vec<u32>>()));
        out.push(layout(&|r| (r / 2) as u32));
        out.push(layout(&|r| (r % 3) as u32 + 10));
        out.push(layout(&|r| if r < p / 2 { 7 } else { r as u32 }));
    }
    out
}

/// Parameter sets of the standard sweep for one algorithm, each as every rank's view.
pub(crate) fn sweep(info: &AlgorithmInfo) -> Vec<Vec<Params>> {
    let mut out = Vec::new();
    for p in 1..=MAX_SIZE {
        let roots: Vec<usize> = if info.collective.rooted() {
            let mut r = vec![0, 1 % p, p - 1];
            r.dedup();
            r.sort_unstable();
            r.dedup();
            r
        } else {
            vec![0]
        };
        for &root in &roots {
            for count in COUNTS {
                let mut layouts = vec![views(&Params::uniform(0, p, root, count * ELEM))];
                if info.varying && count > 0 && info.collective == Collective::Alltoall {
                    layouts.push(alltoallv(p, count, false));
                    if info.in_place {
                        layouts.push(alltoallv(p, count, true));
                    }
                } else if info.varying && count > 0 {
                    let (b, d) = irregular(p, count);
                    layouts.push(views(&Params::varying(0, p, root, b, d)));
                }
                for base in layouts {
                    for in_place in [false, true] {
                        if in_place && !info.in_place {
                            continue;
                        }
                        if base[0].send_blocks.is_some() && in_place != base[0].in_place {
                            continue;
                        }
                        for hosts in host_layouts(p, info) {
                            out.push(
                                base.iter()
                                    .map(|q| {
                                        q.clone()
                                            .in_place(in_place)
                                            .elem_size(ELEM)
                                            .segment_size(256)
                                            .hosts(hosts.clone())
                                    })
                                    .collect(),
                            );
                        }
                    }
                }
            }
        }
    }
    out
}

/// Inputs and expected outputs of every rank for one parameter set.
pub(crate) fn reference(coll: Collective, q: &Params) -> (Vec<Buffers>, Vec<Buffers>) {
    reference_with(coll, q, &add_u32)
}

/// As [`reference`], reducing with `op` (`inout = input op inout`).
pub(crate) fn reference_with(
    coll: Collective,
    q: &Params,
    op: &Reduction<'_>,
) -> (Vec<Buffers>, Vec<Buffers>) {
    reference_ranks(coll, &views(q), op)
}

/// As [`reference_with`], from every rank's view (alltoallv layouts differ per rank).
pub(crate) fn reference_ranks(
    coll: Collective,
    qs: &[Params],
    op: &Reduction<'_>,
) -> (Vec<Buffers>, Vec<Buffers>) {
    let q = &qs[0];
    let (p, root, e) = (q.size, q.root, q.extent());
    let mut inputs = Vec::with_capacity(p);
    let mut expect = Vec::with_capacity(p);
    let operands: Vec<Vec<u8>> = if coll == Collective::ReduceScatter {
        (0..p).map(|i| operand(i, e)).collect()
    } else {
        vec![]
    };
    for r in 0..p {
        let mine = pattern(r, q.blocks[r]);
        let (input, output) = match coll {
            Collective::Bcast => {
                let n = q.blocks[root];
                let start = if r == root {
                    pattern(root, n)
                } else {
                    garbage(r, n)
                };
                (
                    Buffers {
                        send: vec![],
                        recv: start,
                    },
                    Buffers {
                        send: vec![],
                        recv: pattern(root, n),
                    },
                )
            }
            Collective::Scatter => {
                let all = pattern(root, e);
                let send = if r == root { all.clone() } else { vec![] };
                let block = all[q.displs[r]..q.displs[r] + q.blocks[r]].to_vec();
                if r == root && q.in_place {
                    (
                        Buffers {
                            send: send.clone(),
                            recv: vec![],
                        },
                        Buffers { send, recv: vec![] },
                    )
                } else {
                    let recv = garbage(r, q.blocks[r]);
                    (
                        Buffers {
                            send: send.clone(),
                            recv,
                        },
                        Buffers { send, recv: block },
                    )
                }
            }
            Collective::Gather | Collective::Allgather => {
                let gets = coll == Collective::Allgather || r == root;
                let mut recv = if gets { garbage(r, e) } else { vec![] };
                let mut send = mine.clone();
                if gets && q.in_place {
                    place(&mut recv, q.displs[r], &mine);
                    send = vec![];
                }
                let mut full = recv.clone();
                if gets {
                    for i in 0..p {
                        place(&mut full, q.displs[i], &pattern(i, q.blocks[i]));
                    }
                }
                (
                    Buffers {
                        send: send.clone(),
                        recv,
                    },
                    Buffers { send, recv: full },
                )
            }
            Collective::Barrier => (Buffers::default(), Buffers::default()),
            Collective::Reduce | Collective::Allreduce | Collective::Scan | Collective::Exscan => {
                let n = q.blocks[0];
                let mine = operand(r, n);
                let fold = |upto: usize| -> Vec<u8> {
                    let mut acc = operand(upto - 1, n);
                    for i in (0..upto - 1).rev() {
                        op(ReduceId::COLL, &operand(i, n), &mut acc);
                    }
                    acc
                };
                let gets = coll != Collective::Reduce || r == root;
                let start = if gets { garbage(r, n) } else { vec![] };
                let (send, recv) = if gets && q.in_place {
                    (vec![], mine.clone())
                } else {
                    (mine.clone(), start)
                };
                let result = match coll {
                    Collective::Scan => fold(r + 1),
                    Collective::Exscan if r == 0 => recv.clone(),
                    Collective::Exscan => fold(r),
                    _ if gets => fold(p),
                    _ => vec![],
                };
                (
                    Buffers {
                        send: send.clone(),
                        recv,
                    },
                    Buffers { send, recv: result },
                )
            }
            Collective::ReduceScatter => {
                let input = |i: usize| operands[i].clone();
                let part = |i: usize| operands[i][q.displs[r]..q.displs[r] + q.blocks[r]].to_vec();
                let mut own = part(p - 1);
                for i in (0..p - 1).rev() {
                    op(ReduceId::COLL, &part(i), &mut own);
                }
                if q.in_place {
                    let mut out = input(r);
                    out[..own.len()].copy_from_slice(&own);
                    (
                        Buffers {
                            send: vec![],
                            recv: input(r),
                        },
                        Buffers {
                            send: vec![],
                            recv: out,
                        },
                    )
                } else {
                    let recv = garbage(r, q.blocks[r]);
                    (
                        Buffers {
                            send: input(r),
                            recv,
                        },
                        Buffers {
                            send: input(r),
                            recv: own,
                        },
                    )
                }
            }
            Collective::Alltoall => {
                // Rank i's block for rank j: pattern(i p + j).
                let me = &qs[r];
                let (sb, sd) = me.sends();
                let outgoing = |buf: &mut Vec<u8>| {
                    for j in 0..p {
                        place(buf, sd[j], &pattern(r * p + j, sb[j]));
                    }
                };
                let start = garbage(r, me.extent());
                let mut full = start.clone();
                for i in 0..p {
                    place(&mut full, me.displs[i], &pattern(i * p + r, me.blocks[i]));
                }
                let (send, recv) = if me.in_place {
                    let mut recv = start;
                    outgoing(&mut recv);
                    (vec![], recv)
                } else {
                    let mut send = garbage(r + 101, me.send_extent());
                    outgoing(&mut send);
                    (send, start)
                };
                (
                    Buffers {
                        send: send.clone(),
                        recv,
                    },
                    Buffers { send, recv: full },
                )
            }
        };
        inputs.push(input);
        expect.push(output);
    }
    (inputs, expect)
}

/// Wrapping addition of little-endian u32s: the commutative reduction of the tests.
pub(crate) fn add_u32(_op: ReduceId, input: &[u8], inout: &mut [u8]) {
    for (a, b) in input.chunks_exact(4).zip(inout.chunks_exact_mut(4)) {
        let s = u32::from_le_bytes(a.try_into().expect("4 bytes"))
            .wrapping_add(u32::from_le_bytes((&*b).try_into().expect("4 bytes")));
        b.copy_from_slice(&s.to_le_bytes());
    }
}

/// 2x2 matrices of bytes, multiplied modulo 256: associative and not commutative, so a
/// result in the wrong operand order shows.
pub(crate) fn matmul(_op: ReduceId, input: &[u8], inout: &mut [u8]) {
    for (a, b) in input.chunks_exact(4).zip(inout.chunks_exact_mut(4)) {
        let m = |i: usize, j: usize, k: usize, l: usize| {
            a[i].wrapping_mul(b[j])
                .wrapping_add(a[k].wrapping_mul(b[l]))
        };
        let c = [m(0, 0, 1, 2), m(0, 1, 1, 3), m(2, 0, 3, 2), m(2, 1, 3, 3)];
        b.copy_from_slice(&c);
    }
}

/// Runs one parameter set through the checks; panics with the parameters on failure.
pub(crate) fn check_one(info: &AlgorithmInfo, q: &Params, seed: u64) {
    check_ranks(info, &views(q), seed)
}

/// As [`check_one`], from every rank's view. Where views differ beyond the rank
/// (alltoallv), the collective's cost is the maximum of the ranks' costs.
pub(crate) fn check_ranks(info: &AlgorithmInfo, qs: &[Params], seed: u64) {
    let q = &qs[0];
    let p = q.size;
    let scheds: Vec<_> = qs.iter().map(|v| (info.schedule)(v)).collect();
    let ctx = || {
        format!(
            "{} p={} root={} blocks[0..2]={:?} in_place={}",
            info.id,
            p,
            q.root,
            &q.blocks[..p.min(2)],
            q.in_place
        )
    };
    for s in &scheds {
        if let Err(e) = validate_rank(s) {
            panic!("{}: {e}", ctx());
        }
    }
    if !scheds.iter().any(|s| s.is_dynamic()) {
        if let Err(e) = validate(&scheds) {
            panic!("{}: {e}", ctx());
        }
    }
    let op: &Reduction<'_> = if info.ordered { &matmul } else { &add_u32 };
    let (inputs, expect) = reference_ranks(info.collective, qs, op);
    let cfg = RunConfig {
        seed: Some(seed),
        max_steps: 1_000_000,
    };
    let out = match run(scheds, inputs, op, &cfg) {
        Ok(o) => o,
        Err(e) => panic!("{}: {e}", ctx()),
    };
    for (r, (got, want)) in out.buffers.iter().zip(&expect).enumerate() {
        if got != want {
            let at = got.recv.iter().zip(&want.recv).position(|(a, b)| a != b);
            panic!(
                "{}: rank {r} differs (recv byte {at:?}, lens {} vs {})",
                ctx(),
                got.recv.len(),
                want.recv.len()
            );
        }
    }
    if let Err(e) = validate(&out.resolved) {
        panic!("{} after the run: {e}", ctx());
    }
    if p <= 4 {
        match goal::to_goal(&out.resolved).map(|text| goal::check(&text)) {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => panic!("{}: exported GOAL text: {e}", ctx()),
            Err(e) => panic!("{}: GOAL export: {e}", ctx()),
        }
    }
    let c = if q.send_blocks.is_some() {
        qs.iter()
            .map(|v| (info.cost)(v))
            .reduce(|a, b| Cost {
                rounds: a.rounds.max(b.rounds),
                messages: a.messages.max(b.messages),
                bytes: a.bytes.max(b.bytes),
                rank_bytes: a.rank_bytes.max(b.rank_bytes),
            })
            .unwrap_or(Cost::ZERO)
    } else {
        (info.cost)(q)
    };
    let m = out.measured;
    let ok = c.messages == m.messages
        && c.rank_bytes == m.rank_bytes
        && m.depth <= c.rounds
        && m.path_bytes <= c.bytes;
    assert!(ok, "{}: cost() {c:?} disagrees with measured {m:?}", ctx());
}

/// The standard sweep for one algorithm.
pub(crate) fn check(info: &AlgorithmInfo) {
    for (i, qs) in sweep(info).iter().enumerate() {
        check_ranks(info, qs, i as u64 + 1);
    }
}

/// Looks an algorithm up in the registry (so tests also check it is registered).
pub(crate) fn info(id: &str) -> &'static AlgorithmInfo {
    crate::algorithm(id).unwrap_or_else(|| panic!("{id} is not registered"))
}
