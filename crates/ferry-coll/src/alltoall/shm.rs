//! Shared-memory alltoall for the ranks of one host: every rank copies all its outgoing
//! blocks into its slot and publishes the call's number; once every flag shows it, every
//! rank copies block `me` out of every other rank's slot. No message, no matching; the
//! protocol is `crate::slots`'. In place, the outgoing blocks are in the slot before any
//! incoming one lands, so no staging copy is needed.
//!
//! Restrictions: ranks on one host, blocking calls, p blocks of n bytes up to
//! [`SLOT_BYTES`](crate::slots::SLOT_BYTES) in all (a rank's slot holds all its outgoing
//! blocks: the per-rank volume, not the block, is what must fit; see
//! `select::slot_volume`). Steps: 1. Cost per rank: one copy of p n bytes in, p - 1 copies
//! of n bytes out, reading p - 1 slots. As a schedule (what the simulator runs), every rank
//! sends every block to its rank directly (`alltoall.linear`'s schedule): p (p - 1)
//! messages of n bytes in one step.

use crate::slots::{copy, outcome, Run, Slots, Step};
use crate::{Cost, Params, Schedule};

pub const ID: &str = "alltoall.shm";
pub const DESCRIPTION: &str = "through slots in a shared segment: each rank copies its block out of every other rank's slot";
pub const RESTRICTIONS: &str = "ranks on one host; blocking calls; p blocks up to 4 KiB in all";
pub const VARYING: bool = false;
pub const IN_PLACE: bool = true;

/// Advance the alltoall of blocks of `len` bytes: this rank's outgoing blocks at `input`, in
/// the order of their destinations, the incoming ones into `output` in the order of their
/// sources (in place, `input` is `output`).
///
/// # Safety
/// `input` and `output` are valid for `p len` bytes, `p len <= SLOT_BYTES`, they are the
/// same or do not overlap, and `s` is the call's slots.
pub unsafe fn step<S: Slots>(run: &mut Run, s: &mut S, input: *const u8, output: *mut u8, len: usize) -> Step {
    let (seq, me, p) = (run.seq, s.me(), s.ranks());
    // SAFETY: the caller's contract; the slot holds SLOT_BYTES >= p len. In place, every
    // outgoing block is in the slot before this rank writes anything into `output`.
    if let Some(w) = unsafe { run.exchange(s, input, p * len) } {
        return w;
    }
    for j in 0..p {
        let at = output.wrapping_add(j * len);
        if j == me {
            let mine = input.wrapping_add(me * len);
            if !std::ptr::eq(mine, at) {
                // SAFETY: the caller's contract; distinct buffers.
                unsafe { copy(mine, at, len) };
            }
        } else {
            // SAFETY: rank j's slot holds its blocks for this call (published), kept until
            // this rank publishes its next call.
            unsafe { copy(s.slot(j, seq).wrapping_add(me * len), at, len) };
        }
    }
    // SAFETY: every rank has published `seq`.
    unsafe { outcome(s, (0..p).filter(|&j| j != me), seq, p * len) }
}

pub fn schedule(q: &Params) -> Schedule {
    crate::alltoall::linear::schedule(q)
}

pub fn cost(q: &Params) -> Cost {
    crate::slots::one_round(q, q.size * (q.size - 1))
}

#[cfg(test)]
mod tests {
    use crate::conformance::{check, info};
    use crate::slots::memory::{Board, Order};
    use crate::slots::SLOT_BYTES;

    #[test]
    fn conformance() {
        check(info(super::ID));
    }

    #[test]
    fn every_rank_gets_its_block_from_every_rank_in_place_or_not() {
        let calls = 10;
        // Up to the whole slot: p blocks of SLOT_BYTES / p.
        let len = |k: usize, p: usize| [8, 0, 1, SLOT_BYTES / p, 100 / p][k % 5];
        // Block for rank j from rank r.
        let x = |k: usize, r: usize, j: usize, i: usize| (k * 17 + r * 7 + j * 31 + i) as u8;
        for p in 1..=9 {
            for order in Order::ALL {
                for in_place in [false, true] {
                    let n = |k: usize| len(k, p);
                    let mut ins: Vec<Vec<Vec<u8>>> = (0..calls).map(|k| (0..p).map(|r| (0..p * n(k)).map(|i| x(k, r, i / n(k), i % n(k))).collect()).collect()).collect();
                    let mut outs: Vec<Vec<Vec<u8>>> = (0..calls).map(|k| vec![vec![0xee; p * n(k)]; p]).collect();
                    Board::new(p, order).play(calls, |r, k, run, s| {
                        let (input, output) = if in_place { (ins[k][r].as_mut_ptr(), ins[k][r].as_mut_ptr()) } else { (ins[k][r].as_mut_ptr(), outs[k][r].as_mut_ptr()) };
                        // SAFETY: each buffer is this rank's own, of the lengths the call says.
                        unsafe { super::step(run, s, input, output, n(k)) }
                    });
                    for k in 0..calls {
                        for r in 0..p {
                            let want: Vec<u8> = (0..p * n(k)).map(|i| x(k, i / n(k), r, i % n(k))).collect();
                            let got = if in_place { &ins[k][r] } else { &outs[k][r] };
                            assert_eq!(got, &want, "p={p} {order:?} in_place={in_place} call {k} rank {r}");
                        }
                    }
                }
            }
        }
    }

    /// Gather, scatter and alltoall mixed with broadcasts (whose root publishes early) and
    /// barriers on the same slots, in every order: the scatter's root writes other ranks'
    /// slots, which must never clobber a block still to be read.
    #[test]
    fn mixed_with_the_other_slot_algorithms() {
        let calls = 40;
        let kind = |k: usize| (k * 7 + k / 4) % 5;
        let len = |k: usize| [8, 1, 64, 400][k % 4];
        let x = |k: usize, r: usize, i: usize| (k * 3 + r * 29 + i * 5) as u8;
        for p in 1..=7 {
            let root = |k: usize| (k * 5 + 2) % p;
            for order in Order::ALL {
                // Each rank's input: p blocks (what the scatter's root and the alltoall send).
                let mut ins: Vec<Vec<Vec<u8>>> = (0..calls).map(|k| (0..p).map(|r| (0..p * len(k)).map(|i| x(k, r, i)).collect()).collect()).collect();
                let mut outs: Vec<Vec<Vec<u8>>> = (0..calls).map(|k| vec![vec![0xee; p * len(k)]; p]).collect();
                Board::new(p, order).play(calls, |r, k, run, s| {
                    let (input, output, n) = (ins[k][r].as_mut_ptr(), outs[k][r].as_mut_ptr(), len(k));
                    // SAFETY: every buffer is this rank's own and long enough for its call.
                    unsafe {
                        match kind(k) {
                            0 => crate::gather::shm::step(run, s, root(k), input, output, n),
                            1 => crate::scatter::shm::step(run, s, root(k), input, output, n),
                            2 => super::step(run, s, input, output, n),
                            3 => crate::bcast::shm::step(run, s, root(k), input, n),
                            _ => crate::barrier::shm::step(run, s),
                        }
                    }
                });
                for k in 0..calls {
                    let n = len(k);
                    for r in 0..p {
                        let ctx = format!("p={p} {order:?} call {k} kind {} rank {r}", kind(k));
                        let out = &outs[k][r];
                        match kind(k) {
                            0 if r == root(k) => assert!((0..p * n).all(|i| out[i] == x(k, i / n, i % n)), "{ctx}"),
                            1 => assert!((0..n).all(|i| out[i] == x(k, root(k), r * n + i)), "{ctx}"),
                            2 => assert!((0..p * n).all(|i| out[i] == x(k, i / n, r * n + i % n)), "{ctx}"),
                            3 => assert!((0..n).all(|i| ins[k][r][i] == x(k, root(k), i)), "{ctx}"),
                            _ => {}
                        }
                    }
                }
            }
        }
    }
}
