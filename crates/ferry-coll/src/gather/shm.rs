//! Shared-memory gather for the ranks of one host: every rank but the root copies its block
//! into its slot and publishes the call's number (and is done); the root publishes on entry,
//! waits until every flag shows the call, and copies every block out of its rank's slot into
//! its receive buffer (its own straight from its input). No message, no matching; the
//! protocol is `crate::slots`'. The reduce's shape (`reduce/shm.rs`) without the fold.
//!
//! Restrictions: ranks on one host, blocking calls, blocks up to
//! [`SLOT_BYTES`](crate::slots::SLOT_BYTES). Steps: 1. Cost: one copy of n bytes in per
//! rank; at the root, p - 1 copies of n bytes out, reading p - 1 slots. As a schedule (what
//! the simulator runs), every rank sends its block to the root directly (`gather.linear`'s
//! schedule): p - 1 messages of n bytes in one step.

use crate::slots::{copy, outcome, Run, Slots, Step};
use crate::{Cost, Params, Schedule};

pub const ID: &str = "gather.shm";
pub const DESCRIPTION: &str = "through slots in a shared segment: the root copies every rank's block out of its slot";
pub const RESTRICTIONS: &str = "ranks on one host; blocking calls; blocks up to 4 KiB";
pub const VARYING: bool = false;
pub const IN_PLACE: bool = true;

/// Advance the gather of blocks of `len` bytes to `root`: this rank's at `input`, everyone's
/// into the root's `output` in rank order (`output` is only the root's; in place, the root's
/// block is already there and `input` points at it).
///
/// # Safety
/// `input` is valid for `len` bytes, the root's `output` for `p len`, `len <= SLOT_BYTES`,
/// and `s` is the call's slots.
pub unsafe fn step<S: Slots>(run: &mut Run, s: &mut S, root: usize, input: *const u8, output: *mut u8, len: usize) -> Step {
    let (seq, me) = (run.seq, s.me());
    if run.phase == 0 {
        if me != root {
            // SAFETY: the caller's contract; the slot holds SLOT_BYTES >= len.
            return unsafe { run.offer(s, input, len) }.unwrap_or(Step::Done);
        }
        s.publish(seq);
        run.phase = 1;
    }
    if let Some(w) = run.all_at(s, seq) {
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
            // SAFETY: rank j's slot holds its block for this call (published), kept until the
            // root publishes its next call.
            unsafe { copy(s.slot(j, seq), at, len) };
        }
    }
    // SAFETY: every rank has published `seq`.
    unsafe { outcome(s, (0..s.ranks()).filter(|&j| j != me), seq, len) }
}

pub fn schedule(q: &Params) -> Schedule {
    crate::gather::linear::schedule(q)
}

pub fn cost(q: &Params) -> Cost {
    crate::slots::one_round(q, q.size - 1)
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
    fn the_root_gets_every_block_in_place_or_not() {
        let calls = 10;
        let len = |k: usize| [8, 0, 1, 4096, 100][k % 5];
        let x = |k: usize, r: usize, i: usize| (k * 13 + r * 7 + i) as u8;
        for p in 1..=9 {
            let root = |k: usize| (k * 3 + 1) % p;
            for order in Order::ALL {
                for in_place in [false, true] {
                    let mut ins: Vec<Vec<Vec<u8>>> = (0..calls).map(|k| (0..p).map(|r| (0..len(k)).map(|i| x(k, r, i)).collect()).collect()).collect();
                    let mut outs: Vec<Vec<Vec<u8>>> = (0..calls)
                        .map(|k| (0..p).map(|r| (0..p * len(k)).map(|i| if in_place && r == root(k) && i / len(k).max(1) == r { x(k, r, i % len(k)) } else { 0xee }).collect()).collect())
                        .collect();
                    Board::new(p, order).play(calls, |r, k, run, s| {
                        let output = outs[k][r].as_mut_ptr();
                        let input = if in_place && r == root(k) { output.wrapping_add(r * len(k)) as *const u8 } else { ins[k][r].as_mut_ptr() as *const u8 };
                        // SAFETY: each buffer is this rank's own, of the lengths the call says.
                        unsafe { super::step(run, s, root(k), input, output, len(k)) }
                    });
                    for k in 0..calls {
                        let want: Vec<u8> = (0..p * len(k)).map(|i| x(k, i / len(k), i % len(k))).collect();
                        assert_eq!(outs[k][root(k)], want, "p={p} {order:?} in_place={in_place} call {k}");
                        for r in (0..p).filter(|&r| r != root(k)) {
                            assert!(outs[k][r].iter().all(|&b| b == 0xee), "a rank other than the root got a result");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn a_longer_block_than_the_root_takes_is_truncated() {
        use crate::slots::Step;
        for p in 2..=4 {
            let mut b = Board::new(p, Order::Random(5));
            b.mismatched = true;
            let mut out = vec![0xee; p * 4];
            let ins: Vec<Vec<u8>> = (0..p).map(|r| vec![r as u8; 8]).collect();
            let mut seen = None;
            b.play(1, |r, _, run, s| {
                // The others send 8 bytes; the root takes 4 from each.
                let len = if r == 0 { 4 } else { 8 };
                // SAFETY: each buffer is this rank's own and long enough.
                let step = unsafe { super::step(run, s, 0, ins[r].as_ptr(), out.as_mut_ptr(), len) };
                if r == 0 && !matches!(step, Step::Wait { .. }) {
                    seen = Some(step);
                }
                step
            });
            assert_eq!(seen, Some(Step::Truncated { rank: 1, sent: 8 }));
            assert!((0..p).all(|r| out[r * 4..r * 4 + 4].iter().all(|&b| b == r as u8)), "only what fits");
        }
    }
}
