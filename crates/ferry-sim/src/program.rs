//! Schedules compiled for the simulator: one compact entry per operation (kind, peer, size,
//! unfinished dependencies, neighbours in its lane, users), and, when bytes move, the
//! rank's schedule and buffers with the copies, reductions and messages that read and
//! write them.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use ferry_coll::executor::Reduction;
use ferry_coll::{span_len, BufferId, Op, Operands, Range, Schedule};

use crate::engine::{RankSim, SimError};

/// No op (an absent lane neighbour).
pub(crate) const NONE: u32 = u32::MAX;

/// A multiplicative hasher for small integer keys (the standard one is needlessly slow here).
#[derive(Default)]
pub(crate) struct IntHasher(u64);
impl Hasher for IntHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u32(&mut self, i: u32) {
        self.write_u64(i as u64);
    }
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}
pub(crate) type IntMap<V> = HashMap<u32, V, BuildHasherDefault<IntHasher>>;
/// Last op of each lane: (kind, peer).
pub(crate) type LaneMap = HashMap<(u8, u32), u32, BuildHasherDefault<IntHasher>>;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Send,
    Recv,
    RecvAny,
    Local,
}

/// One operation, compiled from a schedule node.
pub(crate) struct OpState {
    pub(crate) kind: Kind,
    pub(crate) peer: u32,
    pub(crate) bytes: u64,
    pub(crate) waiting: u32,
    pub(crate) lane_prev: u32,
    pub(crate) lane_next: u32,
    pub(crate) users_start: u32,
    pub(crate) users_len: u32,
    pub(crate) issued: bool,
    pub(crate) done: bool,
}

pub(crate) struct RankData {
    pub(crate) sched: Schedule,
    pub(crate) send: Vec<u8>,
    pub(crate) recv: Vec<u8>,
    pub(crate) scratch: Vec<Vec<u8>>,
}


fn lane_key(op: &Op) -> Option<(u8, u32)> {
    match op {
        Op::Send { peer, .. } => Some((0, *peer as u32)),
        Op::Recv { peer, .. } => Some((1, *peer as u32)),
        Op::RecvAny { .. } => Some((2, 0)),
        _ => None,
    }
}

/// Compiles the schedule's nodes `from..` into `rank`'s op table.
pub(crate) fn compile(rank: &mut RankSim, sched: &Schedule, from: usize, nodes: usize, r: usize) -> Result<(), SimError> {
    let all = sched.nodes();
    let first_new = rank.ops.len();
    debug_assert_eq!(first_new, from);
    let initial = from == 0;
    let mut counts = if initial { vec![0u32; all.len()] } else { Vec::new() };
    for (id, node) in all.iter().enumerate().skip(from) {
        let (kind, peer, bytes) = match &node.op {
            Op::Send { peer, data } => (Kind::Send, *peer, span_len(data) as u64),
            Op::Recv { peer, data } => (Kind::Recv, *peer, span_len(data) as u64),
            Op::RecvAny { from } => {
                if let Some(&(bad, _)) = from.iter().find(|(x, _)| *x >= nodes || *x == r) {
                    return Err(SimError::BadPeer { rank: r, op: id, peer: bad });
                }
                (Kind::RecvAny, 0, 0)
            }
            Op::Reduce { .. } | Op::Copy { .. } => (Kind::Local, 0, 0),
        };
        if matches!(kind, Kind::Send | Kind::Recv) && (peer >= nodes || peer == r) {
            return Err(SimError::BadPeer { rank: r, op: id, peer });
        }
        let mut waiting = 0;
        for &d in &node.deps {
            if initial {
                counts[d] += 1;
                waiting += 1;
            } else if !rank.ops[d].done {
                rank.late_users.entry(d as u32).or_default().push(id as u32);
                waiting += 1;
            }
        }
        let mut lane_prev = NONE;
        if let Some(key) = lane_key(&node.op) {
            if let Some(prev) = rank.lanes.insert(key, id as u32) {
                lane_prev = prev;
                rank.ops[prev as usize].lane_next = id as u32;
            }
        }
        rank.ops.push(OpState {
            kind,
            peer: peer as u32,
            bytes,
            waiting,
            lane_prev,
            lane_next: NONE,
            users_start: 0,
            users_len: 0,
            issued: false,
            done: false,
        });
        rank.remaining += 1;
    }
    if initial {
        // Users as one array (compressed rows): one allocation for the whole schedule.
        let mut at = 0u32;
        for (o, &c) in rank.ops.iter_mut().zip(&counts) {
            o.users_start = at;
            at += c;
        }
        rank.users = vec![0; at as usize];
        let mut fill = vec![0u32; all.len()];
        for (id, node) in all.iter().enumerate() {
            for &d in &node.deps {
                let o = &rank.ops[d];
                rank.users[(o.users_start + fill[d]) as usize] = id as u32;
                fill[d] += 1;
            }
        }
        for (o, f) in rank.ops.iter_mut().zip(fill) {
            o.users_len = f;
        }
    }
    Ok(())
}

impl RankData {
    fn buf(&self, b: BufferId) -> &[u8] {
        match b {
            BufferId::Send => &self.send,
            BufferId::Recv => &self.recv,
            BufferId::Scratch(k) => self.scratch.get(k as usize).map_or(&[], |v| v),
        }
    }
    fn check(&self, r: usize, op: usize, range: &Range) -> Result<(), SimError> {
        let declared = !matches!(range.buf, BufferId::Scratch(k) if k as usize >= self.scratch.len());
        let len = self.buf(range.buf).len();
        if !declared || range.end() > len {
            return Err(SimError::OutOfBounds {
                rank: r,
                op,
                range: *range,
                len,
            });
        }
        Ok(())
    }
    pub(crate) fn read(&self, r: usize, op: usize, ranges: &[Range]) -> Result<Vec<u8>, SimError> {
        let mut out = Vec::with_capacity(span_len(ranges));
        for range in ranges {
            self.check(r, op, range)?;
            out.extend_from_slice(&self.buf(range.buf)[range.offset..range.end()]);
        }
        Ok(out)
    }
    pub(crate) fn write(&mut self, r: usize, op: usize, ranges: &[Range], mut bytes: &[u8]) -> Result<(), SimError> {
        for range in ranges {
            self.check(r, op, range)?;
            let (head, tail) = bytes.split_at(range.len);
            let buf = match range.buf {
                BufferId::Send => &mut self.send,
                BufferId::Recv => &mut self.recv,
                BufferId::Scratch(k) => &mut self.scratch[k as usize],
            };
            buf[range.offset..range.end()].copy_from_slice(head);
            bytes = tail;
        }
        Ok(())
    }
    pub(crate) fn message(&self, r: usize, op: usize) -> Result<Vec<u8>, SimError> {
        match &self.sched.nodes()[op].op {
            Op::Send { data, .. } => self.read(r, op, data),
            _ => unreachable!("only sends carry messages"),
        }
    }
    /// The peers an any-source receive takes messages from.
    pub(crate) fn candidates(&self, op: usize) -> impl Iterator<Item = usize> + '_ {
        let from: &[(usize, Vec<Range>)] = match &self.sched.nodes()[op].op {
            Op::RecvAny { from } => from,
            _ => &[],
        };
        from.iter().map(|(x, _)| *x)
    }
    pub(crate) fn local(&mut self, r: usize, op: usize, reduce: &Reduction<'_>) -> Result<(), SimError> {
        match self.sched.nodes()[op].op.clone() {
            Op::Copy { src, dst } => {
                let bytes = self.read(r, op, &[src])?;
                self.write(r, op, &[dst], &bytes)
            }
            Op::Reduce {
                op: rid,
                src,
                dst,
                order,
            } => {
                let input = self.read(r, op, &[src])?;
                let mut inout = self.read(r, op, &[dst])?;
                match order {
                    Operands::SrcDst => reduce(rid, &input, &mut inout),
                    Operands::DstSrc => {
                        let mut tmp = input;
                        reduce(rid, &inout, &mut tmp);
                        inout = tmp;
                    }
                }
                self.write(r, op, &[dst], &inout)
            }
            _ => unreachable!("only copies and reductions are local"),
        }
    }
}
