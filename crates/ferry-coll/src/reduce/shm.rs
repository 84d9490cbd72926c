//! Shared-memory reduce for the ranks of one host: every rank but the root copies its vector
//! into its slot and publishes the call's number (and is done); the root publishes on entry,
//! waits until every flag shows the call, and folds the vectors, in rank order, into its
//! result (its own straight from its input). No message, no matching; the protocol is
//! `crate::slots`'.
//!
//! Restrictions: ranks on one host, blocking calls, predefined operations, vectors up to
//! [`SLOT_BYTES`](crate::slots::SLOT_BYTES); keeps operand order. Steps: 1. Cost: one copy
//! of n bytes in per rank; at the root, p - 1 reductions of n bytes reading p - 1 slots. As a
//! schedule (what the simulator runs), every rank sends its vector to the root, which folds
//! them: p - 1 messages of n bytes in one step.

use crate::slots::{fold, outcome, Run, Slots, Step};
use crate::{BufferId, Cost, Operands, Params, Range, Rounds, Schedule};

pub const ID: &str = "reduce.shm";
pub const DESCRIPTION: &str = "through slots in a shared segment: the root folds every rank's vector, in rank order";
pub const RESTRICTIONS: &str = "ranks on one host; blocking calls; predefined operations; up to 4 KiB";
pub const VARYING: bool = false;
pub const IN_PLACE: bool = true;

/// Advance the reduce of `len` bytes from `input` to `root`'s `output` (`output` is only the
/// root's; in place, the root's input is its output).
///
/// # Safety
/// `input` (and at the root `output`) are valid for `len` bytes, `len <= SLOT_BYTES`, and
/// `s` is the call's slots.
pub unsafe fn step<S: Slots>(run: &mut Run, s: &mut S, root: usize, input: *const u8, output: *mut u8, len: usize, combine: &mut impl FnMut(*const u8, *mut u8, usize)) -> Step {
    let (seq, me) = (run.seq, s.me());
    // In place, the fold would overwrite the root's input before reading it: the root's
    // vector goes through its slot too.
    let through_slot = me != root || std::ptr::eq(input, output);
    if run.phase == 0 {
        if through_slot {
            // SAFETY: the caller's contract; the slot holds SLOT_BYTES >= len.
            if let Some(w) = unsafe { run.offer(s, input, len) } {
                return w;
            }
        } else {
            s.publish(seq);
        }
        if me != root {
            return Step::Done;
        }
        run.phase = 1;
    }
    if let Some(w) = run.all_at(s, seq) {
        return w;
    }
    let x = |j: usize| if j == me && !through_slot { input } else { s.slot(j, seq) as *const u8 };
    // SAFETY: every other slot holds its rank's vector for this call (published), kept until
    // the root publishes its next call; `output` overlaps no operand read after it is written.
    unsafe {
        fold(s.ranks(), x, output, len, combine);
        outcome(s, (0..s.ranks()).filter(|&j| j != me || through_slot), seq, len)
    }
}

pub fn schedule(q: &Params) -> Schedule {
    let (p, r, n, root) = (q.size, q.rank, q.blocks[0], q.root);
    let in_place = q.in_place && r == root;
    let mut s = Schedule::new(r, p, if in_place { 0 } else { n }, if r == root { n } else { 0 });
    if n == 0 {
        return s;
    }
    let mine = if in_place { Range::new(BufferId::Recv, 0, n) } else { Range::new(BufferId::Send, 0, n) };
    if r != root {
        s.send(root, vec![mine], &[]);
        return s;
    }
    let x: Vec<Range> = (0..p).map(|j| if j == r && !in_place { mine } else { Range::new(s.scratch(n), 0, n) }).collect();
    let own = if in_place { vec![s.copy(mine, x[r], &[])] } else { vec![] };
    let mut rounds = Rounds::new(&mut s, &own);
    for j in (0..p).filter(|&j| j != r) {
        rounds.recv(j, vec![x[j]]);
    }
    rounds.next();
    fold_in_rank_order(&mut rounds, &x, n);
    s
}

/// The schedule's model of the fold in rank order: every rank's vector, `x[j]` for rank `j`,
/// into the receive buffer, from the last rank's down, so the result has the same bits on
/// every rank whatever order the vectors came in.
pub(crate) fn fold_in_rank_order(rounds: &mut Rounds, x: &[Range], n: usize) {
    let p = x.len();
    let out = Range::new(BufferId::Recv, 0, n);
    rounds.copy(x[p - 1], out);
    rounds.next();
    for j in (0..p - 1).rev() {
        rounds.reduce(x[j], out, Operands::SrcDst);
        rounds.next();
    }
}

pub fn cost(q: &Params) -> Cost {
    crate::slots::one_round(q, q.size - 1)
}

#[cfg(test)]
mod tests {
    use crate::allreduce::shm::tests::{expected, skew};
    use crate::conformance::{check, info};
    use crate::slots::memory::{Board, Order};

    #[test]
    fn conformance() {
        check(info(super::ID));
    }

    #[test]
    fn the_root_gets_the_rank_order_fold_in_place_or_not() {
        let calls = 10;
        let len = |k: usize| [8, 1, 4096, 0, 12][k % 5];
        let x = |k: usize, r: usize, i: usize| (k * 5 + r * 11 + i * 3) as u8;
        for p in 1..=9 {
            let root = |k: usize| (k * 3) % p;
            for order in Order::ALL {
                for in_place in [false, true] {
                    let mut ins: Vec<Vec<Vec<u8>>> = (0..calls).map(|k| (0..p).map(|r| (0..len(k)).map(|i| x(k, r, i)).collect()).collect()).collect();
                    let mut outs: Vec<Vec<Vec<u8>>> = (0..calls).map(|k| vec![vec![0xee; len(k)]; p]).collect();
                    Board::new(p, order).play(calls, |r, k, run, s| {
                        let input = ins[k][r].as_mut_ptr();
                        let output = if in_place && r == root(k) { input } else { outs[k][r].as_mut_ptr() };
                        // SAFETY: each buffer is this rank's own, of `len(k)` bytes.
                        unsafe { super::step(run, s, root(k), input, output, len(k), &mut skew) }
                    });
                    for k in 0..calls {
                        let want = expected(p, len(k), |j, i| x(k, j, i));
                        let got = if in_place { &ins[k][root(k)] } else { &outs[k][root(k)] };
                        assert_eq!(got, &want, "p={p} {order:?} in_place={in_place} call {k}");
                        for r in (0..p).filter(|&r| r != root(k)) {
                            assert!(outs[k][r].iter().all(|&b| b == 0xee), "a rank other than the root got a result");
                            assert!(ins[k][r].iter().enumerate().all(|(i, &b)| b == x(k, r, i)), "an input changed");
                        }
                    }
                }
            }
        }
    }
}
