//! Status-based sequential gather (SEEDS.md S1, the mirror of the status-based scatter):
//! the root receives one block at a time from whichever rank is ready first. The order is
//! only known at run time: the root posts `recv_any` over the ranks it has not heard from,
//! and a continuation posts the next one over the rest (each block lands at its sender's
//! displacement).
//!
//! Restrictions: none; serves gatherv. Steps: p - 1. Bytes: as `gather.linear`.

use super::{empty, new_schedule, own, target};
use crate::{Arrival, Continuation, Cost, OpId, Params, Range, Schedule};
use std::sync::Arc;

pub const ID: &str = "gather.status_linear";
pub const DESCRIPTION: &str = "root receives each block directly, in arrival order (S1)";
pub const RESTRICTIONS: &str = "none";
pub const VARYING: bool = true;
pub const IN_PLACE: bool = true;

/// Posts a receive from any of `waiting` (each block to its place) and, through a
/// continuation, the next one over the ranks still missing.
fn receive_next(s: &mut Schedule, waiting: Vec<(usize, Range)>, after: &[OpId]) {
    if waiting.is_empty() {
        return;
    }
    let op = s.recv_any(waiting.iter().map(|&(r, t)| (r, vec![t])).collect(), after);
    let next = move |a: &Arrival<'_>, s: &mut Schedule| {
        let rest: Vec<_> = waiting
            .iter()
            .copied()
            .filter(|&(r, _)| Some(r) != a.source)
            .collect();
        receive_next(s, rest, &[op]);
    };
    s.then(
        op,
        Continuation {
            reads: vec![],
            next: Arc::new(next),
        },
    );
}

pub fn schedule(q: &Params) -> Schedule {
    let mut s = new_schedule(q);
    if empty(q) {
        return s;
    }
    if q.rank != q.root {
        s.send(q.root, vec![own(q)], &[]);
        return s;
    }
    if !q.in_place {
        s.copy(own(q), target(q, q.root), &[]);
    }
    let waiting = (0..q.size)
        .filter(|&i| i != q.root)
        .map(|i| (i, target(q, i)))
        .collect();
    receive_next(&mut s, waiting, &[]);
    s
}

pub fn cost(q: &Params) -> Cost {
    crate::scatter::linear_cost(q)
}

#[cfg(test)]
mod tests {
    use crate::conformance::{check, info};

    #[test]
    fn conformance() {
        check(info(super::ID));
    }
}
