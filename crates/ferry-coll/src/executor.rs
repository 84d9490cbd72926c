//! A deterministic in-memory executor: runs every rank's schedule of one collective together,
//! delivering messages through per-pair FIFO queues. Each step performs one event (issue a
//! ready op, or deliver the head of a queue to the receive it matches), chosen first-found
//! or by a seeded generator, so tests can explore interleavings reproducibly. A run that
//! does not settle within a step bound fails.
//!
//! Semantics every executor shares: an op is issued once its dependencies completed; sends
//! to one peer are issued in op-id order, and so are receives from one peer (and `RecvAny`s
//! among themselves); a message matches the earliest posted receive that accepts its sender;
//! a send completes when its message is received (synchronous: a schedule that runs here
//! does not rely on buffering); copies and reductions complete when issued.

use crate::schedule::{span_len, Arrival, BufferId, Op, OpId, Operands, Range, ReduceId, Schedule};
use std::collections::VecDeque;
use thiserror::Error;

/// The user buffers of one rank.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Buffers {
    pub send: Vec<u8>,
    pub recv: Vec<u8>,
}

/// How to interleave the ranks.
#[derive(Clone, Debug)]
pub struct RunConfig {
    /// `None`: always the first possible event (rank order); `Some(seed)`: a seeded choice.
    pub seed: Option<u64>,
    /// The most events a run may take before it counts as never settling.
    pub max_steps: usize,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            seed: None,
            max_steps: 10_000_000,
        }
    }
}

/// What a run leaves behind.
#[derive(Debug)]
pub struct RunResult {
    pub buffers: Vec<Buffers>,
    /// The schedules as they ran: continuations' ops appended, `RecvAny`s replaced by the
    /// receive that matched. Static, so they can be validated and exported.
    pub resolved: Vec<Schedule>,
    pub measured: Measured,
}

#[derive(Debug, Error, PartialEq, Eq)]
pub enum ExecError {
    #[error("{0} schedules for {1} buffer sets")]
    Mismatch(usize, usize),
    #[error("rank {rank}: op {op} names {range:?}, outside its buffer of {len} bytes")]
    OutOfBounds {
        rank: usize,
        op: OpId,
        range: Range,
        len: usize,
    },
    #[error(
        "rank {rank} op {op}: message from {from} has {got} bytes, the receive expects {want}"
    )]
    Truncated {
        rank: usize,
        op: OpId,
        from: usize,
        got: usize,
        want: usize,
    },
    #[error("rank {rank}: op {op} names peer {peer}, not another rank")]
    BadPeer { rank: usize, op: OpId, peer: usize },
    #[error("deadlock: nothing can progress; pending ops per rank: {pending:?}")]
    Deadlock { pending: Vec<Vec<OpId>> },
    #[error("did not settle within {0} steps")]
    Stalled(usize),
}

/// What a run measured, independent of the interleaving.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Measured {
    /// Longest causal chain of messages (through dependencies; concurrent messages of a
    /// rank share a level, so this is a lower bound of an algorithm's step count).
    pub depth: usize,
    /// Heaviest causal chain, in bytes (a lower bound of its critical-path bytes).
    pub path_bytes: usize,
    /// Messages delivered, over all ranks.
    pub messages: usize,
    /// What the busiest rank sent or received (the larger of the two), in bytes.
    pub rank_bytes: usize,
}

struct Message {
    send_op: OpId,
    data: Vec<u8>,
    depth: (usize, usize),
}

struct RankState {
    sched: Schedule,
    send: Vec<u8>,
    recv: Vec<u8>,
    scratch: Vec<Vec<u8>>,
    issued: Vec<bool>,
    done: Vec<bool>,
    waiting: Vec<usize>,
    users: Vec<Vec<OpId>>,
    /// The previous op that must be issued first (same kind, same peer).
    before: Vec<Option<OpId>>,
    ready: Vec<OpId>,
    posted: Vec<OpId>,
    depth: Vec<(usize, usize)>,
    sent_bytes: usize,
    recv_bytes: usize,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Lane {
    To(usize),
    From(usize),
    Any,
}

fn lane(op: &Op) -> Option<Lane> {
    match op {
        Op::Send { peer, .. } => Some(Lane::To(*peer)),
        Op::Recv { peer, .. } => Some(Lane::From(*peer)),
        Op::RecvAny { .. } => Some(Lane::Any),
        _ => None,
    }
}

const SCRATCH_FILL: u8 = 0xd7;

impl RankState {
    fn new(sched: Schedule, bufs: Buffers) -> RankState {
        let scratch = sched
            .scratch_buffers()
            .iter()
            .map(|s| s.init.clone().unwrap_or_else(|| vec![SCRATCH_FILL; s.len]))
            .collect();
        let mut st = RankState {
            sched,
            send: bufs.send,
            recv: bufs.recv,
            scratch,
            issued: Vec::new(),
            done: Vec::new(),
            waiting: Vec::new(),
            users: Vec::new(),
            before: Vec::new(),
            ready: Vec::new(),
            posted: Vec::new(),
            depth: Vec::new(),
            sent_bytes: 0,
            recv_bytes: 0,
        };
        st.adopt_new_ops();
        st
    }

    /// Brings the bookkeeping up to date with ops appended to the schedule.
    fn adopt_new_ops(&mut self) {
        let start = self.issued.len();
        let n = self.sched.len();
        for id in start..n {
            let node = &self.sched.nodes()[id];
            let me_lane = lane(&node.op);
            let before = me_lane.and_then(|l| {
                (0..id)
                    .rev()
                    .find(|&j| lane(&self.sched.nodes()[j].op) == Some(l))
            });
            let waiting = node.deps.iter().filter(|&&d| !self.done[d]).count();
            for &d in &node.deps {
                self.users[d].push(id);
            }
            self.issued.push(false);
            self.done.push(false);
            self.waiting.push(waiting);
            self.users.push(Vec::new());
            self.before.push(before);
            self.depth.push((0, 0));
            if waiting == 0 {
                self.ready.push(id);
            }
        }
    }

    fn buf(&self, b: BufferId) -> &Vec<u8> {
        match b {
            BufferId::Send => &self.send,
            BufferId::Recv => &self.recv,
            BufferId::Scratch(k) => &self.scratch[k as usize],
        }
    }
    fn buf_mut(&mut self, b: BufferId) -> &mut Vec<u8> {
        match b {
            BufferId::Send => &mut self.send,
            BufferId::Recv => &mut self.recv,
            BufferId::Scratch(k) => &mut self.scratch[k as usize],
        }
    }
    fn check(&self, op: OpId, r: &Range) -> Result<(), ExecError> {
        let len = match r.buf {
            BufferId::Scratch(k) if k as usize >= self.scratch.len() => 0,
            b => self.buf(b).len(),
        };
        if r.end() > len {
            return Err(ExecError::OutOfBounds {
                rank: self.sched.rank(),
                op,
                range: *r,
                len,
            });
        }
        Ok(())
    }
    fn read(&self, op: OpId, ranges: &[Range]) -> Result<Vec<u8>, ExecError> {
        let mut out = Vec::with_capacity(span_len(ranges));
        for r in ranges {
            self.check(op, r)?;
            out.extend_from_slice(&self.buf(r.buf)[r.offset..r.end()]);
        }
        Ok(out)
    }
    fn write(&mut self, op: OpId, ranges: &[Range], mut data: &[u8]) -> Result<(), ExecError> {
        for r in ranges {
            self.check(op, r)?;
            let (head, tail) = data.split_at(r.len);
            self.buf_mut(r.buf)[r.offset..r.end()].copy_from_slice(head);
            data = tail;
        }
        Ok(())
    }
    fn dep_depth(&self, op: OpId) -> (usize, usize) {
        let mut d = (0, 0);
        for &x in &self.sched.nodes()[op].deps {
            d.0 = d.0.max(self.depth[x].0);
            d.1 = d.1.max(self.depth[x].1);
        }
        d
    }
    /// Marks `op` complete and fires its continuation.
    fn complete(&mut self, op: OpId, source: Option<usize>) -> Result<(), ExecError> {
        self.done[op] = true;
        for i in 0..self.users[op].len() {
            let u = self.users[op][i];
            self.waiting[u] -= 1;
            if self.waiting[u] == 0 {
                self.ready.push(u);
            }
        }
        if let Some(cont) = self.sched.nodes()[op].then.clone() {
            let data = self.read(op, &cont.reads)?;
            (cont.next)(
                &Arrival {
                    source,
                    data: &data,
                },
                &mut self.sched,
            );
            self.adopt_new_ops();
        }
        Ok(())
    }
    fn pending(&self) -> Vec<OpId> {
        (0..self.done.len()).filter(|&i| !self.done[i]).collect()
    }
}

/// A small deterministic generator (xorshift64*), enough to pick interleavings.
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n
    }
}

enum Event {
    Issue(usize, OpId),
    Deliver { from: usize, to: usize, recv: OpId },
}

/// The reduction an executor applies: `reduce(op, input, inout)`.
pub type Reduction<'a> = dyn Fn(ReduceId, &[u8], &mut [u8]) + 'a;

/// Runs one collective: `schedules[r]` on `buffers[r]`. `reduce(op, input, inout)` must
/// compute `inout = input (op) inout` element-wise (MPI's user-function convention).
pub fn run(
    schedules: Vec<Schedule>,
    buffers: Vec<Buffers>,
    reduce: &Reduction<'_>,
    cfg: &RunConfig,
) -> Result<RunResult, ExecError> {
    let p = schedules.len();
    if buffers.len() != p {
        return Err(ExecError::Mismatch(p, buffers.len()));
    }
    let mut ranks: Vec<RankState> = schedules
        .into_iter()
        .zip(buffers)
        .map(|(s, b)| RankState::new(s, b))
        .collect();
    let mut queues: Vec<VecDeque<Message>> = (0..p * p).map(|_| VecDeque::new()).collect();
    let mut busy_queues: Vec<usize> = Vec::new();
    let mut rng = cfg
        .seed
        .map(|s| Rng(s.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1));
    let mut messages = 0usize;
    let mut events = Vec::new();
    for steps in 0.. {
        if steps >= cfg.max_steps {
            return Err(ExecError::Stalled(steps));
        }
        events.clear();
        for (r, st) in ranks.iter().enumerate() {
            for &op in &st.ready {
                if st.before[op].is_none_or(|b| st.issued[b]) {
                    events.push(Event::Issue(r, op));
                }
            }
        }
        for &q in &busy_queues {
            let (from, to) = (q / p, q % p);
            let st = &ranks[to];
            let accepts = |op: &OpId| match &st.sched.nodes()[*op].op {
                Op::Recv { peer, .. } => *peer == from,
                Op::RecvAny { from: f } => f.iter().any(|(x, _)| *x == from),
                _ => false,
            };
            if let Some(&recv) = st.posted.iter().find(|op| accepts(op)) {
                events.push(Event::Deliver { from, to, recv });
            }
        }
        if events.is_empty() {
            if ranks.iter().all(|st| st.done.iter().all(|&d| d)) {
                break;
            }
            return Err(ExecError::Deadlock {
                pending: ranks.iter().map(|s| s.pending()).collect(),
            });
        }
        let pick = match rng.as_mut() {
            Some(g) => g.below(events.len()),
            None => 0,
        };
        match events.swap_remove(pick) {
            Event::Issue(r, op) => {
                let st = &mut ranks[r];
                st.ready.retain(|&x| x != op);
                st.issued[op] = true;
                let depth = st.dep_depth(op);
                st.depth[op] = depth;
                let node_op = st.sched.nodes()[op].op.clone();
                match node_op {
                    Op::Send { peer, data } => {
                        if peer >= p || peer == r {
                            return Err(ExecError::BadPeer { rank: r, op, peer });
                        }
                        let bytes = st.read(op, &data)?;
                        st.sent_bytes += bytes.len();
                        let q = r * p + peer;
                        if queues[q].is_empty() {
                            busy_queues.push(q);
                        }
                        queues[q].push_back(Message {
                            send_op: op,
                            data: bytes,
                            depth,
                        });
                    }
                    Op::Recv { .. } | Op::RecvAny { .. } => st.posted.push(op),
                    Op::Copy { src, dst } => {
                        let bytes = st.read(op, &[src])?;
                        st.write(op, &[dst], &bytes)?;
                        st.complete(op, None)?;
                    }
                    Op::Reduce {
                        op: rid,
                        src,
                        dst,
                        order,
                    } => {
                        let input = st.read(op, &[src])?;
                        let mut inout = st.read(op, &[dst])?;
                        match order {
                            Operands::SrcDst => reduce(rid, &input, &mut inout),
                            Operands::DstSrc => {
                                let mut tmp = input;
                                reduce(rid, &inout, &mut tmp);
                                inout = tmp;
                            }
                        }
                        st.write(op, &[dst], &inout)?;
                        st.complete(op, None)?;
                    }
                }
            }
            Event::Deliver { from, to, recv } => {
                let q = from * p + to;
                let msg = queues[q].pop_front().expect("a busy queue has a message");
                if queues[q].is_empty() {
                    busy_queues.retain(|&x| x != q);
                }
                let st = &mut ranks[to];
                let data = match &st.sched.nodes()[recv].op {
                    Op::Recv { data, .. } => data.clone(),
                    Op::RecvAny { from: f } => f
                        .iter()
                        .find(|(x, _)| *x == from)
                        .expect("matched by sender")
                        .1
                        .clone(),
                    _ => unreachable!("only receives are posted"),
                };
                let want = span_len(&data);
                if want != msg.data.len() {
                    return Err(ExecError::Truncated {
                        rank: to,
                        op: recv,
                        from,
                        got: msg.data.len(),
                        want,
                    });
                }
                st.write(recv, &data, &msg.data)?;
                st.posted.retain(|&x| x != recv);
                st.recv_bytes += want;
                messages += 1;
                let own = st.dep_depth(recv);
                st.depth[recv] = (own.0.max(msg.depth.0 + 1), own.1.max(msg.depth.1 + want));
                let resolved = match st.sched.nodes()[recv].op {
                    Op::RecvAny { .. } => Some(Op::Recv { peer: from, data }),
                    _ => None,
                };
                st.complete(recv, Some(from))?;
                st.sched.resolve(recv, resolved);
                ranks[from].complete(msg.send_op, None)?;
            }
        }
    }
    let mut measured = Measured {
        messages,
        ..Measured::default()
    };
    for st in &ranks {
        for &(r, b) in &st.depth {
            measured.depth = measured.depth.max(r);
            measured.path_bytes = measured.path_bytes.max(b);
        }
        measured.rank_bytes = measured.rank_bytes.max(st.sent_bytes.max(st.recv_bytes));
    }
    let mut buffers = Vec::with_capacity(p);
    let mut resolved = Vec::with_capacity(p);
    for mut st in ranks {
        for op in 0..st.sched.len() {
            st.sched.resolve(op, None);
        }
        buffers.push(Buffers {
            send: st.send,
            recv: st.recv,
        });
        resolved.push(st.sched);
    }
    Ok(RunResult {
        buffers,
        resolved,
        measured,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conformance::add_u32;
    use crate::{algorithm, Params};
    use proptest::prelude::*;

    fn r(buf: BufferId, offset: usize, len: usize) -> Range {
        Range::new(buf, offset, len)
    }

    #[test]
    fn head_to_head_synchronous_sends_deadlock() {
        // Both ranks receive only after their send completed: fine with buffering, a
        // deadlock with synchronous sends, which is what the executor models.
        let mut all = Vec::new();
        for me in 0..2 {
            let mut s = Schedule::new(me, 2, 4, 4);
            let sent = s.send(1 - me, vec![r(BufferId::Send, 0, 4)], &[]);
            s.recv(1 - me, vec![r(BufferId::Recv, 0, 4)], &[sent]);
            all.push(s);
        }
        let bufs = vec![
            Buffers {
                send: vec![1; 4],
                recv: vec![0; 4]
            };
            2
        ];
        let err = run(all, bufs, &add_u32, &RunConfig::default()).unwrap_err();
        assert!(matches!(err, ExecError::Deadlock { .. }));
    }

    #[test]
    fn truncation_is_an_error() {
        let mut a = Schedule::new(0, 2, 8, 0);
        a.send(1, vec![r(BufferId::Send, 0, 8)], &[]);
        let mut b = Schedule::new(1, 2, 0, 4);
        b.recv(0, vec![r(BufferId::Recv, 0, 4)], &[]);
        let bufs = vec![
            Buffers {
                send: vec![1; 8],
                recv: vec![],
            },
            Buffers {
                send: vec![],
                recv: vec![0; 4],
            },
        ];
        let err = run(vec![a, b], bufs, &add_u32, &RunConfig::default()).unwrap_err();
        assert!(matches!(
            err,
            ExecError::Truncated {
                got: 8,
                want: 4,
                ..
            }
        ));
    }

    #[test]
    fn reductions_follow_operand_order() {
        // A non-commutative "reduction": keep the input (inout = in op inout = in).
        let keep_input = |_: ReduceId, a: &[u8], b: &mut [u8]| b.copy_from_slice(a);
        let mut s = Schedule::new(0, 1, 2, 2);
        s.copy(r(BufferId::Send, 0, 1), r(BufferId::Recv, 0, 1), &[]);
        s.copy(r(BufferId::Send, 0, 1), r(BufferId::Recv, 1, 1), &[]);
        s.reduce(
            r(BufferId::Send, 1, 1),
            r(BufferId::Recv, 0, 1),
            Operands::SrcDst,
            &[0],
        );
        s.reduce(
            r(BufferId::Send, 1, 1),
            r(BufferId::Recv, 1, 1),
            Operands::DstSrc,
            &[1],
        );
        let bufs = vec![Buffers {
            send: vec![7, 9],
            recv: vec![0, 0],
        }];
        let out = run(vec![s], bufs, &keep_input, &RunConfig::default()).unwrap();
        // SrcDst: dst = src op dst = src = 9; DstSrc: dst = dst op src = dst = 7.
        assert_eq!(out.buffers[0].recv, vec![9, 7]);
    }

    #[test]
    fn a_run_that_never_settles_fails() {
        let q = Params::uniform(0, 8, 0, 64);
        let info = algorithm("allgather.ring").unwrap();
        let scheds: Vec<_> = (0..8).map(|r| (info.schedule)(&q.for_rank(r))).collect();
        let bufs = (0..8)
            .map(|_| Buffers {
                send: vec![0; 64],
                recv: vec![0; 512],
            })
            .collect();
        let err = run(
            scheds,
            bufs,
            &add_u32,
            &RunConfig {
                seed: None,
                max_steps: 10,
            },
        )
        .unwrap_err();
        assert_eq!(err, ExecError::Stalled(10));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Every interleaving gives the same buffers and the same measurements.
        #[test]
        fn interleavings_agree(seed in any::<u64>(), p in 1usize..12, idx in 0usize..64) {
            let algos = crate::algorithms();
            let info = &algos[idx % algos.len()];
            let q = Params::uniform(0, p, p / 2, 12).elem_size(4).segment_size(8);
            let (inputs, _) = crate::conformance::reference(info.collective, &q);
            let build = || (0..p).map(|r| (info.schedule)(&q.for_rank(r))).collect::<Vec<_>>();
            let first = run(build(), inputs.clone(), &add_u32, &RunConfig::default()).unwrap();
            let other = run(build(), inputs, &add_u32, &RunConfig { seed: Some(seed), max_steps: 1 << 20 }).unwrap();
            prop_assert_eq!(first.buffers, other.buffers);
            prop_assert_eq!(first.measured, other.measured);
        }
    }
}
