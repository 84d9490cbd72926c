//! TCP connection set-up: the listening socket, outbound connects, and the authentication
//! handshake (`handshake.rs`, sans-IO) on each connection until it is either an
//! authenticated route to a known rank or refused. When two ranks connect to each other at
//! once, the connection initiated by the higher rank wins on both sides.
//!
//! The connector owns only connections in set-up; it hands each established one to the engine
//! as a [`ConnectorEvent::Established`] route and forgets it.
//!
//! A peer's address may be unknown at first (an unspecified address: it is learnt later,
//! [`Connector::set_addr`]) and a peer may not listen yet (it starts later): with
//! [`Connector::set_retry_refused`], a refused connect is tried again with backoff. Either
//! way the attempt waits, and fails only once `connect_timeout` has passed since it began.
//!
//! Peers of another job join at run time through a bridge ([`Connector::add_bridge`]): they
//! are dialled directly and authenticate with the bridge's secret (see `bridge.rs`).

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use ferry_wire::{Header, Limits};
use mio::{Interest, Registry, Token};

use super::bridge::{BridgeError, Bridges};
use super::conn::Conn;
use super::dial::{Dial, DialPlan, RelayCredentials};
use super::handshake::{decide_by_order, Acceptor, AcceptorStep, Decision, HandshakeError, Initiator, Out};
use crate::transport::relay::{ClientStep, RelayClient};
use crate::transport::{Deliver, OutFrame, Payload, RecvOutcome, Route, Sink};
use crate::{debug, warn};

/// A connection that has not even said hello by then is dropped.
const HANDSHAKE_DEADLINE: Duration = Duration::from_secs(10);
/// First pause after a refused connect; it doubles up to [`MAX_RETRY_DELAY`].
const FIRST_RETRY_DELAY: Duration = Duration::from_millis(10);
const MAX_RETRY_DELAY: Duration = Duration::from_millis(500);

/// An outbound connection that waits before it is dialled: for the peer's address to be
/// known (`due` is `None`), or after a refused attempt.
#[derive(Clone, Copy, Debug)]
struct Pending {
    due: Option<Instant>,
    delay: Duration,
    /// When the first attempt began: the connect timeout runs from here.
    since: Instant,
}

/// Whether `addr` stands for an address not known yet.
pub fn is_unknown_addr(addr: &SocketAddr) -> bool {
    addr.ip().is_unspecified() || addr.port() == 0
}

/// The pause after a refused attempt that waited `delay`.
fn next_delay(delay: Duration) -> Duration {
    (delay * 2).min(MAX_RETRY_DELAY)
}

/// What connection set-up produced for the engine.
pub enum ConnectorEvent {
    /// An authenticated connection to `peer`, registered with the poller under `token`'s
    /// replacement: the engine re-registers it under its own token.
    Established { peer: u32, conn: Conn },
    /// Our connection to `peer` was dropped during set-up (the peer chose its own, or
    /// closed): connect again if frames still wait and no route exists.
    Dropped { peer: u32 },
    /// Connecting to `peer` failed for good.
    Failed { peer: u32, msg: String },
}

/// An outbound connection through a relay: the relay handshake first, then ours.
struct RelayLeg {
    client: RelayClient,
    init: Initiator,
    /// Our Hello, sent once the relay has opened the second leg.
    hello: Out,
}

enum Phase {
    /// Outbound TCP connect in progress; Hello is queued.
    Connecting(Initiator),
    /// Outbound TCP connect to a relay in progress.
    RelayConnecting(Box<RelayLeg>),
    /// Connected to a relay, which has not yet opened the second leg.
    Relaying(Box<RelayLeg>),
    Initiating(Initiator),
    Accepting(Acceptor),
}

struct Slot {
    conn: Conn,
    phase: Phase,
    peer: Option<u32>,
    from: SocketAddr,
    /// When the connection was accepted, or when our first attempt to `peer` began.
    opened: Instant,
}

/// Collects the one frame a handshake step reads.
#[derive(Default)]
struct HandshakeFrame(Option<(Header, Vec<u8>)>);

impl Deliver for HandshakeFrame {
    fn header(&mut self, _peer: u32, h: &Header, _whole: bool) -> Result<Sink, String> {
        Ok(Sink::Vec(Vec::with_capacity(h.len as usize)))
    }
    fn frame(&mut self, _peer: u32, h: Header, sink: Sink) -> Result<(), String> {
        self.0 = Some((h, sink.into_vec()));
        Ok(())
    }
}

fn out_frame(o: Out) -> OutFrame {
    OutFrame::new(&o.header, Payload::Owned(o.payload), None)
}

fn nonce() -> [u8; 32] {
    let mut n = [0u8; 32];
    getrandom::getrandom(&mut n).expect("the kernel's random source is available");
    n
}

/// Connections in set-up, and the listening socket.
pub struct Connector {
    me: u32,
    secret: Vec<u8>,
    /// Ranks of the own job; peers from here on came through `bridges`.
    job_size: u32,
    bridges: Bridges,
    addrs: Vec<SocketAddr>,
    listener: mio::net::TcpListener,
    slots: Vec<Option<Slot>>,
    /// Our outbound connection in set-up, per peer.
    connecting: Vec<Option<usize>>,
    /// Our outbound connections waiting to be dialled, per peer.
    pending: Vec<Option<Pending>>,
    /// How many of `pending` are set (checked on every progress pass).
    pending_count: usize,
    /// The pause before the next attempt, per peer, should the one in set-up be refused.
    retry_delay: Vec<Duration>,
    retry_refused: bool,
    /// Whether the engine holds an established route to each peer.
    established: Vec<bool>,
    /// How each peer is reached (all direct on one network).
    plan: Vec<Dial>,
    relay: Option<RelayCredentials>,
    connect_timeout: Duration,
    sndbuf: usize,
    /// Poller tokens from here on are connection slots.
    token_base: usize,
    limits: Limits,
    events: VecDeque<ConnectorEvent>,
}

impl Connector {
    /// `addrs`: every rank's advertised address. The listener is registered under
    /// `listener_token`, connections in set-up under `token_base + slot`.
    pub fn new(me: u32, secret: Vec<u8>, addrs: Vec<SocketAddr>, mut listener: mio::net::TcpListener, registry: &Registry, listener_token: Token, token_base: usize, connect_timeout: Duration, sndbuf: usize) -> io::Result<Connector> {
        registry.register(&mut listener, listener_token, Interest::READABLE)?;
        let n = addrs.len();
        Ok(Connector {
            me,
            secret,
            job_size: n as u32,
            bridges: Bridges::default(),
            // Handshake frames across a bridge name ranks of another job: the ranks of this
            // job's Hellos are checked against `job_size` instead.
            limits: Limits::new(u32::MAX),
            addrs,
            listener,
            slots: Vec::new(),
            connecting: vec![None; n],
            pending: vec![None; n],
            pending_count: 0,
            retry_delay: vec![FIRST_RETRY_DELAY; n],
            retry_refused: false,
            established: vec![false; n],
            plan: vec![Dial::Direct; n],
            relay: None,
            connect_timeout,
            sndbuf,
            token_base,
            events: VecDeque::new(),
        })
    }

    /// What happened since the last call.
    pub fn next_event(&mut self) -> Option<ConnectorEvent> {
        self.events.pop_front()
    }

    /// Whether an outbound connection to `peer` is in set-up or waits to be dialled.
    pub fn is_connecting(&self, peer: u32) -> bool {
        self.connecting[peer as usize].is_some() || self.pending[peer as usize].is_some()
    }

    /// Retry a refused connect (the peer may not listen yet) until the connect timeout,
    /// instead of failing at once.
    pub fn set_retry_refused(&mut self, yes: bool) {
        self.retry_refused = yes;
    }

    /// How each peer is to be reached (see [`DialPlan`]); peers beyond the plan stay direct.
    pub fn set_plan(&mut self, plan: &DialPlan) {
        for (slot, dial) in self.plan.iter_mut().zip(&plan.dial) {
            *slot = dial.clone();
        }
        self.relay = plan.relay.clone();
    }

    /// Add bridge `id`: peers with the wire ranks `wire` at `addrs`, numbered from the
    /// current peer count on (returned), authenticated with `secret`; `high`: this side
    /// accepted (it wins simultaneous connects).
    pub fn add_bridge(&mut self, id: u32, secret: Vec<u8>, high: bool, wire: Vec<u32>, addrs: &[SocketAddr]) -> Result<u32, BridgeError> {
        let first = self.addrs.len() as u32;
        self.bridges.add(id, secret, high, first, wire)?;
        for &a in addrs {
            self.addrs.push(a);
            self.connecting.push(None);
            self.pending.push(None);
            self.retry_delay.push(FIRST_RETRY_DELAY);
            self.established.push(false);
            self.plan.push(Dial::Direct);
        }
        Ok(first)
    }

    /// Stop accepting connections over bridge `id` (its peers were disconnected).
    pub fn remove_bridge(&mut self, id: u32) {
        self.bridges.remove(id);
    }

    /// The bridges open now: which peers came through which.
    pub fn bridges(&self) -> &Bridges {
        &self.bridges
    }

    /// The secret a connection to or from `peer` proves.
    fn secret_of(&self, peer: u32) -> &[u8] {
        match self.bridges.wire_of(peer) {
            Some((id, _)) => self.bridges.secret(id).expect("a bridge's peers have its secret"),
            None => &self.secret,
        }
    }

    /// Set or replace the address `peer` is dialled at; an attempt waiting for it goes ahead.
    pub fn set_addr(&mut self, registry: &Registry, peer: u32, addr: SocketAddr) {
        self.addrs[peer as usize] = addr;
        if let Some(p) = self.pending[peer as usize].as_mut() {
            if p.due.is_none() && !is_unknown_addr(&addr) {
                let since = p.since;
                self.set_pending(peer as usize, None);
                self.dial(registry, peer, since, FIRST_RETRY_DELAY);
            }
        }
    }

    /// Stop trying to reach `peer` (the engine gave it up).
    pub fn forget(&mut self, registry: &Registry, peer: u32) {
        self.set_pending(peer as usize, None);
        if let Some(c) = self.connecting[peer as usize] {
            self.close(registry, c);
        }
    }

    /// Whether some attempt waits for its time to come (then [`housekeeping`](Self::housekeeping)
    /// should run soon, see [`next_deadline`](Self::next_deadline)).
    pub fn has_pending(&self) -> bool {
        self.pending_count > 0
    }

    fn set_pending(&mut self, peer: usize, p: Option<Pending>) {
        let was = self.pending[peer].is_some();
        self.pending_count = self.pending_count + p.is_some() as usize - was as usize;
        self.pending[peer] = p;
    }

    /// The earliest moment a waiting attempt needs [`housekeeping`](Self::housekeeping): a
    /// retry falls due, or one waiting for an address runs out of time.
    pub fn next_deadline(&self) -> Option<Instant> {
        if self.pending_count == 0 {
            return None;
        }
        self.pending.iter().flatten().map(|p| p.due.unwrap_or(p.since + self.connect_timeout)).min()
    }

    /// The engine no longer has a route to `peer` (closed, or lost).
    pub fn route_closed(&mut self, peer: u32) {
        self.established[peer as usize] = false;
    }

    /// Whether `token` belongs to a connection in set-up.
    pub fn owns(&self, token: Token) -> bool {
        token.0 >= self.token_base
    }

    /// Start connecting to `peer` (once its address is known).
    pub fn connect(&mut self, registry: &Registry, peer: u32) {
        self.dial(registry, peer, Instant::now(), FIRST_RETRY_DELAY);
    }

    /// An attempt to reach `peer` that began at `since`; `delay`: the pause before the next
    /// one should this be refused.
    fn dial(&mut self, registry: &Registry, peer: u32, since: Instant, delay: Duration) {
        match &self.plan[peer as usize] {
            Dial::Direct => {}
            // The peer connects to us; what waits for it is sent once it has.
            Dial::Await => return,
            Dial::Unreachable(why) => {
                let msg = format!("cannot reach rank {peer}: {why}");
                self.events.push_back(ConnectorEvent::Failed { peer, msg });
                return;
            }
            Dial::Relay(proxy) => {
                let proxy = *proxy;
                self.dial_relay(registry, peer, proxy);
                return;
            }
        }
        let addr = self.addrs[peer as usize];
        if is_unknown_addr(&addr) {
            debug!("tcp", "address of rank {peer} not known yet: waiting for it");
            self.set_pending(peer as usize, Some(Pending { due: None, delay, since }));
            return;
        }
        debug!("tcp", "connecting to rank {peer} at {addr}");
        self.retry_delay[peer as usize] = delay;
        match mio::net::TcpStream::connect(addr) {
            Ok(stream) => {
                let (init, hello) = match self.bridges.wire_of(peer) {
                    Some((id, wire)) => Initiator::start_bridged(self.me, wire, id, nonce()),
                    None => Initiator::start(self.me, peer, nonce()),
                };
                if let Some(c) = self.add_slot(registry, stream, Phase::Connecting(init), Some(peer), addr) {
                    self.slots[c].as_mut().expect("just added").opened = since;
                    self.slots[c].as_mut().expect("just added").conn.push(out_frame(hello));
                    self.connecting[peer as usize] = Some(c);
                    // A local connect usually completes at once: say hello now rather than
                    // at the next progress call, which may be far away if the user computes.
                    self.on_writable(registry, c);
                }
            }
            Err(e) if self.retry_refused && e.kind() == io::ErrorKind::ConnectionRefused => self.retry_later(peer, since, delay, &e),
            Err(e) => self.events.push_back(ConnectorEvent::Failed { peer, msg: format!("cannot connect to rank {peer} at {addr}: {e}") }),
        }
    }

    /// Connect to `peer` through the relay at `proxy`.
    fn dial_relay(&mut self, registry: &Registry, peer: u32, proxy: SocketAddr) {
        let Some(creds) = self.relay.clone() else {
            let msg = format!("rank {peer} is reached through the relay at {proxy}, but this job has no relay credentials");
            self.events.push_back(ConnectorEvent::Failed { peer, msg });
            return;
        };
        debug!("tcp", "connecting to rank {peer} through the relay at {proxy}");
        match mio::net::TcpStream::connect(proxy) {
            Ok(stream) => {
                let (init, hello) = Initiator::start(self.me, peer, nonce());
                let client = RelayClient::new(creds.job, creds.key, self.me, peer, nonce());
                let leg = Box::new(RelayLeg { client, init, hello });
                if let Some(c) = self.add_slot(registry, stream, Phase::RelayConnecting(leg), Some(peer), proxy) {
                    self.connecting[peer as usize] = Some(c);
                }
            }
            Err(e) => self.events.push_back(ConnectorEvent::Failed { peer, msg: format!("cannot connect to the relay at {proxy} for rank {peer}: {e}") }),
        }
    }

    /// Read the relay's side of its handshake on connection `c`; once the relay has opened
    /// the second leg, say our Hello through it.
    fn relay_read(&mut self, registry: &Registry, c: usize) {
        let mut buf = [0u8; 1024];
        loop {
            let Some(slot) = self.slots.get_mut(c).and_then(Option::as_mut) else { return };
            let Phase::Relaying(leg) = &mut slot.phase else { return };
            let (peer, relay) = (leg.init.peer(), slot.from);
            let n = match slot.conn.stream.read(&mut buf) {
                Ok(0) => {
                    self.failed(registry, c, format!("the relay at {relay} closed the connection to rank {peer}"));
                    return;
                }
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.failed(registry, c, format!("the relay at {relay} for rank {peer}: {e}"));
                    return;
                }
            };
            match leg.client.on_bytes(&buf[..n]) {
                Ok(ClientStep::NeedMore) => {}
                // A request of a hundred bytes on a fresh connection fits its send buffer.
                Ok(ClientStep::Send(bytes)) => match slot.conn.stream.write(&bytes) {
                    Ok(w) if w == bytes.len() => {}
                    Ok(_) | Err(_) => {
                        self.failed(registry, c, format!("cannot write to the relay at {relay} for rank {peer}"));
                        return;
                    }
                },
                Ok(ClientStep::Established { consumed }) if consumed == n => {
                    debug!("tcp", "the relay at {relay} opened the way to rank {peer}");
                    let placeholder = Phase::Accepting(Acceptor::new(0, [0; 32]));
                    let Phase::Relaying(leg) = std::mem::replace(&mut slot.phase, placeholder) else { unreachable!() };
                    slot.phase = Phase::Initiating(leg.init);
                    slot.conn.push(out_frame(leg.hello));
                    self.on_writable(registry, c);
                    return;
                }
                Ok(ClientStep::Established { .. }) => {
                    // The far side speaks only after our Hello.
                    self.failed(registry, c, format!("the relay at {relay} passed on bytes for rank {peer} before our hello"));
                    return;
                }
                Err(e) => {
                    self.failed(registry, c, format!("the relay at {relay} did not connect us to rank {peer}: {e}"));
                    return;
                }
            }
        }
    }

    /// The attempt to reach `peer` begun at `since` was refused: try again after `delay`,
    /// or fail if that would pass the connect timeout.
    fn retry_later(&mut self, peer: u32, since: Instant, delay: Duration, e: &io::Error) {
        let now = Instant::now();
        if now + delay - since > self.connect_timeout {
            let addr = self.addrs[peer as usize];
            let msg = format!("could not connect to rank {peer} at {addr} within {:?}: {e}", self.connect_timeout);
            self.events.push_back(ConnectorEvent::Failed { peer, msg });
            return;
        }
        debug!("tcp", "rank {peer} refused the connection ({e}); trying again in {delay:?}");
        self.set_pending(peer as usize, Some(Pending { due: Some(now + delay), delay: next_delay(delay), since }));
    }

    /// Accept every connection waiting on the listener.
    pub fn accept_all(&mut self, registry: &Registry) {
        loop {
            match self.listener.accept() {
                Ok((stream, from)) => {
                    let acc = Acceptor::new(self.me, nonce());
                    self.add_slot(registry, stream, Phase::Accepting(acc), None, from);
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

    /// The poller reported a connection in set-up ready.
    pub fn on_event(&mut self, registry: &Registry, token: Token, readable: bool, writable: bool) {
        let c = token.0 - self.token_base;
        if readable {
            if let Some(s) = self.slots.get_mut(c).and_then(Option::as_mut) {
                s.conn.mark_readable();
            }
        }
        if writable {
            self.on_writable(registry, c);
        }
        if readable {
            self.on_readable(registry, c);
        }
    }

    /// Drop connections that never said hello; report connects that did not complete in
    /// time. Only the TCP connect itself is timed: authentication waits on the peer's
    /// application, which may legitimately be busy for a long time.
    pub fn housekeeping(&mut self, registry: &Registry, now: Instant) {
        for peer in 0..if self.pending_count > 0 { self.pending.len() } else { 0 } {
            let Some(p) = self.pending[peer] else { continue };
            match p.due {
                Some(due) if due <= now => {
                    self.set_pending(peer, None);
                    self.dial(registry, peer as u32, p.since, p.delay);
                }
                None if now - p.since > self.connect_timeout => {
                    self.set_pending(peer, None);
                    let msg = format!("the address of rank {peer} did not become known within {:?}", self.connect_timeout);
                    self.events.push_back(ConnectorEvent::Failed { peer: peer as u32, msg });
                }
                _ => {}
            }
        }
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
            self.close(registry, c);
        }
        let unreachable: Vec<usize> = (0..self.slots.len())
            .filter(|&c| {
                self.slots[c].as_ref().is_some_and(|s| {
                    matches!(s.phase, Phase::Connecting(_) | Phase::RelayConnecting(_) | Phase::Relaying(_)) && now - s.opened > self.connect_timeout
                })
            })
            .collect();
        for c in unreachable {
            let s = self.slots[c].as_ref().expect("found above");
            let peer = s.peer.unwrap_or(0);
            let msg = format!("could not connect to rank {peer} at {} within {:?}", s.from, self.connect_timeout);
            self.events.push_back(ConnectorEvent::Failed { peer, msg });
            // Reported once: an engine that goes on without the peer must not hear it again.
            self.close(registry, c);
        }
    }

    fn add_slot(&mut self, registry: &Registry, mut stream: mio::net::TcpStream, phase: Phase, peer: Option<u32>, from: SocketAddr) -> Option<usize> {
        let idx = self.slots.iter().position(Option::is_none).unwrap_or_else(|| {
            self.slots.push(None);
            self.slots.len() - 1
        });
        if let Err(e) = registry.register(&mut stream, Token(self.token_base + idx), Interest::READABLE | Interest::WRITABLE) {
            warn!("tcp", "cannot watch connection from {from}: {e}");
            return None;
        }
        self.slots[idx] = Some(Slot { conn: Conn::new(stream, self.sndbuf), phase, peer, from, opened: Instant::now() });
        Some(idx)
    }

    fn on_writable(&mut self, registry: &Registry, c: usize) {
        let Some(slot) = self.slots.get_mut(c).and_then(Option::as_mut) else { return };
        if let Phase::Connecting(_) | Phase::RelayConnecting(_) = slot.phase {
            let relayed = matches!(slot.phase, Phase::RelayConnecting(_));
            match slot.conn.stream.take_error() {
                Ok(Some(e)) if self.retry_refused && !relayed && e.kind() == io::ErrorKind::ConnectionRefused && slot.peer.is_some() => {
                    let (peer, since) = (slot.peer.expect("checked"), slot.opened);
                    let delay = self.retry_delay[peer as usize];
                    self.close(registry, c);
                    self.retry_later(peer, since, delay, &e);
                    return;
                }
                Ok(Some(e)) | Err(e) => {
                    let peer = slot.peer.unwrap_or(0);
                    let via = if relayed { " through the relay" } else { "" };
                    let msg = format!("cannot connect to rank {peer}{via} at {}: {e}", slot.from);
                    self.failed(registry, c, msg);
                    return;
                }
                Ok(None) => {}
            }
            if slot.conn.stream.peer_addr().is_err() {
                return; // not connected yet
            }
            slot.phase = match std::mem::replace(&mut slot.phase, Phase::Accepting(Acceptor::new(0, [0; 32]))) {
                Phase::Connecting(init) => Phase::Initiating(init),
                Phase::RelayConnecting(leg) => Phase::Relaying(leg),
                _ => unreachable!("matched above"),
            };
        }
        let mut none = Vec::new();
        if let Err(e) = slot.conn.flush(&mut none) {
            let peer = slot.peer;
            self.failed(registry, c, format!("write to rank {peer:?}: {e}"));
        }
    }

    fn on_readable(&mut self, registry: &Registry, c: usize) {
        loop {
            let Some(slot) = self.slots.get_mut(c).and_then(Option::as_mut) else { return };
            match slot.phase {
                Phase::Connecting(_) | Phase::RelayConnecting(_) => return,
                Phase::Relaying(_) => {
                    self.relay_read(registry, c);
                    return;
                }
                _ => {}
            }
            let initiating = matches!(slot.phase, Phase::Initiating(_));
            let mut got = HandshakeFrame::default();
            let peer = slot.peer.unwrap_or(u32::MAX);
            match slot.conn.recv_one(peer, &mut got, &self.limits) {
                Ok(RecvOutcome::WouldBlock) => return,
                Ok(RecvOutcome::Closed) => {
                    self.on_eof(registry, c);
                    return;
                }
                Ok(RecvOutcome::Progress) => {}
                // A reset during our own handshake is the peer dropping a connection it does
                // not need (it chose ours the other way, or it finished and closed): the same
                // as a close, which reconnects only if frames still wait.
                Err(crate::transport::RouteError::Io(e)) if initiating => {
                    debug!("tcp", "connection being set up was reset: {e}");
                    self.on_eof(registry, c);
                    return;
                }
                Err(e) => {
                    self.refuse(registry, c, e.to_string());
                    return;
                }
            }
            let Some((h, payload)) = got.0 else { continue };
            if !self.on_frame(registry, c, h, payload) {
                return;
            }
        }
    }

    /// A handshake frame arrived on connection `c`. Returns whether to keep reading it.
    fn on_frame(&mut self, registry: &Registry, c: usize, h: Header, payload: Vec<u8>) -> bool {
        // The secret this connection proves: its peer's when we dialled it, else the one of
        // the bridge its Hello names (this job's for 0); a bridge nobody knows is refused.
        let secret = match &self.slots[c].as_ref().expect("reading a live slot").phase {
            Phase::Accepting(acc) => match acc.bridge().unwrap_or(if h.kind == ferry_wire::Kind::Hello { h.context } else { 0 }) {
                0 if acc.awaiting_hello() && h.src >= self.job_size => Err(format!("hello from rank {} of a job of {}", h.src, self.job_size)),
                0 => Ok(self.secret.clone()),
                id => self.bridges.secret(id).map(<[u8]>::to_vec).ok_or(format!("hello over an unknown bridge {id:#010x}")),
            },
            _ => Ok(self.slots[c].as_ref().and_then(|s| s.peer).map_or(&self.secret[..], |p| self.secret_of(p)).to_vec()),
        };
        let secret = match secret {
            Ok(s) => s,
            Err(msg) => {
                self.refuse(registry, c, msg);
                return false;
            }
        };
        let slot = self.slots[c].as_mut().expect("reading a live slot");
        let mut none = Vec::new();
        match &mut slot.phase {
            Phase::Connecting(_) | Phase::RelayConnecting(_) | Phase::Relaying(_) => unreachable!("no frames before the connection is open"),
            Phase::Initiating(init) => match init.on_frame(&secret, &h, &payload) {
                Ok(Some(out)) => {
                    slot.conn.push(out_frame(out));
                    if let Err(e) = slot.conn.flush(&mut none) {
                        let peer = slot.peer.expect("a dialled connection knows its peer");
                        self.failed(registry, c, format!("write to rank {peer}: {e}"));
                        return false;
                    }
                    true
                }
                Ok(None) => {
                    let peer = slot.peer.expect("a dialled connection knows its peer");
                    self.establish(registry, c, peer);
                    false
                }
                Err(HandshakeError::Rejected(reason)) => {
                    let peer = slot.peer.expect("a dialled connection knows its peer");
                    debug!("tcp", "rank {peer} declined our connection ({reason:?}); using theirs");
                    self.close(registry, c);
                    false
                }
                Err(e) => {
                    let peer = slot.peer.expect("a dialled connection knows its peer");
                    self.events.push_back(ConnectorEvent::Failed { peer, msg: format!("handshake with rank {peer} failed: {e}") });
                    self.close(registry, c);
                    false
                }
            },
            Phase::Accepting(acc) => match acc.on_frame(&secret, &h, &payload) {
                Ok(AcceptorStep::Send(out)) => {
                    slot.conn.push(out_frame(out));
                    if let Err(e) = slot.conn.flush(&mut none) {
                        self.refuse(registry, c, e.to_string());
                        return false;
                    }
                    true
                }
                Ok(AcceptorStep::Authenticated { peer: wire, bridge }) => {
                    let peer = if bridge == 0 { Some(wire) } else { self.bridges.local_of(bridge, wire) };
                    let Some(peer) = peer else {
                        let out = acc.refusal(wire);
                        slot.conn.push(out_frame(out));
                        let _ = slot.conn.flush(&mut none);
                        self.refuse(registry, c, format!("rank {wire} is no peer of bridge {bridge:#010x}"));
                        return false;
                    };
                    let (me, them) = self.bridges.order(self.me, peer);
                    let d = decide_by_order(me, them, self.established[peer as usize], self.connecting[peer as usize].is_some());
                    let v = acc.verdict(wire, d);
                    slot.conn.push(out_frame(v));
                    let _ = slot.conn.flush(&mut none);
                    match d {
                        Decision::Accept => self.establish(registry, c, peer),
                        Decision::Reject(r) => {
                            debug!("tcp", "declined a second connection from rank {peer} ({r:?})");
                            self.close(registry, c);
                        }
                    }
                    false
                }
                Err(e) => {
                    self.refuse(registry, c, format!("handshake: {e}"));
                    false
                }
            },
        }
    }

    fn establish(&mut self, registry: &Registry, c: usize, peer: u32) {
        debug!("tcp", "connection to rank {peer} established");
        if self.connecting[peer as usize] == Some(c) {
            self.connecting[peer as usize] = None;
        }
        // The peer reached us first: our own attempt is no longer needed.
        self.set_pending(peer as usize, None);
        let mut slot = self.slots[c].take().expect("live");
        let _ = registry.deregister(&mut slot.conn.stream);
        self.established[peer as usize] = true;
        self.events.push_back(ConnectorEvent::Established { peer, conn: slot.conn });
    }

    /// Malformed or unexpected bytes on a connection in set-up.
    fn refuse(&mut self, registry: &Registry, c: usize, msg: String) {
        let Some(slot) = self.slots[c].as_ref() else { return };
        match (&slot.phase, slot.peer) {
            (Phase::Initiating(_), Some(peer)) => {
                self.events.push_back(ConnectorEvent::Failed { peer, msg: format!("handshake with rank {peer} failed: {msg}") });
            }
            _ => warn!("tcp", "refused connection from {}: {msg}", slot.from),
        }
        self.close(registry, c);
    }

    fn on_eof(&mut self, registry: &Registry, c: usize) {
        let Some(slot) = self.slots[c].as_ref() else { return };
        match (&slot.phase, slot.peer) {
            (Phase::Initiating(_), Some(peer)) => {
                // The peer closed during our handshake: it chose the other connection, or
                // dropped ours.
                self.close(registry, c);
                self.events.push_back(ConnectorEvent::Dropped { peer });
            }
            _ => {
                debug!("tcp", "unauthenticated connection from {} closed", slot.from);
                self.close(registry, c);
            }
        }
    }

    fn failed(&mut self, registry: &Registry, c: usize, msg: String) {
        if matches!(self.slots[c].as_ref().map(|s| &s.phase), Some(Phase::Initiating(_))) {
            // As for a reset while reading: the peer dropped a connection in set-up.
            debug!("tcp", "{msg}");
            self.on_eof(registry, c);
            return;
        }
        let peer = self.slots[c].as_ref().and_then(|s| s.peer);
        if let Some(peer) = peer {
            if self.connecting[peer as usize] == Some(c) {
                self.events.push_back(ConnectorEvent::Failed { peer, msg });
            }
        }
        self.close(registry, c);
    }

    fn close(&mut self, registry: &Registry, c: usize) {
        if let Some(mut slot) = self.slots[c].take() {
            let _ = registry.deregister(&mut slot.conn.stream);
            if let Some(peer) = slot.peer {
                if self.connecting[peer as usize] == Some(c) {
                    self.connecting[peer as usize] = None;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_back_off_from_10_ms_doubling_to_500_ms() {
        let mut d = FIRST_RETRY_DELAY;
        let mut seen = vec![d];
        for _ in 0..8 {
            d = next_delay(d);
            seen.push(d);
        }
        let ms: Vec<u128> = seen.iter().map(|d| d.as_millis()).collect();
        assert_eq!(ms, [10, 20, 40, 80, 160, 320, 500, 500, 500]);
    }

    #[test]
    fn unspecified_addresses_are_unknown() {
        assert!(is_unknown_addr(&"0.0.0.0:0".parse().unwrap()));
        assert!(is_unknown_addr(&"0.0.0.0:4000".parse().unwrap()));
        assert!(is_unknown_addr(&"127.0.0.1:0".parse().unwrap()));
        assert!(is_unknown_addr(&"[::]:0".parse().unwrap()));
        assert!(!is_unknown_addr(&"127.0.0.1:4000".parse().unwrap()));
    }
}
