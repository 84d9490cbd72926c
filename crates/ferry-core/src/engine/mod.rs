//! The engine: the protocol core (`protocol.rs`) driven over the routes to every peer, with
//! one progress loop (`progress.rs`).
//!
//! Data flow: a call (`isend`, `irecv`, ...) goes into the protocol core, which queues the
//! frames it wants sent; the engine hands each to the route of its peer (`transport::Route`:
//! a shared-memory ring pair for ranks of this host, a TCP connection otherwise, made on
//! first use by `transport::tcp::Connector`). Inbound frames go from the route straight into
//! the protocol core (`transport::Deliver`), which completes requests and may queue answers.
//! A small send to a peer whose route takes it at once needs no request at all.
//!
//! The status board: every request that moves data (a send to another rank until it
//! completes, a receive from its match until its last byte) counts on this rank's slot.
//!
//! Losing a peer (its connection closed without goodbye, broken, or never made) ends an MPI
//! job ([`EngineConfig::lost_peer_fatal`]). An MCAPI node goes on without it: the requests
//! that involve the peer complete with [`EngineError::PeerLost`], so do later ones, and
//! [`Engine::take_lost_peers`] names it once. A peer that left after its goodbye is gone the
//! same way, but not reported as lost. A peer behind a ring has no connection to close: its
//! process is watched instead (`peer_watch.rs`), and its death ends an MPI job the same way.

pub mod agreement;
mod bridge;
pub mod collective;
mod fault;
pub mod matching;
mod peer_route;
mod peer_watch;
mod progress;
mod recv_now;
pub mod protocol;
pub mod request;
mod schedules;
mod service;
pub mod slab;

use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::time::Duration;

use ferry_wire::{Limits, MAX_PAYLOAD};
use mio::{Events, Interest, Poll, Token};

use crate::transport::business_card::BusinessCard;
use crate::transport::shm::{read_remote_exact, HostShm, Link, ShmRoute, StatusBoard};
use crate::transport::tcp::{Connector, ConnectorEvent, DialPlan};
use crate::transport::renumber::Renumbered;
use crate::transport::{OutFrame, RecvOutcome, Route, RouteError, SendOutcome};
use crate::{debug, error, warn};
pub use bridge::BridgeSpec;
pub use matching::{Envelope, Pattern};
/// The shared segment of one communicator's ranks on one host (the shared-memory
/// collectives' flags and slots), made and named through [`Engine::host_area_name`].
pub use crate::transport::shm::{HostArea, ShmError};
use peer_route::PeerRoute;
use peer_watch::Watches;

use protocol::Protocol;
pub use request::{EngineError, ReqId, Status};
pub use schedules::{CollJob, CollShape, Reduce};
pub use service::Service;
use schedules::Schedules;

const LISTENER: Token = Token(0);
/// Kicks from local peers (a datagram: "look at the rings").
const SHM_WAKE: Token = Token(usize::MAX - 1);
/// [`Engine::waker`]: another thread of this process wants the sleeping engine to look up.
const WAKER: Token = Token(usize::MAX);
/// Poller tokens of connections still being set up start here; a route to peer `r` is
/// `Token(1 + r)`.
const SETUP_TOKENS: usize = 1 << 40;

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
    /// A peer lost without goodbye ends the engine (MPI); false: the engine goes on serving
    /// the other peers (MCAPI nodes come and go).
    pub lost_peer_fatal: bool,
    /// A refused connect is tried again with backoff until `connect_timeout` (peers that
    /// start in any order); false: it fails at once (every peer listens before it is known).
    pub retry_refused: bool,
}

/// The shared-memory side of an engine: its host's segment and the ring ends to each local
/// peer (see [`HostShm::join`]).
pub struct ShmConfig {
    pub host: HostShm,
    pub links: Vec<(u32, Link)>,
    /// Largest message sent eagerly through a ring.
    pub eager_limit: usize,
    /// Whether large messages may be copied straight out of the sender (`process_vm_readv`),
    /// and up to which size this rank offers its own (`None`: no single copy).
    pub single_copy: Option<usize>,
}

/// The point-to-point engine of one process.
pub struct Engine {
    proto: Protocol,
    size: u32,
    cards: Vec<BusinessCard>,
    eager_limit: usize,
    limits: Limits,
    routes: Vec<Option<PeerRoute>>,
    /// Frames for peers whose route is still being set up.
    waiting: Vec<VecDeque<OutFrame>>,
    /// Peers whose routes have no descriptor to poll (rings): looked at on every pass.
    polled: Vec<u32>,
    connector: Connector,
    poll: Poll,
    events: Events,
    /// Scratch list of (token, readable, writable, read side closed) from the last poll,
    /// kept to avoid an allocation per progress pass.
    ready: Vec<(Token, bool, bool, bool)>,
    /// Requests whose last frame a route reported written.
    written: Vec<ReqId>,
    fatal: Option<EngineError>,
    lost_peer_fatal: bool,
    /// Peers lost since [`Engine::take_lost_peers`] last looked.
    newly_lost: Vec<u32>,
    host: Option<HostShm>,
    waker: Arc<mio::Waker>,
    spin: Duration,
    /// Bumped whenever bytes move (a frame or piece read, a ring write): a wait that sees it
    /// move keeps spinning instead of going to sleep in the middle of a transfer.
    activity: u64,
    /// How long a wait on local peers polls without yielding the core.
    tight_spin: Duration,
    /// Collective calls in flight.
    schedules: Schedules,
    /// The upper layer's message consumer run on every pass (see [`Service`]).
    service: Option<Box<dyn Service>>,
    /// The processes of the peers behind rings (see `peer_watch.rs`).
    watches: Watches,
}

// SAFETY: the raw pointers an engine holds are user buffers that the MPI contract keeps valid
// until their requests complete, whichever thread then drives the engine; the engine itself is
// only ever used by one thread at a time (the API layer keeps it behind a mutex).
unsafe impl Send for Engine {}

impl Engine {
    pub fn new(cfg: EngineConfig) -> io::Result<Engine> {
        let poll = Poll::new()?;
        let waker = Arc::new(mio::Waker::new(poll.registry(), WAKER)?);
        let addrs: Vec<SocketAddr> = cfg.cards.iter().map(|c| c.addr).collect();
        let mut connector = Connector::new(cfg.rank, cfg.secret, addrs, cfg.listener, poll.registry(), LISTENER, SETUP_TOKENS, cfg.connect_timeout, cfg.tcp_sndbuf)?;
        connector.set_retry_refused(cfg.retry_refused);
        let eager_limit = cfg.eager_limit.min(MAX_PAYLOAD as usize);
        let mut proto = Protocol::new(cfg.rank, cfg.size, eager_limit);
        let mut routes: Vec<Option<PeerRoute>> = Vec::with_capacity(cfg.size as usize);
        routes.resize_with(cfg.size as usize, || None);
        let mut polled = Vec::new();
        let mut host = None;
        if let Some(shm) = cfg.shm {
            let fd = shm.host.wake.as_raw_fd();
            poll.registry().register(&mut mio::unix::SourceFd(&fd), SHM_WAKE, Interest::READABLE)?;
            let shm_eager = shm.eager_limit.min(MAX_PAYLOAD as usize);
            for (r, link) in shm.links {
                proto.set_local(r, shm_eager);
                routes[r as usize] = Some(PeerRoute::Ring(ShmRoute::new(link, cfg.rank)));
                polled.push(r);
            }
            polled.sort_unstable();
            proto.set_single_copy_up_to(shm.single_copy);
            host = Some(shm.host);
        }
        let mut waiting = Vec::with_capacity(cfg.size as usize);
        waiting.resize_with(cfg.size as usize, VecDeque::new);
        let mut engine = Engine {
            proto,
            size: cfg.size,
            cards: cfg.cards,
            eager_limit,
            limits: Limits::new(cfg.size),
            routes,
            waiting,
            polled,
            connector,
            poll,
            events: Events::with_capacity(256),
            ready: Vec::new(),
            written: Vec::new(),
            fatal: None,
            lost_peer_fatal: cfg.lost_peer_fatal,
            newly_lost: Vec::new(),
            host,
            waker,
            spin: cfg.spin,
            activity: 0,
            tight_spin: progress::TIGHT_SPIN,
            schedules: Schedules::default(),
            service: None,
            watches: Watches::default(),
        };
        engine.watch_local_peers();
        Ok(engine)
    }

    /// On a host with more ranks than cores the rank a wait depends on may need this core:
    /// give it away (`sched_yield`) from the first poll on.
    pub fn set_oversubscribed(&mut self, yes: bool) {
        self.tight_spin = if yes { Duration::ZERO } else { progress::TIGHT_SPIN };
    }

    /// How long a blocked wait polls before it sleeps (`FERRY_SPIN_US`).
    pub fn spin(&self) -> Duration {
        self.spin
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

    /// This rank's doorbell, for a thread that sleeps on [`event_fd`](Self::event_fd)
    /// without holding the engine.
    pub fn doorbell(&self) -> Option<crate::transport::shm::Doorbell> {
        self.host.as_ref().map(|h| h.bell.clone())
    }

    /// The name of this host's shared area `key` (letters, digits, `-`): the host's job
    /// segment name and the key, so that the launcher's clean-up after a crash finds it too.
    /// `None` when this rank shares no memory with other ranks (a singleton, a host of one
    /// rank, or shared memory turned off).
    pub fn host_area_name(&self, key: &str) -> Option<String> {
        self.host.as_ref().map(|h| format!("{}-{key}", h.segment.name()))
    }

    /// Whether more ranks share this host than it has cores: waits give the core away.
    pub fn is_oversubscribed(&self) -> bool {
        self.tight_spin.is_zero()
    }

    /// Whether world rank `r` is reached through shared memory.
    pub fn is_local_peer(&self, r: u32) -> bool {
        self.polled.binary_search(&r).is_ok()
    }

    /// The eager limit towards world rank `dst`.
    pub fn eager_limit_to(&self, dst: u32) -> usize {
        self.proto.eager_limit_to(dst)
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

    pub fn rank(&self) -> u32 {
        self.proto.rank()
    }

    pub fn size(&self) -> u32 {
        self.size
    }

    pub fn eager_limit(&self) -> usize {
        self.eager_limit
    }

    // ----- calls --------------------------------------------------------------------------

    /// Start sending `len` bytes at `ptr` to world rank `dst`. `None`: the message has left
    /// already (a small send its route took at once), there is nothing to wait for.
    ///
    /// # Safety
    /// `ptr..ptr+len` must stay valid and unmodified until the request completes.
    #[inline]
    pub unsafe fn isend(&mut self, dst: u32, ctx: u32, tag: i32, ptr: *const u8, len: usize, sync: bool) -> Option<ReqId> {
        // SAFETY: passed on from our caller.
        unsafe { self.isend_offering(dst, ctx, tag, ptr, len, sync, None) }
    }

    /// [`isend`](Self::isend) with the sender's own choice of the single copy for a large
    /// message to a local peer: offered up to `single_copy_max` bytes (`usize::MAX`: a
    /// collective's rank that has other copies to make meanwhile, which the single copy
    /// leaves it free to make; 0: a reduction's, whose exchanges the pipelined copy moves
    /// faster), or up to the rank's limit with `None`.
    ///
    /// # Safety
    /// As [`isend`](Self::isend)'s.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub unsafe fn isend_offering(&mut self, dst: u32, ctx: u32, tag: i32, ptr: *const u8, len: usize, sync: bool, single_copy_max: Option<usize>) -> Option<ReqId> {
        if !sync && !self.proto.any_revoked() {
            if let (Some(seq), Some(route)) = (self.proto.eager_seq(dst, len), self.routes[dst as usize].as_mut()) {
                // SAFETY: the caller guarantees the buffer for the duration of the call.
                let payload = if len == 0 { &[][..] } else { unsafe { std::slice::from_raw_parts(ptr, len) } };
                match route.try_send_eager(self.proto.me(), dst, ctx, tag, seq, payload) {
                    Ok(SendOutcome::Sent | SendOutcome::Queued) => {
                        self.proto.commit_eager(dst);
                        self.activity += 1;
                        return None;
                    }
                    Ok(SendOutcome::WouldBlock) => {}
                    Err(e) => self.route_failed(dst, e),
                }
            }
        }
        // SAFETY: passed on from our caller.
        let rid = unsafe {
            match single_copy_max {
                Some(max) => self.proto.isend_up_to(dst, ctx, tag, ptr, len, sync, max),
                None => self.proto.isend(dst, ctx, tag, ptr, len, sync),
            }
        };
        self.pump();
        Some(rid)
    }

    /// Post a receive of at most `cap` bytes into `buf`.
    ///
    /// # Safety
    /// `buf..buf+cap` must stay valid until the request completes or is cancelled.
    #[inline]
    pub unsafe fn irecv(&mut self, pat: Pattern, buf: *mut u8, cap: usize) -> ReqId {
        // SAFETY: passed on from our caller.
        let rid = unsafe { self.proto.irecv(pat, buf, cap) };
        self.pump();
        rid
    }

    /// The envelope and size of the oldest unexpected message matching `pat` (MPI_Iprobe).
    pub fn peek(&self, pat: &Pattern) -> Option<Status> {
        self.proto.peek(pat)
    }

    /// Remove the oldest matching unexpected message; receive it later with [`Engine::imrecv`].
    pub fn improbe(&mut self, pat: &Pattern) -> Option<(u64, Status)> {
        self.proto.improbe(pat)
    }

    /// Take the oldest matching unexpected message whole, in the buffer it arrived in, when
    /// it is an eager one (see [`Protocol::take_whole`]); else `None`, and
    /// [`Engine::improbe`] takes it.
    pub fn take_whole(&mut self, pat: &Pattern) -> Option<(Status, Vec<u8>)> {
        self.proto.take_whole(pat)
    }

    /// Give back the buffer of a message taken with [`take_whole`](Self::take_whole) once its
    /// bytes are read: a small unexpected message arrives in it later instead of in a new
    /// allocation.
    #[inline]
    pub fn recycle(&mut self, buf: Vec<u8>) {
        self.proto.recycle(buf)
    }

    /// Receive a message taken by [`Engine::improbe`].
    ///
    /// # Safety
    /// As for [`Engine::irecv`].
    pub unsafe fn imrecv(&mut self, mid: u64, buf: *mut u8, cap: usize) -> ReqId {
        // SAFETY: passed on from our caller.
        let rid = unsafe { self.proto.imrecv(mid, buf, cap) };
        self.pump();
        rid
    }

    /// Cancel a receive that has not matched. True when it was cancelled.
    pub fn cancel(&mut self, rid: ReqId) -> bool {
        let r = self.proto.cancel(rid);
        self.publish_busy();
        r
    }

    /// Whether `rid` (a request, or a collective of
    /// [`start_collective`](Engine::start_collective)) has completed; its result stays until
    /// [`take`](Engine::take) or [`take_collective`](Engine::take_collective).
    #[inline]
    pub fn is_done(&self, rid: ReqId) -> bool {
        if schedules::is_collective(rid) {
            return self.schedules.is_done(rid);
        }
        self.proto.is_done(rid)
    }

    /// Take a completed request's result and forget the request.
    #[inline]
    pub fn take(&mut self, rid: ReqId) -> Option<Result<Status, EngineError>> {
        self.proto.take(rid)
    }

    /// The user no longer waits for `rid` (MPI_Request_free): it completes on its own.
    pub fn detach(&mut self, rid: ReqId) {
        self.proto.detach(rid)
    }

    /// Whether any request or collective is known (pending, or completed and not yet taken).
    #[inline]
    pub fn has_requests(&self) -> bool {
        self.proto.has_requests() || self.schedules.running > 0
    }

    /// Requests not yet completed (including detached ones).
    pub fn outstanding(&self) -> usize {
        self.proto.outstanding()
    }

    /// Sends not yet completed, including detached ones.
    pub fn sends_outstanding(&self) -> usize {
        self.proto.sends_outstanding()
    }

    // ----- between the protocol core and the routes ---------------------------------------

    /// Hand every frame the protocol core queued to its route, perform the single-copy
    /// reads it asked for, and report what routes wrote.
    #[inline]
    fn pump(&mut self) {
        if self.proto.has_output() || !self.written.is_empty() {
            self.pump_out();
        }
    }

    /// [`pump`](Self::pump) when there is something to do.
    fn pump_out(&mut self) {
        loop {
            while let Some((peer, f)) = self.proto.next_frame() {
                self.route_send(peer, f);
            }
            let Some(read) = self.proto.next_read() else { break };
            let pid = self.cards[read.peer as usize].id.pid as libc::pid_t;
            // SAFETY: the protocol core made this read from a receive buffer of at least
            // `len` bytes that stays valid until the receive completes.
            let dst = if read.len == 0 { &mut [][..] } else { unsafe { std::slice::from_raw_parts_mut(read.buf, read.len) } };
            let result = read_remote_exact(pid, read.addr as usize, dst).map_err(|e| e.to_string());
            if let Err(e) = &result {
                crate::warn!("shm", "single-copy read from rank {} failed ({e}); copying through shared memory from now on", read.peer);
            }
            self.proto.read_done(read, result);
        }
        for rid in self.written.drain(..) {
            self.proto.frame_written(rid);
        }
        self.publish_busy();
    }

    fn publish_busy(&mut self) {
        let d = self.proto.take_busy_delta();
        if d == 0 {
            return;
        }
        if let Some(h) = &self.host {
            h.board.add_transfers(h.local, d);
        }
    }

    fn route_send(&mut self, peer: u32, f: OutFrame) {
        let completes = f.completes;
        let Some(route) = self.routes[peer as usize].as_mut() else {
            if self.proto.is_lost(peer) {
                return;
            }
            self.waiting[peer as usize].push_back(f);
            if !self.connector.is_connecting(peer) {
                self.connector.connect(self.poll.registry(), peer);
                self.connector_events();
            }
            return;
        };
        match route.send(f, &mut self.written) {
            Ok(SendOutcome::Sent) => {
                self.activity += 1;
                self.written.extend(completes);
            }
            Ok(_) => {}
            Err(e) => self.route_failed(peer, e),
        }
    }

    /// How each peer is to be reached when the job spans private clusters (see
    /// [`DialPlan`]); connects at once to the peers that cannot reach this rank.
    pub fn set_dial_plan(&mut self, plan: &DialPlan) {
        self.connector.set_plan(plan);
        for &peer in &plan.eager {
            if self.routes[peer as usize].is_none() && !self.connector.is_connecting(peer) {
                self.connector.connect(self.poll.registry(), peer);
            }
        }
        self.connector_events();
    }

    /// Take what connection set-up produced.
    fn connector_events(&mut self) {
        while let Some(ev) = self.connector.next_event() {
            match ev {
                ConnectorEvent::Established { peer, mut conn } => {
                    if !self.lost_peer_fatal && self.proto.is_lost(peer) {
                        // Once gone, always gone: its requests failed, its sequence broke off.
                        debug!("tcp", "dropping a new connection from rank {peer}, which this rank gave up");
                        self.connector.route_closed(peer);
                        continue;
                    }
                    if let Err(e) = self.poll.registry().register(&mut conn.stream, Token(1 + peer as usize), Interest::READABLE | Interest::WRITABLE) {
                        self.fatal = Some(EngineError::Transport(format!("cannot watch the connection to rank {peer}: {e}")));
                        continue;
                    }
                    let mut route: Box<dyn Route> = Box::new(conn);
                    if let Some((_, wire)) = self.connector.bridges().wire_of(peer) {
                        route = Box::new(Renumbered::new(route, peer, wire));
                    }
                    let mut broken = None;
                    for f in std::mem::take(&mut self.waiting[peer as usize]) {
                        let completes = f.completes;
                        match route.send(f, &mut self.written) {
                            Ok(SendOutcome::Sent) => self.written.extend(completes),
                            Ok(_) => {}
                            Err(e) if self.lost_peer_fatal => {
                                self.fatal = Some(EngineError::Transport(format!("write to rank {peer}: {e}")));
                                break;
                            }
                            Err(e) => {
                                broken = Some(e);
                                break;
                            }
                        }
                    }
                    self.routes[peer as usize] = Some(PeerRoute::Other(route));
                    if let Some(e) = broken {
                        self.route_failed(peer, e);
                        continue;
                    }
                    // Frames may have arrived with the end of the handshake.
                    self.read_route(peer);
                }
                ConnectorEvent::Dropped { peer } => {
                    if self.routes[peer as usize].is_none() && !self.waiting[peer as usize].is_empty() && !self.proto.is_lost(peer) {
                        self.connector.connect(self.poll.registry(), peer);
                    }
                }
                ConnectorEvent::Failed { msg, .. } if self.lost_peer_fatal => self.fatal = Some(EngineError::Transport(msg)),
                ConnectorEvent::Failed { peer, msg } => self.lose_peer(peer, &msg),
            }
        }
    }

    /// Read what arrived on `peer`'s route; returns whether anything did.
    fn read_route(&mut self, peer: u32) -> bool {
        let mut any = false;
        loop {
            let Some(route) = self.routes[peer as usize].as_mut() else { return any };
            let polled = route.source().is_none();
            match route.recv(peer, &mut self.proto, &self.limits) {
                Ok(RecvOutcome::Progress) => {
                    any = true;
                    self.activity += 1;
                    self.pump();
                    // A ring gets one batch per pass (fairness); a socket is read until it
                    // would block (its readiness is edge-triggered).
                    if polled {
                        return true;
                    }
                }
                Ok(RecvOutcome::WouldBlock) => return any,
                Ok(RecvOutcome::Closed) => {
                    self.route_closed(peer);
                    return true;
                }
                Err(e) => {
                    self.route_failed(peer, e);
                    return true;
                }
            }
        }
    }

    fn flush_route(&mut self, peer: u32) {
        let Some(route) = self.routes[peer as usize].as_mut() else { return };
        match route.flush(&mut self.written) {
            Ok(moved) => {
                if moved {
                    self.activity += 1;
                }
            }
            Err(e) => self.route_failed(peer, e),
        }
    }

    /// The peer closed its route: an orderly end after its goodbye, else the peer is lost.
    fn route_closed(&mut self, peer: u32) {
        if self.lost_peer_fatal {
            if !self.proto.said_bye(peer) {
                debug!("tcp", "connection to rank {peer} closed without goodbye");
                self.proto.peer_lost(peer);
                // A wait on no request of this peer's (a receive from any source, a
                // collective on other ranks' messages) would never end: the job ends here.
                self.fatal.get_or_insert(EngineError::PeerLost(peer));
            }
        } else if self.proto.said_bye(peer) {
            self.peer_left(peer);
        } else {
            self.lose_peer(peer, "connection closed without goodbye");
        }
        self.drop_route(peer);
        self.publish_busy();
    }

    fn route_failed(&mut self, peer: u32, e: RouteError) {
        if self.proto.said_bye(peer) {
            debug!("tcp", "rank {peer} closed after its goodbye: {e}");
            if !self.lost_peer_fatal {
                self.peer_left(peer);
            }
        } else if !self.lost_peer_fatal {
            let why = match e {
                RouteError::Protocol(m) => format!("protocol error: {m}"),
                RouteError::Io(e) => format!("connection failed: {e}"),
            };
            self.lose_peer(peer, &why);
        } else {
            let msg = match e {
                RouteError::Protocol(m) => format!("protocol error from rank {peer}: {m}"),
                RouteError::Io(e) => format!("connection to rank {peer} failed: {e}"),
            };
            error!("engine", "{msg}");
            self.fatal = Some(EngineError::Transport(msg));
        }
        self.drop_route(peer);
    }

    /// `peer` is gone without goodbye and the engine goes on: fail what involves it, now and
    /// later, stop trying to reach it, and name it once in [`take_lost_peers`](Self::take_lost_peers).
    fn lose_peer(&mut self, peer: u32, why: &str) {
        if self.proto.is_lost(peer) {
            return;
        }
        warn!("engine", "rank {peer} lost: {why}");
        self.give_up(peer);
        self.newly_lost.push(peer);
    }

    /// `peer` closed after its goodbye: nothing more will come from it, and nothing sent to
    /// it could arrive, so what still involves it fails as for a lost peer (not reported).
    fn peer_left(&mut self, peer: u32) {
        if !self.proto.is_lost(peer) {
            debug!("engine", "rank {peer} left");
            self.give_up(peer);
        }
    }

    fn give_up(&mut self, peer: u32) {
        self.proto.peer_lost(peer);
        // Their requests failed with the peer; the frames themselves have nowhere to go.
        self.waiting[peer as usize].clear();
        self.connector.forget(self.poll.registry(), peer);
        self.drop_route(peer);
        self.publish_busy();
    }

    /// The peers lost (without goodbye) since the last call, each named once, so that the
    /// face can fail its own state for them. Their requests have completed with
    /// [`EngineError::PeerLost`] already.
    /// Whether peers were lost since the last [`take_lost_peers`](Self::take_lost_peers).
    pub fn has_lost_peers(&self) -> bool {
        !self.newly_lost.is_empty()
    }

    pub fn take_lost_peers(&mut self) -> Vec<u32> {
        std::mem::take(&mut self.newly_lost)
    }

    /// Whether `rank` is gone for this engine: lost, or left after its goodbye (a send to it
    /// fails with [`EngineError::PeerLost`]).
    pub fn is_peer_gone(&self, rank: u32) -> bool {
        self.proto.is_lost(rank)
    }

    /// Set or replace the address to connect to for `rank` (a peer found after the engine
    /// started). Frames that wait for that address leave now. A peer may also connect first:
    /// incoming connections need no known address.
    pub fn set_peer_addr(&mut self, rank: u32, addr: SocketAddr) {
        self.cards[rank as usize].addr = addr;
        self.connector.set_addr(self.poll.registry(), rank, addr);
        self.connector_events();
    }

    fn drop_route(&mut self, peer: u32) {
        if let Some(mut route) = self.routes[peer as usize].take() {
            if let Some(src) = route.source() {
                let _ = self.poll.registry().deregister(src);
            }
            self.connector.route_closed(peer);
        }
        self.polled.retain(|&p| p != peer);
    }

    /// Orderly shutdown: say goodbye on every route, write everything queued, and wait for
    /// every send (including those the user freed) to finish, or a peer waiting for that data
    /// would hang. A send can also wait for an answer that will never come: a synchronous or
    /// rendezvous send that its receiver, now finalizing too, never received. Those end once
    /// their peer's goodbye has arrived (after every answer the peer did send), and are
    /// reported; a lost peer ends the wait through the error it raises.
    pub fn finalize(&mut self) -> Result<(), EngineError> {
        let me = self.proto.rank();
        for peer in 0..self.routes.len() as u32 {
            if peer != me && self.routes[peer as usize].is_some() {
                self.proto.bye(peer);
            }
        }
        self.pump();
        self.wait_until(|e| {
            let written = e.routes.iter().flatten().all(|r| r.queued() == 0);
            let sent = e.waiting.iter().enumerate().all(|(p, w)| w.is_empty() || e.proto.is_lost(p as u32));
            written && sent && e.proto.sends_only_to_departed()
        })?;
        let abandoned = self.proto.abandon_sends_to_departed();
        if !abandoned.is_empty() {
            let list: Vec<String> = abandoned
                .iter()
                .map(|(peer, rndv)| format!("{} send to rank {peer}", if *rndv { "a large (rendezvous)" } else { "a synchronous" }))
                .collect();
            warn!("engine", "finalize: dropping {} that the receiver finalized without receiving: {}", plural(list.len(), "send"), list.join(", "));
        }
        Ok(())
    }

    /// The address this engine advertises in its business card.
    pub fn listen_addr(&self) -> SocketAddr {
        self.cards[self.proto.rank() as usize].addr
    }

    /// Established connections with a descriptor (TCP), for tests and `FERRY_LOG=debug`.
    pub fn connection_count(&self) -> usize {
        self.routes.iter().flatten().filter(|r| r.closes_visibly()).count()
    }
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}
