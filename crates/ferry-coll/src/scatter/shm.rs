//! Shared-memory scatter for the ranks of one host: the root copies block j straight into
//! rank j's slot, for every rank j but itself, and publishes the call's number; every other
//! rank publishes its own flag on entry, waits for the root's and copies its block out of its
//! own slot. No message, no matching; the protocol is `crate::slots`'.
//!
//! The one writer of another rank's slot: in a scatter no rank writes its own, and the root
//! writes them under the protocol's rule (only once every flag shows the call before, so
//! nobody still reads what they held two calls ago); rank j reads its slot after the root's
//! flag and publishes its next call only after, so the root's next write of that buffer,
//! two calls later, waits for it. The per-rank limit is one block, not the root's p blocks.
//!
//! Restrictions: ranks on one host, blocking calls, blocks up to
//! [`SLOT_BYTES`](crate::slots::SLOT_BYTES). Steps: 1. Cost: at the root, p - 1 copies of n
//! bytes in; at every other rank one copy of n bytes out, each reading one slot. As a
//! schedule (what the simulator runs), the root sends every block to its rank directly
//! (`scatter.linear`'s schedule): p - 1 messages of n bytes in one step.

use crate::slots::{copy, Run, Slots, Step};
use crate::{Cost, Params, Schedule};

pub const ID: &str = "scatter.shm";
pub const DESCRIPTION: &str = "through slots in a shared segment: the root copies each block into its rank's slot";
pub const RESTRICTIONS: &str = "ranks on one host; blocking calls; blocks up to 4 KiB";
pub const VARYING: bool = false;
pub const IN_PLACE: bool = true;

/// Advance the scatter of blocks of `len` bytes from `root`: the root's `input` holds every
/// rank's block in rank order (`input` is only the root's), this rank's goes to `output` (in
/// place, the root's block stays in its input and `output` points at it).
///
/// # Safety
/// The root's `input` is valid for `p len` bytes, `output` for `len`, `len <= SLOT_BYTES`,
/// and `s` is the call's slots.
pub unsafe fn step<S: Slots>(run: &mut Run, s: &mut S, root: usize, input: *const u8, output: *mut u8, len: usize) -> Step {
    let (seq, me) = (run.seq, s.me());
    if me == root {
        if let Some(w) = run.free(s) {
            return w;
        }
        for j in (0..s.ranks()).filter(|&j| j != me) {
            // SAFETY: the caller's contract; `free` said every buffer of this call is free
            // (see the module doc), and rank j writes none in a scatter.
            unsafe {
                copy(input.wrapping_add(j * len), s.slot(j, seq), len);
                *s.size_word(j, seq) = len as u64;
            }
        }
        let mine = input.wrapping_add(me * len);
        if !std::ptr::eq(mine, output) {
            // SAFETY: the caller's contract; distinct buffers.
            unsafe { copy(mine, output, len) };
        }
        s.publish(seq);
        return Step::Done;
    }
    if run.phase == 0 {
        s.publish(seq);
        run.phase = 1;
    }
    if s.flag(root) < seq {
        return Step::Wait { rank: root, seq };
    }
    // SAFETY: as above; the root wrote this rank's buffer before publishing `seq`, and will
    // not write it again before this rank publishes `seq + 1`.
    let sent = unsafe {
        copy(s.slot(me, seq), output, len);
        *s.size_word(me, seq) as usize
    };
    // The root wrote the block (and its size) of this rank's slot: the root sent too much.
    if sent > len { Step::Truncated { rank: root, sent } } else { Step::Done }
}

pub fn schedule(q: &Params) -> Schedule {
    crate::scatter::linear::schedule(q)
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
    fn every_rank_gets_its_block_in_place_or_not() {
        let calls = 12;
        let len = |k: usize| [8, 0, 1, 4096, 100, 7][k % 6];
        let x = |k: usize, r: usize, i: usize| (k * 11 + r * 5 + i * 3) as u8;
        for p in 1..=9 {
            // Scatters from the same root in a row, too: the root runs ahead.
            let root = |k: usize| (k / 2 * 3) % p;
            for order in Order::ALL {
                for in_place in [false, true] {
                    let mut ins: Vec<Vec<Vec<u8>>> =
                        (0..calls).map(|k| (0..p).map(|r| if r == root(k) { (0..p * len(k)).map(|i| x(k, i / len(k), i % len(k))).collect() } else { vec![0xdd; 1] }).collect()).collect();
                    let mut outs: Vec<Vec<Vec<u8>>> = (0..calls).map(|k| vec![vec![0xee; len(k)]; p]).collect();
                    Board::new(p, order).play(calls, |r, k, run, s| {
                        let input = ins[k][r].as_mut_ptr();
                        let output = if in_place && r == root(k) { input.wrapping_add(r * len(k)) } else { outs[k][r].as_mut_ptr() };
                        // SAFETY: each buffer is this rank's own, of the lengths the call says.
                        unsafe { super::step(run, s, root(k), input, output, len(k)) }
                    });
                    for k in 0..calls {
                        for r in 0..p {
                            let got = if in_place && r == root(k) { &ins[k][r][r * len(k)..(r + 1) * len(k)] } else { &outs[k][r][..] };
                            assert!(got.iter().enumerate().all(|(i, &b)| b == x(k, r, i)), "p={p} {order:?} in_place={in_place} call {k} rank {r}");
                        }
                        if in_place {
                            assert!(outs[k][root(k)].iter().all(|&b| b == 0xee), "in place, the root's output is its input");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn a_longer_block_than_a_buffer_takes_is_truncated() {
        use crate::slots::Step;
        for p in 2..=4 {
            let mut b = Board::new(p, Order::Random(9));
            b.mismatched = true;
            let input: Vec<u8> = (0..p * 8).map(|i| i as u8).collect();
            let mut outs = vec![vec![0xee; 8]; p];
            let mut truncated = vec![None; p];
            b.play(1, |r, _, run, s| {
                // The root sends 8 bytes to each; the others take 4.
                let len = if r == 0 { 8 } else { 4 };
                // SAFETY: each buffer is this rank's own and long enough.
                let step = unsafe { super::step(run, s, 0, input.as_ptr(), outs[r].as_mut_ptr(), len) };
                if let Step::Truncated { .. } = step {
                    truncated[r] = Some(step);
                }
                step
            });
            for r in 1..p {
                assert_eq!(truncated[r], Some(Step::Truncated { rank: 0, sent: 8 }));
                assert_eq!(outs[r][..4], input[r * 8..r * 8 + 4], "only what fits");
                assert!(outs[r][4..].iter().all(|&b| b == 0xee));
            }
        }
    }
}
