//! Dissemination barrier (Hensgen, Finkel, Manber, "Two algorithms for barrier
//! synchronization", 1988; MPICH `barrier_intra_dissemination`-style): in step k every
//! rank sends an empty message to r + 2^k and waits for one from r - 2^k; after
//! ceil(log2 p) steps every rank has heard, transitively, from every other.
//!
//! Restrictions: none. Steps: ceil(log2 p). Bytes: none (p ceil(log2 p) empty messages).

use crate::shape::ceil_log;
use crate::{Cost, Params, Rounds, Schedule};

pub const ID: &str = "barrier.dissemination";
pub const DESCRIPTION: &str = "dissemination, ceil(log2 p) steps of empty messages";
pub const RESTRICTIONS: &str = "none";
pub const VARYING: bool = false;
pub const IN_PLACE: bool = false;

pub fn schedule(q: &Params) -> Schedule {
    let (p, r) = (q.size, q.rank);
    let mut s = Schedule::new(r, p, 0, 0);
    let mut rounds = Rounds::new(&mut s, &[]);
    let mut d = 1;
    while d < p {
        rounds.send((r + d) % p, vec![]);
        rounds.recv((r + p - d) % p, vec![]);
        rounds.next();
        d <<= 1;
    }
    s
}

pub fn cost(q: &Params) -> Cost {
    let steps = ceil_log(q.size, 2);
    Cost {
        rounds: steps,
        messages: q.size * steps,
        bytes: 0,
        rank_bytes: 0,
    }
}

#[cfg(test)]
mod tests {
    use crate::conformance::{check, info};
    use crate::executor::{run, Buffers, RunConfig};
    use crate::Params;

    #[test]
    fn conformance() {
        check(info(super::ID));
    }

    #[test]
    fn nobody_leaves_before_everyone_entered() {
        // Resolved schedules: the last op of every rank must reach the first op of every
        // other rank through dependencies and messages.
        for p in 2..=17 {
            let q = Params::uniform(0, p, 0, 0);
            let all: Vec<_> = (0..p).map(|r| super::schedule(&q.for_rank(r))).collect();
            let out = run(
                all,
                vec![Buffers::default(); p],
                &crate::conformance::add_u32,
                &RunConfig::default(),
            )
            .expect("barrier runs");
            // heard[r] = ranks whose entry rank r has heard of, step by step.
            let mut heard: Vec<Vec<bool>> =
                (0..p).map(|r| (0..p).map(|i| i == r).collect()).collect();
            let steps = out.resolved[0].len() / 2;
            for k in 0..steps {
                let before = heard.clone();
                for (r, s) in out.resolved.iter().enumerate() {
                    if let crate::Op::Recv { peer, .. } = s.nodes()[2 * k + 1].op {
                        for i in 0..p {
                            heard[r][i] |= before[peer][i];
                        }
                    }
                }
            }
            assert!(heard.iter().all(|h| h.iter().all(|&x| x)), "p={p}");
        }
    }
}
