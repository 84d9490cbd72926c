//! The point-to-point protocol core, sans-IO: matching, eager and rendezvous transfers,
//! synchronous sends, cancel, probe and matched probe, for one rank.
//!
//! Calls and inbound frames go in (through [`Deliver`], which routes call); frames to send
//! ([`Protocol::next_frame`]), single-copy reads to perform ([`Protocol::next_read`]) and
//! completed requests come out. No sockets, clocks or threads: the engine drives it over
//! real routes, the tests over in-memory ones, step by step.
//!
//! Protocols (the same frames on every route): a message of at most the route's eager limit
//! travels as one `Eager` frame (flag `SYNC` for a synchronous send, acknowledged by
//! `SyncAck` once matched); a larger one announces itself with `Rts`, and its data follows as
//! `RndvData` frames once the receiver has matched it and answered `Cts`, so it lands straight
//! in the receive buffer. Between ranks of one host that may read each other's memory, the
//! `Rts` carries the address of the send buffer: the receiver copies the message out with one
//! read and answers `RndvFin`. Sequence numbers per ordered pair are checked on `Eager` and
//! `Rts`.

use crate::small_copy::copy_bytes;
use std::collections::VecDeque;

use ferry_wire::{flags, Header, Kind};

use super::matching::{Envelope, MatchQueues, Pattern};
use super::request::{EngineError, RecvReq, RecvState, Req, ReqId, ReqKind, SendReq, SendState, Status};
use super::slab::Slab;
use crate::fastmap::FastMap;
use crate::transport::{Deliver, OutFrame, Payload, Sink};

mod departed;
mod fault;
mod peers;
pub use fault::REVOKE_CONTEXT;
mod rendezvous;
mod unexpected;

/// Rendezvous data travels in frames of at most this many bytes.
pub const RNDV_CHUNK: usize = 4 << 20;

/// Buffers of unexpected messages up to this size are recycled, and at most this many kept
/// (a quarter of a megabyte at the most).
const SPARE_MAX: usize = 1024;
const SPARE_COUNT: usize = 256;

/// Where the payload of the frame now arriving from a peer belongs.
#[derive(Clone, Copy)]
enum Target {
    None,
    /// A matched receive, and the sequence number to acknowledge when the sender is
    /// synchronous.
    Recv(ReqId, Option<u64>),
    Unexpected(u64),
}

enum InKind {
    /// `len` is the announced size, known before the payload has arrived.
    Eager { data: Vec<u8>, len: u64, complete: bool, bound: Option<ReqId> },
    /// `addr`: where the sender's buffer is, when it may be read directly.
    Rts { len: u64, cookie: u64, addr: Option<u64> },
}

struct InMsg {
    env: Envelope,
    kind: InKind,
    /// For a synchronous eager message: the sequence number to acknowledge.
    sync: Option<u64>,
}

#[derive(Default)]
struct PeerState {
    send_seq: u64,
    recv_seq: u64,
    eager_limit: usize,
    /// On this host: it may hand us the address of its buffer.
    local: bool,
    lost: bool,
    said_bye: bool,
    /// The frame now arriving from this peer.
    rx: Option<Target>,
}

/// A copy straight out of a local sender's memory, for the driver to perform (then
/// [`Protocol::read_done`]).
#[derive(Clone, Copy, Debug)]
pub struct RemoteRead {
    pub rid: ReqId,
    pub peer: u32,
    /// Address in the sender's address space.
    pub addr: u64,
    pub buf: *mut u8,
    pub len: usize,
    /// The sender's request, to name in `RndvFin` (or `Cts` when the read fails).
    cookie: u64,
}

/// The protocol state of one rank.
pub struct Protocol {
    me: u32,
    peers: Vec<PeerState>,
    queues: MatchQueues<ReqId, u64>,
    /// Unexpected messages, by the id the matching queues hold.
    inmsgs: Slab<InMsg>,
    /// Buffers of small unexpected messages already delivered, kept for the next ones: a
    /// message that arrives before its receive costs no allocation.
    spare: Vec<Vec<u8>>,
    reqs: Slab<Req>,
    sync_waits: FastMap<(u32, u64), ReqId>,
    outbox: VecDeque<(u32, OutFrame)>,
    reads: VecDeque<RemoteRead>,
    /// Whether this rank reads a local sender's buffer when its `Rts` carries the address.
    single_copy: bool,
    /// The longest message whose `Rts` to a local peer carries its address (when
    /// `single_copy`): longer ones go through the ring, pipelined.
    single_copy_max: usize,
    /// Requests that started (+) or ended (-) moving data since the driver last looked.
    busy_delta: i64,
    /// Contexts revoked (`fault.rs`), and those a peer's notice revoked, not yet reported.
    revoked: Vec<u32>,
    revoked_by_peers: Vec<u32>,
}

// SAFETY: the raw pointers held are user buffers that the MPI contract keeps valid until
// their requests complete, whichever thread then drives the protocol.
unsafe impl Send for Protocol {}

impl Protocol {
    /// Rank `me` of `size`; every peer starts with `eager_limit` and as remote.
    pub fn new(me: u32, size: u32, eager_limit: usize) -> Protocol {
        let mut peers = Vec::with_capacity(size as usize);
        peers.resize_with(size as usize, || PeerState { eager_limit, ..PeerState::default() });
        Protocol {
            me,
            peers,
            queues: MatchQueues::new(),
            inmsgs: Slab::default(),
            spare: Vec::new(),
            reqs: Slab::default(),
            sync_waits: FastMap::default(),
            outbox: VecDeque::new(),
            reads: VecDeque::new(),
            single_copy: false,
            single_copy_max: 0,
            busy_delta: 0,
            revoked: Vec::new(),
            revoked_by_peers: Vec::new(),
        }
    }

    /// `n` more peers, remote, reached with messages of at most `eager_limit` bytes sent
    /// eagerly (processes of another job joined at run time); they are numbered after the
    /// peers known so far.
    pub fn add_peers(&mut self, n: u32, eager_limit: usize) {
        let len = self.peers.len() + n as usize;
        self.peers.resize_with(len, || PeerState { eager_limit, ..PeerState::default() });
    }

    /// Peers known, this rank included.
    pub fn peer_count(&self) -> u32 {
        self.peers.len() as u32
    }

    /// `peer` is on this host, reached with messages of at most `eager_limit` bytes sent
    /// eagerly.
    pub fn set_local(&mut self, peer: u32, eager_limit: usize) {
        let p = &mut self.peers[peer as usize];
        p.local = true;
        p.eager_limit = eager_limit;
    }

    /// Whether rendezvous between local ranks copies straight out of the sender, whatever
    /// the size.
    pub fn set_single_copy(&mut self, yes: bool) {
        self.set_single_copy_up_to(if yes { Some(usize::MAX) } else { None });
    }

    /// `Some(max)`: this rank reads local senders' buffers whose address comes with their
    /// `Rts`, and offers its own for messages up to `max` bytes; `None`: neither.
    pub fn set_single_copy_up_to(&mut self, max: Option<usize>) {
        self.single_copy = max.is_some();
        self.single_copy_max = max.unwrap_or(0);
    }

    pub fn rank(&self) -> u32 {
        self.me
    }

    pub fn eager_limit_to(&self, dst: u32) -> usize {
        self.peers[dst as usize].eager_limit
    }

    // ----- what comes out -----------------------------------------------------------------

    /// The next frame to send, and to whom.
    pub fn next_frame(&mut self) -> Option<(u32, OutFrame)> {
        self.outbox.pop_front()
    }

    pub fn has_frames(&self) -> bool {
        !self.outbox.is_empty()
    }

    /// Whether anything waits for the driver: frames, reads, or a change of the busy count.
    #[inline]
    pub fn has_output(&self) -> bool {
        !self.outbox.is_empty() || !self.reads.is_empty() || self.busy_delta != 0
    }

    /// The next single-copy read to perform.
    pub fn next_read(&mut self) -> Option<RemoteRead> {
        self.reads.pop_front()
    }

    /// Requests that began (+) or ended (-) moving data since the last call.
    pub fn take_busy_delta(&mut self) -> i64 {
        std::mem::take(&mut self.busy_delta)
    }

    // ----- sends --------------------------------------------------------------------------

    /// The sequence number of a small eager send of `len` bytes to `dst` that needs no
    /// request, when one may be taken: call [`commit_eager`](Self::commit_eager) once the
    /// route took the frame.
    #[inline]
    pub fn eager_seq(&self, dst: u32, len: usize) -> Option<u64> {
        let p = &self.peers[dst as usize];
        if dst == self.me || p.lost || len > p.eager_limit {
            return None;
        }
        Some(p.send_seq + 1)
    }

    /// Our world rank.
    #[inline]
    pub fn me(&self) -> u32 {
        self.me
    }

    /// An `Eager` header from us to `dst` with this envelope, size and sequence number.
    #[inline]
    fn envelope_header(&self, dst: u32, ctx: u32, tag: i32, len: usize, seq: u64) -> Header {
        let mut h = Header::new(Kind::Eager);
        h.src = self.me;
        h.dst = dst;
        h.context = ctx;
        h.tag = tag;
        h.len = len as u64;
        h.seq = seq;
        h
    }

    /// The frame of [`eager_seq`](Self::eager_seq) left.
    #[inline]
    pub fn commit_eager(&mut self, dst: u32) {
        self.peers[dst as usize].send_seq += 1;
    }

    /// Start sending `len` bytes at `ptr` to rank `dst`.
    ///
    /// # Safety
    /// `ptr..ptr+len` must stay valid and unmodified until the request completes.
    pub unsafe fn isend(&mut self, dst: u32, ctx: u32, tag: i32, ptr: *const u8, len: usize, sync: bool) -> ReqId {
        let max = self.single_copy_max;
        // SAFETY: passed on from our caller.
        unsafe { self.isend_up_to(dst, ctx, tag, ptr, len, sync, max) }
    }

    /// [`isend`](Self::isend), offering the single copy (where this rank has it) for
    /// messages up to `single_copy_max` bytes instead of the rank's own limit.
    ///
    /// # Safety
    /// As [`isend`](Self::isend)'s.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn isend_up_to(&mut self, dst: u32, ctx: u32, tag: i32, ptr: *const u8, len: usize, sync: bool, single_copy_max: usize) -> ReqId {
        let rid = self.reqs.insert(Req { kind: ReqKind::Send(SendReq { state: SendState::InFlight, peer: dst }), done: None, detached: false, busy: false });
        if dst == self.me {
            // SAFETY: the caller guarantees the buffer for the duration of the call.
            let data = if len == 0 { Vec::new() } else { unsafe { std::slice::from_raw_parts(ptr, len) }.to_vec() };
            self.send_to_self(rid, ctx, tag, data, sync);
            return rid;
        }
        if self.peers[dst as usize].lost || self.is_revoked(ctx) {
            let e = if self.is_revoked(ctx) { EngineError::Revoked(ctx) } else { EngineError::PeerLost(dst) };
            self.finish(rid, Err(e));
            return rid;
        }
        self.mark_busy(rid);
        let seq = self.next_seq(dst);
        let mut h = self.envelope_header(dst, ctx, tag, len, seq);
        let p = &self.peers[dst as usize];
        if len == 0 || len <= p.eager_limit {
            if sync {
                h.flags |= flags::SYNC;
                self.sync_waits.insert((dst, h.seq), rid);
            }
            // A standard send completes once its bytes are out, a synchronous one once it is
            // also acknowledged.
            let completes = if sync { None } else { Some(rid) };
            self.outbox.push_back((dst, OutFrame::new(&h, Payload::Borrowed { ptr, len }, completes)));
        } else {
            h.kind = Kind::Rts;
            let mut body = (len as u64).to_le_bytes().to_vec();
            body.extend_from_slice(&rid.to_le_bytes());
            if p.local && self.single_copy && len <= single_copy_max {
                body.extend_from_slice(&(ptr as u64).to_le_bytes());
            }
            h.len = body.len() as u64;
            if let Some(Req { kind: ReqKind::Send(s), .. }) = self.reqs.get_mut(rid) {
                s.state = SendState::AwaitCts { ptr, len, dst };
            }
            self.outbox.push_back((dst, OutFrame::new(&h, Payload::Owned(body), None)));
        }
        rid
    }

    fn next_seq(&mut self, dst: u32) -> u64 {
        let p = &mut self.peers[dst as usize];
        p.send_seq += 1;
        p.send_seq
    }

    fn send_to_self(&mut self, rid: ReqId, ctx: u32, tag: i32, data: Vec<u8>, sync: bool) {
        let env = Envelope { ctx, src: self.me, tag };
        let len = data.len();
        match self.queues.take_posted(&env) {
            Some(r) => {
                self.deliver_owned(r, env, &data, len as u64);
                self.finish(rid, Ok(Status::default()));
            }
            None => {
                let mid = self.inmsgs.insert(InMsg { env, kind: InKind::Eager { len: len as u64, data, complete: true, bound: None }, sync: sync.then_some(rid) });
                self.queues.push_unexpected(env, mid);
                if !sync {
                    self.finish(rid, Ok(Status::default()));
                }
            }
        }
    }

    /// A frame that completes `rid` was written by its route.
    pub fn frame_written(&mut self, rid: ReqId) {
        self.finish(rid, Ok(Status::default()));
    }

    // ----- receives -----------------------------------------------------------------------

    /// Post a receive of at most `cap` bytes into `buf`.
    ///
    /// # Safety
    /// `buf..buf+cap` must stay valid until the request completes or is cancelled.
    pub unsafe fn irecv(&mut self, pat: Pattern, buf: *mut u8, cap: usize) -> ReqId {
        let rid = self.reqs.insert(Req { kind: ReqKind::Recv(RecvReq { buf, cap, pat, state: RecvState::Posted, status: Status::default() }), done: None, detached: false, busy: false });
        if self.is_revoked(pat.ctx) {
            self.finish(rid, Err(EngineError::Revoked(pat.ctx)));
            return rid;
        }
        if let Some(src) = pat.src {
            if src != self.me && self.peers[src as usize].lost && self.queues.peek(&pat).is_none() {
                self.finish(rid, Err(EngineError::PeerLost(src)));
                return rid;
            }
        }
        if let Some((env, mid, rid)) = self.queues.post(pat, rid) {
            self.matched_unexpected(rid, env, mid);
        }
        rid
    }

    /// A receive met an unexpected message.
    fn matched_unexpected(&mut self, rid: ReqId, env: Envelope, mid: u64) {
        let Some(m) = self.inmsgs.get_mut(mid) else { return };
        if let InKind::Eager { complete: false, bound, .. } = &mut m.kind {
            // Its payload is still arriving: the receive waits for it, the message stays.
            *bound = Some(rid);
            if let Some(r) = self.recv_mut(rid) {
                r.state = RecvState::AwaitEager;
                r.status.source = env.src;
            }
            self.mark_busy(rid);
            return;
        }
        let mut m = self.inmsgs.remove(mid).expect("present above");
        match &mut m.kind {
            InKind::Eager { data, .. } => {
                let data = std::mem::take(data);
                self.deliver_owned(rid, env, &data, data.len() as u64);
                self.ack_sync(env.src, m.sync);
                self.recycle(data);
            }
            InKind::Rts { len, cookie, addr } => {
                let (len, cookie, addr) = (*len, *cookie, *addr);
                self.start_rndv_recv(rid, env, len, cookie, addr);
            }
        }
    }

    #[inline]
    fn ack_sync(&mut self, src: u32, sync: Option<u64>) {
        if let Some(seq) = sync {
            self.send_sync_ack(src, seq);
        }
    }

    /// Acknowledge the synchronous send `seq` of `src`, which matched a receive.
    #[cold]
    fn send_sync_ack(&mut self, src: u32, seq: u64) {
        if src == self.me {
            // A synchronous send to self completes when matched; `seq` is its request id.
            self.finish(seq, Ok(Status::default()));
            return;
        }
        let mut h = Header::new(Kind::SyncAck);
        h.src = self.me;
        h.dst = src;
        h.seq = seq;
        self.outbox.push_back((src, OutFrame::new(&h, Payload::None, None)));
    }

    fn recv_mut(&mut self, rid: ReqId) -> Option<&mut RecvReq> {
        match self.reqs.get_mut(rid) {
            Some(Req { kind: ReqKind::Recv(r), .. }) => Some(r),
            _ => None,
        }
    }

    /// Copy a whole message into a matched receive and complete it.
    #[inline]
    fn deliver_owned(&mut self, rid: ReqId, env: Envelope, data: &[u8], total: u64) {
        let Some(req) = self.reqs.get_mut(rid) else { return };
        let ReqKind::Recv(r) = &mut req.kind else { return };
        let n = data.len().min(r.cap);
        if n > 0 {
            // SAFETY: `buf` holds `cap` bytes, valid until completion (irecv's contract).
            copy_bytes(unsafe { std::slice::from_raw_parts_mut(r.buf, n) }, &data[..n]);
        }
        let st = Status { source: env.src, tag: env.tag, bytes: n, cancelled: false, truncated: total > r.cap as u64 };
        if complete(req, Ok(st), &mut self.busy_delta) {
            self.reqs.remove(rid);
        }
    }

    // ----- completion ---------------------------------------------------------------------

    /// Count `rid` as moving data until it completes.
    fn mark_busy(&mut self, rid: ReqId) {
        if let Some(r) = self.reqs.get_mut(rid) {
            if !r.busy && r.done.is_none() {
                r.busy = true;
                self.busy_delta += 1;
            }
        }
    }

    #[inline(always)]
    fn finish(&mut self, rid: ReqId, result: Result<Status, EngineError>) {
        let Some(r) = self.reqs.get_mut(rid) else { return };
        if complete(r, result, &mut self.busy_delta) {
            self.reqs.remove(rid);
        }
    }

    fn finish_received(&mut self, rid: ReqId) {
        if let Some(r) = self.recv_mut(rid) {
            let st = r.status;
            self.finish(rid, Ok(st));
        }
    }

    /// Whether `rid` has completed (its result stays until [`take`](Self::take)). A request
    /// that is gone counts as done.
    #[inline]
    pub fn is_done(&self, rid: ReqId) -> bool {
        self.reqs.get(rid).map_or(true, |r| r.done.is_some())
    }

    /// Take a completed request's result and forget the request.
    #[inline]
    pub fn take(&mut self, rid: ReqId) -> Option<Result<Status, EngineError>> {
        self.reqs.remove_if(rid, |r| r.done.take())
    }

    /// The user no longer waits for `rid` (MPI_Request_free): it completes on its own.
    pub fn detach(&mut self, rid: ReqId) {
        if let Some(r) = self.reqs.get_mut(rid) {
            if r.done.is_some() {
                self.reqs.remove(rid);
            } else {
                r.detached = true;
            }
        }
    }

    /// Whether any request is known (pending, or completed and not yet taken).
    #[inline]
    pub fn has_requests(&self) -> bool {
        !self.reqs.is_empty()
    }

    /// Requests not yet completed (including detached ones).
    pub fn outstanding(&self) -> usize {
        self.reqs.iter().filter(|(_, r)| r.done.is_none()).count()
    }

    /// Sends not yet completed, including detached ones.
    pub fn sends_outstanding(&self) -> usize {
        self.reqs.iter().filter(|(_, r)| r.done.is_none() && matches!(r.kind, ReqKind::Send(_))).count()
    }

    // ----- inbound frames -----------------------------------------------------------------

    fn check_seq(&mut self, peer: u32, seq: u64) -> Result<(), String> {
        let p = &mut self.peers[peer as usize];
        if seq != p.recv_seq + 1 {
            return Err(format!("sequence number {seq} from rank {peer}, expected {}", p.recv_seq + 1));
        }
        p.recv_seq = seq;
        Ok(())
    }

    /// A frame on the route of `peer` must come from it and be meant for us.
    fn check_addressed(&self, peer: u32, h: &Header) -> Result<(), String> {
        if h.src != peer || h.dst != self.me {
            return Err(format!("frame from rank {} to {} on the route of rank {peer}", h.src, h.dst));
        }
        Ok(())
    }

    /// The envelope of an eager frame from `peer` whose sequence number is the next one, and
    /// the number to acknowledge when the send is synchronous.
    fn eager_envelope(&mut self, peer: u32, h: &Header) -> Result<(Envelope, Option<u64>), String> {
        self.check_seq(peer, h.seq)?;
        let sync = (h.flags & flags::SYNC != 0).then_some(h.seq);
        Ok((Envelope { ctx: h.context, src: peer, tag: h.tag }, sync))
    }

    /// Where the payload of a frame from `peer` goes.
    fn on_header(&mut self, peer: u32, h: &Header, whole: bool) -> Result<(Sink, Target), String> {
        self.check_addressed(peer, h)?;
        match h.kind {
            Kind::Eager => {
                let (env, sync) = self.eager_envelope(peer, h)?;
                if env.ctx == REVOKE_CONTEXT {
                    self.on_revoke_notice(h.tag);
                    return Ok((Sink::Discard, Target::None));
                }
                match self.queues.take_posted(&env) {
                    Some(rid) => {
                        let r = self.recv_mut(rid).expect("posted receives are live requests");
                        r.state = RecvState::Receiving;
                        r.status = Status { source: peer, tag: h.tag, bytes: (h.len as usize).min(r.cap), cancelled: false, truncated: h.len > r.cap as u64 };
                        let sink = Sink::Mem { ptr: r.buf, cap: r.cap, off: 0 };
                        if h.len > 0 && !whole {
                            self.mark_busy(rid);
                        }
                        // Acknowledge a synchronous send only once its whole payload is
                        // here: the sender's buffer may still hold bytes not yet written.
                        Ok((sink, Target::Recv(rid, sync)))
                    }
                    None => {
                        let mid = self.inmsgs.insert(InMsg { env, kind: InKind::Eager { data: Vec::new(), len: h.len, complete: false, bound: None }, sync });
                        self.queues.push_unexpected(env, mid);
                        Ok((Sink::Vec(Vec::with_capacity(h.len as usize)), Target::Unexpected(mid)))
                    }
                }
            }
            Kind::Rts => {
                self.check_seq(peer, h.seq)?;
                Ok((Sink::Vec(Vec::with_capacity(24)), Target::None))
            }
            Kind::Cts => Ok((Sink::Vec(Vec::with_capacity(16)), Target::None)),
            Kind::RndvData => {
                let rid = h.seq;
                match self.reqs.get_mut(rid) {
                    Some(Req { kind: ReqKind::Recv(r), done: None, .. }) => match r.state {
                        RecvState::Rndv { got, total } if r.status.source == peer && got + h.len <= total => {
                            Ok((Sink::Mem { ptr: r.buf, cap: r.cap, off: got as usize }, Target::Recv(rid, None)))
                        }
                        _ => Err(format!("rendezvous data for request {rid} that does not expect it")),
                    },
                    _ => Err(format!("rendezvous data for unknown request {rid}")),
                }
            }
            Kind::SyncAck | Kind::RndvFin | Kind::Bye => Ok((Sink::Discard, Target::None)),
            k => Err(format!("{k:?} frame on an established route")),
        }
    }

    /// A whole frame from `peer` arrived; `payload` holds it when it went to an owned buffer.
    fn on_frame(&mut self, peer: u32, h: Header, payload: Vec<u8>, target: Target) -> Result<(), String> {
        match h.kind {
            Kind::Eager => match target {
                Target::Recv(rid, sync) => {
                    self.finish_received(rid);
                    self.ack_sync(peer, sync);
                }
                Target::Unexpected(mid) => {
                    let Some(m) = self.inmsgs.get_mut(mid) else { return Ok(()) };
                    let InKind::Eager { data, complete, bound, .. } = &mut m.kind else { return Ok(()) };
                    *data = payload;
                    *complete = true;
                    if let Some(rid) = bound.take() {
                        let m = self.inmsgs.remove(mid).expect("present above");
                        let InKind::Eager { data, .. } = m.kind else { unreachable!() };
                        self.deliver_owned(rid, m.env, &data, data.len() as u64);
                        self.ack_sync(peer, m.sync);
                    }
                }
                Target::None => {}
            },
            Kind::Rts => {
                if payload.len() != 16 && payload.len() != 24 {
                    return Err(format!("RTS of {} bytes", payload.len()));
                }
                let word = |i: usize| u64::from_le_bytes(payload[8 * i..8 * i + 8].try_into().expect("8-byte field"));
                let (len, cookie) = (word(0), word(1));
                // Only a local peer can hand us an address to read from.
                let addr = (payload.len() == 24).then(|| word(2));
                if addr.is_some() && !self.peers[peer as usize].local {
                    return Err("RTS with a buffer address over the network".into());
                }
                let env = Envelope { ctx: h.context, src: peer, tag: h.tag };
                match self.queues.take_posted(&env) {
                    Some(rid) => self.start_rndv_recv(rid, env, len, cookie, addr),
                    None => {
                        let mid = self.inmsgs.insert(InMsg { env, kind: InKind::Rts { len, cookie, addr }, sync: None });
                        self.queues.push_unexpected(env, mid);
                    }
                }
            }
            Kind::RndvFin => match self.reqs.get_mut(h.seq) {
                Some(Req { kind: ReqKind::Send(SendReq { state: s @ SendState::AwaitCts { .. }, peer: dst }), .. }) if *dst == peer => {
                    *s = SendState::InFlight;
                    self.finish(h.seq, Ok(Status::default()));
                }
                _ => return Err(format!("completion of unknown rendezvous send {}", h.seq)),
            },
            Kind::Cts => {
                if payload.len() != 16 {
                    return Err("short CTS".into());
                }
                let sid = u64::from_le_bytes(payload[0..8].try_into().expect("16-byte payload"));
                let rcookie = u64::from_le_bytes(payload[8..16].try_into().expect("16-byte payload"));
                let (ptr, len, dst) = match self.reqs.get_mut(sid) {
                    Some(Req { kind: ReqKind::Send(SendReq { state: s @ SendState::AwaitCts { .. }, .. }), .. }) => {
                        let SendState::AwaitCts { ptr, len, dst } = std::mem::replace(s, SendState::InFlight) else { unreachable!() };
                        (ptr, len, dst)
                    }
                    _ => return Err(format!("CTS for unknown send {sid}")),
                };
                if dst != peer {
                    return Err(format!("CTS from rank {peer} for a send to rank {dst}"));
                }
                let mut off = 0;
                while off < len {
                    let n = RNDV_CHUNK.min(len - off);
                    let mut dh = Header::new(Kind::RndvData);
                    dh.src = self.me;
                    dh.dst = dst;
                    dh.seq = rcookie;
                    dh.len = n as u64;
                    let last = off + n == len;
                    // SAFETY: the send buffer stays valid until this request completes, which
                    // happens only once the last chunk is written.
                    let p = Payload::Borrowed { ptr: unsafe { ptr.add(off) }, len: n };
                    self.outbox.push_back((dst, OutFrame::new(&dh, p, last.then_some(sid))));
                    off += n;
                }
            }
            Kind::RndvData => {
                if let Target::Recv(rid, _) = target {
                    let done = match self.recv_mut(rid) {
                        Some(RecvReq { state: RecvState::Rndv { total, got }, .. }) => {
                            *got += h.len;
                            *got == *total
                        }
                        _ => false,
                    };
                    if done {
                        self.finish_received(rid);
                    }
                }
            }
            Kind::SyncAck => match self.sync_waits.remove(&(peer, h.seq)) {
                Some(rid) => self.finish(rid, Ok(Status::default())),
                None => return Err(format!("acknowledgement of unknown synchronous send {}", h.seq)),
            },
            Kind::Bye => self.peers[peer as usize].said_bye = true,
            _ => {}
        }
        Ok(())
    }
}

impl Deliver for Protocol {
    /// A whole eager frame in one step: copied straight into the receive it matches, or kept
    /// as an unexpected message in a recycled buffer; other frames take the general way.
    fn whole(&mut self, peer: u32, h: Header, payload: &[u8]) -> Result<(), String> {
        if h.kind != Kind::Eager || peer as usize >= self.peers.len() {
            let mut sink = self.header(peer, &h, true)?;
            sink.put(payload);
            return self.frame(peer, h, sink);
        }
        self.check_addressed(peer, &h)?;
        let (env, sync) = self.eager_envelope(peer, &h)?;
        if env.ctx == REVOKE_CONTEXT {
            self.on_revoke_notice(h.tag);
            return Ok(());
        }
        match self.queues.take_posted(&env) {
            Some(rid) => {
                self.deliver_owned(rid, env, payload, h.len);
                self.ack_sync(peer, sync);
            }
            None => {
                let data = self.held_copy(payload);
                let mid = self.inmsgs.insert(InMsg { env, kind: InKind::Eager { data, len: h.len, complete: true, bound: None }, sync });
                self.queues.push_unexpected(env, mid);
            }
        }
        Ok(())
    }

    fn header(&mut self, peer: u32, h: &Header, whole: bool) -> Result<Sink, String> {
        if peer as usize >= self.peers.len() {
            return Err(format!("frame from unknown rank {peer}"));
        }
        let (sink, target) = self.on_header(peer, h, whole)?;
        self.peers[peer as usize].rx = Some(target);
        Ok(sink)
    }

    fn frame(&mut self, peer: u32, h: Header, sink: Sink) -> Result<(), String> {
        let target = self.peers[peer as usize].rx.take().unwrap_or(Target::None);
        self.on_frame(peer, h, sink.into_vec(), target)
    }
}

/// Complete `r` with `result` unless it is complete already; true when nobody waits for it
/// any more (freed by the user), so that the caller removes it.
#[inline(always)]
fn complete(r: &mut Req, result: Result<Status, EngineError>, busy_delta: &mut i64) -> bool {
    if r.done.is_none() {
        r.done = Some(result);
        if std::mem::take(&mut r.busy) {
            *busy_delta -= 1;
        }
    }
    r.detached
}

fn msg_len(m: &InMsg) -> usize {
    match &m.kind {
        InKind::Eager { len, .. } => *len as usize,
        InKind::Rts { len, .. } => *len as usize,
    }
}

#[cfg(test)]
#[path = "protocol_tests.rs"]
mod tests;
