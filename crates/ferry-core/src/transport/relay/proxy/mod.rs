//! The proxy's event loop: one thread, non-blocking sockets under one mio poller. It greets
//! every connection, hands its first frame to the pure handshake and registry, and then
//! either relays a pair (`pair`), serves a control connection (`control_conn`) or drops it
//! (`pending`). Unauthenticated connections are few (per source and in all) and short-lived;
//! nothing one client does can block another.
//!
//! Log lines (target `proxy`; info level, warnings for refusals):
//! - `job <hex> registered by <addr>: <size> ranks`, `job <hex> rank <r> at <addr>`
//! - `pair opened: job <hex> rank <from> -> rank <to> at <target> (client <addr>)`
//! - `pair closed: job <hex> rank <from> -> rank <to>: <a> bytes to target, <b> bytes to client (<why>)`
//! - `job <hex> ended: <pairs> pairs, <bytes> bytes relayed` (bytes: both directions)
//! - `denied ...: <reason>` and `throttled <n> connections from <ip>: <why>`

#[cfg(test)]
mod bench;
mod control_conn;
mod pair;
mod pending;
mod splice;
#[cfg(test)]
pub(crate) mod tests;

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mio::{Events, Interest, Poll, Token, Waker};

use super::policy::AddrPolicy;
use super::registry::{Owner, Quotas, Registry};
use crate::log::Level;
use control_conn::ControlConn;
use pair::{Flow, Pair};
use pending::PendingConn;

/// What a proxy is told at start.
#[derive(Clone)]
pub struct Config {
    pub listen: SocketAddr,
    pub site_key: Vec<u8>,
    pub policy: AddrPolicy,
    pub quotas: Quotas,
    /// Connections that have not yet sent their first frame, in all.
    pub max_pending: usize,
    /// ... and from one source address.
    pub max_pending_per_source: usize,
    /// Bytes buffered per direction of a relayed pair.
    pub pair_buffer: usize,
    /// Relay with splice(2) through a kernel pipe per direction, where the kernel gives one
    /// of `pair_buffer` bytes; otherwise (and when false) by copying through memory.
    pub splice: bool,
    /// Descriptors the pipes may hold in all (two per pipe, four per pair); pairs opened
    /// beyond copy. Keeps the pipes from taking the descriptors that sockets need.
    pub pipe_fds: usize,
    /// A connection that has not sent its first frame by then is dropped.
    pub handshake_deadline: Duration,
    /// The second leg must connect within this.
    pub connect_timeout: Duration,
}

pub const DEFAULT_MAX_PENDING: usize = 256;
pub const DEFAULT_MAX_PENDING_PER_SOURCE: usize = 16;
pub const DEFAULT_PAIR_BUFFER: usize = 256 << 10;
pub const DEFAULT_HANDSHAKE_DEADLINE: Duration = Duration::from_secs(5);
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

impl std::fmt::Debug for Config {
    /// Everything but the site key, which must not reach a log by accident.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("listen", &self.listen)
            .field("site_key", &format_args!("<{} bytes>", self.site_key.len()))
            .field("policy", &self.policy)
            .field("quotas", &self.quotas)
            .field("max_pending", &self.max_pending)
            .field("max_pending_per_source", &self.max_pending_per_source)
            .field("pair_buffer", &self.pair_buffer)
            .field("splice", &self.splice)
            .field("pipe_fds", &self.pipe_fds)
            .field("handshake_deadline", &self.handshake_deadline)
            .field("connect_timeout", &self.connect_timeout)
            .finish()
    }
}

/// Half the open files this process may have now: the other half stays for sockets.
pub fn default_pipe_fds() -> usize {
    // SAFETY: getrlimit writes one rlimit through the valid pointer; all-zero is a valid rlimit.
    let mut lim: libc::rlimit = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return 0;
    }
    usize::try_from(lim.rlim_cur / 2).unwrap_or(usize::MAX)
}

impl Config {
    /// A proxy with the default limits.
    pub fn new(listen: SocketAddr, site_key: Vec<u8>, policy: AddrPolicy) -> Config {
        Config {
            listen,
            site_key,
            policy,
            quotas: Quotas::default(),
            max_pending: DEFAULT_MAX_PENDING,
            max_pending_per_source: DEFAULT_MAX_PENDING_PER_SOURCE,
            pair_buffer: DEFAULT_PAIR_BUFFER,
            splice: true,
            pipe_fds: default_pipe_fds(),
            handshake_deadline: DEFAULT_HANDSHAKE_DEADLINE,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
        }
    }
}

/// What the proxy holds now, readable from other threads (tests, a status line).
#[derive(Debug, Default)]
pub struct Stats {
    pub pending: AtomicUsize,
    pub controls: AtomicUsize,
    pub pairs: AtomicUsize,
    /// Bytes in the pairs' buffers now, and the most ever.
    pub buffered: AtomicUsize,
    pub peak_buffered: AtomicUsize,
    /// Pairs opened so far whose two directions relay by splice (the others copy).
    pub spliced: AtomicUsize,
}

const LISTENER: Token = Token(usize::MAX);
const WAKER: Token = Token(usize::MAX - 1);
/// Socket tokens: the slot number shifted left, the kind of slot in the low bits.
const PENDING: usize = 0;
const CONTROL: usize = 1;
const PAIR_CLIENT: usize = 2;
const PAIR_TARGET: usize = 3;
/// Refusals for throttling are summed up at most this often rather than logged one by one.
const THROTTLE_REPORT: Duration = Duration::from_secs(1);
/// A sleep is never longer, so a signal that slips in before the wait is seen soon.
const MAX_WAIT: Duration = Duration::from_millis(500);
/// Deadlines are checked (and the stats published) at most this often: the checks walk every
/// connection, which a busy loop must not do on every wakeup. A deadline may pass by this much.
const HOUSEKEEPING_EVERY: Duration = Duration::from_millis(10);

fn token(slot: usize, kind: usize) -> Token {
    Token(slot << 2 | kind)
}

/// Slots that keep their number while they live (the number is the poller's token).
pub(super) struct Slab<T> {
    items: Vec<Option<T>>,
    free: Vec<usize>,
    len: usize,
}

impl<T> Slab<T> {
    fn new() -> Slab<T> {
        Slab { items: Vec::new(), free: Vec::new(), len: 0 }
    }
    fn insert(&mut self, t: T) -> usize {
        self.len += 1;
        if let Some(i) = self.free.pop() {
            self.items[i] = Some(t);
            return i;
        }
        self.items.push(Some(t));
        self.items.len() - 1
    }
    fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        self.items.get_mut(i).and_then(Option::as_mut)
    }
    fn get(&self, i: usize) -> Option<&T> {
        self.items.get(i).and_then(Option::as_ref)
    }
    fn remove(&mut self, i: usize) -> Option<T> {
        let t = self.items.get_mut(i)?.take()?;
        self.free.push(i);
        self.len -= 1;
        Some(t)
    }
    fn ids(&self) -> Vec<usize> {
        self.items.iter().enumerate().filter(|(_, t)| t.is_some()).map(|(i, _)| i).collect()
    }
    fn len(&self) -> usize {
        self.len
    }
}

/// A running proxy.
pub struct Proxy {
    poll: Poll,
    listener: mio::net::TcpListener,
    local: SocketAddr,
    cfg: Config,
    registry: Registry,
    pending: Slab<PendingConn>,
    controls: Slab<ControlConn>,
    pairs: Slab<Pair>,
    per_source: HashMap<IpAddr, usize>,
    /// Refused for throttling since the last report, per source.
    throttled: HashMap<IpAddr, (u64, &'static str)>,
    throttle_reported: Option<Instant>,
    /// Accepting stopped for lack of descriptors; try again then.
    retry_accept: Option<Instant>,
    /// Pairs that still had bytes to move at the end of their turn.
    busy: Vec<usize>,
    /// Bytes in all pairs' buffers, as each pair last counted them.
    buffered: usize,
    /// Descriptors the pairs' kernel pipes hold.
    pipe_fds: usize,
    /// Deadlines are not checked before then.
    next_housekeeping: Instant,
    next_owner: Owner,
    waker: Arc<Waker>,
    stats: Arc<Stats>,
    capture: Option<Arc<Mutex<Vec<String>>>>,
}

impl Proxy {
    /// Listen on `cfg.listen`.
    pub fn bind(mut cfg: Config) -> io::Result<Proxy> {
        let poll = Poll::new()?;
        let mut listener = mio::net::TcpListener::bind(cfg.listen)?;
        let local = listener.local_addr()?;
        if let SocketAddr::V4(l) = local {
            cfg.policy.set_listen(l);
        }
        poll.registry().register(&mut listener, LISTENER, Interest::READABLE)?;
        let waker = Arc::new(Waker::new(poll.registry(), WAKER)?);
        let registry = Registry::new(cfg.policy.clone(), cfg.quotas);
        Ok(Proxy {
            poll,
            listener,
            local,
            cfg,
            registry,
            pending: Slab::new(),
            controls: Slab::new(),
            pairs: Slab::new(),
            per_source: HashMap::new(),
            throttled: HashMap::new(),
            throttle_reported: None,
            retry_accept: None,
            busy: Vec::new(),
            buffered: 0,
            pipe_fds: 0,
            next_housekeeping: Instant::now(),
            next_owner: 1,
            waker,
            stats: Arc::new(Stats::default()),
            capture: None,
        })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// Wakes [`run`](Self::run) from another thread (after setting its stop flag).
    pub fn waker(&self) -> Arc<Waker> {
        self.waker.clone()
    }

    pub fn stats(&self) -> Arc<Stats> {
        self.stats.clone()
    }

    /// Keep a copy of every log line the proxy emits (for tests that read them).
    pub fn capture_log(&mut self) -> Arc<Mutex<Vec<String>>> {
        let c = Arc::new(Mutex::new(Vec::new()));
        self.capture = Some(c.clone());
        c
    }

    pub(super) fn note(&self, level: Level, msg: String) {
        crate::log_at!(level, "proxy", "{msg}");
        if let Some(c) = &self.capture {
            if let Ok(mut v) = c.lock() {
                v.push(msg);
            }
        }
    }

    /// Serve until `stop` is set (a signal interrupts the wait; another thread also calls
    /// the [`waker`](Self::waker)); then close everything, ending every job.
    pub fn run(&mut self, stop: &AtomicBool) -> io::Result<()> {
        let mut events = Events::with_capacity(1024);
        while !stop.load(Ordering::Relaxed) {
            let wait = if self.busy.is_empty() { self.next_wait(Instant::now()) } else { Duration::ZERO };
            match self.poll.poll(&mut events, Some(wait)) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
            for ev in events.iter() {
                let (readable, writable) = (ev.is_readable() || ev.is_read_closed() || ev.is_error(), ev.is_writable() || ev.is_write_closed() || ev.is_error());
                let closing = ev.is_read_closed() || ev.is_error();
                match ev.token() {
                    LISTENER => self.accept_all(),
                    WAKER => {}
                    Token(t) => match t & 3 {
                        PENDING => self.pending_event(t >> 2, readable, writable),
                        CONTROL => self.control_event(t >> 2, readable, writable),
                        kind => self.pair_event(t >> 2, kind == PAIR_CLIENT, readable, writable, closing),
                    },
                }
            }
            for id in std::mem::take(&mut self.busy) {
                self.pump_pair(id);
            }
            self.housekeeping(Instant::now());
        }
        self.shutdown();
        Ok(())
    }

    /// How long the loop may sleep before a deadline needs it.
    fn next_wait(&self, now: Instant) -> Duration {
        let pending = self.pending.items.iter().flatten().map(|p| p.opened + self.cfg.handshake_deadline);
        let connecting = self.pairs.items.iter().flatten().filter_map(|p| match p.state {
            pair::PairState::Connecting { since } => Some(since + self.cfg.connect_timeout),
            pair::PairState::Relaying => None,
        });
        let throttle = (!self.throttled.is_empty()).then(|| self.throttle_reported.map_or(now, |t| t + THROTTLE_REPORT));
        let due = pending.chain(connecting).chain(throttle).chain(self.retry_accept).min();
        // Housekeeping would not act before its time anyway: no point waking for it.
        due.map_or(MAX_WAIT, |d| d.max(self.next_housekeeping).saturating_duration_since(now).min(MAX_WAIT))
    }

    fn housekeeping(&mut self, now: Instant) {
        if now < self.next_housekeeping {
            return;
        }
        self.next_housekeeping = now + HOUSEKEEPING_EVERY;
        for id in self.pending.ids() {
            let late = self.pending.get(id).is_some_and(|p| now >= p.opened + self.cfg.handshake_deadline);
            if late {
                let from = self.pending.get(id).map(|p| p.from).expect("live slot");
                self.note(Level::Warn, format!("denied connection from {from}: no request within {:?}", self.cfg.handshake_deadline));
                self.drop_pending(id);
            }
        }
        for id in self.pairs.ids() {
            let late = self.pairs.get(id).is_some_and(|p| matches!(p.state, pair::PairState::Connecting { since } if now >= since + self.cfg.connect_timeout));
            if late {
                self.connect_failed(id, format!("no connection within {:?}", self.cfg.connect_timeout));
            }
        }
        if !self.throttled.is_empty() && self.throttle_reported.is_none_or(|t| now >= t + THROTTLE_REPORT) {
            let mut lines: Vec<(IpAddr, u64, &str)> = self.throttled.drain().map(|(ip, (n, why))| (ip, n, why)).collect();
            lines.sort();
            for (ip, n, why) in lines {
                self.note(Level::Warn, format!("throttled {n} connections from {ip}: {why}"));
            }
            self.throttle_reported = Some(now);
        }
        if self.retry_accept.is_some_and(|t| now >= t) {
            self.retry_accept = None;
            self.accept_all();
        }
        self.publish_stats();
    }

    pub(super) fn throttle(&mut self, ip: IpAddr, why: &'static str) {
        self.throttled.entry(ip).or_insert((0, why)).0 += 1;
    }

    fn publish_stats(&self) {
        let buffered = self.buffered;
        debug_assert_eq!(buffered, self.pairs.items.iter().flatten().map(|p| p.counted).sum::<usize>());
        self.stats.pending.store(self.pending.len(), Ordering::Relaxed);
        self.stats.controls.store(self.controls.len(), Ordering::Relaxed);
        self.stats.pairs.store(self.pairs.len(), Ordering::Relaxed);
        self.stats.buffered.store(buffered, Ordering::Relaxed);
        self.stats.peak_buffered.fetch_max(buffered, Ordering::Relaxed);
    }

    fn accept_all(&mut self) {
        loop {
            match self.listener.accept() {
                Ok((stream, from)) => self.on_accept(stream, from),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if matches!(e.kind(), io::ErrorKind::Interrupted | io::ErrorKind::ConnectionAborted) => continue,
                Err(e) => {
                    // Out of descriptors, most likely: the waiting connections stay in the
                    // backlog until some close.
                    self.note(Level::Warn, format!("accept failed: {e}; retrying shortly"));
                    self.retry_accept = Some(Instant::now() + Duration::from_millis(100));
                    return;
                }
            }
        }
    }

    /// The poller reported one side of pair `id`.
    fn pair_event(&mut self, id: usize, client: bool, readable: bool, writable: bool, closing: bool) {
        let Some(p) = self.pairs.get_mut(id) else { return };
        let side = if client { &mut p.client } else { &mut p.target };
        side.readable |= readable;
        side.writable |= writable;
        side.closing |= closing;
        if !client && matches!(p.state, pair::PairState::Connecting { .. }) {
            if writable || readable {
                self.connect_progress(id);
            }
            return;
        }
        self.pump_pair(id);
    }

    /// Let pair `id` move bytes; close it when both directions are done or one side failed.
    pub(super) fn pump_pair(&mut self, id: usize) {
        let Some(p) = self.pairs.get_mut(id) else { return };
        if !matches!(p.state, pair::PairState::Relaying) {
            return;
        }
        let flow = p.pump();
        // Only this pair's buffers changed: adjust the total by its difference rather than
        // summing every pair on every event.
        let now = p.buffered();
        self.buffered = self.buffered + now - p.counted;
        p.counted = now;
        self.stats.peak_buffered.fetch_max(self.buffered, Ordering::Relaxed);
        match flow {
            Ok(Flow::Idle) => {}
            Ok(Flow::More) => self.busy.push(id),
            Ok(Flow::Done) => self.close_pair(id, "both sides closed".into()),
            Err(e) => self.close_pair(id, format!("error: {e}")),
        }
    }

    /// Remove pair `id`, uncounting its buffers.
    fn take_pair(&mut self, id: usize) -> Option<Pair> {
        let p = self.pairs.remove(id)?;
        self.buffered -= p.counted;
        self.pipe_fds -= p.pipe_fds();
        Some(p)
    }

    /// Close pair `id`, free its quota and log what it relayed.
    pub(super) fn close_pair(&mut self, id: usize, why: String) {
        let Some(mut p) = self.take_pair(id) else { return };
        let reg = self.poll.registry();
        let _ = reg.deregister(&mut p.client.stream);
        let _ = reg.deregister(&mut p.target.stream);
        let (up, down) = p.bytes();
        self.registry.pair_closed(&p.job, p.from, p.to, up + down);
        let job = super::wire::hex(&p.job);
        self.note(Level::Info, format!("pair closed: job {job} rank {} -> rank {}: {up} bytes to target, {down} bytes to client ({why})", p.from, p.to));
    }

    /// Stop: end every job (closing its pairs) and drop every connection.
    fn shutdown(&mut self) {
        for id in self.controls.ids() {
            self.close_control(id, "proxy stopping");
        }
        for id in self.pairs.ids() {
            self.close_pair(id, "proxy stopping".into());
        }
        for id in self.pending.ids() {
            self.drop_pending(id);
        }
        self.publish_stats();
    }
}
