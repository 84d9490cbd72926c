//! Fault-tolerant agreement (MPIX_Comm_agree, MPIX_Comm_shrink) as a pure state machine:
//! messages and failures go in, messages to send and the decision come out. No sockets, no
//! clocks; the MPI face drives it over the engine (docs/fault-tolerance.md).
//!
//! The participants are `0..n` (communicator ranks). Each contributes a [`Value`]; all that
//! survive decide the same [`Value`]: flags ANDed, the context floor the largest, the failed
//! set the union of what contributors knew, the acknowledged set the intersection.
//!
//! Design: a coordinator, the lowest participant not known to have failed, runs three
//! phases. **Collect**: it asks every live participant for its contribution (with any
//! decision that participant already holds). **Decide**: it adopts the held decision of the
//! highest epoch, if any (else computes a fresh one), and sends it to every live participant,
//! each of which holds it and acknowledges. **Commit**: once every live participant
//! acknowledged, it sends the decision as final; a participant returns only on a commit,
//! which it first passes on to every other live participant (so that a commit reaches all
//! survivors even when its coordinator died before its own commits all left).
//! A coordinator's epoch is its rank; a participant ignores messages of an epoch lower than
//! the highest it has answered. When a coordinator dies, the next lowest takes over: if it
//! holds a decision it commits that one at once, else it collects again.
//!
//! Why all agree: a commit is sent only after every live participant holds the decision, and
//! whoever gets it passes it on before returning, so every survivor gets it; a coordinator that
//! collects adopts the highest-epoch decision any live participant holds, so a decision
//! someone may have committed is never replaced. Failure detection is assumed perfect (the
//! engine reports a peer failed only when its process ended or its connection broke).

/// The context of agreement messages (their tag is the communicator's context id): apart
/// from every communicator's, so that no revocation touches them.
pub const AGREE_CONTEXT: u32 = u32::MAX - 17;

/// A set of participants, as bits.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Ranks(Vec<u64>);

impl Ranks {
    pub fn new(n: usize) -> Ranks {
        Ranks(vec![0; n.div_ceil(64)])
    }
    pub fn of(n: usize, members: impl IntoIterator<Item = usize>) -> Ranks {
        let mut r = Ranks::new(n);
        members.into_iter().for_each(|m| r.insert(m));
        r
    }
    pub fn insert(&mut self, i: usize) {
        if let Some(w) = self.0.get_mut(i / 64) {
            *w |= 1 << (i % 64);
        }
    }
    pub fn contains(&self, i: usize) -> bool {
        self.0.get(i / 64).is_some_and(|w| w >> (i % 64) & 1 == 1)
    }
    pub fn members(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.0.len() * 64).filter(|&i| self.contains(i))
    }
    pub fn is_subset(&self, other: &Ranks) -> bool {
        self.0.iter().zip(&other.0).all(|(a, b)| a & !b == 0)
    }
    fn union(&mut self, o: &Ranks) {
        self.0.iter_mut().zip(&o.0).for_each(|(a, b)| *a |= b);
    }
    fn intersect(&mut self, o: &Ranks) {
        self.0.iter_mut().zip(&o.0).for_each(|(a, b)| *a &= b);
    }
}

/// What each participant contributes, and what they decide.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Value {
    /// ANDed (MPIX_Comm_agree's flag).
    pub flags: u32,
    /// The largest is kept (the first context id free at every survivor, for a shrink).
    pub floor: u32,
    /// Participants known to have failed: the union.
    pub failed: Ranks,
    /// Failures acknowledged (MPIX_Comm_failure_ack): the intersection.
    pub acked: Ranks,
}

impl Value {
    fn combine(&mut self, o: &Value) {
        self.flags &= o.flags;
        self.floor = self.floor.max(o.floor);
        self.failed.union(&o.failed);
        self.acked.intersect(&o.acked);
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Msg {
    Collect { epoch: u32 },
    Contribute { epoch: u32, value: Value, held: Option<(u32, Value)> },
    Decide { epoch: u32, value: Value },
    Ack { epoch: u32 },
    Commit { value: Value },
}

enum Role {
    Participant,
    Collecting { got: Vec<Option<(Value, Option<(u32, Value)>)>> },
    Deciding { acks: Ranks },
}

pub struct Agreement {
    me: usize,
    n: usize,
    failed: Ranks,
    mine: Value,
    /// The highest epoch answered: older coordinators' messages are stale.
    leader: u32,
    held: Option<(u32, Value)>,
    role: Role,
    out: Vec<(usize, Msg)>,
    result: Option<Value>,
}

impl Agreement {
    /// Participant `me` of `n`, contributing `mine`, knowing `failed` (also put into `mine`).
    pub fn new(me: usize, n: usize, mut mine: Value, failed: &Ranks) -> Agreement {
        mine.failed.union(failed);
        let mut a = Agreement { me, n, failed: mine.failed.clone(), mine, leader: 0, held: None, role: Role::Participant, out: Vec::new(), result: None };
        a.maybe_lead();
        a
    }

    /// The decision, once committed.
    pub fn result(&self) -> Option<&Value> {
        self.result.as_ref()
    }

    /// Messages to send: (participant, message).
    pub fn take_outbox(&mut self) -> Vec<(usize, Msg)> {
        std::mem::take(&mut self.out)
    }

    /// Participant `r` failed.
    pub fn on_failed(&mut self, r: usize) {
        if r >= self.n || r == self.me || self.failed.contains(r) {
            return;
        }
        self.failed.insert(r);
        if self.result.is_some() {
            return;
        }
        match self.role {
            Role::Participant => self.maybe_lead(),
            _ => self.advance(),
        }
    }

    pub fn on_message(&mut self, from: usize, msg: Msg) {
        if self.result.is_some() || from >= self.n {
            return;
        }
        if let Msg::Commit { value } = msg {
            // Final wherever it comes from; passed on, so that it reaches every survivor even
            // when its coordinator died before its own commits all left.
            for r in self.live_others().into_iter().filter(|&r| r != from) {
                self.out.push((r, Msg::Commit { value: value.clone() }));
            }
            self.finish(value);
            return;
        }
        if self.failed.contains(from) {
            return;
        }
        match msg {
            Msg::Collect { epoch } if self.fresh(epoch, from) => {
                self.leader = epoch;
                self.out.push((from, Msg::Contribute { epoch, value: self.mine.clone(), held: self.held.clone() }));
            }
            Msg::Decide { epoch, value } if self.fresh(epoch, from) => {
                self.leader = epoch;
                self.held = Some((epoch, value));
                self.out.push((from, Msg::Ack { epoch }));
            }
            Msg::Contribute { epoch, value, held } if epoch as usize == self.me => {
                if let Role::Collecting { got } = &mut self.role {
                    got[from] = Some((value, held));
                    self.advance();
                }
            }
            Msg::Ack { epoch } if epoch as usize == self.me => {
                if let Role::Deciding { acks } = &mut self.role {
                    acks.insert(from);
                    self.advance();
                }
            }
            _ => {}
        }
    }

    /// A message of coordinator `from`'s epoch is current unless an older coordinator's.
    fn fresh(&self, epoch: u32, from: usize) -> bool {
        epoch as usize == from && epoch >= self.leader && !matches!(self.role, Role::Collecting { .. } | Role::Deciding { .. })
    }

    fn live_others(&self) -> Vec<usize> {
        (0..self.n).filter(|&i| i != self.me && !self.failed.contains(i)).collect()
    }

    /// Lead when every participant below this one failed.
    fn maybe_lead(&mut self) {
        if self.result.is_some() || (0..self.me).any(|i| !self.failed.contains(i)) {
            return;
        }
        if let Some((_, value)) = self.held.clone() {
            // Held already: everyone may have it committed somewhere; commit it.
            for r in self.live_others() {
                self.out.push((r, Msg::Commit { value: value.clone() }));
            }
            self.finish(value);
            return;
        }
        let epoch = self.me as u32;
        self.leader = epoch;
        let mut got = vec![None; self.n];
        got[self.me] = Some((self.mine.clone(), None));
        self.role = Role::Collecting { got };
        for r in self.live_others() {
            self.out.push((r, Msg::Collect { epoch }));
        }
        self.advance();
    }

    /// Move the coordinator on as far as what it has allows.
    fn advance(&mut self) {
        let live = self.live_others();
        match &self.role {
            Role::Collecting { got } => {
                if live.iter().any(|&r| got[r].is_none()) {
                    return;
                }
                let adopted = live.iter().chain(std::iter::once(&self.me)).filter_map(|&r| got[r].as_ref().and_then(|g| g.1.clone())).max_by_key(|(e, _)| *e);
                let value = match adopted {
                    Some((_, v)) => v,
                    None => {
                        let mut v = self.mine.clone();
                        for &r in &live {
                            v.combine(&got[r].as_ref().expect("all here").0);
                        }
                        v.failed.union(&self.failed);
                        v
                    }
                };
                let epoch = self.me as u32;
                self.held = Some((epoch, value.clone()));
                for &r in &live {
                    self.out.push((r, Msg::Decide { epoch, value: value.clone() }));
                }
                self.role = Role::Deciding { acks: Ranks::new(self.n) };
                self.advance();
            }
            Role::Deciding { acks } => {
                if live.iter().any(|&r| !acks.contains(r)) {
                    return;
                }
                let value = self.held.clone().expect("a deciding coordinator holds its decision").1;
                for &r in &live {
                    self.out.push((r, Msg::Commit { value: value.clone() }));
                }
                self.finish(value);
            }
            Role::Participant => {}
        }
    }

    fn finish(&mut self, value: Value) {
        self.result = Some(value);
        self.role = Role::Participant;
    }
}

mod codec;
pub use codec::{decode, encode};

#[cfg(test)]
mod tests;
