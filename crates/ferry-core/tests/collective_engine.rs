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
                unsafe { run_blocking(&mut e, sched, group, 1, 77, send.as_ptr(), recv.as_mut_ptr(), &mut add) }.unwrap();
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
fn gather_status_linear_collects_in_arrival_order() {
    let n = 5;
    let out = run("gather.status_linear", n, 2, 64);
    let want: Vec<u8> = (0..n).flat_map(|r| block(r, 64)).collect();
    assert!(out[2] == want);
}
