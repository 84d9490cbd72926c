//! Hierarchical allreduce, by host (the pattern of MPICH's "SMP-aware" and Open MPI's `han`
//! allreduce): every rank of a host hands its vector to the host's leader, which folds them
//! in; the leaders combine their hosts' results by recursive doubling; each leader hands the
//! result back to its host's ranks. Only the leaders' messages cross the network.
//!
//! Restrictions: commutative operations (hosts fold their own ranks first); ranks on
//! several hosts with more than one on some, known to the caller (`Params::hosts`); else
//! recursive doubling. Steps: 2 + those of recursive doubling among h leaders. Bytes: n per
//! step; a leader with k followers moves (k + log2 h) n each way.

use super::{recursive_doubling, start};
use crate::hier::Hosts;
use crate::{Cost, Operands, Params, Range, Rounds, Schedule};

pub const ID: &str = "allreduce.hier";
pub const DESCRIPTION: &str = "by host: ranks to their host's leader, recursive doubling among leaders, and back";
pub const RESTRICTIONS: &str = "commutative operations; ranks on several hosts, more than one on some (else recursive doubling)";
pub const VARYING: bool = false;
pub const IN_PLACE: bool = true;

pub fn schedule(q: &Params) -> Schedule {
    let Some(h) = Hosts::of(q, 0) else { return recursive_doubling::schedule(q) };
    let (r, n) = (q.rank, q.blocks[0]);
    let (mut s, acc, copied) = start(q);
    if n == 0 {
        return s;
    }
    let Some(me) = h.leader_index(r) else {
        let mut rounds = Rounds::new(&mut s, &copied);
        rounds.send(h.leader, vec![acc]);
        rounds.next();
        rounds.recv(h.leader, vec![acc]);
        return s;
    };
    let k = h.followers.len();
    let space = Range::new(s.scratch(n * k.max(1)), 0, n * k.max(1));
    let mut rounds = Rounds::new(&mut s, &copied);
    for (i, &f) in h.followers.iter().enumerate() {
        rounds.recv(f, vec![space.sub(i * n, n)]);
    }
    rounds.next();
    for i in 0..k {
        rounds.reduce(space.sub(i * n, n), acc, Operands::SrcDst);
        rounds.next();
    }
    recursive_doubling::among(&mut rounds, &h.leaders, me, acc, space.sub(0, n), None);
    rounds.next();
    for &f in &h.followers {
        rounds.send(f, vec![acc]);
    }
    s
}

pub fn cost(q: &Params) -> Cost {
    let Some(h) = Hosts::of(q, 0) else { return recursive_doubling::cost(q) };
    let (p, n) = (q.size, q.blocks[0]);
    if n == 0 {
        return Cost::ZERO;
    }
    let l = h.leaders.len();
    let rd = recursive_doubling::cost(&Params::uniform(0, l, 0, n));
    let busiest = h.leaders.iter().enumerate().map(|(i, &lead)| Hosts::members(q, lead) - 1 + recursive_doubling::exchanges(l, i)).max().unwrap_or(0);
    Cost {
        rounds: rd.rounds + 2,
        messages: 2 * (p - l) + rd.messages,
        bytes: (rd.rounds + 2) * n,
        rank_bytes: busiest.max(1) * n,
    }
}

#[cfg(test)]
mod tests {
    use crate::conformance::{check, info};

    #[test]
    fn conformance() {
        check(info(super::ID));
    }
}
