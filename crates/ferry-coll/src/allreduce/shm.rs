//! Shared-memory allreduce for the ranks of one host (the flat, small-message case of Open
//! MPI's `xhc` and MPICH's `release_gather`): every rank copies its vector into its slot and
//! publishes the call's number; once every flag shows it, every rank folds all the slots, in
//! rank order, into its own result. No message, no matching; every rank computes the same
//! bits. The protocol is `crate::slots`'.
//!
//! Restrictions: ranks on one host, blocking calls, predefined operations, vectors up to
//! [`SLOT_BYTES`](crate::slots::SLOT_BYTES); keeps operand order. Steps: 1. Cost per rank:
//! one copy of n bytes in, one out, p - 1 reductions of n bytes, reading p slots. As a
//! schedule (what the simulator runs), every rank sends its vector to every other in one step
//! and folds what it received: p (p - 1) messages of n bytes.

use crate::slots::{fold, outcome, Run, Slots, Step};
use crate::{BufferId, Cost, Params, Range, Rounds, Schedule};

pub const ID: &str = "allreduce.shm";
pub const DESCRIPTION: &str = "through slots in a shared segment: each rank folds every rank's vector, in rank order";
pub const RESTRICTIONS: &str = "ranks on one host; blocking calls; predefined operations; up to 4 KiB";
pub const VARYING: bool = false;
pub const IN_PLACE: bool = true;

/// Advance the allreduce of `len` bytes from `input` into `output` (the same address in
/// place); `combine(src, dst, len)` is `dst = src op dst`.
///
/// # Safety
/// `input` and `output` are valid for `len` bytes, `len <= SLOT_BYTES`, and `s` is the
/// call's slots.
pub unsafe fn step<S: Slots>(run: &mut Run, s: &mut S, input: *const u8, output: *mut u8, len: usize, combine: &mut impl FnMut(*const u8, *mut u8, usize)) -> Step {
    let seq = run.seq;
    // SAFETY: the caller's contract; the slot holds SLOT_BYTES >= len.
    if let Some(w) = unsafe { run.exchange(s, input, len) } {
        return w;
    }
    // SAFETY: every slot holds its rank's vector for this call (published), kept until this
    // rank publishes its next call; `output` is the caller's and no slot.
    unsafe {
        fold(s.ranks(), |j| s.slot(j, seq), output, len, combine);
        outcome(s, 0..s.ranks(), seq, len)
    }
}

pub fn schedule(q: &Params) -> Schedule {
    let (p, r, n) = (q.size, q.rank, q.blocks[0]);
    let mut s = Schedule::new(r, p, if q.in_place { 0 } else { n }, n);
    if n == 0 {
        return s;
    }
    let mine = if q.in_place { Range::new(BufferId::Recv, 0, n) } else { Range::new(BufferId::Send, 0, n) };
    // Every rank's vector in scratch (this rank's own copied there first: in place, the result
    // overwrites it).
    let x: Vec<Range> = (0..p).map(|_| Range::new(s.scratch(n), 0, n)).collect();
    let own = s.copy(mine, x[r], &[]);
    let mut rounds = Rounds::new(&mut s, &[own]);
    for d in 1..p {
        rounds.send((r + d) % p, vec![x[r]]);
        rounds.recv((r + p - d) % p, vec![x[(r + p - d) % p]]);
    }
    rounds.next();
    crate::reduce::shm::fold_in_rank_order(&mut rounds, &x, n);
    s
}

pub fn cost(q: &Params) -> Cost {
    crate::slots::one_round(q, q.size * (q.size - 1))
}

#[cfg(test)]
pub(crate) mod tests {
    use crate::conformance::{check, info};
    use crate::slots::memory::{Board, Order};

    #[test]
    fn conformance() {
        check(info(super::ID));
    }

    /// `dst = src op dst` for a test operation that does not commute: on bytes,
    /// `a op b = 3a + b` (mod 256), so any other order of operands gives other bytes.
    pub(crate) fn skew(src: *const u8, dst: *mut u8, len: usize) {
        for i in 0..len {
            // SAFETY: the algorithms pass ranges valid for `len` bytes.
            unsafe { *dst.add(i) = (*src.add(i)).wrapping_mul(3).wrapping_add(*dst.add(i)) };
        }
    }

    /// The rank-order fold of `x_j(i)` with [`skew`].
    pub(crate) fn expected(p: usize, len: usize, x: impl Fn(usize, usize) -> u8) -> Vec<u8> {
        (0..len).map(|i| (0..p - 1).rev().fold(x(p - 1, i), |acc, j| x(j, i).wrapping_mul(3).wrapping_add(acc))).collect()
    }

    #[test]
    fn every_rank_gets_the_rank_order_fold_in_place_or_not() {
        let calls = 10;
        let len = |k: usize| [1, 8, 33, 4096, 0][k % 5];
        let x = |k: usize, r: usize, i: usize| (k * 7 + r * 13 + i) as u8;
        for p in 1..=9 {
            for order in Order::ALL {
                for in_place in [false, true] {
                    let mut ins: Vec<Vec<Vec<u8>>> = (0..calls).map(|k| (0..p).map(|r| (0..len(k)).map(|i| x(k, r, i)).collect()).collect()).collect();
                    let mut outs: Vec<Vec<Vec<u8>>> = (0..calls).map(|k| vec![vec![0xee; len(k)]; p]).collect();
                    Board::new(p, order).play(calls, |r, k, run, s| {
                        let input = ins[k][r].as_mut_ptr();
                        let output = if in_place { input } else { outs[k][r].as_mut_ptr() };
                        // SAFETY: each buffer is this rank's own, of `len(k)` bytes.
                        unsafe { super::step(run, s, input, output, len(k), &mut skew) }
                    });
                    for k in 0..calls {
                        let want = expected(p, len(k), |j, i| x(k, j, i));
                        for r in 0..p {
                            let got = if in_place { &ins[k][r] } else { &outs[k][r] };
                            assert_eq!(got, &want, "p={p} {order:?} in_place={in_place} call {k} rank {r}");
                        }
                    }
                }
            }
        }
    }
}
