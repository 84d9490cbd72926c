//! Collective schedules from ferry-coll executed by real engines over loopback TCP, one
//! thread per rank, compared with what every rank should end up with.

mod common;
use common::engines;

use ferry_coll::{algorithm, Params};
use ferry_core::engine::collective::run_blocking;

fn block(rank: usize, len: usize) -> Vec<u8> {
    (0..len).map(|i| (rank * 31 + i * 7) as u8).collect()
}

/// Run algorithm `id` on `n` ranks with per-rank blocks of `len` bytes; return every
/// rank's receive buffer.
fn run(id: &'static str, n: usize, root: usize, len: usize) -> Vec<Vec<u8>> {
    run_as(id, n, root, len, true)
}

/// As [`run`]; `commutative` tells the run whether it may swap a reduction's operands
/// (the sum is commutative, so the results must not depend on it).
fn run_as(id: &'static str, n: usize, root: usize, len: usize, commutative: bool) -> Vec<Vec<u8>> {
    let info = algorithm(id).unwrap_or_else(|| panic!("{id} is registered"));
    let handles: Vec<_> = engines(n as u32, 1024, b"k")
        .into_iter()
        .enumerate()
        .map(|(rank, mut e)| {
            let params = Params::uniform(rank, n, root, len);
            std::thread::spawn(move || {
                let sched = (info.schedule)(&params);
                let send = block(rank, sched.send_len());
                let mut recv = vec![0u8; sched.recv_len()];
                if id.starts_with("bcast.") && rank == root {
                    recv = block(root, recv.len());
                }
                let group: Vec<u32> = (0..n as u32).collect();
                let mut add = |s: &[u8], d: &mut [u8]| {
                    for (d, s) in d.iter_mut().zip(s) {
                        *d = d.wrapping_add(*s);
                    }
                    Ok(())
                };
                unsafe { run_blocking(&mut e, sched, group, 1, 77, send.as_ptr(), recv.as_mut_ptr(), &mut add, commutative) }.unwrap();
                e.finalize().unwrap();
                recv
            })
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

#[test]
fn allgathers_deliver_every_block_everywhere() {
    for id in ["allgather.ring", "allgather.double_ring", "allgather.bruck", "allgather.double_bruck", "allgather.recursive_doubling"] {
        for n in [1, 4, 5] {
            let out = run(id, n, 0, 300);
            let want: Vec<u8> = (0..n).flat_map(|r| block(r, 300)).collect();
            for (r, got) in out.iter().enumerate() {
                assert!(*got == want, "{id} on {n} ranks: rank {r} differs");
            }
        }
    }
}

#[test]
fn bcast_and_status_bcast_reach_every_rank() {
    for id in ["bcast.binomial", "bcast.scatter_allgather", "bcast.status_binomial", "bcast.pipelined_chain"] {
        for (n, root) in [(4, 0), (5, 3)] {
            let out = run(id, n, root, 5000);
            for (r, got) in out.iter().enumerate() {
                assert!(*got == block(root, 5000), "{id} on {n} ranks root {root}: rank {r} differs");
            }
        }
    }
}

#[test]
fn allreduce_sums() {
    for id in ["allreduce.recursive_doubling", "allreduce.ring"] {
        for n in [3, 4] {
            let out = run(id, n, 0, 1000);
            let want: Vec<u8> = (0..1000).map(|i| (0..n).fold(0u8, |acc, r| acc.wrapping_add(block(r, 1000)[i]))).collect();
            for (r, got) in out.iter().enumerate() {
                assert!(*got == want, "{id} on {n} ranks: rank {r} differs");
            }
        }
    }
}

#[test]
fn reductions_give_the_same_sums_with_and_without_swapped_operands() {
    let ids = ["reduce.binomial", "reduce.rabenseifner", "allreduce.recursive_doubling", "allreduce.ring"];
    for id in ids {
        for (n, root) in [(1, 0), (2, 0), (2, 1), (3, 2), (4, 0), (5, 3)] {
            let want: Vec<u8> = (0..1000).map(|i| (0..n).fold(0u8, |acc, r| acc.wrapping_add(block(r, 1000)[i]))).collect();
            for commutative in [false, true] {
                let out = run_as(id, n, root, 1000, commutative);
                for (r, got) in out.iter().enumerate() {
                    if id.starts_with("allreduce.") || r == root {
                        assert!(*got == want, "{id} on {n} ranks root {root} (commutative {commutative}): rank {r} differs");
                    }
                }
            }
        }
    }
}

#[test]
fn gather_status_linear_collects_in_arrival_order() {
    let n = 5;
    let out = run("gather.status_linear", n, 2, 64);
    let want: Vec<u8> = (0..n).flat_map(|r| block(r, 64)).collect();
    assert!(out[2] == want);
}

/// 2x2 byte matrices multiplied modulo 256, `d = s * d`: associative, not commutative.
fn matmul(s: &[u8], d: &mut [u8]) -> Result<(), String> {
    for (a, b) in s.chunks_exact(4).zip(d.chunks_exact_mut(4)) {
        let m = |i: usize, j: usize, k: usize, l: usize| a[i].wrapping_mul(b[j]).wrapping_add(a[k].wrapping_mul(b[l]));
        let c = [m(0, 0, 1, 2), m(0, 1, 1, 3), m(2, 0, 3, 2), m(2, 1, 3, 3)];
        b.copy_from_slice(&c);
    }
    Ok(())
}

/// Rank r's operand: matrices with odd determinants, so products never collapse.
fn operand(rank: usize, len: usize) -> Vec<u8> {
    (0..len).map(|i| (rank * 29 + i * 13 + 7) as u8).map(|x| x | 1).enumerate().map(|(i, x)| if i % 4 == 1 || i % 4 == 2 { x & !1 } else { x }).collect()
}

/// x_lo x_{lo+1} ... x_{hi-1} of `len` bytes of matrices.
fn product(lo: usize, hi: usize, len: usize) -> Vec<u8> {
    let mut acc = operand(hi - 1, len);
    for r in (lo..hi - 1).rev() {
        matmul(&operand(r, len), &mut acc).unwrap();
    }
    acc
}

/// Run ordered algorithm `id` with the matrix product; every rank's receive buffer.
fn run_ordered(id: &'static str, n: usize, root: usize, len: usize) -> Vec<Vec<u8>> {
    let info = algorithm(id).unwrap_or_else(|| panic!("{id} is registered"));
    assert!(info.ordered, "{id} keeps operand order");
    let handles: Vec<_> = engines(n as u32, 1024, b"k")
        .into_iter()
        .enumerate()
        .map(|(rank, mut e)| {
            let params = Params::uniform(rank, n, root, len).elem_size(4);
            std::thread::spawn(move || {
                let sched = (info.schedule)(&params);
                let send = operand(rank, sched.send_len());
                let mut recv = vec![0u8; sched.recv_len()];
                let group: Vec<u32> = (0..n as u32).collect();
                unsafe { run_blocking(&mut e, sched, group, 1, 78, send.as_ptr(), recv.as_mut_ptr(), &mut matmul, false) }.unwrap();
                e.finalize().unwrap();
                recv
            })
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

#[test]
fn ordered_reductions_keep_rank_order_over_the_engine() {
    for n in [2, 3, 4, 5] {
        for root in [0, 1, n - 1] {
            let out = run_ordered("reduce.binomial", n, root, 400);
            assert!(out[root] == product(0, n, 400), "reduce.binomial on {n} ranks, root {root}");
        }
        for (r, got) in run_ordered("allreduce.recursive_doubling", n, 0, 400).iter().enumerate() {
            assert!(*got == product(0, n, 400), "allreduce.recursive_doubling on {n} ranks: rank {r}");
        }
        for (r, got) in run_ordered("scan.recursive_doubling", n, 0, 400).iter().enumerate() {
            assert!(*got == product(0, r + 1, 400), "scan.recursive_doubling on {n} ranks: rank {r}");
        }
        for (r, got) in run_ordered("exscan.recursive_doubling", n, 0, 400).iter().enumerate().skip(1) {
            assert!(*got == product(0, r, 400), "exscan.recursive_doubling on {n} ranks: rank {r}");
        }
        // Reduce-scatter: the input holds n shares of 40 bytes; rank r gets share r.
        for (r, got) in run_ordered("reduce_scatter.reduce_then_scatter", n, 0, 40).iter().enumerate() {
            let whole = product(0, n, 40 * n);
            assert!(*got == whole[40 * r..40 * (r + 1)], "reduce_scatter.reduce_then_scatter on {n} ranks: rank {r}");
        }
    }
}

/// Run algorithm `id` `rounds` times on `n` ranks as one kept call, restarted on fresh
/// buffers with a new tag each round (round k's blocks are rank r + k's); every rank's
/// receive buffer of every round, and whether it could keep the call. A rank that cannot
/// stops after the first round: run more than one only where every rank can.
fn run_kept(id: &'static str, n: usize, root: usize, len: usize, rounds: usize) -> (Vec<Vec<Vec<u8>>>, Vec<bool>) {
    use ferry_core::engine::collective::CollRun;
    use ferry_core::engine::{CollJob, CollShape};
    let info = algorithm(id).unwrap_or_else(|| panic!("{id} is registered"));
    let handles: Vec<_> = engines(n as u32, 1024, b"k")
        .into_iter()
        .enumerate()
        .map(|(rank, mut e)| {
            let params = Params::uniform(rank, n, root, len);
            std::thread::spawn(move || {
                let sched = (info.schedule)(&params);
                let (send_len, recv_len) = (sched.send_len(), sched.recv_len());
                let shape = CollShape { algorithm: id, block: len, root, in_place: false, elem_size: 1, reduction: 1, radix: 4 };
                let add = |s: &[u8], d: &mut [u8]| {
                    for (d, s) in d.iter_mut().zip(s) {
                        *d = d.wrapping_add(*s);
                    }
                    Ok(())
                };
                let mut job: Option<Box<CollJob>> = None;
                let mut kept = true;
                let mut out = Vec::new();
                for k in 0..rounds {
                    let send = block(rank + k, send_len);
                    let mut recv = vec![0u8; recv_len];
                    if id.starts_with("bcast.") && rank == root {
                        recv = block(root + k, recv_len);
                    }
                    let tag = 200 + k as i32;
                    let j = match job.take() {
                        Some(mut j) => {
                            // SAFETY: both buffers live until the call is taken below.
                            assert!(unsafe { j.run.restart(tag, send.as_ptr(), recv.as_mut_ptr()) }, "{id}: a kept call restarts");
                            j
                        }
                        None => {
                            let run = unsafe { CollRun::new(sched.clone(), (0..n as u32).collect::<Vec<_>>(), 1, tag, send.as_ptr(), recv.as_mut_ptr()) };
                            Box::new(CollJob { run, reduce: Box::new(add), home: Some((7, shape)) })
                        }
                    };
                    let id = e.start_job(j);
                    e.wait_until(|e| e.is_done(id)).unwrap();
                    e.take_collective(id).unwrap().unwrap();
                    job = e.unpark_collective();
                    assert!(e.unpark_collective().is_none(), "one call parked");
                    if let Some(j) = &job {
                        assert_eq!(j.home, Some((7, shape)), "the call comes back with its home");
                    } else {
                        kept = false;
                    }
                    out.push(recv);
                    if !kept {
                        break;
                    }
                }
                e.finalize().unwrap();
                (out, kept)
            })
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).unzip()
}

#[test]
fn a_kept_call_runs_again_on_other_buffers() {
    let n = 4;
    let (out, kept) = run_kept("allreduce.recursive_doubling", n, 0, 600, 3);
    assert!(kept.iter().all(|&k| k));
    for k in 0..3 {
        let want: Vec<u8> = (0..600).map(|i| (0..n).fold(0u8, |acc, r| acc.wrapping_add(block(r + k, 600)[i]))).collect();
        for (r, rounds) in out.iter().enumerate() {
            assert!(rounds[k] == want, "allreduce round {k}: rank {r} differs");
        }
    }
    let (out, kept) = run_kept("allgather.bruck", 5, 0, 100, 3);
    assert!(kept.iter().all(|&k| k));
    for k in 0..3 {
        let want: Vec<u8> = (0..5).flat_map(|r| block(r + k, 100)).collect();
        assert!(out.iter().all(|rounds| rounds[k] == want), "allgather.bruck round {k}");
    }
    let (out, kept) = run_kept("bcast.binomial", 5, 3, 3000, 2);
    assert!(kept.iter().all(|&k| k));
    for k in 0..2 {
        assert!(out.iter().all(|rounds| rounds[k] == block(3 + k, 3000)), "bcast.binomial round {k}");
    }
}

#[test]
fn a_call_whose_schedule_grows_is_not_kept() {
    // Its receivers learn their parents at run time: they cannot run it again (the root,
    // which only sends, could).
    let (out, kept) = run_kept("bcast.status_binomial", 5, 1, 200, 1);
    for (r, k) in kept.iter().enumerate() {
        assert!(r == 1 || !k, "rank {r} kept a schedule that grew while it ran");
    }
    assert!(out.iter().all(|rounds| rounds.len() == 1 && rounds[0] == block(1, 200)));
}
