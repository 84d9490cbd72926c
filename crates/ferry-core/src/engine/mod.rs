//! The engine: matching, eager and rendezvous protocols, requests and progress.
//!
//! One progress loop drives every connection: it reads frames and hands their payloads to
//! posted receives or to the unexpected queue, writes queued frames, and runs the connection
//! handshakes. Blocking waits spin for `FERRY_SPIN_US`, then sleep in `epoll` until a socket
//! is ready, so oversubscribed jobs do not burn cores.
//!
//! Protocols: a message of at most the eager limit travels as one `Eager` frame (flag `SYNC`
//! for a synchronous send, acknowledged by `SyncAck` when matched); a larger one announces
//! itself with `Rts`, and its data follows as `RndvData` frames once the receiver has matched
//! it and answered `Cts`, so it lands straight in the receive buffer.

pub mod collective;
pub mod matching;
pub mod request;

use std::collections::{HashMap, VecDeque};
use std::io;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use ferry_wire::{flags, Header, Kind, Limits, MAX_PAYLOAD};
use mio::{Events, Interest, Poll, Token};

use crate::transport::business_card::BusinessCard;
use crate::transport::handshake::{decide, Acceptor, AcceptorStep, Decision, HandshakeError, Initiator, Out};
use crate::transport::tcp::{Conn, OutFrame, Payload, RxEvent, Sink, TransportError};
use crate::{debug, error, warn};
use matching::{Envelope, MatchQueues, Pattern};
pub use request::{EngineError, ReqId, Status};
use request::{RecvReq, RecvState, Req, ReqKind, SendReq, SendState};

const LISTENER: Token = Token(0);
/// Rendezvous data travels in frames of at most this many bytes.
const RNDV_CHUNK: usize = 4 << 20;
/// A connection that has not even said hello by then is dropped.
const HANDSHAKE_DEADLINE: Duration = Duration::from_secs(10);

/// What the engine needs to start.
pub struct EngineConfig {
    pub rank: u32,
    pub size: u32,
    pub secret: Vec<u8>,
    pub cards: Vec<BusinessCard>,
    pub listener: mio::net::TcpListener,
    pub eager_limit: usize,
    pub spin: Duration,
    pub connect_timeout: Duration,
    /// Kernel send buffer per TCP connection (0: autotuning).
    pub tcp_sndbuf: usize,
}

enum Phase {
    /// Outbound TCP connect in progress; Hello is queued.
    Connecting(Initiator),
    Initiating(Initiator),
    Accepting(Acceptor),
    Established,
}

struct Slot {
    conn: Conn,
    phase: Phase,
    peer: Option<u32>,
    from: SocketAddr,
    opened: Instant,
    /// Where the payload now arriving belongs.
    target: Target,
}

#[derive(Clone, Copy)]
enum Target {
    None,
    /// A matched receive, and the sequence number to acknowledge when the sender is
    /// synchronous.
    Recv(ReqId, Option<u64>),
    Unexpected(u64),
}

#[derive(Default)]
struct Peer {
    conn: Option<usize>,
    connecting: Option<usize>,
    pending: VecDeque<OutFrame>,
    send_seq: u64,
    recv_seq: u64,
    said_bye: bool,
    lost: bool,
}

enum InKind {
    /// `len` is the announced size, known before the payload has arrived.
    Eager { data: Vec<u8>, len: u64, complete: bool, bound: Option<ReqId> },
    Rts { len: u64, cookie: u64 },
}

struct InMsg {
    env: Envelope,
    kind: InKind,
    /// For a synchronous eager message: the sequence number to acknowledge.
    sync: Option<u64>,
}

/// The point-to-point engine of one process.
pub struct Engine {
    me: u32,
    size: u32,
    secret: Vec<u8>,
    cards: Vec<BusinessCard>,
    eager_limit: usize,
    spin: Duration,
    connect_timeout: Duration,
    tcp_sndbuf: usize,
    limits: Limits,
    poll: Poll,
    events: Events,
    listener: mio::net::TcpListener,
    slots: Vec<Option<Slot>>,
    peers: Vec<Peer>,
    queues: MatchQueues<ReqId, u64>,
    inmsgs: HashMap<u64, InMsg>,
    reqs: HashMap<ReqId, Req>,
    next_id: u64,
    sync_waits: HashMap<(u32, u64), ReqId>,
    completed: Vec<u64>,
    /// Scratch list of (token, readable, writable) from the last poll, kept to avoid an
    /// allocation per progress pass.
    ready: Vec<(Token, bool, bool)>,
    fatal: Option<EngineError>,
}

// SAFETY: the raw pointers an engine holds are user buffers that the MPI contract keeps valid
// until their requests complete, whichever thread then drives the engine; the engine itself is
// only ever used by one thread at a time (the API layer keeps it behind a mutex).
unsafe impl Send for Engine {}

fn nonce() -> [u8; 32] {
    let mut n = [0u8; 32];
    getrandom::getrandom(&mut n).expect("the kernel's random source is available");
    n
}

fn out_frame(o: Out) -> OutFrame {
    OutFrame::new(&o.header, Payload::Owned(o.payload), None)
}

impl Engine {
    pub fn new(cfg: EngineConfig) -> io::Result<Engine> {
        let poll = Poll::new()?;
        let mut listener = cfg.listener;
        poll.registry().register(&mut listener, LISTENER, Interest::READABLE)?;
        let mut peers = Vec::with_capacity(cfg.size as usize);
        peers.resize_with(cfg.size as usize, Peer::default);
        Ok(Engine {
            me: cfg.rank,
            size: cfg.size,
            secret: cfg.secret,
            cards: cfg.cards,
            eager_limit: cfg.eager_limit.min(MAX_PAYLOAD as usize),
            spin: cfg.spin,
            connect_timeout: cfg.connect_timeout,
            tcp_sndbuf: cfg.tcp_sndbuf,
            limits: Limits::new(cfg.size),
            poll,
            events: Events::with_capacity(256),
            listener,
            slots: Vec::new(),
            peers,
            queues: MatchQueues::new(),
            inmsgs: HashMap::new(),
            reqs: HashMap::new(),
            next_id: 1,
            sync_waits: HashMap::new(),
            completed: Vec::new(),
            ready: Vec::new(),
            fatal: None,
        })
    }

    pub fn rank(&self) -> u32 {
        self.me
    }

    pub fn size(&self) -> u32 {
        self.size
    }

    pub fn eager_limit(&self) -> usize {
        self.eager_limit
    }

    fn id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    // ----- sends -------------------------------------------------------------------------

    /// Start sending `len` bytes at `ptr` to world rank `dst`.
    ///
    /// # Safety
    /// `ptr..ptr+len` must stay valid and unmodified until the request completes.
    pub unsafe fn isend(&mut self, dst: u32, ctx: u32, tag: i32, ptr: *const u8, len: usize, sync: bool) -> ReqId {
        let rid = self.id();
        self.reqs.insert(rid, Req { kind: ReqKind::Send(SendReq { state: SendState::InFlight, peer: dst }), done: None, detached: false });
        if dst == self.me {
            // SAFETY: the caller guarantees the buffer for the duration of the call.
            let data = if len == 0 { Vec::new() } else { unsafe { std::slice::from_raw_parts(ptr, len) }.to_vec() };
            self.send_to_self(rid, ctx, tag, data, sync);
            return rid;
        }
        if self.peers[dst as usize].lost {
            self.finish(rid, Err(EngineError::PeerLost(dst)));
            return rid;
        }
        let seq = self.next_seq(dst);
        let mut h = Header::new(Kind::Eager);
        h.src = self.me;
        h.dst = dst;
        h.context = ctx;
        h.tag = tag;
        h.seq = seq;
        if len <= self.eager_limit {
            h.len = len as u64;
            if sync {
                h.flags |= flags::SYNC;
                self.sync_waits.insert((dst, seq), rid);
            }
            // The send completes once its bytes are in the kernel (a synchronous one once it
            // is also acknowledged), not when queued here: a rank that returns from MPI and
            // computes must not leave frames behind that only its next MPI call would write.
            let completes = if sync { None } else { Some(rid) };
            self.send_frame(dst, OutFrame::new(&h, Payload::Borrowed { ptr, len }, completes));
        } else {
            h.kind = Kind::Rts;
            h.len = 16;
            let mut p = (len as u64).to_le_bytes().to_vec();
            p.extend_from_slice(&rid.to_le_bytes());
            if let Some(Req { kind: ReqKind::Send(s), .. }) = self.reqs.get_mut(&rid) {
                s.state = SendState::AwaitCts { ptr, len, dst };
            }
            self.send_frame(dst, OutFrame::new(&h, Payload::Owned(p), None));
        }
        self.drain_completed();
        rid
    }

    fn next_seq(&mut self, dst: u32) -> u64 {
        let p = &mut self.peers[dst as usize];
        p.send_seq += 1;
        p.send_seq
    }

    /// Queue a frame for `dst` and try to write it. Returns whether it is still queued.
    fn send_frame(&mut self, dst: u32, f: OutFrame) -> bool {
        let p = &mut self.peers[dst as usize];
        match p.conn {
            Some(c) => {
                let slot = self.slots[c].as_mut().expect("established connection has a slot");
                slot.conn.push(f);
                if let Err(e) = slot.conn.flush(&mut self.completed) {
                    self.conn_failed(c, format!("write to rank {dst}: {e}"));
                    return false;
                }
                !slot_out_empty(&self.slots[c])
            }
            None => {
                p.pending.push_back(f);
                if p.connecting.is_none() {
                    self.connect(dst);
                }
                true
            }
        }
    }

    fn send_to_self(&mut self, rid: ReqId, ctx: u32, tag: i32, data: Vec<u8>, sync: bool) {
        let env = Envelope { ctx, src: self.me, tag };
        let mid = self.id();
        let len = data.len();
        match self.queues.arrive(env, mid) {
            Some((r, _)) => {
                self.deliver_owned(r, env, &data, len as u64);
                self.finish(rid, Ok(Status::default()));
            }
            None => {
                self.inmsgs.insert(mid, InMsg { env, kind: InKind::Eager { len: data.len() as u64, data, complete: true, bound: None }, sync: sync.then_some(rid) });
                if !sync {
                    self.finish(rid, Ok(Status::default()));
                }
            }
        }
    }

    // ----- receives ----------------------------------------------------------------------

    /// Post a receive of at most `cap` bytes into `buf`.
    ///
    /// # Safety
    /// `buf..buf+cap` must stay valid until the request completes or is cancelled.
    pub unsafe fn irecv(&mut self, pat: Pattern, buf: *mut u8, cap: usize) -> ReqId {
        let rid = self.id();
        self.reqs.insert(
            rid,
            Req { kind: ReqKind::Recv(RecvReq { buf, cap, pat, state: RecvState::Posted, status: Status::default() }), done: None, detached: false },
        );
        if let Some(src) = pat.src {
            if src != self.me && self.peers[src as usize].lost && self.queues.peek(&pat).is_none() {
                self.finish(rid, Err(EngineError::PeerLost(src)));
                return rid;
            }
        }
        if let Some((env, mid, rid)) = self.queues.post(pat, rid) {
            self.matched_unexpected(rid, env, mid);
        }
        self.drain_completed();
        rid
    }

    /// A receive met an unexpected message.
    fn matched_unexpected(&mut self, rid: ReqId, env: Envelope, mid: u64) {
        let Some(mut m) = self.inmsgs.remove(&mid) else { return };
        match &mut m.kind {
            InKind::Eager { data, complete: true, .. } => {
                let data = std::mem::take(data);
                self.deliver_owned(rid, env, &data, data.len() as u64);
                self.ack_sync(env.src, m.sync);
            }
            InKind::Eager { complete: false, bound, .. } => {
                *bound = Some(rid);
                if let Some(r) = self.recv_mut(rid) {
                    r.state = RecvState::AwaitEager;
                    r.status.source = env.src;
                }
                self.inmsgs.insert(mid, m);
            }
            InKind::Rts { len, cookie } => {
                let (len, cookie) = (*len, *cookie);
                self.start_rndv_recv(rid, env, len, cookie);
            }
        }
    }

    fn ack_sync(&mut self, src: u32, sync: Option<u64>) {
        let Some(seq) = sync else { return };
        if src == self.me {
            // A synchronous send to self completes when matched; `seq` is its request id.
            self.finish(seq, Ok(Status::default()));
            return;
        }
        let mut h = Header::new(Kind::SyncAck);
        h.src = self.me;
        h.dst = src;
        h.seq = seq;
        self.send_frame(src, OutFrame::new(&h, Payload::None, None));
    }

    fn recv_mut(&mut self, rid: ReqId) -> Option<&mut RecvReq> {
        match self.reqs.get_mut(&rid) {
            Some(Req { kind: ReqKind::Recv(r), .. }) => Some(r),
            _ => None,
        }
    }

    /// Copy a whole message into a matched receive and complete it.
    fn deliver_owned(&mut self, rid: ReqId, env: Envelope, data: &[u8], total: u64) {
        let Some(r) = self.recv_mut(rid) else { return };
        let n = data.len().min(r.cap);
        if n > 0 {
            // SAFETY: `buf` holds `cap` bytes, valid until completion (irecv's contract).
            unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), r.buf, n) };
        }
        let st = Status { source: env.src, tag: env.tag, bytes: n, cancelled: false, truncated: total > r.cap as u64 };
        self.finish(rid, Ok(st));
    }

    fn start_rndv_recv(&mut self, rid: ReqId, env: Envelope, len: u64, cookie: u64) {
        if let Some(r) = self.recv_mut(rid) {
            r.state = RecvState::Rndv { total: len, got: 0 };
            r.status = Status { source: env.src, tag: env.tag, bytes: (len as usize).min(r.cap), cancelled: false, truncated: len > r.cap as u64 };
        }
        let mut h = Header::new(Kind::Cts);
        h.src = self.me;
        h.dst = env.src;
        h.len = 16;
        let mut p = cookie.to_le_bytes().to_vec();
        p.extend_from_slice(&rid.to_le_bytes());
        self.send_frame(env.src, OutFrame::new(&h, Payload::Owned(p), None));
    }

    // ----- probe, cancel, matched probe --------------------------------------------------

    /// The envelope and size of the oldest unexpected message matching `pat` (MPI_Iprobe).
    pub fn peek(&self, pat: &Pattern) -> Option<Status> {
        let (env, mid) = self.queues.peek(pat)?;
        let m = self.inmsgs.get(mid)?;
        Some(Status { source: env.src, tag: env.tag, bytes: msg_len(m), cancelled: false, truncated: false })
    }

    /// Remove the oldest matching unexpected message; receive it later with [`Engine::imrecv`].
    pub fn improbe(&mut self, pat: &Pattern) -> Option<(u64, Status)> {
        let (env, mid) = self.queues.take(pat)?;
        let m = self.inmsgs.get(&mid)?;
        Some((mid, Status { source: env.src, tag: env.tag, bytes: msg_len(m), cancelled: false, truncated: false }))
    }

    /// Receive a message taken by [`Engine::improbe`].
    ///
    /// # Safety
    /// As for [`Engine::irecv`].
    pub unsafe fn imrecv(&mut self, mid: u64, buf: *mut u8, cap: usize) -> ReqId {
        let rid = self.id();
        let env = self.inmsgs.get(&mid).map(|m| m.env).unwrap_or(Envelope { ctx: 0, src: self.me, tag: 0 });
        let pat = Pattern { ctx: env.ctx, src: Some(env.src), tag: Some(env.tag) };
        self.reqs.insert(
            rid,
            Req { kind: ReqKind::Recv(RecvReq { buf, cap, pat, state: RecvState::Posted, status: Status::default() }), done: None, detached: false },
        );
        self.matched_unexpected(rid, env, mid);
        self.drain_completed();
        rid
    }

    /// Cancel a receive that has not matched. True when it was cancelled.
    pub fn cancel(&mut self, rid: ReqId) -> bool {
        let ctx = match self.reqs.get(&rid) {
            Some(Req { kind: ReqKind::Recv(r), done: None, .. }) if matches!(r.state, RecvState::Posted) => r.pat.ctx,
            _ => return false,
        };
        if self.queues.cancel(ctx, |r| *r == rid).is_some() {
            self.finish(rid, Ok(Status { cancelled: true, ..Status::default() }));
            true
        } else {
            false
        }
    }

    // ----- completion --------------------------------------------------------------------

    fn finish(&mut self, rid: ReqId, result: Result<Status, EngineError>) {
        let detached = match self.reqs.get_mut(&rid) {
            Some(r) => {
                if r.done.is_none() {
                    r.done = Some(result);
                }
                r.detached
            }
            None => return,
        };
        if detached {
            self.reqs.remove(&rid);
        }
    }

    fn drain_completed(&mut self) {
        while let Some(rid) = self.completed.pop() {
            self.finish(rid, Ok(Status::default()));
        }
    }

    /// Whether `rid` has completed (its result stays until [`Engine::take`]).
    pub fn is_done(&self, rid: ReqId) -> bool {
        self.reqs.get(&rid).map_or(true, |r| r.done.is_some())
    }

    /// Take a completed request's result and forget the request.
    pub fn take(&mut self, rid: ReqId) -> Option<Result<Status, EngineError>> {
        if self.reqs.get(&rid)?.done.is_some() {
            self.reqs.remove(&rid).and_then(|r| r.done)
        } else {
            None
        }
    }

    /// The user no longer waits for `rid` (MPI_Request_free): it completes on its own.
    pub fn detach(&mut self, rid: ReqId) {
        if let Some(r) = self.reqs.get_mut(&rid) {
            if r.done.is_some() {
                self.reqs.remove(&rid);
            } else {
                r.detached = true;
            }
        }
    }

    /// Requests not yet completed (including detached ones).
    pub fn outstanding(&self) -> usize {
        self.reqs.values().filter(|r| r.done.is_none()).count()
    }

    /// Sends not yet completed, including detached ones.
    pub fn sends_outstanding(&self) -> usize {
        self.reqs.values().filter(|r| r.done.is_none() && matches!(r.kind, ReqKind::Send(_))).count()
    }

    /// Whether a pending request cannot complete because its peer is gone.
    fn check_lost(&mut self) {
        let lost: Vec<(ReqId, u32)> = self
            .reqs
            .iter()
            .filter(|(_, r)| r.done.is_none())
            .filter_map(|(id, r)| {
                let peer = match &r.kind {
                    ReqKind::Send(s) => Some(s.peer),
                    ReqKind::Recv(rr) => match rr.state {
                        RecvState::Posted => rr.pat.src,
                        RecvState::Rndv { .. } | RecvState::Receiving | RecvState::AwaitEager => Some(rr.status.source),
                    },
                }?;
                (peer != self.me && self.peers[peer as usize].lost).then_some((*id, peer))
            })
            .collect();
        for (id, peer) in lost {
            if let Some(Req { kind: ReqKind::Recv(r), .. }) = self.reqs.get(&id) {
                let ctx = r.pat.ctx;
                self.queues.cancel(ctx, |x| *x == id);
            }
            self.finish(id, Err(EngineError::PeerLost(peer)));
        }
    }

    // ----- progress ----------------------------------------------------------------------

    /// Block until `done(self)` holds: poll for `spin`, then sleep on the sockets.
    pub fn wait_until(&mut self, mut done: impl FnMut(&Engine) -> bool) -> Result<(), EngineError> {
        if done(self) {
            return Ok(());
        }
        let start = Instant::now();
        let mut spins = 0u32;
        loop {
            let sleep = spins > 16 && start.elapsed() >= self.spin;
            self.progress(if sleep { Some(Duration::from_millis(250)) } else { Some(Duration::ZERO) })?;
            if done(self) {
                return Ok(());
            }
            if !sleep {
                // Give the core away between polls: on a loaded machine the kernel's network
                // work (and the peer) may need it to make the data we wait for arrive.
                std::thread::yield_now();
            }
            spins += 1;
        }
    }

    /// One pass of the progress loop; waits up to `timeout` for a socket to be ready.
    pub fn progress(&mut self, timeout: Option<Duration>) -> Result<(), EngineError> {
        if let Some(e) = &self.fatal {
            return Err(e.clone());
        }
        if let Err(e) = self.poll.poll(&mut self.events, timeout) {
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(EngineError::Transport(format!("epoll: {e}")));
            }
        }
        let mut ready = std::mem::take(&mut self.ready);
        ready.clear();
        ready.extend(self.events.iter().map(|e| (e.token(), e.is_readable() || e.is_read_closed() || e.is_error(), e.is_writable())));
        for &(tok, readable, writable) in &ready {
            if tok == LISTENER {
                self.accept_all();
                continue;
            }
            let c = tok.0 - 1;
            if readable {
                if let Some(slot) = self.slots[c].as_mut() {
                    slot.conn.mark_readable();
                }
            }
            if writable {
                self.on_writable(c);
            }
            if readable {
                self.on_readable(c);
            }
        }
        self.ready = ready;
        self.drain_completed();
        if timeout.map_or(true, |t| !t.is_zero()) {
            self.housekeeping();
        }
        if let Some(e) = &self.fatal {
            return Err(e.clone());
        }
        Ok(())
    }

    fn housekeeping(&mut self) {
        let now = Instant::now();
        let stale: Vec<usize> = self
            .slots
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.as_ref().filter(|s| matches!(&s.phase, Phase::Accepting(a) if a.awaiting_hello()) && now - s.opened > HANDSHAKE_DEADLINE).map(|_| i))
            .collect();
        for c in stale {
            if let Some(s) = self.slots[c].as_ref() {
                warn!("tcp", "refused connection from {}: no hello within {HANDSHAKE_DEADLINE:?}", s.from);
            }
            self.close(c);
        }
        // Only the TCP connect itself is timed: authentication waits on the peer's
        // application, which may legitimately be busy for a long time.
        let unreachable = self.slots.iter().flatten().find(|s| matches!(s.phase, Phase::Connecting(_)) && now - s.opened > self.connect_timeout);
        if let Some(s) = unreachable {
            self.fatal = Some(EngineError::Transport(format!(
                "could not connect to rank {} at {} within {:?}",
                s.peer.unwrap_or(0),
                s.from,
                self.connect_timeout
            )));
        }
        self.check_lost();
    }

    fn accept_all(&mut self) {
        loop {
            match self.listener.accept() {
                Ok((stream, from)) => {
                    let acc = Acceptor::new(self.me, nonce());
                    self.add_slot(stream, Phase::Accepting(acc), None, from);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    warn!("tcp", "accept failed: {e}");
                    return;
                }
            }
        }
    }

    fn add_slot(&mut self, mut stream: mio::net::TcpStream, phase: Phase, peer: Option<u32>, from: SocketAddr) -> Option<usize> {
        let idx = self.slots.iter().position(Option::is_none).unwrap_or_else(|| {
            self.slots.push(None);
            self.slots.len() - 1
        });
        if let Err(e) = self.poll.registry().register(&mut stream, Token(idx + 1), Interest::READABLE | Interest::WRITABLE) {
            warn!("tcp", "cannot watch connection from {from}: {e}");
            return None;
        }
        self.slots[idx] = Some(Slot { conn: Conn::new(stream, self.tcp_sndbuf), phase, peer, from, opened: Instant::now(), target: Target::None });
        Some(idx)
    }

    fn connect(&mut self, dst: u32) {
        let addr = self.cards[dst as usize].addr;
        debug!("tcp", "connecting to rank {dst} at {addr}");
        match mio::net::TcpStream::connect(addr) {
            Ok(stream) => {
                let (init, hello) = Initiator::start(self.me, dst, nonce());
                if let Some(c) = self.add_slot(stream, Phase::Connecting(init), Some(dst), addr) {
                    self.slots[c].as_mut().expect("just added").conn.push(out_frame(hello));
                    self.peers[dst as usize].connecting = Some(c);
                    // A local connect usually completes at once: say hello now rather than
                    // at the next progress call, which may be far away if the user computes.
                    self.on_writable(c);
                }
            }
            Err(e) => {
                self.fatal = Some(EngineError::Transport(format!("cannot connect to rank {dst} at {addr}: {e}")));
            }
        }
    }

    fn on_writable(&mut self, c: usize) {
        let Some(slot) = self.slots[c].as_mut() else { return };
        if let Phase::Connecting(_) = slot.phase {
            match slot.conn.stream.take_error() {
                Ok(Some(e)) | Err(e) => {
                    let peer = slot.peer.unwrap_or(0);
                    let msg = format!("cannot connect to rank {peer} at {}: {e}", slot.from);
                    self.conn_failed(c, msg);
                    return;
                }
                Ok(None) => {}
            }
            if slot.conn.stream.peer_addr().is_err() {
                return; // not connected yet
            }
            let Phase::Connecting(init) = std::mem::replace(&mut slot.phase, Phase::Established) else { unreachable!() };
            slot.phase = Phase::Initiating(init);
        }
        if let Err(e) = slot.conn.flush(&mut self.completed) {
            let peer = slot.peer;
            self.conn_failed(c, format!("write to rank {peer:?}: {e}"));
        }
    }

    fn on_readable(&mut self, c: usize) {
        loop {
            let Some(slot) = self.slots[c].as_mut() else { return };
            if matches!(slot.phase, Phase::Connecting(_)) {
                return;
            }
            let initiating = matches!(slot.phase, Phase::Initiating(_));
            let ev = match slot.conn.poll_rx(&self.limits) {
                Ok(ev) => ev,
                // A reset during our own handshake is the peer dropping a connection it does
                // not need (it chose ours the other way, or it finished and closed): the same
                // as a close, which reconnects only if frames still wait.
                Err(TransportError::Io(e)) if initiating => {
                    debug!("tcp", "connection being set up was reset: {e}");
                    self.on_eof(c);
                    return;
                }
                Err(e) => {
                    self.bad_input(c, format!("{e}"));
                    return;
                }
            };
            match ev {
                RxEvent::WouldBlock => return,
                RxEvent::Eof => {
                    self.on_eof(c);
                    return;
                }
                RxEvent::Header(h) => {
                    let sink = match self.on_header(c, &h) {
                        Ok(s) => s,
                        Err(msg) => {
                            self.bad_input(c, msg);
                            return;
                        }
                    };
                    if h.len == 0 {
                        if let Err(msg) = self.on_payload(c, h, sink) {
                            self.bad_input(c, msg);
                            return;
                        }
                    } else if let Some(slot) = self.slots[c].as_mut() {
                        slot.conn.start_payload(h, sink);
                    }
                }
                RxEvent::Payload(h, sink) => {
                    if let Err(msg) = self.on_payload(c, h, sink) {
                        self.bad_input(c, msg);
                        return;
                    }
                }
            }
        }
    }

    /// A frame header arrived on connection `c`: choose where its payload goes.
    fn on_header(&mut self, c: usize, h: &Header) -> Result<Sink, String> {
        let slot = self.slots[c].as_mut().expect("reading a live slot");
        if !matches!(slot.phase, Phase::Established) {
            return Ok(Sink::Vec(Vec::with_capacity(h.len as usize)));
        }
        let peer = slot.peer.expect("established connections know their peer");
        if h.src != peer || h.dst != self.me {
            return Err(format!("frame from rank {} to {} on the connection of rank {peer}", h.src, h.dst));
        }
        match h.kind {
            Kind::Eager => {
                self.check_seq(peer, h.seq)?;
                let env = Envelope { ctx: h.context, src: peer, tag: h.tag };
                let mid = self.id();
                let sync = (h.flags & flags::SYNC != 0).then_some(h.seq);
                match self.queues.arrive(env, mid) {
                    Some((rid, _)) => {
                        let r = self.recv_mut(rid).expect("posted receives are live requests");
                        r.state = RecvState::Receiving;
                        r.status = Status { source: peer, tag: h.tag, bytes: (h.len as usize).min(r.cap), cancelled: false, truncated: h.len > r.cap as u64 };
                        let sink = Sink::Mem { ptr: r.buf, cap: r.cap, off: 0 };
                        // Acknowledge a synchronous send only once its whole payload is
                        // here: the sender's buffer may still hold bytes not yet written.
                        self.set_target(c, Target::Recv(rid, sync));
                        Ok(sink)
                    }
                    None => {
                        self.inmsgs.insert(mid, InMsg { env, kind: InKind::Eager { data: Vec::new(), len: h.len, complete: false, bound: None }, sync });
                        self.set_target(c, Target::Unexpected(mid));
                        Ok(Sink::Vec(Vec::with_capacity(h.len as usize)))
                    }
                }
            }
            Kind::Rts => {
                self.check_seq(peer, h.seq)?;
                Ok(Sink::Vec(Vec::with_capacity(16)))
            }
            Kind::Cts => Ok(Sink::Vec(Vec::with_capacity(16))),
            Kind::RndvData => {
                let rid = h.seq;
                match self.reqs.get_mut(&rid) {
                    Some(Req { kind: ReqKind::Recv(r), done: None, .. }) => match r.state {
                        RecvState::Rndv { got, total } if r.status.source == peer && got + h.len <= total => {
                            let sink = Sink::Mem { ptr: r.buf, cap: r.cap, off: got as usize };
                            self.set_target(c, Target::Recv(rid, None));
                            Ok(sink)
                        }
                        _ => Err(format!("rendezvous data for request {rid} that does not expect it")),
                    },
                    _ => Err(format!("rendezvous data for unknown request {rid}")),
                }
            }
            Kind::SyncAck | Kind::Bye => Ok(Sink::Discard),
            k => Err(format!("{k:?} frame on an established connection")),
        }
    }

    fn set_target(&mut self, c: usize, t: Target) {
        if let Some(s) = self.slots[c].as_mut() {
            s.target = t;
        }
    }

    fn check_seq(&mut self, peer: u32, seq: u64) -> Result<(), String> {
        let p = &mut self.peers[peer as usize];
        if seq != p.recv_seq + 1 {
            return Err(format!("sequence number {seq} from rank {peer}, expected {}", p.recv_seq + 1));
        }
        p.recv_seq = seq;
        Ok(())
    }

    /// A whole frame (header and payload) arrived on connection `c`.
    fn on_payload(&mut self, c: usize, h: Header, sink: Sink) -> Result<(), String> {
        let slot = self.slots[c].as_mut().expect("reading a live slot");
        let payload = match sink {
            Sink::Vec(v) => v,
            _ => Vec::new(),
        };
        match &mut slot.phase {
            Phase::Established => {}
            Phase::Connecting(_) => unreachable!("no reads before the connect completes"),
            Phase::Initiating(init) => {
                return match init.on_frame(&self.secret, &h, &payload) {
                    Ok(Some(out)) => {
                        slot.conn.push(out_frame(out));
                        let r = slot.conn.flush(&mut self.completed);
                        r.map_err(|e| e.to_string())
                    }
                    Ok(None) => {
                        let peer = init.peer();
                        self.established(c, peer);
                        Ok(())
                    }
                    Err(HandshakeError::Rejected(reason)) => {
                        let peer = init.peer();
                        debug!("tcp", "rank {peer} declined our connection ({reason:?}); using theirs");
                        self.peers[peer as usize].connecting = None;
                        self.close(c);
                        Ok(())
                    }
                    Err(e) => {
                        let peer = init.peer();
                        self.fatal = Some(EngineError::Transport(format!("handshake with rank {peer} failed: {e}")));
                        self.close(c);
                        Ok(())
                    }
                };
            }
            Phase::Accepting(acc) => {
                return match acc.on_frame(&self.secret, &h, &payload) {
                    Ok(AcceptorStep::Send(out)) => {
                        slot.conn.push(out_frame(out));
                        slot.conn.flush(&mut self.completed).map_err(|e| e.to_string())
                    }
                    Ok(AcceptorStep::Authenticated { peer }) => {
                        let p = &self.peers[peer as usize];
                        let d = decide(self.me, peer, p.conn.is_some(), p.connecting.is_some());
                        let v = acc.verdict(peer, d);
                        slot.conn.push(out_frame(v));
                        let _ = slot.conn.flush(&mut self.completed);
                        match d {
                            Decision::Accept => self.established(c, peer),
                            Decision::Reject(r) => {
                                debug!("tcp", "declined a second connection from rank {peer} ({r:?})");
                                self.close(c);
                            }
                        }
                        Ok(())
                    }
                    Err(e) => Err(format!("handshake: {e}")),
                };
            }
        }
        let peer = slot.peer.expect("established");
        let target = std::mem::replace(&mut slot.target, Target::None);
        match h.kind {
            Kind::Eager => match target {
                Target::Recv(rid, sync) => {
                    self.finish_received(rid);
                    self.ack_sync(peer, sync);
                }
                Target::Unexpected(mid) => {
                    let Some(m) = self.inmsgs.get_mut(&mid) else { return Ok(()) };
                    let InKind::Eager { data, complete, bound, .. } = &mut m.kind else { return Ok(()) };
                    *data = payload;
                    *complete = true;
                    if let Some(rid) = bound.take() {
                        let m = self.inmsgs.remove(&mid).expect("present above");
                        let InKind::Eager { data, .. } = m.kind else { unreachable!() };
                        self.deliver_owned(rid, m.env, &data, data.len() as u64);
                        self.ack_sync(peer, m.sync);
                    }
                }
                Target::None => {}
            },
            Kind::Rts => {
                if payload.len() != 16 {
                    return Err("short RTS".into());
                }
                let len = u64::from_le_bytes(payload[0..8].try_into().expect("16-byte payload"));
                let cookie = u64::from_le_bytes(payload[8..16].try_into().expect("16-byte payload"));
                let env = Envelope { ctx: h.context, src: peer, tag: h.tag };
                let mid = self.id();
                match self.queues.arrive(env, mid) {
                    Some((rid, _)) => self.start_rndv_recv(rid, env, len, cookie),
                    None => {
                        self.inmsgs.insert(mid, InMsg { env, kind: InKind::Rts { len, cookie }, sync: None });
                    }
                }
            }
            Kind::Cts => {
                if payload.len() != 16 {
                    return Err("short CTS".into());
                }
                let sid = u64::from_le_bytes(payload[0..8].try_into().expect("16-byte payload"));
                let rcookie = u64::from_le_bytes(payload[8..16].try_into().expect("16-byte payload"));
                let (ptr, len, dst) = match self.reqs.get_mut(&sid) {
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
                    let slot = self.slots[c].as_mut().expect("live");
                    slot.conn.push(OutFrame::new(&dh, p, last.then_some(sid)));
                    off += n;
                }
                let slot = self.slots[c].as_mut().expect("live");
                slot.conn.flush(&mut self.completed).map_err(|e| e.to_string())?;
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

    fn finish_received(&mut self, rid: ReqId) {
        if let Some(r) = self.recv_mut(rid) {
            let st = r.status;
            self.finish(rid, Ok(st));
        }
    }

    fn established(&mut self, c: usize, peer: u32) {
        debug!("tcp", "connection to rank {peer} established");
        let p = &mut self.peers[peer as usize];
        if p.connecting == Some(c) {
            p.connecting = None;
        }
        p.conn = Some(c);
        let pending = std::mem::take(&mut p.pending);
        let slot = self.slots[c].as_mut().expect("live");
        slot.phase = Phase::Established;
        slot.peer = Some(peer);
        slot.conn.out.extend(pending);
        if let Err(e) = slot.conn.flush(&mut self.completed) {
            self.conn_failed(c, format!("write to rank {peer}: {e}"));
        }
    }

    /// Malformed or unexpected bytes on connection `c`.
    fn bad_input(&mut self, c: usize, msg: String) {
        let Some(slot) = self.slots[c].as_ref() else { return };
        match (&slot.phase, slot.peer) {
            (Phase::Established, Some(peer)) if self.peers[peer as usize].said_bye => {
                debug!("tcp", "rank {peer} closed after its goodbye: {msg}");
                self.peers[peer as usize].conn = None;
                self.close(c);
            }
            (Phase::Established, Some(peer)) => {
                error!("tcp", "protocol error from rank {peer}: {msg}");
                self.fatal = Some(EngineError::Transport(format!("protocol error from rank {peer}: {msg}")));
                self.close(c);
            }
            (Phase::Initiating(_), Some(peer)) => {
                self.fatal = Some(EngineError::Transport(format!("handshake with rank {peer} failed: {msg}")));
                self.close(c);
            }
            _ => {
                warn!("tcp", "refused connection from {}: {msg}", slot.from);
                self.close(c);
            }
        }
    }

    fn on_eof(&mut self, c: usize) {
        let Some(slot) = self.slots[c].as_ref() else { return };
        match (&slot.phase, slot.peer) {
            (Phase::Established, Some(peer)) => {
                let p = &mut self.peers[peer as usize];
                if !p.said_bye {
                    p.lost = true;
                    debug!("tcp", "connection to rank {peer} closed without goodbye");
                }
                p.conn = None;
                self.close(c);
                self.check_lost();
            }
            (Phase::Initiating(_), Some(peer)) => {
                // The peer closed during our handshake: it chose the other connection, or
                // dropped ours. Try again while frames wait and no other connection exists.
                self.peers[peer as usize].connecting = None;
                self.close(c);
                let p = &self.peers[peer as usize];
                if p.conn.is_none() && !p.pending.is_empty() && !p.lost {
                    self.connect(peer);
                }
            }
            _ => {
                debug!("tcp", "unauthenticated connection from {} closed", slot.from);
                self.close(c);
            }
        }
    }

    fn conn_failed(&mut self, c: usize, msg: String) {
        if matches!(self.slots[c].as_ref().map(|s| &s.phase), Some(Phase::Initiating(_))) {
            // As for a reset while reading: the peer dropped a connection in set-up.
            debug!("tcp", "{msg}");
            self.on_eof(c);
            return;
        }
        let peer = self.slots[c].as_ref().and_then(|s| s.peer);
        if let Some(peer) = peer {
            let established = self.peers[peer as usize].conn == Some(c);
            if established || self.peers[peer as usize].connecting == Some(c) {
                self.fatal = Some(EngineError::Transport(msg));
            }
        }
        self.close(c);
    }

    fn close(&mut self, c: usize) {
        if let Some(mut slot) = self.slots[c].take() {
            let _ = self.poll.registry().deregister(&mut slot.conn.stream);
            if let Some(peer) = slot.peer {
                let p = &mut self.peers[peer as usize];
                if p.conn == Some(c) {
                    p.conn = None;
                }
                if p.connecting == Some(c) {
                    p.connecting = None;
                }
            }
        }
    }

    /// Orderly shutdown: say goodbye to every connected peer and write everything queued.
    pub fn finalize(&mut self) -> Result<(), EngineError> {
        for peer in 0..self.size {
            if self.peers[peer as usize].conn.is_some() {
                let mut h = Header::new(Kind::Bye);
                h.src = self.me;
                h.dst = peer;
                self.send_frame(peer, OutFrame::new(&h, Payload::None, None));
            }
        }
        // Everything queued must reach its peer, and every send (including those the user
        // freed) must finish, or a peer waiting for that data would hang; a lost peer ends
        // the wait through the error it raises.
        self.wait_until(|e| {
            let written = e.slots.iter().flatten().all(|s| s.conn.out.is_empty() || !matches!(s.phase, Phase::Established));
            let sent = e.peers.iter().all(|p| p.pending.is_empty() || p.lost);
            written && sent && e.sends_outstanding() == 0
        })
    }

    /// The address this engine advertises in its business card.
    pub fn listen_addr(&self) -> SocketAddr {
        self.cards[self.me as usize].addr
    }

    /// Number of connections in each phase, for tests and `FERRY_LOG=debug`.
    pub fn connection_count(&self) -> usize {
        self.slots.iter().flatten().filter(|s| matches!(s.phase, Phase::Established)).count()
    }
}

fn slot_out_empty(s: &Option<Slot>) -> bool {
    s.as_ref().map_or(true, |s| s.conn.out.is_empty())
}

fn msg_len(m: &InMsg) -> usize {
    match &m.kind {
        InKind::Eager { len, .. } => *len as usize,
        InKind::Rts { len, .. } => *len as usize,
    }
}
