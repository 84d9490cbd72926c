//! Runs a collective schedule (from `ferry-coll`) over the engine: each operation is issued
//! when the operations it depends on have completed, sends and receives become engine
//! requests on the communicator's collective context, copies and reductions run in place.
//!
//! A [`CollRun`] is a state machine advanced by [`CollRun::advance`], so the same code serves
//! blocking calls (advance until done) and non-blocking ones (advance on progress). A run of
//! a static schedule can run again ([`CollRun::restart`]) on other buffers with another tag:
//! a call whose shape was seen before reuses the schedule, its checks and its buffers, and
//! advancing it allocates nothing.
//!
//! Reductions go through the caller's [`Reducer`], `dst = src (op) dst`, which is MPI's
//! `MPI_User_function(invec = src, inoutvec = dst)`; for [`Operands::DstSrc`] the run feeds
//! it `dst` as `src` and a copy of `src` as `dst`, so non-commutative operations (user
//! functions with `commute = 0`) see their operands in the order the schedule names. When
//! the operation commutes ([`CollRun::set_commutative`]) or the order is already `SrcDst`,
//! and the operands do not overlap, it reduces straight from `src` into `dst`, no copy.

use std::sync::Arc;

use ferry_coll::{Arrival, BufferId, Op, Operands, Range, Schedule};

use super::matching::Pattern;
use super::{Engine, EngineError, ReqId};
use crate::bufpool;

/// Applies the call's reduction: `dst = src (op) dst` element-wise on packed bytes
/// ([`Operands::SrcDst`]); the executor handles the other operand order.
pub type Reducer<'a> = dyn FnMut(&[u8], &mut [u8]) -> Result<(), String> + 'a;

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Waiting,
    Issued,
    Done,
}

struct Pending {
    node: usize,
    req: ReqId,
    /// Receive staging buffer when the message spans several ranges or may come from any
    /// of several peers; `None` when it lands directly in one range.
    staging: Option<Vec<u8>>,
    /// Packed send data kept alive until the send completes.
    _keep: Option<Vec<u8>>,
}

/// The bytes of the messages a failed run sends to release its receivers.
static RELEASE: [u8; 64 << 10] = [0; 64 << 10];

/// One collective call in progress on one rank.
pub struct CollRun {
    sched: Schedule,
    /// World rank of each communicator rank.
    group: Arc<Vec<u32>>,
    ctx: u32,
    tag: i32,
    send: *const u8,
    send_len: usize,
    recv: *mut u8,
    recv_len: usize,
    /// The receive space of a caller that has none (a non-root's result in reduce).
    own_recv: Vec<u8>,
    scratch: Vec<Vec<u8>>,
    state: Vec<State>,
    pending: Vec<Pending>,
    done: usize,
    /// The first operation that names bytes outside its buffers (checked once: the
    /// buffers' lengths are the schedule's), or `usize::MAX`.
    out_of_bounds: usize,
    /// The operations checked so far (those the schedule had when the run was made).
    checked: usize,
    /// Whether the schedule grows while it runs (continuations, `RecvAny`): such a run
    /// cannot run again.
    dynamic: bool,
    /// Peers whose next send (receive) must wait for an earlier one, during one pass;
    /// kept to be reused.
    send_blocked: Vec<usize>,
    recv_blocked: Vec<usize>,
    /// A reduction's copy of its source, kept to be reused.
    operand: Vec<u8>,
    /// Up to which size this rank's sends to local peers are offered for the single copy
    /// (`None`: the engine's limit, 64 KiB by default). At any size where the rank moves
    /// data besides each send (sends to several peers, receives, copies) and reduces
    /// nothing: a receiver reading the sender's buffer leaves it free to do the rest, where
    /// the pipelined copy would keep it busy copying into the ring. Never where it reduces:
    /// its exchanges go faster pipelined. Measured on one host, 2 ranks
    /// (docs/performance.md): scatter, allgather and alltoall of 1 MiB gain; an allreduce
    /// of 64 KiB loses with the single copy (24 against 16 us); a broadcast from a root that
    /// only sends keeps the limit.
    single_copy_max: Option<usize>,
    /// The reduction is commutative: `dst (op) src` may run as `src (op) dst`, without a
    /// copy of an operand ([`CollRun::set_commutative`]).
    commutative: bool,
    /// Cancelled with requests the engine could not take back: buffers they may touch
    /// are never freed.
    abandoned: bool,
}

/// Why a collective could not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CollError {
    Engine(EngineError),
    Truncated { node: usize, expected: usize, got: usize },
    UnexpectedSource { node: usize, source: u32 },
    Reduce(String),
}

impl std::fmt::Display for CollError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CollError::Engine(e) => write!(f, "{e}"),
            CollError::Truncated { node, expected, got } if got == expected => {
                write!(f, "collective step {node}: expected {expected} bytes, got more (ranks disagree on the arguments)")
            }
            CollError::Truncated { node, expected, got } => {
                write!(f, "collective step {node}: expected {expected} bytes, got {got} (ranks disagree on the arguments)")
            }
            CollError::UnexpectedSource { node, source } => write!(f, "collective step {node}: message from unexpected world rank {source}"),
            CollError::Reduce(s) => write!(f, "reduction: {s}"),
        }
    }
}

impl From<EngineError> for CollError {
    fn from(e: EngineError) -> Self {
        CollError::Engine(e)
    }
}

/// The single copy a rank running `sched` offers (see `CollRun::single_copy_max`).
fn single_copy_max(sched: &Schedule) -> Option<usize> {
    let (mut sends, mut moves) = (0, 0);
    for node in sched.nodes() {
        match node.op {
            Op::Reduce { .. } => return Some(0),
            Op::Send { .. } => {
                sends += 1;
                moves += 1;
            }
            Op::Recv { .. } | Op::RecvAny { .. } | Op::Copy { .. } => moves += 1,
        }
    }
    (sends > 0 && moves > 1).then_some(usize::MAX)
}

impl CollRun {
    /// Prepare a run. `send` holds `sched.send_len()` bytes (may be null when 0), `recv`
    /// holds `sched.recv_len()` bytes; a null `recv` gets space of the run's own.
    ///
    /// # Safety
    /// Both buffers must stay valid, and `recv` unaliased, until the run is done or dropped
    /// after [`CollRun::cancel`] (engine requests may still write into them).
    pub unsafe fn new(sched: Schedule, group: impl Into<Arc<Vec<u32>>>, ctx: u32, tag: i32, send: *const u8, recv: *mut u8) -> CollRun {
        let scratch = sched.scratch_buffers().iter().map(|s| bufpool::take_zeroed(s.len)).collect();
        let n = sched.nodes().len();
        let mut run = CollRun {
            send_len: sched.send_len(),
            recv_len: sched.recv_len(),
            dynamic: sched.is_dynamic(),
            sched,
            group: group.into(),
            ctx,
            tag,
            send,
            recv,
            own_recv: Vec::new(),
            scratch,
            state: vec![State::Waiting; n],
            pending: Vec::new(),
            done: 0,
            out_of_bounds: usize::MAX,
            checked: n,
            send_blocked: Vec::new(),
            recv_blocked: Vec::new(),
            operand: Vec::new(),
            abandoned: false,
            single_copy_max: None,
            commutative: false,
        };
        run.single_copy_max = single_copy_max(&run.sched);
        if recv.is_null() && run.recv_len > 0 {
            run.own_recv = vec![0; run.recv_len];
            run.recv = run.own_recv.as_mut_ptr();
        }
        run.fill_scratch();
        run.out_of_bounds = (0..n).find(|&i| !run.in_bounds(&run.sched.nodes()[i].op)).unwrap_or(usize::MAX);
        run
    }

    /// Scratch space declared with contents gets them.
    fn fill_scratch(&mut self) {
        for (buf, s) in self.scratch.iter_mut().zip(self.sched.scratch_buffers()) {
            if let Some(init) = &s.init {
                buf.copy_from_slice(init);
            }
        }
    }

    /// Say that the run's reduction is commutative (MPI's `commute`, true for every
    /// predefined operation), so that a step reducing `dst (op) src` needs no copy.
    pub fn set_commutative(&mut self, yes: bool) {
        self.commutative = yes;
    }

    /// Whether this run moves its messages on context `ctx` among the ranks of `group` (the
    /// very group, not an equal one).
    pub fn runs_on(&self, ctx: u32, group: &Arc<Vec<u32>>) -> bool {
        self.ctx == ctx && Arc::ptr_eq(&self.group, group)
    }

    /// Whether [`restart`](CollRun::restart) may run this again: its schedule is static and
    /// nothing it lent to the engine is still out.
    pub fn reusable(&self) -> bool {
        !self.dynamic && !self.abandoned && self.pending.is_empty()
    }

    /// Make a finished run ready to run its schedule again, for a call of the same shape
    /// on other buffers and with another tag; `false` (and nothing changed) when it cannot
    /// ([`reusable`](CollRun::reusable)).
    ///
    /// # Safety
    /// As for [`CollRun::new`].
    pub unsafe fn restart(&mut self, tag: i32, send: *const u8, recv: *mut u8) -> bool {
        if !self.reusable() {
            return false;
        }
        self.tag = tag;
        self.send = send;
        if recv.is_null() && self.recv_len > 0 {
            if self.own_recv.len() < self.recv_len {
                self.own_recv = vec![0; self.recv_len];
            }
            self.recv = self.own_recv.as_mut_ptr();
        } else {
            self.recv = recv;
        }
        self.state.fill(State::Waiting);
        self.done = 0;
        self.fill_scratch();
        true
    }

    pub fn is_done(&self) -> bool {
        self.done == self.sched.nodes().len() && self.pending.is_empty()
    }

    /// The engine requests this run waits for.
    /// Changes whenever an operation is issued or completes (to tell whether a pass moved).
    pub fn progress_mark(&self) -> (usize, usize) {
        (self.done, self.pending.len())
    }

    pub fn requests(&self) -> impl Iterator<Item = ReqId> + '_ {
        self.pending.iter().map(|p| p.req)
    }

    fn slice(&self, r: &Range) -> &[u8] {
        if r.len == 0 {
            return &[];
        }
        match r.buf {
            // SAFETY: ranges were validated against the declared buffer lengths, and the
            // caller keeps the buffers valid for the run (see `new`).
            BufferId::Send => unsafe { std::slice::from_raw_parts(self.send.add(r.offset), r.len) },
            BufferId::Recv => unsafe { std::slice::from_raw_parts(self.recv.add(r.offset), r.len) },
            BufferId::Scratch(k) => &self.scratch[k as usize][r.offset..r.end()],
        }
    }

    fn ptr_mut(&mut self, r: &Range) -> *mut u8 {
        match r.buf {
            BufferId::Send => unreachable!("schedules never write the send buffer"),
            // SAFETY: in bounds, as in `slice`.
            BufferId::Recv => unsafe { self.recv.add(r.offset) },
            BufferId::Scratch(k) => self.scratch[k as usize][r.offset..].as_mut_ptr(),
        }
    }

    fn write(&mut self, r: &Range, data: &[u8]) {
        debug_assert_eq!(r.len, data.len());
        if r.len == 0 {
            return;
        }
        let p = self.ptr_mut(r);
        // SAFETY: `p` points at `r.len` writable bytes of a buffer this run owns or was lent.
        unsafe { std::ptr::copy(data.as_ptr(), p, r.len) };
    }

    fn gather(&self, data: &[Range]) -> Vec<u8> {
        let mut v = bufpool::take(data.iter().map(|r| r.len).sum());
        let mut off = 0;
        for r in data {
            v[off..off + r.len].copy_from_slice(self.slice(r));
            off += r.len;
        }
        v
    }

    /// Copy `src` to `dst` inside the run's buffers (they may overlap).
    fn copy_within(&mut self, src: &Range, dst: &Range) {
        if src.len == 0 {
            return;
        }
        let from = self.slice(src).as_ptr();
        let to = self.ptr_mut(dst);
        // SAFETY: both ranges were checked against their buffers; `copy` allows overlap.
        unsafe { std::ptr::copy(from, to, src.len) };
    }

    /// `dst = src (op) dst` straight from `src` when the two do not overlap and the
    /// order allows it (`SrcDst`, or a commutative operation); `false`: nothing done, the
    /// caller goes through a copy of `src`.
    fn reduce_in_place(&mut self, src: &Range, dst: &Range, order: Operands, reduce: &mut Reducer<'_>) -> Result<bool, CollError> {
        if order == Operands::DstSrc && !self.commutative {
            return Ok(false);
        }
        if src.len == 0 || dst.len == 0 {
            return Ok(false);
        }
        let d = self.ptr_mut(dst);
        let s = self.slice(src);
        let (s0, d0) = (s.as_ptr() as usize, d as usize);
        if s0 < d0 + dst.len && d0 < s0 + s.len() {
            return Ok(false);
        }
        // SAFETY: dst lies in the receive or a scratch buffer (checked when the run was
        // made), which nothing else touches while this step runs, and does not overlap src.
        let d = unsafe { std::slice::from_raw_parts_mut(d, dst.len) };
        reduce(s, d).map_err(CollError::Reduce)?;
        Ok(true)
    }

    fn range_in_bounds(&self, r: &Range) -> bool {
        let cap = match r.buf {
            BufferId::Send => self.send_len,
            BufferId::Recv => self.recv_len,
            BufferId::Scratch(k) => self.scratch.get(k as usize).map_or(0, |s| s.len()),
        };
        r.end() <= cap
    }

    fn in_bounds(&self, op: &Op) -> bool {
        match op {
            Op::Send { data, .. } | Op::Recv { data, .. } => data.iter().all(|r| self.range_in_bounds(r)),
            Op::RecvAny { from } => from.iter().all(|(_, d)| d.iter().all(|r| self.range_in_bounds(r))),
            Op::Reduce { src, dst, .. } => self.range_in_bounds(src) && self.range_in_bounds(dst),
            Op::Copy { src, dst } => self.range_in_bounds(src) && self.range_in_bounds(dst),
        }
    }

    /// Issue what can be issued, complete what has completed; returns whether the run is done.
    /// A run that fails releases the ranks that wait for it (see [`release_peers`]).
    pub fn advance(&mut self, engine: &mut Engine, reduce: &mut Reducer<'_>) -> Result<bool, CollError> {
        let r = self.advance_inner(engine, reduce);
        if r.is_err() {
            self.release_peers(engine);
        }
        r
    }

    fn advance_inner(&mut self, engine: &mut Engine, reduce: &mut Reducer<'_>) -> Result<bool, CollError> {
        loop {
            let mut moved = self.issue(engine, reduce)?;
            moved |= self.complete(engine)?;
            if !moved {
                return Ok(self.is_done());
            }
        }
    }

    /// This run failed (ranks disagree on the call's arguments, typically): every message it
    /// would still have sent goes out as one of a size its receiver cannot expect, so that
    /// the receiver fails too, with a truncation, and releases the ranks behind it in turn,
    /// instead of waiting for data that will never come. The receiver expects the size this
    /// rank would have sent, or another one (its arguments differ too); it sees one more byte,
    /// or a single byte where it expects large data. The messages carry zeros and belong to
    /// this call's tag only, so no later call can match them.
    fn release_peers(&mut self, engine: &mut Engine) {
        for i in 0..self.sched.nodes().len() {
            if self.state[i] != State::Waiting {
                continue;
            }
            if let Op::Send { peer, data } = &self.sched.nodes()[i].op {
                let len: usize = data.iter().map(|r| r.len).sum();
                let size = if len < RELEASE.len() { len + 1 } else { 1 };
                // SAFETY: RELEASE is a static: valid for as long as the send takes.
                if let Some(req) = unsafe { engine.isend(self.group[*peer], self.ctx, self.tag, RELEASE.as_ptr(), size, false) } {
                    engine.detach(req);
                }
                self.state[i] = State::Done;
            }
        }
    }

    fn issue(&mut self, engine: &mut Engine, reduce: &mut Reducer<'_>) -> Result<bool, CollError> {
        let mut moved = false;
        // Messages to (from) one peer go out (are posted) in operation order.
        self.send_blocked.clear();
        self.recv_blocked.clear();
        let mut any_blocked = false;
        let mut i = 0;
        while i < self.sched.nodes().len() {
            if self.state[i] != State::Waiting {
                i += 1;
                continue;
            }
            let node = &self.sched.nodes()[i];
            let ready = node.deps.iter().all(|&d| self.state[d] == State::Done);
            match &node.op {
                Op::Send { peer, .. } if !ready || self.send_blocked.contains(peer) => {
                    self.send_blocked.push(*peer);
                    i += 1;
                    continue;
                }
                Op::Recv { peer, .. } if !ready || self.recv_blocked.contains(peer) || any_blocked => {
                    self.recv_blocked.push(*peer);
                    i += 1;
                    continue;
                }
                Op::RecvAny { .. } if !ready || any_blocked || !self.recv_blocked.is_empty() => {
                    any_blocked = true;
                    i += 1;
                    continue;
                }
                _ if !ready => {
                    i += 1;
                    continue;
                }
                _ => {}
            }
            // Operations a continuation appended were not checked with the others.
            if i == self.out_of_bounds || (i >= self.checked && !self.in_bounds(&node.op)) {
                return Err(CollError::Reduce(format!("step {i} addresses bytes outside its buffers")));
            }
            moved = true;
            match &node.op {
                Op::Send { peer, data } => {
                    let to = self.group[*peer];
                    // One range goes straight from its buffer: the schedule's validation
                    // guarantees that nothing writes it until this send has completed (ops
                    // that would, depend on it). Several are packed first.
                    let (req, keep) = if data.len() == 1 {
                        let b = self.slice(&data[0]);
                        // SAFETY: the range stays valid and unwritten until completion (above).
                        (unsafe { engine.isend_offering(to, self.ctx, self.tag, b.as_ptr(), b.len(), false, self.single_copy_max) }, None)
                    } else {
                        let packed = self.gather(data);
                        // SAFETY: `packed` is kept in `pending` until the request completes.
                        (unsafe { engine.isend_offering(to, self.ctx, self.tag, packed.as_ptr(), packed.len(), false, self.single_copy_max) }, Some(packed))
                    };
                    match req {
                        Some(req) => {
                            self.pending.push(Pending { node: i, req, staging: None, _keep: keep });
                            self.state[i] = State::Issued;
                        }
                        // The route took it at once: nothing to wait for.
                        None => {
                            if let Some(v) = keep {
                                bufpool::give(v);
                            }
                            self.finish(i, None)
                        }
                    }
                }
                Op::Recv { peer, data } => {
                    let pat = Pattern { ctx: self.ctx, src: Some(self.group[*peer]), tag: Some(self.tag) };
                    let total: usize = data.iter().map(|r| r.len).sum();
                    let (req, staging) = if data.len() == 1 {
                        let r = data[0];
                        let p = self.ptr_mut(&r);
                        // SAFETY: the range lies in a buffer that outlives the request.
                        (unsafe { engine.irecv(pat, p, total) }, None)
                    } else {
                        let mut v = bufpool::take(total);
                        // SAFETY: the staging buffer is kept in `pending` until completion.
                        (unsafe { engine.irecv(pat, v.as_mut_ptr(), total) }, Some(v))
                    };
                    self.pending.push(Pending { node: i, req, staging, _keep: None });
                    self.state[i] = State::Issued;
                }
                Op::RecvAny { from } => {
                    let cap = from.iter().map(|(_, d)| d.iter().map(|r| r.len).sum::<usize>()).max().unwrap_or(0);
                    let mut v = bufpool::take(cap);
                    let pat = Pattern { ctx: self.ctx, src: None, tag: Some(self.tag) };
                    // SAFETY: as above.
                    let req = unsafe { engine.irecv(pat, v.as_mut_ptr(), cap) };
                    self.pending.push(Pending { node: i, req, staging: Some(v), _keep: None });
                    self.state[i] = State::Issued;
                }
                &Op::Copy { src, dst } => {
                    self.copy_within(&src, &dst);
                    self.finish(i, None);
                }
                &Op::Reduce { src, dst, order, .. } => {
                    if self.reduce_in_place(&src, &dst, order, reduce)? {
                        self.finish(i, None);
                        i += 1;
                        continue;
                    }
                    // A copy of src (it may overlap dst); dst is reduced in place.
                    let mut s = std::mem::take(&mut self.operand);
                    s.clear();
                    s.extend_from_slice(self.slice(&src));
                    let d = if dst.len == 0 {
                        &mut [][..]
                    } else {
                        // SAFETY: dst lies in the receive or a scratch buffer (checked above),
                        // which nothing else touches while this step runs.
                        unsafe { std::slice::from_raw_parts_mut(self.ptr_mut(&dst), dst.len) }
                    };
                    let r = match order {
                        Operands::SrcDst => reduce(&s, d),
                        Operands::DstSrc => {
                            // dst = dst (op) src: reduce dst into the copy of src, store it.
                            let r = reduce(d, &mut s);
                            d.copy_from_slice(&s);
                            r
                        }
                    };
                    self.operand = s;
                    r.map_err(CollError::Reduce)?;
                    self.finish(i, None);
                }
            }
            i += 1;
        }
        Ok(moved)
    }

    fn complete(&mut self, engine: &mut Engine) -> Result<bool, CollError> {
        let mut moved = false;
        let mut k = 0;
        while k < self.pending.len() {
            if !engine.is_done(self.pending[k].req) {
                k += 1;
                continue;
            }
            moved = true;
            let p = self.pending.swap_remove(k);
            let st = engine.take(p.req).expect("done above")?;
            match &self.sched.nodes()[p.node].op {
                Op::Send { .. } => {
                    if let Some(v) = p._keep {
                        bufpool::give(v);
                    }
                    self.finish(p.node, None)
                }
                Op::Recv { peer, data } => {
                    let (peer, want) = (*peer, data.iter().map(|r| r.len).sum::<usize>());
                    if st.truncated || st.bytes != want {
                        return Err(CollError::Truncated { node: p.node, expected: want, got: st.bytes });
                    }
                    if let Some(v) = p.staging {
                        self.scatter(p.node, None, &v);
                        bufpool::give(v);
                    }
                    self.finish(p.node, Some(peer));
                }
                Op::RecvAny { from } => {
                    let Some(peer) = self.group.iter().position(|&w| w == st.source) else {
                        return Err(CollError::UnexpectedSource { node: p.node, source: st.source });
                    };
                    let Some((_, data)) = from.iter().find(|(q, _)| *q == peer) else {
                        return Err(CollError::UnexpectedSource { node: p.node, source: st.source });
                    };
                    let want: usize = data.iter().map(|r| r.len).sum();
                    if st.truncated || st.bytes != want {
                        return Err(CollError::Truncated { node: p.node, expected: want, got: st.bytes });
                    }
                    let v = p.staging.expect("recv_any stages");
                    self.scatter(p.node, Some(peer), &v);
                    bufpool::give(v);
                    self.finish(p.node, Some(peer));
                }
                Op::Copy { .. } | Op::Reduce { .. } => unreachable!("local operations complete when issued"),
            }
        }
        Ok(moved)
    }

    /// Write a staged message into the ranges of receive `node` (for a `RecvAny`, those of
    /// the peer `from` that sent it).
    fn scatter(&mut self, node: usize, from: Option<usize>, staged: &[u8]) {
        let mut off = 0;
        let mut k = 0;
        loop {
            let r = match (&self.sched.nodes()[node].op, from) {
                (Op::Recv { data, .. }, _) => data.get(k).copied(),
                (Op::RecvAny { from: f }, Some(peer)) => f.iter().find(|(q, _)| *q == peer).and_then(|(_, d)| d.get(k).copied()),
                _ => None,
            };
            let Some(r) = r else { return };
            self.write(&r, &staged[off..off + r.len]);
            off += r.len;
            k += 1;
        }
    }

    /// Mark node `i` done and run its continuation, which may append nodes.
    fn finish(&mut self, i: usize, source: Option<usize>) {
        self.state[i] = State::Done;
        self.done += 1;
        if let Some(cont) = self.sched.nodes()[i].then.clone() {
            let data = self.gather(&cont.reads);
            (cont.next)(&Arrival { source, data: &data }, &mut self.sched);
            let n = self.sched.nodes().len();
            self.state.resize(n, State::Waiting);
        }
    }

    /// Stop: drop the receives still posted so nothing writes into the buffers later.
    pub fn cancel(&mut self, engine: &mut Engine) {
        for p in self.pending.drain(..) {
            if !engine.cancel(p.req) {
                engine.detach(p.req);
                // The engine may still read or write these: never free or reuse them.
                std::mem::forget(p.staging);
                std::mem::forget(p._keep);
                self.abandoned = true;
            }
        }
    }
}

impl Drop for CollRun {
    fn drop(&mut self) {
        let scratch = std::mem::take(&mut self.scratch);
        if self.abandoned {
            // A detached request may still land in a scratch buffer or the own receive space.
            std::mem::forget(scratch);
            std::mem::forget(std::mem::take(&mut self.own_recv));
        } else {
            scratch.into_iter().for_each(bufpool::give);
        }
    }
}

/// Run a whole collective to completion, blocking (spin, then sleep) while it waits.
///
/// # Safety
/// As for [`CollRun::new`].
#[allow(clippy::too_many_arguments)]
pub unsafe fn run_blocking(
    engine: &mut Engine,
    sched: Schedule,
    group: Vec<u32>,
    ctx: u32,
    tag: i32,
    send: *const u8,
    recv: *mut u8,
    reduce: &mut Reducer<'_>,
    commutative: bool,
) -> Result<(), CollError> {
    // SAFETY: forwarded from the caller.
    let mut run = unsafe { CollRun::new(sched, group, ctx, tag, send, recv) };
    run.set_commutative(commutative);
    let result = loop {
        match run.advance(engine, reduce) {
            Ok(true) => break Ok(()),
            Ok(false) => {}
            Err(e) => break Err(e),
        }
        let reqs: Vec<ReqId> = run.requests().collect();
        if let Err(e) = engine.wait_until(|e| reqs.iter().any(|r| e.is_done(*r))) {
            break Err(e.into());
        }
    };
    if result.is_err() {
        run.cancel(engine);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::single_copy_max;
    use ferry_coll::{algorithm, Params};

    fn offer(id: &str, q: Params) -> Option<usize> {
        single_copy_max(&(algorithm(id).expect("registered").schedule)(&q))
    }

    #[test]
    fn the_single_copy_goes_to_busy_senders_and_not_to_reductions() {
        let n = 1 << 20;
        // A root that only sends keeps the engine's limit; one with a copy to make too, any size.
        assert_eq!(offer("bcast.binomial", Params::uniform(0, 2, 0, n)), None);
        assert_eq!(offer("scatter.linear", Params::uniform(0, 2, 0, n)), Some(usize::MAX));
        assert_eq!(offer("alltoall.pairwise", Params::alltoall(1, 4, n)), Some(usize::MAX));
        // A receiver sends nothing; a reduction never offers it.
        assert_eq!(offer("bcast.binomial", Params::uniform(1, 2, 0, n)), None);
        assert_eq!(offer("allreduce.recursive_doubling", Params::uniform(0, 2, 0, n).elem_size(8)), Some(0));
    }
}
