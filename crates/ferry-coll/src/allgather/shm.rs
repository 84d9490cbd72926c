//! Shared-memory allgather for the ranks of one host: every rank copies its block into its
//! slot and publishes the call's number; once every flag shows it, every rank copies every
//! other rank's block out of that rank's slot. No message, no matching; the protocol is
//! `crate::slots`'.
//!
//! Restrictions: ranks on one host, blocking calls, blocks up to
//! [`SLOT_BYTES`](crate::slots::SLOT_BYTES). Steps: 1. Cost per rank: one copy of n bytes
//! in, p - 1 out, reading p - 1 slots. As a schedule (what the simulator runs), every rank
//! sends its block to every other in one step: p (p - 1) messages of n bytes.

use crate::slots::{copy, outcome, Run, Slots, Step};
use crate::{BufferId, Cost, Params, Range, Rounds, Schedule};

pub const ID: &str = "allgather.shm";
pub const DESCRIPTION: &str = "through slots in a shared segment: each rank copies every other rank's block out of its slot";
pub const RESTRICTIONS: &str = "ranks on one host; blocking calls; blocks up to 4 KiB";
pub const VARYING: bool = false;
pub const IN_PLACE: bool = true;

/// Advance the allgather of blocks of `len` bytes: this rank's at `input`, everyone's into
/// `output` in rank order (in place, this rank's block is already there and `input` points
/// at it).
///
/// # Safety
/// `input` is valid for `len` bytes, `output` for `p len`, `len <= SLOT_BYTES`, and `s` is
/// the call's slots.
pub unsafe fn step<S: Slots>(run: &mut Run, s: &mut S, input: *const u8, output: *mut u8, len: usize) -> Step {
    let (seq, me) = (run.seq, s.me());
    // SAFETY: the caller's contract; the slot holds SLOT_BYTES >= len.
    if let Some(w) = unsafe { run.exchange(s, input, len) } {
        return w;
    }
    for j in 0..s.ranks() {
        let at = output.wrapping_add(j * len);
        if j == me {
            if !std::ptr::eq(input, at) {
                // SAFETY: the caller's contract; distinct buffers.
                unsafe { copy(input, at, len) };
            }
        } else {
            // SAFETY: rank j's slot holds its block for this call (published), kept until this
            // rank publishes its next call.
            unsafe { copy(s.slot(j, seq), at, len) };
        }
    }
    // SAFETY: every rank has published `seq`.
    unsafe { outcome(s, 0..s.ranks(), seq, len) }
}

pub fn schedule(q: &Params) -> Schedule {
    let (p, r, n) = (q.size, q.rank, q.blocks[0]);
    let mut s = Schedule::new(r, p, if q.in_place { 0 } else { n }, q.extent());
    if n == 0 {
        return s;
    }
    let block = |i: usize| Range::new(BufferId::Recv, q.displs[i], n);
    let mut rounds = Rounds::new(&mut s, &[]);
    if !q.in_place {
        rounds.copy(Range::new(BufferId::Send, 0, n), block(r));
        rounds.next();
    }
    for d in 1..p {
        rounds.send((r + d) % p, vec![block(r)]);
        rounds.recv((r + p - d) % p, vec![block((r + p - d) % p)]);
    }
    s
}

pub fn cost(q: &Params) -> Cost {
    crate::slots::one_round(q, q.size * (q.size - 1))
}

#[cfg(test)]
mod tests {
    use crate::conformance::{check, info};
    use crate::slots::memory::{Board, Order};

    #[test]
    fn conformance() {
        check(info(super::ID));
    }

    #[test]
    fn every_rank_gets_every_block_in_place_or_not() {
        let calls = 10;
        let len = |k: usize| [8, 0, 1, 4096, 100][k % 5];
        let x = |k: usize, r: usize, i: usize| (k * 17 + r * 7 + i) as u8;
        for p in 1..=9 {
            for order in Order::ALL {
                for in_place in [false, true] {
                    let mut ins: Vec<Vec<Vec<u8>>> = (0..calls).map(|k| (0..p).map(|r| (0..len(k)).map(|i| x(k, r, i)).collect()).collect()).collect();
                    let mut outs: Vec<Vec<Vec<u8>>> = (0..calls)
                        .map(|k| (0..p).map(|r| (0..p * len(k)).map(|i| if in_place && i / len(k).max(1) == r { x(k, r, i % len(k)) } else { 0xee }).collect()).collect())
                        .collect();
                    Board::new(p, order).play(calls, |r, k, run, s| {
                        let output = outs[k][r].as_mut_ptr();
                        let input = if in_place { output.wrapping_add(r * len(k)) as *const u8 } else { ins[k][r].as_mut_ptr() as *const u8 };
                        // SAFETY: each buffer is this rank's own, of the lengths the call says.
                        unsafe { super::step(run, s, input, output, len(k)) }
                    });
                    for k in 0..calls {
                        let want: Vec<u8> = (0..p * len(k)).map(|i| x(k, i / len(k), i % len(k))).collect();
                        for r in 0..p {
                            assert_eq!(outs[k][r], want, "p={p} {order:?} in_place={in_place} call {k} rank {r}");
                        }
                    }
                }
            }
        }
    }
}
