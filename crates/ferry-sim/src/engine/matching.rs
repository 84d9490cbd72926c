//! Message matching: issued sends meet posted receives, a specific receive taking the oldest
//! send of its peer and an any-source one the candidate whose transfer can start first; a
//! match takes the ports and plans both completions.

use std::collections::VecDeque;

use ferry_coll::{span_len, Op, Range};

use super::{Ev, RankSim, Sim, SimError, Time};
use crate::program::{Kind, NONE};

pub(super) struct PendingSend {
    op: u32,
    bytes: u64,
    issued: Time,
    data: Option<Vec<u8>>,
}

pub(super) struct Posted {
    op: u32,
    order: u64,
}

impl<'r> Sim<'r> {
    pub(super) fn issue(&mut self, r: usize, op: u32) -> Result<(), SimError> {
        let now = self.now;
        let o = &mut self.ranks[r].ops[op as usize];
        debug_assert!(!o.issued && o.waiting == 0);
        o.issued = true;
        let (kind, peer, bytes) = (o.kind, o.peer as usize, o.bytes);
        match kind {
            Kind::Local => {
                if let Some(d) = self.ranks[r].data.as_mut() {
                    d.local(r, op as usize, self.reduce.expect("data comes with a reduction"))?;
                }
                self.push(now, Ev::Local { rank: r as u32, op });
            }
            Kind::Send => {
                let data = match self.ranks[r].data.as_ref() {
                    Some(d) => Some(d.message(r, op as usize)?),
                    None => None,
                };
                let send = PendingSend {
                    op,
                    bytes,
                    issued: now,
                    data,
                };
                let dst = &mut self.ranks[peer];
                let waiting = dst.pending.get(&(r as u32)).is_some_and(|q| !q.is_empty());
                let specific = dst.posted.get(&(r as u32)).and_then(|q| q.front()).map(|p| p.order);
                let any = dst
                    .posted_any
                    .iter()
                    .find(|p| any_accepts(dst, p.op, r))
                    .map(|p| p.order);
                match (specific, any) {
                    // Earlier sends of this pair still wait: this one queues behind them.
                    _ if waiting => dst.pending.entry(r as u32).or_default().push_back(send),
                    (Some(a), b) if b.is_none_or(|b| a < b) => {
                        let posted = dst
                            .posted
                            .get_mut(&(r as u32))
                            .and_then(VecDeque::pop_front)
                            .expect("a posted receive");
                        self.matched(r, send, peer, posted)?;
                    }
                    // An any-source receive is first: it chooses once every send of this
                    // instant was issued.
                    (_, Some(_)) => {
                        dst.pending.entry(r as u32).or_default().push_back(send);
                        if !std::mem::replace(&mut dst.resolve_planned, true) {
                            self.push(now, Ev::Resolve(peer as u32));
                        }
                    }
                    _ => dst.pending.entry(r as u32).or_default().push_back(send),
                }
            }
            Kind::Recv => {
                // Receives posted earlier choose first.
                if self.ranks[r].resolve_planned {
                    self.resolve(r)?;
                }
                let me = &mut self.ranks[r];
                let head = me.pending.get_mut(&(peer as u32)).and_then(VecDeque::pop_front);
                self.order += 1;
                let posted = Posted {
                    op,
                    order: self.order,
                };
                match head {
                    Some(send) => self.matched(peer, send, r, posted)?,
                    None => self.ranks[r]
                        .posted
                        .entry(peer as u32)
                        .or_default()
                        .push_back(posted),
                }
            }
            Kind::RecvAny => {
                if self.ranks[r].resolve_planned {
                    self.resolve(r)?;
                }
                self.order += 1;
                let posted = Posted {
                    op,
                    order: self.order,
                };
                match self.choose(r, op) {
                    Some(c) => {
                        let send = self.take_pending(r, c);
                        self.matched(c, send, r, posted)?;
                    }
                    None => self.ranks[r].posted_any.push(posted),
                }
            }
        }
        Ok(())
    }

    /// The pending sender an any-source receive of rank `r` takes: the one whose transfer
    /// can start first, then the one issued first.
    fn choose(&self, r: usize, op: u32) -> Option<usize> {
        let candidates = self.ranks[r]
            .data
            .as_ref()
            .expect("RecvAny only in dynamic schedules, which run with data")
            .candidates(op as usize);
        let mut best: Option<(Time, Time, usize)> = None;
        for c in candidates {
            let Some(head) = self.ranks[r].pending.get(&(c as u32)).and_then(|q| q.front()) else {
                continue;
            };
            let (issued, bytes) = (head.issued, head.bytes);
            let start = self.start_time(c, r, bytes);
            if best.is_none_or(|b| (start, issued) < (b.0, b.1)) {
                best = Some((start, issued, c));
            }
        }
        best.map(|b| b.2)
    }

    /// The oldest send from `c` that waits for a receive of rank `r` (`choose` found one).
    fn take_pending(&mut self, r: usize, c: usize) -> PendingSend {
        self.ranks[r]
            .pending
            .get_mut(&(c as u32))
            .and_then(VecDeque::pop_front)
            .expect("a pending send")
    }

    /// Matches rank `r`'s posted receives with the sends waiting for them, in the order the
    /// receives were posted: a specific one takes the oldest send of its peer, an any-source
    /// one the candidate that can start first. Runs until nothing more matches.
    pub(super) fn resolve(&mut self, r: usize) -> Result<(), SimError> {
        self.ranks[r].resolve_planned = false;
        loop {
            let k = &self.ranks[r];
            // (post order, source of a specific receive or the index of an any-source one)
            let mut posted: Vec<(u64, Result<u32, usize>)> = k
                .posted
                .iter()
                .filter_map(|(&src, q)| q.front().map(|p| (p.order, Ok(src))))
                .chain(k.posted_any.iter().enumerate().map(|(i, p)| (p.order, Err(i))))
                .collect();
            posted.sort_unstable_by_key(|&(order, _)| order);
            let mut matched = false;
            for (_, which) in posted {
                match which {
                    Ok(src) => {
                        let k = &mut self.ranks[r];
                        let Some(send) = k.pending.get_mut(&src).and_then(VecDeque::pop_front) else {
                            continue;
                        };
                        let recv = k
                            .posted
                            .get_mut(&src)
                            .and_then(VecDeque::pop_front)
                            .expect("a posted receive");
                        self.matched(src as usize, send, r, recv)?;
                    }
                    Err(i) => {
                        let op = self.ranks[r].posted_any[i].op;
                        let Some(c) = self.choose(r, op) else { continue };
                        let recv = self.ranks[r].posted_any.remove(i);
                        let send = self.take_pending(r, c);
                        self.matched(c, send, r, recv)?;
                    }
                }
                matched = true;
                break;
            }
            if !matched {
                return Ok(());
            }
        }
    }

    /// A send of `s` meets a receive of `d`: check sizes, take the ports, plan completions.
    fn matched(&mut self, s: usize, send: PendingSend, d: usize, recv: Posted) -> Result<(), SimError> {
        let want = match self.ranks[d].ops[recv.op as usize].kind {
            Kind::Recv => self.ranks[d].ops[recv.op as usize].bytes,
            _ => span_len(&self.recv_ranges(d, recv.op, s)) as u64,
        };
        if want != send.bytes {
            return Err(SimError::Truncated {
                rank: d,
                op: recv.op as usize,
                from: s,
                got: send.bytes,
                want,
            });
        }
        let (injected, done) = self.transfer(s, d, send.bytes, send.issued, false);
        self.out.messages += 1;
        self.out.bytes += send.bytes;
        let msg = match send.data {
            Some(bytes) => {
                self.payloads.push(Some(bytes));
                (self.payloads.len() - 1) as u32
            }
            None => NONE,
        };
        self.push(injected, Ev::Sent { rank: s as u32, op: send.op });
        self.push(
            done,
            Ev::Received {
                rank: d as u32,
                op: recv.op,
                from: s as u32,
                msg,
            },
        );
        Ok(())
    }

    /// Where a receive puts a message from `from`.
    pub(super) fn recv_ranges(&self, r: usize, op: u32, from: usize) -> Vec<Range> {
        let Some(d) = &self.ranks[r].data else { return Vec::new() };
        match &d.sched.nodes()[op as usize].op {
            Op::Recv { data, .. } => data.clone(),
            Op::RecvAny { from: f } => f
                .iter()
                .find(|(x, _)| *x == from)
                .map(|(_, d)| d.clone())
                .unwrap_or_default(),
            _ => Vec::new(),
        }
    }
}

/// Whether a posted `RecvAny` takes messages from `from`.
fn any_accepts(rank: &RankSim, op: u32, from: usize) -> bool {
    rank.data
        .as_ref()
        .is_some_and(|d| d.candidates(op as usize).any(|c| c == from))
}
