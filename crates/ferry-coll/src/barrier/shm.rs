//! Shared-memory barrier for the ranks of one host: every rank publishes the call's number
//! in its flag and waits until every flag shows it. No message, no matching; the protocol is
//! `crate::slots`'.
//!
//! Restrictions: ranks on one host, blocking calls. Steps: 1. Cost: one flag written per
//! rank, p flags read by each. As a schedule (what the simulator runs), every rank sends an
//! empty message to every other in one step: p (p - 1) messages.

use crate::slots::{Run, Slots, Step};
use crate::{Cost, Params, Rounds, Schedule};

pub const ID: &str = "barrier.shm";
pub const DESCRIPTION: &str = "flags in a shared segment: each rank publishes its arrival and waits for every other";
pub const RESTRICTIONS: &str = "ranks on one host; blocking calls";
pub const VARYING: bool = false;
pub const IN_PLACE: bool = false;

/// Advance the barrier.
pub fn step<S: Slots>(run: &mut Run, s: &mut S) -> Step {
    if run.phase == 0 {
        s.publish(run.seq);
        run.phase = 1;
    }
    match run.all_at(s, run.seq) {
        Some(w) => w,
        None => Step::Done,
    }
}

pub fn schedule(q: &Params) -> Schedule {
    let (p, r) = (q.size, q.rank);
    let mut s = Schedule::new(r, p, 0, 0);
    let mut rounds = Rounds::new(&mut s, &[]);
    for d in 1..p {
        rounds.send((r + d) % p, vec![]);
        rounds.recv((r + p - d) % p, vec![]);
    }
    s
}

pub fn cost(q: &Params) -> Cost {
    let p = q.size;
    Cost { rounds: (p > 1) as usize, messages: p * (p - 1), bytes: 0, rank_bytes: 0 }
}

#[cfg(test)]
mod tests {
    use crate::conformance::{check, info};
    use crate::slots::memory::{Board, Order};
    use crate::slots::Step;

    #[test]
    fn conformance() {
        check(info(super::ID));
    }

    #[test]
    fn nobody_leaves_before_everyone_entered() {
        for p in 1..=9 {
            for order in Order::ALL {
                let calls = 20;
                // entered[k]: ranks that entered call k so far.
                let mut entered = vec![0usize; calls];
                Board::new(p, order).play(calls, |_, k, run, s| {
                    if run.phase == 0 {
                        entered[k] += 1;
                    }
                    let step = super::step(run, s);
                    if step == Step::Done {
                        assert_eq!(entered[k], p, "p={p} {order:?}: a rank left call {k} before all entered");
                    }
                    step
                });
            }
        }
    }
}
