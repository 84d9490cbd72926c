//! The schedule: per rank, a dependency graph of transfers and local operations on byte
//! ranges of the user's buffers and of declared scratch space. Algorithms build schedules;
//! executors (in-memory here, the engine elsewhere) run them. No I/O, no clocks.

use std::fmt;
use std::sync::Arc;

/// Which buffer a [`Range`] lies in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BufferId {
    /// The user's send buffer (absent when the call is in place).
    Send,
    /// The user's receive buffer (for bcast: the one buffer, on every rank).
    Recv,
    /// Scratch space `k`, declared by the schedule with [`Schedule::scratch`].
    Scratch(u32),
}

/// A byte range of one buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Range {
    pub buf: BufferId,
    pub offset: usize,
    pub len: usize,
}

impl Range {
    pub const fn new(buf: BufferId, offset: usize, len: usize) -> Range {
        Range { buf, offset, len }
    }
    pub const fn end(&self) -> usize {
        self.offset + self.len
    }
    /// The sub-range `[offset, offset + len)` relative to this range's start.
    pub fn sub(&self, offset: usize, len: usize) -> Range {
        debug_assert!(offset + len <= self.len, "sub-range out of its parent");
        Range::new(self.buf, self.offset + offset, len)
    }
    /// Whether two ranges share at least one byte.
    pub fn overlaps(&self, other: &Range) -> bool {
        self.buf == other.buf
            && self.len > 0
            && other.len > 0
            && self.offset < other.end()
            && other.offset < self.end()
    }
}

/// The reduction an executor applies for a [`Op::Reduce`]. The schedule names it; the
/// executor owns the function. `ReduceId::COLL` is the operation of the collective call
/// (MPI_Op and datatype); other values are reserved for algorithms that need a second one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ReduceId(pub u32);

impl ReduceId {
    pub const COLL: ReduceId = ReduceId(0);
}

/// Operand order of a reduction, which matters for non-commutative operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operands {
    /// `dst = src (op) dst`: MPI's `MPI_User_function(invec = src, inoutvec = dst)` directly.
    SrcDst,
    /// `dst = dst (op) src`: the executor needs a temporary for non-commutative operations.
    DstSrc,
}

/// Index of an operation within one rank's schedule.
pub type OpId = usize;

/// One operation. Messages may gather several ranges (sent or received as their
/// concatenation, in order), which lets a small header travel with a payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    Send {
        peer: usize,
        data: Vec<Range>,
    },
    Recv {
        peer: usize,
        data: Vec<Range>,
    },
    /// Receive one message from any of the listed peers; where it lands depends on which
    /// peer sent it. Resolved at run time; see [`Schedule::recv_any`].
    RecvAny {
        from: Vec<(usize, Vec<Range>)>,
    },
    Reduce {
        op: ReduceId,
        src: Range,
        dst: Range,
        order: Operands,
    },
    Copy {
        src: Range,
        dst: Range,
    },
}

impl Op {
    /// Ranges the operation reads (for a receive: none).
    pub fn reads(&self) -> Vec<Range> {
        match self {
            Op::Send { data, .. } => data.clone(),
            Op::Recv { .. } | Op::RecvAny { .. } => Vec::new(),
            Op::Reduce { src, dst, .. } => vec![*src, *dst],
            Op::Copy { src, .. } => vec![*src],
        }
    }
    /// Ranges the operation may write (for `RecvAny`: every candidate's ranges).
    pub fn writes(&self) -> Vec<Range> {
        match self {
            Op::Send { .. } => Vec::new(),
            Op::Recv { data, .. } => data.clone(),
            Op::RecvAny { from } => from.iter().flat_map(|(_, d)| d.iter().copied()).collect(),
            Op::Reduce { dst, .. } | Op::Copy { dst, .. } => vec![*dst],
        }
    }
    /// Every range the operation names.
    pub fn ranges(&self) -> Vec<Range> {
        let mut r = self.reads();
        r.extend(self.writes());
        r
    }
}

/// Total length of a gathered message.
pub fn span_len(data: &[Range]) -> usize {
    data.iter().map(|r| r.len).sum()
}

/// What a continuation is told when the operation it hangs on completes.
#[derive(Debug)]
pub struct Arrival<'a> {
    /// The peer whose message completed the operation (receives only).
    pub source: Option<usize>,
    /// The bytes of the continuation's `reads` ranges, concatenated, read after completion.
    pub data: &'a [u8],
}

/// A run-time decision: when its operation completes, the executor reads `reads` and calls
/// `next`, which appends operations to the schedule (it may depend on any existing op). It
/// must be a pure function of its arguments (and of what it captured when it was built), so
/// that every executor, the simulator included, derives the same operations.
#[derive(Clone)]
pub struct Continuation {
    pub reads: Vec<Range>,
    #[allow(clippy::type_complexity)]
    pub next: Arc<dyn Fn(&Arrival<'_>, &mut Schedule) + Send + Sync>,
}

impl fmt::Debug for Continuation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Continuation")
            .field("reads", &self.reads)
            .finish_non_exhaustive()
    }
}

/// An operation with the operations it waits for.
#[derive(Clone, Debug)]
pub struct Node {
    pub op: Op,
    pub deps: Vec<OpId>,
    pub then: Option<Continuation>,
}

/// Declared scratch space: its length and, optionally, its initial contents (for data the
/// algorithm computes when it builds the schedule, such as a status-based order table).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scratch {
    pub len: usize,
    pub init: Option<Vec<u8>>,
}

/// One rank's part of a collective. Append-only: operations get increasing ids and may only
/// depend on operations that exist already.
#[derive(Clone, Debug)]
pub struct Schedule {
    rank: usize,
    size: usize,
    send_len: usize,
    recv_len: usize,
    scratch: Vec<Scratch>,
    nodes: Vec<Node>,
}

impl Schedule {
    /// An empty schedule for `rank` of `size`, using at most `send_len` bytes of the user's
    /// send buffer and `recv_len` bytes of the receive buffer.
    pub fn new(rank: usize, size: usize, send_len: usize, recv_len: usize) -> Schedule {
        assert!(rank < size, "rank {rank} out of a communicator of {size}");
        Schedule {
            rank,
            size,
            send_len,
            recv_len,
            scratch: Vec::new(),
            nodes: Vec::new(),
        }
    }

    pub fn rank(&self) -> usize {
        self.rank
    }
    pub fn size(&self) -> usize {
        self.size
    }
    pub fn send_len(&self) -> usize {
        self.send_len
    }
    pub fn recv_len(&self) -> usize {
        self.recv_len
    }
    pub fn scratch_buffers(&self) -> &[Scratch] {
        &self.scratch
    }
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }
    pub fn len(&self) -> usize {
        self.nodes.len()
    }
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }
    /// Whether the schedule decides anything at run time (`RecvAny` or continuations).
    pub fn is_dynamic(&self) -> bool {
        self.nodes
            .iter()
            .any(|n| n.then.is_some() || matches!(n.op, Op::RecvAny { .. }))
    }

    /// Declares scratch space of `len` bytes with undefined contents (executors may fill it
    /// with anything; the in-memory one fills it with a marker byte to catch stray reads).
    pub fn scratch(&mut self, len: usize) -> BufferId {
        self.scratch.push(Scratch { len, init: None });
        BufferId::Scratch((self.scratch.len() - 1) as u32)
    }

    /// Declares scratch space holding `bytes` when the schedule starts.
    pub fn scratch_with(&mut self, bytes: Vec<u8>) -> BufferId {
        self.scratch.push(Scratch {
            len: bytes.len(),
            init: Some(bytes),
        });
        BufferId::Scratch((self.scratch.len() - 1) as u32)
    }

    /// Appends `op`, issued once every op in `deps` has completed.
    pub fn push(&mut self, op: Op, deps: &[OpId]) -> OpId {
        let id = self.nodes.len();
        for &d in deps {
            assert!(d < id, "dependency {d} of op {id} does not exist yet");
        }
        let mut deps = deps.to_vec();
        deps.sort_unstable();
        deps.dedup();
        self.nodes.push(Node {
            op,
            deps,
            then: None,
        });
        id
    }

    pub fn send(&mut self, peer: usize, data: impl Into<Vec<Range>>, deps: &[OpId]) -> OpId {
        self.push(
            Op::Send {
                peer,
                data: data.into(),
            },
            deps,
        )
    }
    pub fn recv(&mut self, peer: usize, data: impl Into<Vec<Range>>, deps: &[OpId]) -> OpId {
        self.push(
            Op::Recv {
                peer,
                data: data.into(),
            },
            deps,
        )
    }
    pub fn copy(&mut self, src: Range, dst: Range, deps: &[OpId]) -> OpId {
        self.push(Op::Copy { src, dst }, deps)
    }
    pub fn reduce(&mut self, src: Range, dst: Range, order: Operands, deps: &[OpId]) -> OpId {
        self.push(
            Op::Reduce {
                op: ReduceId::COLL,
                src,
                dst,
                order,
            },
            deps,
        )
    }

    /// Receives one message from any peer of `from`; the data lands in that peer's ranges.
    /// A continuation (see [`Schedule::then`]) usually decides what follows.
    pub fn recv_any(&mut self, from: Vec<(usize, Vec<Range>)>, deps: &[OpId]) -> OpId {
        self.push(Op::RecvAny { from }, deps)
    }

    /// Hangs a continuation on `op`: when `op` completes, `next` appends more operations.
    pub fn then(&mut self, op: OpId, cont: Continuation) {
        let node = &mut self.nodes[op];
        assert!(node.then.is_none(), "op {op} already has a continuation");
        node.then = Some(cont);
    }

    /// Adds a dependency without the existence check, so tests can build a cycle.
    #[cfg(test)]
    pub(crate) fn add_dep_for_tests(&mut self, op: OpId, dep: OpId) {
        self.nodes[op].deps.push(dep);
    }

    /// Replaces a resolved `RecvAny` by the receive that happened and drops fired
    /// continuations; used by executors to record what ran.
    pub(crate) fn resolve(&mut self, op: OpId, resolved: Option<Op>) {
        let node = &mut self.nodes[op];
        if let Some(r) = resolved {
            node.op = r;
        }
        node.then = None;
    }
}

/// Builds the common case of rounds (libNBC style): every operation of round k depends on
/// every operation of round k-1 (an empty round is skipped).
pub struct Rounds<'s> {
    sched: &'s mut Schedule,
    prev: Vec<OpId>,
    cur: Vec<OpId>,
}

impl<'s> Rounds<'s> {
    /// Starts round 0, which depends on `after` (often nothing).
    pub fn new(sched: &'s mut Schedule, after: &[OpId]) -> Rounds<'s> {
        Rounds {
            sched,
            prev: after.to_vec(),
            cur: Vec::new(),
        }
    }
    pub fn schedule(&mut self) -> &mut Schedule {
        self.sched
    }
    /// Adds `op` to the current round.
    pub fn push(&mut self, op: Op) -> OpId {
        let id = self.sched.push(op, &self.prev);
        self.cur.push(id);
        id
    }
    pub fn send(&mut self, peer: usize, data: impl Into<Vec<Range>>) -> OpId {
        self.push(Op::Send {
            peer,
            data: data.into(),
        })
    }
    pub fn recv(&mut self, peer: usize, data: impl Into<Vec<Range>>) -> OpId {
        self.push(Op::Recv {
            peer,
            data: data.into(),
        })
    }
    pub fn copy(&mut self, src: Range, dst: Range) -> OpId {
        self.push(Op::Copy { src, dst })
    }
    pub fn reduce(&mut self, src: Range, dst: Range, order: Operands) -> OpId {
        self.push(Op::Reduce {
            op: ReduceId::COLL,
            src,
            dst,
            order,
        })
    }
    /// Closes the current round.
    pub fn next(&mut self) {
        if !self.cur.is_empty() {
            self.prev = std::mem::take(&mut self.cur);
        }
    }
    /// Closes the last round and returns its operations (what a follow-up depends on).
    pub fn finish(mut self) -> Vec<OpId> {
        self.next();
        self.prev
    }
}

/// Drops empty ranges and merges ranges that continue one another in the same buffer.
pub fn coalesce(ranges: impl IntoIterator<Item = Range>) -> Vec<Range> {
    let mut out: Vec<Range> = Vec::new();
    for r in ranges.into_iter().filter(|r| r.len > 0) {
        match out.last_mut() {
            Some(last) if last.buf == r.buf && last.end() == r.offset => last.len += r.len,
            _ => out.push(r),
        }
    }
    out
}
