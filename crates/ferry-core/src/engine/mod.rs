//! The engine: matching, eager and rendezvous protocols, requests and progress.
//!
//! One progress loop drives every route to a peer: TCP connections to other hosts and
//! shared-memory rings to ranks of this host. It reads frames and hands their payloads to
//! posted receives or to the unexpected queue, writes queued frames, and runs the connection
//! handshakes. Blocking waits spin for `FERRY_SPIN_US`, then sleep in `epoll` until a socket
//! is ready or a local peer kicks us (see `transport::shm::host`), so oversubscribed jobs do
//! not burn cores.
//!
//! Protocols (the same frames on both routes): a message of at most the route's eager limit
//! travels as one `Eager` frame (flag `SYNC` for a synchronous send, acknowledged by `SyncAck`
//! when matched); a larger one announces itself with `Rts`. Over TCP, and over shared memory
//! when single-copy reads are not permitted, its data follows as `RndvData` frames once the
//! receiver has matched it and answered `Cts`, so it lands straight in the receive buffer
//! (through the ring, the two copies of sender and receiver overlap piece by piece). Between
//! ranks of one host that may read each other's memory, the `Rts` carries the address of the
//! send buffer: the receiver copies the message out with one `process_vm_readv` and answers
//! `RndvFin`.
//!
//! The status board: every request that moves data (a send to another rank until it
//! completes, a receive from its match until its last byte) counts on this rank's slot.

pub mod collective;
pub mod matching;
pub mod request;

use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ferry_wire::{flags, Header, Kind, Limits, HEADER_LEN, MAX_PAYLOAD};
use mio::{Events, Interest, Poll, Token};

use crate::fastmap::FastMap;
use crate::transport::business_card::BusinessCard;
use crate::transport::handshake::{decide, Acceptor, AcceptorStep, Decision, HandshakeError, Initiator, Out};
use crate::transport::shm::{read_remote_exact, HostShm, Link, PartialWrite, StatusBoard};
use crate::transport::tcp::{Conn, OutFrame, Payload, RxEvent, Sink, TransportError};
use crate::{debug, error, warn};
use matching::{Envelope, MatchQueues, Pattern};
pub use request::{EngineError, ReqId, Status};
use request::{RecvReq, RecvState, Req, ReqKind, SendReq, SendState};

/// The id of a send that completed inside [`Engine::isend`]: always done, never tracked.
pub const DONE: ReqId = 0;

const LISTENER: Token = Token(0);
/// Kicks from local peers (a datagram: "look at the rings").
const SHM_WAKE: Token = Token(usize::MAX - 1);
/// [`Engine::waker`]: another thread of this process wants the sleeping engine to look up.
const WAKER: Token = Token(usize::MAX);
/// Polls of the rings between two looks at the sockets while spinning.
const RING_POLLS_PER_EPOLL: u32 = 32;
/// How long a wait on local peers polls the rings without giving the core away: about one
/// shared-memory round trip, so that a ping-pong never pays for a system call.
const TIGHT_SPIN: Duration = Duration::from_micros(3);
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
    /// Shared memory with the other ranks of this host, when they talk through it.
    pub shm: Option<ShmConfig>,
}

/// The shared-memory side of an engine: its host's segment and the ring ends to each local
/// peer (see [`HostShm::join`]).
pub struct ShmConfig {
    pub host: HostShm,
    pub links: Vec<(u32, Link)>,
    /// Largest message sent eagerly through a ring.
    pub eager_limit: usize,
    /// Whether large messages may be copied straight out of the sender (`process_vm_readv`).
    pub single_copy: bool,
}

/// A local peer's rings, with the frames waiting for room in ours.
struct ShmPeer {
    link: Link,
    out: VecDeque<OutFrame>,
    /// Progress of `out.front()` when it is written in pieces.
    cursor: PartialWrite,
    /// Frames up to this size go into the ring whole, larger ones in pieces.
    whole_max: usize,
    /// A frame whose pieces are arriving.
    incoming: Option<Incoming>,
}

struct Incoming {
    header: Header,
    sink: Sink,
    target: Target,
    got: u64,
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
    /// Talks through shared memory (its rings are in `shm`, or briefly taken out while
    /// being read, when frames for it wait in `deferred`).
    local: bool,
    shm: Option<Box<ShmPeer>>,
    deferred: VecDeque<OutFrame>,
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
    inmsgs: FastMap<u64, InMsg>,
    reqs: FastMap<ReqId, Req>,
    next_id: u64,
    sync_waits: FastMap<(u32, u64), ReqId>,
    completed: Vec<u64>,
    /// Scratch list of (token, readable, writable) from the last poll, kept to avoid an
    /// allocation per progress pass.
    ready: Vec<(Token, bool, bool)>,
    fatal: Option<EngineError>,
    host: Option<HostShm>,
    /// World ranks reached through shared memory, ascending.
    local_peers: Vec<u32>,
    shm_eager_limit: usize,
    single_copy: bool,
    waker: Arc<mio::Waker>,
    /// Bumped whenever bytes move (a frame or piece read, a ring write): a wait that sees it
    /// move keeps spinning instead of going to sleep in the middle of a transfer.
    activity: u64,
    /// How long a wait on local peers polls without yielding the core (see `TIGHT_SPIN`).
    tight_spin: Duration,
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
        let waker = Arc::new(mio::Waker::new(poll.registry(), WAKER)?);
        let mut peers = Vec::with_capacity(cfg.size as usize);
        peers.resize_with(cfg.size as usize, Peer::default);
        let (mut host, mut local_peers, mut shm_eager_limit, mut single_copy) = (None, Vec::new(), 0, false);
        if let Some(shm) = cfg.shm {
            let fd = shm.host.wake.as_raw_fd();
            poll.registry().register(&mut mio::unix::SourceFd(&fd), SHM_WAKE, Interest::READABLE)?;
            for (r, link) in shm.links {
                let whole_max = link.tx.capacity() / 4 - ferry_wire::HEADER_LEN;
                let p = &mut peers[r as usize];
                p.local = true;
                p.shm = Some(Box::new(ShmPeer { link, out: VecDeque::new(), cursor: PartialWrite::new(), whole_max, incoming: None }));
                local_peers.push(r);
            }
            local_peers.sort_unstable();
            shm_eager_limit = shm.eager_limit.min(MAX_PAYLOAD as usize);
            single_copy = shm.single_copy;
            host = Some(shm.host);
        }
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
            inmsgs: FastMap::default(),
            reqs: FastMap::default(),
            next_id: 1,
            sync_waits: FastMap::default(),
            completed: Vec::new(),
            ready: Vec::new(),
            fatal: None,
            host,
            local_peers,
            shm_eager_limit,
            single_copy,
            waker,
            activity: 0,
            tight_spin: TIGHT_SPIN,
        })
    }

    /// On a host with more ranks than cores the rank a wait depends on may need this core:
    /// give it away (`sched_yield`) from the first poll on.
    pub fn set_oversubscribed(&mut self, yes: bool) {
        self.tight_spin = if yes { Duration::ZERO } else { TIGHT_SPIN };
    }

    /// Wakes this engine from its sleep in another thread's wait (e.g. to stop a progress
    /// thread).
    pub fn waker(&self) -> Arc<mio::Waker> {
        self.waker.clone()
    }

    /// The file descriptor that becomes readable when this engine has something to do
    /// (an `epoll` instance): a progress thread may sleep on it without holding the engine.
    /// Call [`prepare_sleep`](Self::prepare_sleep) first and [`end_sleep`](Self::end_sleep)
    /// after, so that local peers kick it.
    pub fn event_fd(&self) -> std::os::fd::RawFd {
        self.poll.as_raw_fd()
    }

    /// Announce a sleep on [`event_fd`](Self::event_fd); false when there is work already
    /// (then do not sleep, but still call `end_sleep`).
    pub fn prepare_sleep(&mut self) -> bool {
        match &self.host {
            Some(h) => {
                h.bell.begin_sleep();
                !self.shm_ready()
            }
            None => true,
        }
    }

    /// End a sleep announced by [`prepare_sleep`](Self::prepare_sleep).
    pub fn end_sleep(&mut self) {
        if let Some(h) = &self.host {
            h.bell.end_sleep();
        }
    }

    /// This rank's doorbell, for a thread that sleeps on [`event_fd`](Self::event_fd)
    /// without holding the engine.
    pub fn doorbell(&self) -> Option<crate::transport::shm::Doorbell> {
        self.host.as_ref().map(|h| h.bell.clone())
    }

    /// Whether a shared-memory ring has something for us now (see `prepare_sleep`).
    pub fn rings_pending(&self) -> bool {
        self.shm_ready()
    }

    /// Whether world rank `r` is reached through shared memory.
    pub fn is_local_peer(&self, r: u32) -> bool {
        self.peers.get(r as usize).is_some_and(|p| p.local)
    }

    /// The eager limit towards world rank `dst`.
    pub fn eager_limit_to(&self, dst: u32) -> usize {
        if self.is_local_peer(dst) {
            self.shm_eager_limit
        } else {
            self.eager_limit
        }
    }

    /// This host's status board and the world rank of each of its slots, when this rank
    /// shares memory with others.
    pub fn status_board(&self) -> Option<(&StatusBoard, &[u32])> {
        self.host.as_ref().map(|h| (&h.board, h.locals.as_slice()))
    }

    /// Transfers world rank `r` has in flight, read from the status board: `Some` for the
    /// ranks of this host (ourselves included) when it has one, `None` otherwise.
    pub fn peer_in_flight(&self, r: u32) -> Option<u32> {
        let h = self.host.as_ref()?;
        h.local_of(r).map(|l| h.board.in_flight(l))
    }

    /// Count `rid` on our status slot until it completes.
    fn mark_busy(&mut self, rid: ReqId) {
        if let Some(r) = self.reqs.get_mut(&rid) {
            if !r.busy && r.done.is_none() {
                r.busy = true;
                if let Some(h) = &self.host {
                    h.board.begin_transfer(h.local);
                }
            }
        }
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
        // A small message to a local peer whose ring has room is done once copied in: no
        // request to track.
        let mut h = Header::new(Kind::Eager);
        h.src = self.me;
        h.dst = dst;
        h.context = ctx;
        h.tag = tag;
        h.len = len as u64;
        let p = &mut self.peers[dst as usize];
        if let Some(sp) = p.shm.as_mut().filter(|sp| !sync && len <= sp.whole_max && len <= self.shm_eager_limit && sp.out.is_empty()) {
            h.seq = p.send_seq + 1;
            // SAFETY: the caller guarantees the buffer for the duration of the call.
            let payload = if len == 0 { &[][..] } else { unsafe { std::slice::from_raw_parts(ptr, len) } };
            if sp.link.tx.try_write(&h.encode(), payload) {
                p.send_seq += 1;
                return DONE;
            }
        }
        let rid = self.id();
        self.reqs.insert(rid, Req { kind: ReqKind::Send(SendReq { state: SendState::InFlight, peer: dst }), done: None, detached: false, busy: false });
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
        self.mark_busy(rid);
        h.seq = self.next_seq(dst);
        let local = self.peers[dst as usize].local;
        if len == 0 || len <= if local { self.shm_eager_limit } else { self.eager_limit } {
            if sync {
                h.flags |= flags::SYNC;
                self.sync_waits.insert((dst, h.seq), rid);
            }
            // The send completes once its bytes are in the kernel (a synchronous one once it
            // is also acknowledged), not when queued here: a rank that returns from MPI and
            // computes must not leave frames behind that only its next MPI call would write.
            let completes = if sync { None } else { Some(rid) };
            self.send_frame(dst, OutFrame::new(&h, Payload::Borrowed { ptr, len }, completes));
        } else {
            h.kind = Kind::Rts;
            let mut p = (len as u64).to_le_bytes().to_vec();
            p.extend_from_slice(&rid.to_le_bytes());
            if local && self.single_copy {
                p.extend_from_slice(&(ptr as u64).to_le_bytes());
            }
            h.len = p.len() as u64;
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
        if p.local {
            return match p.shm.as_mut() {
                Some(s) => {
                    s.out.push_back(f);
                    self.shm_flush(dst);
                    self.peers[dst as usize].shm.as_ref().is_some_and(|s| !s.out.is_empty())
                }
                None => {
                    p.deferred.push_back(f);
                    true
                }
            };
        }
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
            Req { kind: ReqKind::Recv(RecvReq { buf, cap, pat, state: RecvState::Posted, status: Status::default() }), done: None, detached: false, busy: false },
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
                self.mark_busy(rid);
                self.inmsgs.insert(mid, m);
            }
            InKind::Rts { len, cookie, addr } => {
                let (len, cookie, addr) = (*len, *cookie, *addr);
                self.start_rndv_recv(rid, env, len, cookie, addr);
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

    fn start_rndv_recv(&mut self, rid: ReqId, env: Envelope, len: u64, cookie: u64, addr: Option<u64>) {
        let Some(r) = self.recv_mut(rid) else { return };
        r.state = RecvState::Rndv { total: len, got: 0 };
        r.status = Status { source: env.src, tag: env.tag, bytes: (len as usize).min(r.cap), cancelled: false, truncated: len > r.cap as u64 };
        let (buf, n, status) = (r.buf, r.status.bytes, r.status);
        self.mark_busy(rid);
        if let Some(addr) = addr.filter(|_| self.single_copy && self.peers[env.src as usize].local) {
            let pid = self.cards[env.src as usize].id.pid as libc::pid_t;
            // SAFETY: `buf` holds `cap >= n` bytes, valid until this receive completes.
            let dst = if n == 0 { &mut [][..] } else { unsafe { std::slice::from_raw_parts_mut(buf, n) } };
            match read_remote_exact(pid, addr as usize, dst) {
                Ok(()) => {
                    self.finish(rid, Ok(status));
                    let mut h = Header::new(Kind::RndvFin);
                    h.src = self.me;
                    h.dst = env.src;
                    h.seq = cookie;
                    self.send_frame(env.src, OutFrame::new(&h, Payload::None, None));
                    return;
                }
                Err(e) => {
                    // The sender still holds its buffer: fall back to copying through the ring.
                    warn!("shm", "single-copy read from rank {} failed ({e}); copying through shared memory from now on", env.src);
                    self.single_copy = false;
                }
            }
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
            Req { kind: ReqKind::Recv(RecvReq { buf, cap, pat, state: RecvState::Posted, status: Status::default() }), done: None, detached: false, busy: false },
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
                    if std::mem::take(&mut r.busy) {
                        if let Some(h) = &self.host {
                            h.board.end_transfer(h.local);
                        }
                    }
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
        if rid == DONE {
            return Some(Ok(Status::default()));
        }
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

    /// Whether any request is known (pending, or completed and not yet taken).
    pub fn has_requests(&self) -> bool {
        !self.reqs.is_empty()
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
        // The clock is read only once the wait lasts: most waits on a local peer end sooner.
        // It measures the time since bytes last moved, so that a long transfer in progress
        // (a ring the receiver drains as fast as the sender fills it) never puts us to sleep
        // between two pieces.
        let mut start = None;
        let mut spins = 0u32;
        let mut waited = Duration::ZERO;
        let mut seen = self.activity;
        loop {
            if spins % 8 == 7 {
                if self.activity != seen {
                    seen = self.activity;
                    start = None;
                    spins = 0;
                }
                waited = start.get_or_insert_with(Instant::now).elapsed();
            }
            let sleep = spins > 16 && waited >= self.spin;
            if !sleep && self.host.is_some() && (spins + 1) % RING_POLLS_PER_EPOLL != 0 {
                // Local peers answer through the rings: look there without a system call, and
                // at the sockets only every so often.
                if self.shm_poll() {
                    self.drain_completed();
                    if done(self) {
                        return Ok(());
                    }
                }
                if waited < self.tight_spin {
                    std::hint::spin_loop();
                } else {
                    std::thread::yield_now();
                }
                spins += 1;
                continue;
            }
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
        let mut timeout = timeout;
        let mut announced = false;
        if self.host.is_some() {
            if self.shm_poll() {
                timeout = Some(Duration::ZERO);
            }
            if timeout != Some(Duration::ZERO) {
                announced = true;
                if !self.prepare_sleep() {
                    timeout = Some(Duration::ZERO);
                }
            }
        }
        let polled = self.poll.poll(&mut self.events, timeout);
        if announced {
            self.end_sleep();
        }
        if let Err(e) = polled {
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
            if tok == SHM_WAKE {
                if let Some(h) = &self.host {
                    h.drain_wake();
                }
                continue;
            }
            if tok == WAKER {
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
        if self.host.is_some() {
            self.shm_poll();
        }
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
                    self.activity += 1;
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
                    self.activity += 1;
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
        let (sink, target) = self.frame_header(peer, h, false)?;
        self.set_target(c, target);
        Ok(sink)
    }

    /// A frame header from `peer` (either route): where its payload goes, and what to do
    /// when it is all there. `whole`: the payload is at hand and lands at once (a frame in
    /// one ring record), so there is no transfer to show on the status board.
    fn frame_header(&mut self, peer: u32, h: &Header, whole: bool) -> Result<(Sink, Target), String> {
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
                        if h.len > 0 && !whole {
                            self.mark_busy(rid);
                        }
                        // Acknowledge a synchronous send only once its whole payload is
                        // here: the sender's buffer may still hold bytes not yet written.
                        Ok((sink, Target::Recv(rid, sync)))
                    }
                    None => {
                        self.inmsgs.insert(mid, InMsg { env, kind: InKind::Eager { data: Vec::new(), len: h.len, complete: false, bound: None }, sync });
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
                match self.reqs.get_mut(&rid) {
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
        self.frame_done(peer, h, payload, target)
    }

    /// A whole frame from `peer` (either route) arrived; `payload` holds it when it went to
    /// an owned buffer.
    fn frame_done(&mut self, peer: u32, h: Header, payload: Vec<u8>, target: Target) -> Result<(), String> {
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
                let mid = self.id();
                match self.queues.arrive(env, mid) {
                    Some((rid, _)) => self.start_rndv_recv(rid, env, len, cookie, addr),
                    None => {
                        self.inmsgs.insert(mid, InMsg { env, kind: InKind::Rts { len, cookie, addr }, sync: None });
                    }
                }
            }
            Kind::RndvFin => match self.reqs.get_mut(&h.seq) {
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
                    self.send_frame(dst, OutFrame::new(&dh, p, last.then_some(sid)));
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

    // ----- shared memory -----------------------------------------------------------------

    /// Write what waits for local peer `dst` into its ring, as far as there is room.
    fn shm_flush(&mut self, dst: u32) {
        let Some(sp) = self.peers[dst as usize].shm.as_mut() else { return };
        let ShmPeer { link, out, cursor, whole_max, .. } = &mut **sp;
        while let Some(f) = out.front() {
            let payload = f.payload.bytes();
            let before = cursor.sent();
            let written = if payload.len() <= *whole_max {
                link.tx.try_write(&f.header, payload)
            } else {
                link.tx.write_partial(&f.header, payload, cursor)
            };
            if !written {
                if cursor.sent() != before {
                    self.activity += 1;
                }
                return;
            }
            self.activity += 1;
            *cursor = PartialWrite::new();
            if let Some(rid) = out.pop_front().and_then(|f| f.completes) {
                self.completed.push(rid);
            }
        }
    }

    /// Read what local peer `peer` wrote to us (a bounded number of records, for fairness
    /// between peers). Returns whether anything was read.
    fn shm_read(&mut self, peer: u32) -> bool {
        // The rings leave the peer table while we read, so that handling a frame may use the
        // engine freely; frames sent to this peer meanwhile wait in `deferred`.
        let Some(mut sp) = self.peers[peer as usize].shm.take() else { return false };
        let mut any = false;
        let mut result = Ok(());
        for _ in 0..64 {
            let piece = match sp.link.rx.peek() {
                Ok(Some(p)) => p,
                Ok(None) => break,
                Err(e) => {
                    result = Err(e.to_string());
                    break;
                }
            };
            any = true;
            self.activity += 1;
            let (first, last, len) = (piece.first, piece.last, piece.payload.len() as u64);
            let step = if first {
                if sp.incoming.is_some() {
                    Err("a frame began inside another".to_string())
                } else {
                    match Header::decode(piece.header, &self.limits) {
                        Err(e) => Err(e.to_string()),
                        Ok(h) if piece.header.len() != HEADER_LEN || h.src != peer || h.dst != self.me => {
                            Err(format!("frame from rank {} to {} in the ring of rank {peer}", h.src, h.dst))
                        }
                        // Checked before anything is delivered (pieces that follow are checked
                        // as they come, below).
                        Ok(h) if (last && len != h.len) || len > h.len => Err(format!("frame announced {} bytes and carried {len}", h.len)),
                        Ok(h) => self.frame_header(peer, &h, last).map(|(mut sink, target)| {
                            sink.put(piece.payload);
                            sp.incoming = Some(Incoming { header: h, sink, target, got: len });
                        }),
                    }
                }
            } else {
                match sp.incoming.as_mut() {
                    Some(inc) if inc.got + len > inc.header.len => Err(format!("frame announced {} bytes and carried more", inc.header.len)),
                    Some(inc) => {
                        inc.sink.put(piece.payload);
                        inc.got += len;
                        Ok(())
                    }
                    None => Err("a frame continued that never began".to_string()),
                }
            };
            sp.link.rx.consume();
            if let Err(e) = step {
                result = Err(e);
                break;
            }
            if last {
                let inc = sp.incoming.take().expect("set by its first piece");
                if inc.got != inc.header.len {
                    result = Err(format!("frame announced {} bytes and carried {}", inc.header.len, inc.got));
                    break;
                }
                let payload = match inc.sink {
                    Sink::Vec(v) => v,
                    _ => Vec::new(),
                };
                if let Err(e) = self.frame_done(peer, inc.header, payload, inc.target) {
                    result = Err(e);
                    break;
                }
            }
        }
        let p = &mut self.peers[peer as usize];
        sp.out.extend(p.deferred.drain(..));
        p.shm = Some(sp);
        if let Err(msg) = result {
            error!("shm", "protocol error from rank {peer}: {msg}");
            self.fatal = Some(EngineError::Transport(format!("protocol error from rank {peer}: {msg}")));
        }
        self.shm_flush(peer);
        any
    }

    /// One look at every ring: write what waits, read what arrived. Returns whether
    /// anything moved.
    fn shm_poll(&mut self) -> bool {
        let peers = std::mem::take(&mut self.local_peers);
        let mut any = false;
        for &p in &peers {
            if let Some(sp) = self.peers[p as usize].shm.as_ref() {
                if !sp.out.is_empty() {
                    let before = sp.out.len();
                    self.shm_flush(p);
                    any |= self.peers[p as usize].shm.as_ref().is_some_and(|sp| sp.out.len() != before);
                }
            }
            if self.peers[p as usize].shm.as_ref().is_some_and(|sp| sp.link.rx.has_data()) {
                any |= self.shm_read(p);
            }
        }
        self.local_peers = peers;
        any
    }

    /// Whether a ring has something for us: data to read, or room for frames that wait.
    fn shm_ready(&self) -> bool {
        self.local_peers.iter().filter_map(|&p| self.peers[p as usize].shm.as_ref()).any(|sp| sp.link.rx.has_data() || (!sp.out.is_empty() && sp.link.tx.space_freed()))
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
            let sent = e.peers.iter().all(|p| (p.pending.is_empty() || p.lost) && p.shm.as_ref().map_or(true, |s| s.out.is_empty()));
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
