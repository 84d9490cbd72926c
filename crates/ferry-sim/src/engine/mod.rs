//! The discrete-event core: every rank's schedule runs against simulated time under LogGP,
//! with one send port and one receive port per node. Events are taken in (time, order of
//! creation), so a run is a pure function of its inputs.
//!
//! The cost of one message of k bytes from s to d (times in microseconds):
//! - it moves once its send is issued and the matching receive is posted (a rendezvous;
//!   the handshake itself is free, as on an on-chip engine or with piggybacked control);
//! - it then starts at S = max(now, s's send port free, d's receive port free - o - L): a
//!   transfer to a node whose receive port is busy waits, and so does its sender;
//! - the sender's port is taken for max(g, o + kG) from S; the send completes at S + o + kG;
//! - its first byte reaches d at S + o + L, its last at S + o + kG + L, and the receive
//!   completes o later; d's receive port is taken until then.
//!
//! So a linear scatter of N-1 messages takes (N-2) max(g, o + kG) + o + kG + L + o, which
//! is (N-1)(o + kG) + L + o whenever o + kG >= g. A receive from any of several peers
//! takes the candidate whose transfer can start first (free senders first). Copies and
//! reductions take no time.
//!
//! Ports follow one of two disciplines ([`Ports`]): `InOrder`, a port serves transfers in
//! the order they were matched (a hardware engine's queue: a transfer that waits for a busy
//! peer holds up the ones behind it), or `EarliestFit`, a transfer takes the earliest time
//! at which both of its ports are free for as long as it needs, even in a gap before
//! transfers matched earlier (a network interface with several transfers in flight).
//!
//! Without data, only sizes move (static schedules, any scale). With data (required for
//! dynamic schedules, whose continuations read what arrived), every byte moves as in the
//! in-memory executor, with the same operand conventions.

mod matching;
mod port;

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap, VecDeque};

use crate::program::{compile, IntMap, Kind, LaneMap, OpState, RankData, NONE};

use ferry_coll::executor::{Buffers, Reduction};
use ferry_coll::{Arrival, Op, Range, Schedule};
use ferry_model::LogGp;
use matching::{PendingSend, Posted};
use port::Port;
pub use port::Ports;
use thiserror::Error;

/// Simulated time, microseconds.
pub type Time = f64;

/// An interfering transfer that belongs to no schedule.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transfer {
    pub src: usize,
    pub dst: usize,
    pub bytes: u64,
    pub start: Time,
}

/// One message as it moved, for traces and tests.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct MessageRecord {
    pub src: usize,
    pub dst: usize,
    pub bytes: u64,
    /// A background transfer (not part of the collective).
    pub background: bool,
    /// When the send was issued (background: its start time).
    pub issued: Time,
    /// When both sides were ready.
    pub matched: Time,
    /// When the transfer got both ports.
    pub start: Time,
    /// When its last byte left the sender (the send completes).
    pub injected: Time,
    /// When its last byte reached the receiver.
    pub arrived: Time,
    /// When the receive completed.
    pub done: Time,
}

/// What a run produced.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// When the last rank finished its schedule (time 0: the collective starts).
    pub time: Time,
    /// When each rank finished.
    pub finish: Vec<Time>,
    /// Messages of the schedules, and their bytes.
    pub messages: u64,
    pub bytes: u64,
    /// Background transfers that started.
    pub background: u64,
    /// Events processed.
    pub events: u64,
    /// Every message, in the order it was matched (when tracing).
    pub trace: Vec<MessageRecord>,
    /// Every rank's buffers at the end (with data).
    pub buffers: Option<Vec<Buffers>>,
}

#[derive(Debug, Error, PartialEq)]
pub enum SimError {
    #[error("{0} schedules for {1} nodes")]
    Size(usize, usize),
    #[error("schedule {position} is rank {rank}'s of a communicator of {size}, in a simulation of {nodes} nodes")]
    Schedule {
        position: usize,
        rank: usize,
        size: usize,
        nodes: usize,
    },
    #[error("{0} buffer sets for {1} schedules")]
    Buffers(usize, usize),
    #[error("rank {rank} op {op}: dynamic schedules need data (their continuations read what arrived)")]
    NeedsData { rank: usize, op: usize },
    #[error("rank {rank} op {op}: peer {peer} is not another node of the simulation")]
    BadPeer { rank: usize, op: usize, peer: usize },
    #[error("rank {rank} op {op}: {range:?} lies outside its buffer of {len} bytes")]
    OutOfBounds {
        rank: usize,
        op: usize,
        range: Range,
        len: usize,
    },
    #[error("rank {rank} op {op}: message from {from} has {got} bytes, the receive expects {want}")]
    Truncated {
        rank: usize,
        op: usize,
        from: usize,
        got: u64,
        want: u64,
    },
    #[error("background transfer {0:?}: nodes out of range, a node to itself, or a bad start time")]
    BadTransfer(Transfer),
    #[error("deadlock at {time} us: nothing can move; first stuck ops per rank: {stuck:?}")]
    Deadlock {
        time: Time,
        stuck: Vec<(usize, usize)>,
    },
}

#[derive(Default)]
pub(crate) struct RankSim {
    pub(crate) ops: Vec<OpState>,
    pub(crate) users: Vec<u32>,
    /// Users of ops, recorded when continuations appended them.
    pub(crate) late_users: IntMap<Vec<u32>>,
    /// Last op of each lane (kind, peer), kept only for dynamic schedules.
    pub(crate) lanes: LaneMap,
    finish: Time,
    pub(crate) remaining: usize,
    data: Option<RankData>,
    /// Posted, unmatched receives from one source, in post order.
    posted: IntMap<VecDeque<Posted>>,
    posted_any: Vec<Posted>,
    /// Issued, unmatched sends to this rank, per source, in issue order.
    pending: IntMap<VecDeque<PendingSend>>,
    resolve_planned: bool,
}

#[derive(Clone, Copy)]
enum Ev {
    Background(u32),
    /// A rank starts: first its ready receives (so that every receive ready at an instant
    /// is posted before the sends of that instant are matched), then the rest.
    StartReceives(u32),
    Start(u32),
    /// Match a rank's posted any-source receives against what is pending, after every
    /// send of the instant was issued (so the choice among them is by readiness).
    Resolve(u32),
    Local { rank: u32, op: u32 },
    Sent { rank: u32, op: u32 },
    Received { rank: u32, op: u32, from: u32, msg: u32 },
}

struct Entry {
    at: u64,
    /// Any-source matching waits for every other event of its instant.
    late: bool,
    order: u64,
    ev: Ev,
}
impl Entry {
    fn key(&self) -> (u64, bool, u64) {
        (self.at, self.late, self.order)
    }
}
impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.key() == o.key()
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    /// Reversed: the heap pops the earliest event, matching of any-source receives after
    /// the other events of its instant, then the earliest created.
    fn cmp(&self, o: &Self) -> Ordering {
        o.key().cmp(&self.key())
    }
}

/// A simulation of `nodes` nodes. Add background traffic, optionally look at which nodes are
/// busy at some time (what a status board would show), load the schedules, run.
pub struct Sim<'r> {
    p: LogGp,
    nodes: usize,
    ranks: Vec<RankSim>,
    ports: Ports,
    send_port: Vec<Port>,
    recv_port: Vec<Port>,
    heap: BinaryHeap<Entry>,
    order: u64,
    now: Time,
    background: Vec<Transfer>,
    payloads: Vec<Option<Vec<u8>>>,
    reduce: Option<&'r Reduction<'r>>,
    tracing: bool,
    out: Outcome,
}

fn at(t: Time) -> u64 {
    debug_assert!(t >= 0.0 && t.is_finite());
    (t + 0.0).to_bits() // non-negative floats order as their bits (+ 0.0 turns -0 into 0)
}

impl<'r> Sim<'r> {
    pub fn new(nodes: usize, params: LogGp) -> Sim<'r> {
        Sim {
            p: params,
            nodes,
            ranks: Vec::new(),
            ports: Ports::InOrder,
            send_port: vec![Port::default(); nodes],
            recv_port: vec![Port::default(); nodes],
            heap: BinaryHeap::new(),
            order: 0,
            now: 0.0,
            background: Vec::new(),
            payloads: Vec::new(),
            reduce: None,
            tracing: false,
            out: Outcome::default(),
        }
    }

    /// Sets the port discipline (default: `InOrder`).
    pub fn ports(mut self, ports: Ports) -> Self {
        self.ports = ports;
        self
    }

    /// Records every message (see [`Outcome::trace`]).
    pub fn trace(mut self, yes: bool) -> Self {
        self.tracing = yes;
        self
    }

    fn push(&mut self, t: Time, ev: Ev) {
        self.order += 1;
        self.heap.push(Entry {
            at: at(t),
            late: matches!(ev, Ev::Resolve(_)),
            order: self.order,
            ev,
        });
    }

    /// Adds interfering transfers; each starts at its time like a matched message.
    pub fn add_background(&mut self, transfers: &[Transfer]) -> Result<(), SimError> {
        for t in transfers {
            if t.src >= self.nodes
                || t.dst >= self.nodes
                || t.src == t.dst
                || !(t.start.is_finite() && t.start >= 0.0)
            {
                return Err(SimError::BadTransfer(*t));
            }
            self.background.push(*t);
            let i = (self.background.len() - 1) as u32;
            self.push(t.start, Ev::Background(i));
        }
        Ok(())
    }

    /// Which nodes are in a transfer at time `t` (a port taken beyond `t`), after every
    /// background transfer that starts by then. Call before [`Sim::load`].
    pub fn busy_at(&mut self, t: Time) -> Vec<bool> {
        while let Some(e) = self.heap.peek() {
            if e.at > at(t) {
                break;
            }
            let e = self.heap.pop().expect("peeked");
            self.now = f64::from_bits(e.at);
            if let Ev::Background(i) = e.ev {
                self.start_background(i as usize);
            }
        }
        (0..self.nodes)
            .map(|n| self.send_port[n].free > t || self.recv_port[n].free > t)
            .collect()
    }

    /// Loads one schedule per node, in rank order (an iterator, so that schedules without
    /// data can be built, compiled and dropped one at a time); rank r starts at `starts[r]`.
    /// With `data` (every rank's buffers and the reduction), bytes move; dynamic schedules
    /// require it.
    pub fn load(
        &mut self,
        schedules: impl IntoIterator<Item = Schedule>,
        starts: &[Time],
        data: Option<(Vec<Buffers>, &'r Reduction<'r>)>,
    ) -> Result<(), SimError> {
        if starts.len() != self.nodes {
            return Err(SimError::Size(starts.len(), self.nodes));
        }
        let (mut buffers, reduce) = match data {
            Some((b, f)) => {
                if b.len() != self.nodes {
                    return Err(SimError::Buffers(b.len(), self.nodes));
                }
                (Some(b.into_iter()), Some(f))
            }
            None => (None, None),
        };
        self.reduce = reduce;
        for (r, sched) in schedules.into_iter().enumerate() {
            if r >= self.nodes || sched.rank() != r || sched.size() != self.nodes {
                return Err(SimError::Schedule {
                    position: r,
                    rank: sched.rank(),
                    size: sched.size(),
                    nodes: self.nodes,
                });
            }
            let mut rank = RankSim {
                finish: starts[r],
                ..RankSim::default()
            };
            compile(&mut rank, &sched, 0, self.nodes, r)?;
            let dynamic = sched.is_dynamic();
            if let Some(b) = buffers.as_mut().and_then(|it| it.next()) {
                let scratch = sched
                    .scratch_buffers()
                    .iter()
                    .map(|s| s.init.clone().unwrap_or_else(|| vec![0; s.len]))
                    .collect();
                rank.data = Some(RankData {
                    sched,
                    send: b.send,
                    recv: b.recv,
                    scratch,
                });
            } else if dynamic {
                let op = sched.nodes().iter().position(|n| n.then.is_some() || matches!(n.op, Op::RecvAny { .. }));
                return Err(SimError::NeedsData { rank: r, op: op.unwrap_or(0) });
            } else {
                rank.lanes = HashMap::default(); // static: no op will join a lane later
            }
            self.ranks.push(rank);
        }
        if self.ranks.len() != self.nodes {
            return Err(SimError::Size(self.ranks.len(), self.nodes));
        }
        for (r, &t) in starts.iter().enumerate() {
            self.push(t, Ev::StartReceives(r as u32));
        }
        for (r, &t) in starts.iter().enumerate() {
            self.push(t, Ev::Start(r as u32));
        }
        Ok(())
    }

    /// Runs until every event is processed; fails when schedules are left unfinished.
    pub fn run(mut self) -> Result<Outcome, SimError> {
        while let Some(e) = self.heap.pop() {
            self.now = f64::from_bits(e.at);
            self.out.events += 1;
            match e.ev {
                Ev::Background(i) => self.start_background(i as usize),
                Ev::StartReceives(r) | Ev::Start(r) => {
                    let all = matches!(e.ev, Ev::Start(_));
                    let r = r as usize;
                    for op in 0..self.ranks[r].ops.len() {
                        let o = &self.ranks[r].ops[op];
                        if o.waiting == 0 && (all || matches!(o.kind, Kind::Recv | Kind::RecvAny)) {
                            self.try_issue(r, op as u32)?;
                        }
                    }
                }
                Ev::Resolve(r) => self.resolve(r as usize)?,
                Ev::Local { rank, op } | Ev::Sent { rank, op } => {
                    self.complete(rank as usize, op, None)?
                }
                Ev::Received {
                    rank,
                    op,
                    from,
                    msg,
                } => {
                    let (r, from) = (rank as usize, from as usize);
                    if let Some(bytes) = self.payloads.get_mut(msg as usize).and_then(Option::take) {
                        let ranges = self.recv_ranges(r, op, from);
                        let d = self.ranks[r].data.as_mut().expect("payloads only with data");
                        d.write(r, op as usize, &ranges, &bytes)?;
                    }
                    self.complete(r, op, Some(from))?;
                }
            }
        }
        let stuck: Vec<(usize, usize)> = self
            .ranks
            .iter()
            .enumerate()
            .filter(|(_, k)| k.remaining > 0)
            .filter_map(|(r, k)| k.ops.iter().position(|o| !o.done).map(|op| (r, op)))
            .collect();
        if !stuck.is_empty() {
            return Err(SimError::Deadlock {
                time: self.now,
                stuck,
            });
        }
        let mut out = self.out;
        out.finish = self.ranks.iter().map(|k| k.finish).collect();
        out.time = out.finish.iter().copied().fold(0.0, f64::max);
        if self.ranks.iter().any(|k| k.data.is_some()) {
            out.buffers = Some(
                self.ranks
                    .into_iter()
                    .map(|k| {
                        let d = k.data.expect("data on every rank or none");
                        Buffers {
                            send: d.send,
                            recv: d.recv,
                        }
                    })
                    .collect(),
            );
        }
        Ok(out)
    }

    fn start_background(&mut self, i: usize) {
        let t = self.background[i];
        let issued = self.now;
        self.out.background += 1;
        self.transfer(t.src, t.dst, t.bytes, issued, true);
    }

    /// Issues `op` if its lane allows, then any ready ops queued behind it in the lane.
    fn try_issue(&mut self, r: usize, mut op: u32) -> Result<(), SimError> {
        if self.ranks[r].ops[op as usize].issued {
            return Ok(());
        }
        let prev = self.ranks[r].ops[op as usize].lane_prev;
        if prev != NONE && !self.ranks[r].ops[prev as usize].issued {
            return Ok(());
        }
        loop {
            self.issue(r, op)?;
            let next = self.ranks[r].ops[op as usize].lane_next;
            if next == NONE {
                return Ok(());
            }
            let n = &self.ranks[r].ops[next as usize];
            if n.waiting > 0 || n.issued {
                return Ok(());
            }
            op = next;
        }
    }

    fn complete(&mut self, r: usize, op: u32, source: Option<usize>) -> Result<(), SimError> {
        let now = self.now;
        let k = &mut self.ranks[r];
        let o = &mut k.ops[op as usize];
        o.done = true;
        k.remaining -= 1;
        k.finish = k.finish.max(now);
        let (start, len) = (o.users_start as usize, o.users_len as usize);
        let mut ready = Vec::new();
        for i in start..start + len {
            let u = k.users[i];
            let w = &mut k.ops[u as usize].waiting;
            *w -= 1;
            if *w == 0 {
                ready.push(u);
            }
        }
        if let Some(late) = k.late_users.remove(&op) {
            for u in late {
                let w = &mut k.ops[u as usize].waiting;
                *w -= 1;
                if *w == 0 {
                    ready.push(u);
                }
            }
        }
        for u in ready {
            if !self.ranks[r].ops[u as usize].issued {
                self.try_issue(r, u)?;
            }
        }
        // A continuation appends ops, which may be ready at once.
        let cont = self.ranks[r]
            .data
            .as_ref()
            .and_then(|d| d.sched.nodes()[op as usize].then.clone());
        if let Some(cont) = cont {
            let k = &mut self.ranks[r];
            let d = k.data.as_mut().expect("continuations only with data");
            let bytes = d.read(r, op as usize, &cont.reads)?;
            let before = d.sched.len();
            (cont.next)(
                &Arrival {
                    source,
                    data: &bytes,
                },
                &mut d.sched,
            );
            let sched = std::mem::replace(&mut d.sched, Schedule::new(0, 1, 0, 0));
            let res = compile(k, &sched, before, self.nodes, r);
            k.data.as_mut().expect("still there").sched = sched;
            res?;
            for u in before..self.ranks[r].ops.len() {
                let o = &self.ranks[r].ops[u];
                if o.waiting == 0 && !o.issued {
                    self.try_issue(r, u as u32)?;
                }
            }
        }
        Ok(())
    }
}
