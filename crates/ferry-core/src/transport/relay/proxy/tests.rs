//! The proxy against real sockets on loopback (a test-only address policy lets loopback
//! members through): relaying, every refusal, floods and stalled clients. The helpers are
//! shared with the route conformance suite, which runs TCP routes through a proxy.

use std::io::{Read, Write};
use std::net::{SocketAddr, SocketAddrV4, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::{Config, Proxy, Stats};
use crate::transport::relay::policy::{AddrPolicy, Cidr};
use crate::transport::relay::wire::{hex, JobId, Msg};
use crate::transport::relay::{relay_key, ClientStep, ControlClient, ControlRefusal, DenyReason, RelayClient, RelayError};

pub(crate) const SITE: &[u8] = b"the site key of the proxy tests, long enough";
const T: Duration = Duration::from_secs(5);

/// A proxy serving on a thread of the test.
pub(crate) struct Running {
    pub(crate) addr: SocketAddr,
    stop: Arc<AtomicBool>,
    waker: Arc<mio::Waker>,
    log: Arc<Mutex<Vec<String>>>,
    stats: Arc<Stats>,
    thread: Option<JoinHandle<std::io::Result<()>>>,
}

impl Running {
    pub(crate) fn log_has(&self, needle: &str) -> bool {
        self.log.lock().expect("log lock").iter().any(|l| l.contains(needle))
    }

    /// Wait (bounded) for a log line containing `needle`.
    pub(crate) fn wait_log(&self, needle: &str) {
        let end = Instant::now() + T;
        while Instant::now() < end {
            if self.log_has(needle) {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        panic!("no log line contains {needle:?}; the log:\n{}", self.log.lock().expect("log lock").join("\n"));
    }

    fn stop(mut self) -> std::io::Result<()> {
        self.stop.store(true, Ordering::Relaxed);
        self.waker.wake().expect("wake the proxy");
        self.thread.take().expect("running").join().expect("the proxy thread does not panic")
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(t) = self.thread.take() {
            self.stop.store(true, Ordering::Relaxed);
            let _ = self.waker.wake();
            let _ = t.join();
        }
    }
}

pub(crate) fn start(tweak: impl FnOnce(&mut Config)) -> Running {
    let policy = AddrPolicy::new(vec![Cidr::parse("127.0.0.0/8").expect("cidr")], vec![]).allow_loopback_for_tests();
    let mut cfg = Config::new("127.0.0.1:0".parse().expect("addr"), SITE.to_vec(), policy);
    tweak(&mut cfg);
    let mut p = Proxy::bind(cfg).expect("bind the proxy");
    let log = p.capture_log();
    let (addr, waker, stats) = (p.local_addr(), p.waker(), p.stats());
    let stop = Arc::new(AtomicBool::new(false));
    let s = stop.clone();
    let thread = std::thread::spawn(move || p.run(&s));
    Running { addr, stop, waker, log, stats, thread: Some(thread) }
}

fn v4(a: SocketAddr) -> SocketAddrV4 {
    match a {
        SocketAddr::V4(a) => a,
        SocketAddr::V6(_) => panic!("loopback v4 expected"),
    }
}

/// A target rank: a listener on loopback.
pub(crate) fn target() -> (TcpListener, SocketAddrV4) {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind a target");
    let a = v4(l.local_addr().expect("address"));
    (l, a)
}

pub(crate) fn control(r: &Running, job: JobId, secret: &[u8], size: u32, members: &[(u32, SocketAddrV4)]) -> ControlClient {
    let mut c = ControlClient::connect(r.addr, SITE, T).expect("control connection");
    c.register_job(job, relay_key(secret), size).expect("register the job");
    for &(rank, a) in members {
        c.add_member(rank, a).expect("add a member");
    }
    c
}

fn nonce() -> [u8; 32] {
    let mut n = [0u8; 32];
    getrandom::getrandom(&mut n).expect("random");
    n
}

/// Run the relay handshake on `s` as a client would.
pub(crate) fn handshake(mut s: TcpStream, job: JobId, secret: &[u8], from: u32, to: u32) -> Result<TcpStream, RelayError> {
    s.set_read_timeout(Some(T))?;
    let mut c = RelayClient::new(job, relay_key(secret), from, to, nonce());
    let mut buf = [0u8; 256];
    loop {
        let n = s.read(&mut buf)?;
        if n == 0 {
            return Err(RelayError::Closed);
        }
        match c.on_bytes(&buf[..n])? {
            ClientStep::NeedMore => {}
            ClientStep::Send(b) => s.write_all(&b)?,
            ClientStep::Established { consumed } => {
                assert_eq!(consumed, n, "the target said nothing yet");
                s.set_read_timeout(None)?;
                return Ok(s);
            }
        }
    }
}

pub(crate) fn relay(r: &Running, job: JobId, secret: &[u8], from: u32, to: u32) -> Result<TcpStream, RelayError> {
    handshake(TcpStream::connect(r.addr)?, job, secret, from, to)
}

fn pattern(n: usize, seed: u8) -> Vec<u8> {
    (0..n).map(|i| (i as u32).wrapping_mul(2654435761).rotate_left(seed as u32 % 32) as u8 ^ seed).collect()
}

/// Send `out` on `s` while reading until the peer's end of stream.
fn exchange(s: TcpStream, out: Vec<u8>) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut w = s.try_clone().expect("clone");
        let writer = std::thread::spawn(move || {
            w.write_all(&out).expect("write");
            w.shutdown(std::net::Shutdown::Write).expect("shutdown");
        });
        let mut got = Vec::new();
        let mut r = s;
        r.read_to_end(&mut got).expect("read");
        writer.join().expect("writer");
        got
    })
}

/// A relayed pair and its target's end.
fn pair(r: &Running, l: &TcpListener, job: JobId, secret: &[u8], from: u32, to: u32) -> (TcpStream, TcpStream) {
    let c = relay(r, job, secret, from, to).expect("relayed connection");
    let (t, _) = l.accept().expect("the proxy connects to the target");
    (c, t)
}

/// One round trip of `n` bytes through an echoing target.
fn echo_round(c: &mut TcpStream, n: usize, seed: u8) {
    let d = pattern(n, seed);
    c.write_all(&d).expect("write");
    let mut back = vec![0u8; n];
    c.read_exact(&mut back).expect("echo");
    assert!(back == d, "echo intact");
}

fn echo_server(mut t: TcpStream) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let mut buf = [0u8; 16384];
        while let Ok(n) = t.read(&mut buf) {
            if n == 0 || t.write_all(&buf[..n]).is_err() {
                return;
            }
        }
    })
}

#[test]
fn relays_mebibytes_both_ways_and_logs_the_totals() {
    for splice in [true, false] {
        let r = start(|c| c.splice = splice);
        let (l, ta) = target();
        let job = [0xa1; 16];
        let ctl = control(&r, job, b"secret", 2, &[(1, ta)]);
        r.wait_log(&format!("job {} registered by", hex(&job)));
        let (c, t) = pair(&r, &l, job, b"secret", 0, 1);
        r.wait_log(&format!("pair opened: job {} rank 0 -> rank 1 at {ta}", hex(&job)));
        assert_eq!(r.stats.spliced.load(Ordering::Relaxed), splice as usize, "relaying by splice: {splice}");
        let (up, down) = (pattern(4 << 20, 1), pattern(3 << 20, 2));
        // The client sends `up` and receives `down`; the target the other way round.
        let at_target = exchange(t, down.clone());
        let at_client = exchange(c, up.clone());
        assert!(at_target.join().expect("target") == up);
        assert!(at_client.join().expect("client") == down);
        r.wait_log(&format!("pair closed: job {} rank 0 -> rank 1: {} bytes to target, {} bytes to client (both sides closed)", hex(&job), up.len(), down.len()));
        drop(ctl);
        r.wait_log(&format!("job {} ended: 1 pairs, {} bytes relayed", hex(&job), up.len() + down.len()));
        r.stop().expect("the proxy stops cleanly");
    }
}

/// Each side's end of stream reaches the other only after every byte before it, and the
/// other direction carries on after it; relayed by splice and by copying.
#[test]
fn an_end_of_stream_is_passed_on_after_the_bytes_before_it() {
    for splice in [true, false] {
        let r = start(|c| c.splice = splice);
        let (l, ta) = target();
        let job = [0xa2; 16];
        let _ctl = control(&r, job, b"s", 2, &[(1, ta)]);
        let (mut c, mut t) = pair(&r, &l, job, b"s", 0, 1);
        let (up, down) = (pattern(1_500_000, 3), pattern(2_500_000, 4));
        c.write_all(&up).unwrap();
        c.shutdown(std::net::Shutdown::Write).unwrap();
        let mut got = Vec::new();
        t.read_to_end(&mut got).unwrap();
        assert!(got == up, "everything before the end of stream (splice: {splice})");
        // The half-closed pair still carries the other way, then the target's end of
        // stream (it closes once written) reaches the client and ends the pair.
        let d = down.clone();
        let w = std::thread::spawn(move || t.write_all(&d).unwrap());
        let mut back = Vec::new();
        c.set_read_timeout(Some(T)).unwrap();
        c.read_to_end(&mut back).unwrap();
        w.join().unwrap();
        assert!(back == down, "everything, then the end of stream (splice: {splice})");
        r.wait_log(&format!("rank 0 -> rank 1: {} bytes to target, {} bytes to client (both sides closed)", up.len(), down.len()));
    }
}

/// Messages of every size, one at a time with pauses, so that the relay switches between
/// copying small ones and splicing bulk: all come back intact and in order.
#[test]
fn small_and_bulk_messages_interleave_intact() {
    for splice in [true, false] {
        let r = start(|c| c.splice = splice);
        let (l, ta) = target();
        let job = [0xa3; 16];
        let _ctl = control(&r, job, b"s", 2, &[(1, ta)]);
        let (mut c, t) = pair(&r, &l, job, b"s", 0, 1);
        let _echo = echo_server(t);
        for (i, n) in [1, 8, 300, (16 << 10) - 1, 16 << 10, (16 << 10) + 1, 1 << 20, 5, 200_000, 8, 1 << 20, 1].into_iter().enumerate() {
            echo_round(&mut c, n, i as u8);
        }
    }
}

/// Pipes take descriptors only up to their allowance: a pair beyond it copies, and one
/// that closes gives its share back.
#[test]
fn pairs_past_the_pipe_allowance_copy_and_a_closed_pair_frees_its_pipes() {
    let r = start(|c| c.pipe_fds = 4);
    let (l, ta) = target();
    let job = [0xa4; 16];
    let _ctl = control(&r, job, b"s", 8, &[(1, ta)]);
    let spliced = || r.stats.spliced.load(Ordering::Relaxed);
    let (mut a, ta_) = pair(&r, &l, job, b"s", 0, 1);
    let _ea = echo_server(ta_);
    assert_eq!(spliced(), 1, "the first pair fits the allowance");
    let (mut b, tb) = pair(&r, &l, job, b"s", 2, 1);
    let _eb = echo_server(tb);
    assert_eq!(spliced(), 1, "the second copies");
    echo_round(&mut a, 1 << 20, 1);
    echo_round(&mut b, 1 << 20, 2);
    drop(a);
    r.wait_log("rank 0 -> rank 1: 1048576 bytes to target, 1048576 bytes to client");
    let (mut c, tc) = pair(&r, &l, job, b"s", 3, 1);
    let _ec = echo_server(tc);
    assert_eq!(spliced(), 2, "the closed pair's pipes are free again");
    echo_round(&mut c, 1 << 20, 3);
}

/// Everything a stranger or a confused client may try is refused and logged, and the proxy
/// relays correctly afterwards.
#[test]
fn refusals_are_logged_and_the_proxy_carries_on() {
    let r = start(|c| c.handshake_deadline = Duration::from_millis(300));
    let (la, ta) = target();
    let (lb, tb) = target();
    let (ja, jb) = ([0xaa; 16], [0xbb; 16]);
    let mut ca = control(&r, ja, b"secret a", 4, &[(1, ta)]);
    let _cb = control(&r, jb, b"secret b", 4, &[(1, tb)]);

    // Silence: dropped at the deadline.
    let mut s = TcpStream::connect(r.addr).unwrap();
    s.set_read_timeout(Some(T)).unwrap();
    let mut hello = [0u8; 40];
    s.read_exact(&mut hello).unwrap();
    assert!(matches!(Msg::decode(&hello), Ok(Some((Msg::Hello { .. }, 40)))));
    assert_eq!(s.read(&mut [0u8; 8]).unwrap(), 0, "dropped");
    r.wait_log("no request within 300ms");

    // Garbage and an oversized frame: denied as malformed.
    for (bytes, says) in [(b"GET / HTTP/1.1\r\n\r\n".to_vec(), "bad magic"), ([b"FRLY".as_slice(), &[1, 2, 0x60, 0xea]].concat(), "payload of 60000 bytes")] {
        let mut s = TcpStream::connect(r.addr).unwrap();
        s.set_read_timeout(Some(T)).unwrap();
        s.write_all(&bytes).unwrap();
        let mut got = Vec::new();
        let _ = s.read_to_end(&mut got);
        assert_eq!(Msg::decode(&got[40..]), Ok(Some((Msg::Denied { reason: DenyReason::Malformed.code() }, 9))));
        r.wait_log(says);
    }

    let denied = |job, secret: &[u8], from, to| match relay(&r, job, secret, from, to) {
        Err(RelayError::Denied(d)) => d,
        other => panic!("expected a denial, got {other:?}"),
    };
    // A member of another job, with its own key.
    assert_eq!(denied(ja, b"secret b", 0, 1), DenyReason::BadProof);
    r.wait_log(&format!("job {} rank 0 -> rank 1: request not signed with the job's relay key", hex(&ja)));
    assert_eq!(denied([0xcc; 16], b"secret c", 0, 1), DenyReason::UnknownJob);
    // A rank outside the job, a target that is not registered.
    assert_eq!(denied(ja, b"secret a", 9, 1), DenyReason::NotAMember);
    assert_eq!(denied(ja, b"secret a", 0, 2), DenyReason::TargetNotRegistered);
    r.wait_log("rank 0 -> rank 2: target rank is not registered");

    // Members at addresses the proxy may not reach are refused at registration.
    let bad = |c: &mut ControlClient, rank, a: &str| match c.add_member(rank, a.parse().unwrap()) {
        Err(RelayError::Refused(ControlRefusal::AddressNotAllowed)) => {}
        other => panic!("{a}: expected a refusal, got {other:?}"),
    };
    bad(&mut ca, 2, "10.9.9.9:4000");
    r.wait_log("rank 2 at 10.9.9.9:4000: address is not one the proxy may connect to (outside the proxy's member networks)");
    bad(&mut ca, 2, &r.addr.to_string());
    r.wait_log("(the proxy's own address)");
    bad(&mut ca, 2, "169.254.0.9:4000");
    assert_eq!(denied(ja, b"secret a", 0, 2), DenyReason::TargetNotRegistered);
    // Another job's control connection cannot add members to this one.
    assert!(matches!(ca.add_member(1, tb), Err(RelayError::Refused(ControlRefusal::DuplicateRank))));

    // A request recorded on one connection and replayed on another.
    let mut s1 = TcpStream::connect(r.addr).unwrap();
    let mut h = [0u8; 40];
    s1.read_exact(&mut h).unwrap();
    let mut client = RelayClient::new(ja, relay_key(b"secret a"), 0, 1, nonce());
    let ClientStep::Send(recorded) = client.on_bytes(&h).unwrap() else { panic!("no request") };
    s1.write_all(&recorded).unwrap();
    let mut est = [0u8; 8];
    s1.read_exact(&mut est).unwrap();
    assert!(matches!(client.on_bytes(&est), Ok(ClientStep::Established { .. })));
    let (t1, _) = la.accept().unwrap();
    let mut s2 = TcpStream::connect(r.addr).unwrap();
    s2.read_exact(&mut h).unwrap();
    s2.write_all(&recorded).unwrap();
    let mut got = Vec::new();
    s2.set_read_timeout(Some(T)).unwrap();
    let _ = s2.read_to_end(&mut got);
    assert_eq!(Msg::decode(&got), Ok(Some((Msg::Denied { reason: DenyReason::BadProof.code() }, 9))));

    // A launcher without the site key.
    match ControlClient::connect(r.addr, b"not the site key, though long enough", T) {
        Err(RelayError::Refused(ControlRefusal::BadProof)) => {}
        other => panic!("expected a refusal, got {other:?}"),
    }
    r.wait_log("denied control connection from 127.0.0.1");
    assert!(r.log_has("wrong site key"));

    // And after all that, relaying works, on the first pair and on a new one.
    let _e1 = echo_server(t1);
    echo_round(&mut s1, 100_000, 3);
    let (mut c, t) = pair(&r, &lb, jb, b"secret b", 3, 1);
    let _e2 = echo_server(t);
    echo_round(&mut c, 100_000, 4);
    r.stop().expect("clean stop");
}

/// A connected socket from `src` (a second loopback address, so a flood has its own source).
fn connect_from(src: std::net::Ipv4Addr, to: SocketAddr) -> std::io::Result<TcpStream> {
    use std::os::fd::FromRawFd;
    // SAFETY: a fresh socket; the addresses are valid sockaddr_in values on the stack; the
    // descriptor goes to a TcpStream that owns it from then on, or is closed on error.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let sin = |ip: std::net::Ipv4Addr, port: u16| libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: port.to_be(),
            sin_addr: libc::in_addr { s_addr: u32::from(ip).to_be() },
            sin_zero: [0; 8],
        };
        let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        let a = sin(src, 0);
        let SocketAddr::V4(to) = to else { unreachable!("v4 proxy") };
        let b = sin(*to.ip(), to.port());
        if libc::bind(fd, &a as *const _ as *const libc::sockaddr, len) != 0 || libc::connect(fd, &b as *const _ as *const libc::sockaddr, len) != 0 {
            let e = std::io::Error::last_os_error();
            libc::close(fd);
            return Err(e);
        }
        Ok(TcpStream::from_raw_fd(fd))
    }
}

#[test]
fn a_flood_of_bogus_connections_does_not_stop_relaying() {
    let r = start(|c| {
        c.max_pending = 64;
        c.max_pending_per_source = 16;
        c.handshake_deadline = Duration::from_millis(500);
    });
    let (l, ta) = target();
    let job = [0xf1; 16];
    let _ctl = control(&r, job, b"s", 8, &[(1, ta)]);
    let (mut c, t) = pair(&r, &l, job, b"s", 0, 1);
    let _echo = echo_server(t);
    let done = Arc::new(AtomicBool::new(false));
    let d = done.clone();
    let addr = r.addr;
    let flood = std::thread::spawn(move || {
        let mut made = 0;
        for wave in 0..4 {
            let mut held = Vec::new();
            for i in 0..250 {
                let Ok(mut s) = connect_from("127.0.0.2".parse().unwrap(), addr) else { continue };
                made += 1;
                let _ = match (wave + i) % 3 {
                    0 => Ok(()),
                    1 => s.write_all(b"\x00\x01garbage garbage garbage"),
                    _ => s.write_all(b"FRLY\x01\x02\x58"),
                };
                held.push(s);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        d.store(true, Ordering::Relaxed);
        made
    });
    let mut rounds = 0;
    let mut newcomer = false;
    while !done.load(Ordering::Relaxed) || rounds < 10 {
        let t0 = Instant::now();
        echo_round(&mut c, 64 << 10, rounds as u8);
        assert!(t0.elapsed() < Duration::from_secs(2), "a round trip stalled for {:?}", t0.elapsed());
        assert!(r.stats.pending.load(Ordering::Relaxed) <= 64);
        if rounds == 3 {
            // Another source still gets through during the flood.
            let (mut c2, t2) = pair(&r, &l, job, b"s", 2, 1);
            let _e = echo_server(t2);
            echo_round(&mut c2, 1000, 9);
            newcomer = true;
        }
        rounds += 1;
    }
    assert_eq!(flood.join().expect("flood"), 1000, "every bogus connection was made");
    assert!(newcomer);
    r.wait_log("connections from 127.0.0.2: too many unauthenticated connections from this address");
    echo_round(&mut c, 1 << 20, 7);
}

#[test]
fn a_client_that_stops_reading_stalls_only_its_own_pair() {
    for splice in [true, false] {
        let buffer = 64 << 10;
        let r = start(|c| {
            c.pair_buffer = buffer;
            c.splice = splice;
        });
        let (l, ta) = target();
        let job = [0x5e; 16];
        let _ctl = control(&r, job, b"s", 8, &[(1, ta), (3, ta)]);
        let (mut stalled, mut flooder) = pair(&r, &l, job, b"s", 0, 1);
        // The target floods a client that never reads, until the relay pushes back.
        flooder.set_nonblocking(true).unwrap();
        let chunk = pattern(64 << 10, 5);
        let (mut sent, mut idle) = (0usize, 0);
        while idle < 20 && sent < (64 << 20) {
            match flooder.write(&chunk[sent % chunk.len()..]) {
                Ok(n) => {
                    sent += n;
                    idle = 0;
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    idle += 1;
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(e) => panic!("{e}"),
            }
        }
        assert!(sent < (64 << 20), "the proxy never pushed back ({sent} bytes taken)");
        // Meanwhile another pair flows freely.
        let (c2, t2) = pair(&r, &l, job, b"s", 2, 3);
        let (a, b) = (pattern(2 << 20, 6), pattern(2 << 20, 7));
        let x = exchange(t2, a.clone());
        let y = exchange(c2, b.clone());
        assert!(x.join().unwrap() == b && y.join().unwrap() == a);
        assert!(r.stats.peak_buffered.load(Ordering::Relaxed) <= 4 * buffer, "buffers stay bounded");
        // The stalled client finally reads everything, intact.
        let mut got = vec![0u8; sent];
        stalled.read_exact(&mut got).unwrap();
        assert!(got.iter().enumerate().all(|(i, b)| *b == chunk[i % chunk.len()]));
    }
}

#[test]
fn a_closed_control_connection_ends_the_job_and_its_pairs() {
    let r = start(|_| {});
    let (l, ta) = target();
    let job = [0xe0; 16];
    let ctl = control(&r, job, b"s", 2, &[(1, ta)]);
    let (mut c, mut t) = pair(&r, &l, job, b"s", 0, 1);
    c.write_all(b"12345").unwrap();
    let mut five = [0u8; 5];
    t.read_exact(&mut five).unwrap();
    drop(ctl);
    for s in [&mut c, &mut t] {
        s.set_read_timeout(Some(T)).unwrap();
        assert_eq!(s.read(&mut [0u8; 1]).unwrap_or(0), 0, "closed with the job");
    }
    r.wait_log("rank 0 -> rank 1: 5 bytes to target, 0 bytes to client (job ended)");
    r.wait_log(&format!("job {} ended: 1 pairs, 5 bytes relayed", hex(&job)));
    assert!(matches!(relay(&r, job, b"s", 0, 1), Err(RelayError::Denied(DenyReason::UnknownJob))));
}

#[test]
fn quotas_are_enforced_live() {
    let r = start(|c| c.quotas.rank_connections = 1);
    let (l, ta) = target();
    let job = [0x91; 16];
    let _ctl = control(&r, job, b"s", 4, &[(1, ta), (2, ta)]);
    let (_c, _t) = pair(&r, &l, job, b"s", 0, 1);
    assert!(matches!(relay(&r, job, b"s", 0, 2), Err(RelayError::Denied(DenyReason::RankQuota))));
    r.wait_log("the rank has as many relayed connections as the proxy allows");
    drop((_c, _t));
    // Freed once the pair closes.
    let end = Instant::now() + T;
    loop {
        match relay(&r, job, b"s", 0, 2) {
            Ok(_) => break,
            Err(RelayError::Denied(DenyReason::RankQuota)) if Instant::now() < end => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => panic!("{e}"),
        }
    }
}

#[test]
fn an_unreachable_target_is_denied_and_frees_its_quota() {
    let r = start(|c| c.quotas.rank_connections = 1);
    let (l, ta) = target();
    drop(l);
    let job = [0x77; 16];
    let _ctl = control(&r, job, b"s", 2, &[(1, ta)]);
    for _ in 0..3 {
        assert!(matches!(relay(&r, job, b"s", 0, 1), Err(RelayError::Denied(DenyReason::Unreachable))));
    }
    r.wait_log("the proxy could not connect to the target");
}
