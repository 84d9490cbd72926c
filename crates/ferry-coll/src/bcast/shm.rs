//! Shared-memory broadcast for the ranks of one host (the flat case of Open MPI's `xhc` and of
//! MPICH's `release_gather`): the root copies the message into its slot and publishes the
//! call's number in its flag; every other rank publishes its own flag on entry, waits for the
//! root's and copies the message out of the root's slot. No message, no matching. The
//! protocol (flags as sequence numbers, two buffers per slot) is `crate::slots`'.
//!
//! A message longer than a receiver's buffer (ranks that disagree on the count) ends that
//! receiver's call with [`Step::Truncated`] (the size travels beside the slot).
//!
//! Restrictions: ranks on one host, blocking calls, messages up to
//! [`SLOT_BYTES`](crate::slots::SLOT_BYTES). Steps: 1. Cost: two copies of n bytes on the
//! critical path (the root's in, each reader's out) and one flag; the root's slot is read by
//! p - 1 ranks. As a schedule (what the simulator runs), the root sends the message to every
//! rank directly: (p - 1) messages of n bytes in one step.

use crate::slots::{copy, longer, Run, Slots, Step};
use crate::{BufferId, Cost, Params, Range, Schedule};

pub const ID: &str = "bcast.shm";
pub const DESCRIPTION: &str = "through the root's slot in a shared segment: one copy in, one copy out per rank";
pub const RESTRICTIONS: &str = "ranks on one host; blocking calls; up to 4 KiB";
pub const VARYING: bool = false;
pub const IN_PLACE: bool = false;

/// Advance the broadcast of `len` bytes at `buf` from `root`.
///
/// # Safety
/// `buf` is valid for `len` bytes, `len <= SLOT_BYTES`, and `s` is the call's slots.
pub unsafe fn step<S: Slots>(run: &mut Run, s: &mut S, root: usize, buf: *mut u8, len: usize) -> Step {
    let seq = run.seq;
    if run.phase == 0 {
        if s.me() == root {
            // SAFETY: the caller's contract; the slot holds SLOT_BYTES >= len.
            return unsafe { run.offer(s, buf, len) }.unwrap_or(Step::Done);
        }
        s.publish(seq);
        run.phase = 1;
    }
    if s.flag(root) < seq {
        return Step::Wait { rank: root, seq };
    }
    // SAFETY: as above; the root wrote the buffer before publishing `seq`, and will not write
    // it again before this rank publishes `seq + 1`.
    unsafe {
        copy(s.slot(root, seq), buf, len);
        longer(s, root, seq, len).unwrap_or(Step::Done)
    }
}

pub fn schedule(q: &Params) -> Schedule {
    let (p, r, n) = (q.size, q.rank, q.blocks[0]);
    let mut s = Schedule::new(r, p, 0, n);
    if n == 0 {
        return s;
    }
    let all = Range::new(BufferId::Recv, 0, n);
    if r == q.root {
        for i in (1..p).map(|i| (q.root + i) % p) {
            s.send(i, vec![all], &[]);
        }
    } else {
        s.recv(q.root, vec![all], &[]);
    }
    s
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
    fn every_rank_gets_the_roots_message_call_after_call() {
        let calls = 12;
        let shape = |k: usize, p: usize| ((k * 5) % p, [0, 1, 8, 100, 4096][k % 5]);
        for p in 1..=9 {
            for order in Order::ALL {
                let mut bufs: Vec<Vec<Vec<u8>>> = (0..calls)
                    .map(|k| {
                        let (root, len) = shape(k, p);
                        (0..p).map(|r| (0..len).map(|i| if r == root { (k * 31 + i) as u8 } else { 0xee }).collect()).collect()
                    })
                    .collect();
                Board::new(p, order).play(calls, |r, k, run, s| {
                    let (root, len) = shape(k, p);
                    // SAFETY: each buffer is this rank's own, of `len` bytes.
                    unsafe { super::step(run, s, root, bufs[k][r].as_mut_ptr(), len) }
                });
                for (k, call) in bufs.iter().enumerate() {
                    for (r, got) in call.iter().enumerate() {
                        assert!(got.iter().enumerate().all(|(i, &x)| x == (k * 31 + i) as u8), "p={p} {order:?} call {k} rank {r}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_longer_message_than_a_buffer_takes_is_truncated_and_the_next_call_works() {
        use crate::slots::Step;
        for p in 2..=5 {
            let mut b = Board::new(p, Order::Random(3));
            b.mismatched = true;
            let mut truncated = vec![false; p];
            let mut bufs: Vec<Vec<Vec<u8>>> = (0..2).map(|_| (0..p).map(|r| if r == 0 { (0..40).collect() } else { vec![0xee; 40] }).collect()).collect();
            b.play(2, |r, k, run, s| {
                // Call 0: the root sends 40 bytes, the others take 4; call 1: all 40.
                let len = if k == 0 && r != 0 { 4 } else { 40 };
                // SAFETY: each buffer is this rank's own, of 40 bytes.
                let step = unsafe { super::step(run, s, 0, bufs[k][r].as_mut_ptr(), len) };
                if let Step::Truncated { rank, sent } = step {
                    assert_eq!((k, rank, sent), (0, 0, 40));
                    truncated[r] = true;
                }
                step
            });
            assert!(truncated[1..].iter().all(|&t| t) && !truncated[0]);
            for r in 1..p {
                assert!(bufs[0][r][..4] == [0, 1, 2, 3] && bufs[0][r][4..].iter().all(|&x| x == 0xee), "only what fits");
                assert_eq!(bufs[1][r], (0..40).collect::<Vec<u8>>());
            }
        }
    }
}
