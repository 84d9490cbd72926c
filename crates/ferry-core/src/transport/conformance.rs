//! The route conformance suite: the same tests over every kind of route (in-memory pair,
//! shared-memory ring pair, TCP connection over loopback, TCP connection relayed through a
//! proxy), so each keeps the contract of `transport::Route` that the engine relies on.

use std::collections::VecDeque;

use ferry_wire::{Header, Kind, Limits};

use super::mem::mem_pair;
use super::shm::{heap_ring, Link, ShmRoute};
use super::tcp::Conn;
use super::*;

/// Two connected ends of one kind of route.
type Pair = (Box<dyn Route>, Box<dyn Route>);

fn mem() -> Pair {
    let (a, b) = mem_pair(64 << 10);
    (Box::new(a), Box::new(b))
}

fn shm() -> Pair {
    let ab = heap_ring(16 << 10).expect("heap ring");
    let ba = heap_ring(16 << 10).expect("heap ring");
    let a = ShmRoute::new(Link { tx: ab.producer, rx: ba.consumer }, 0);
    let b = ShmRoute::new(Link { tx: ba.producer, rx: ab.consumer }, 1);
    (Box::new(a), Box::new(b))
}

fn tcp() -> Pair {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    let a = std::net::TcpStream::connect(l.local_addr().expect("address")).expect("connect");
    let (b, _) = l.accept().expect("accept");
    for s in [&a, &b] {
        s.set_nonblocking(true).expect("non-blocking");
    }
    let (a, b) = (mio::net::TcpStream::from_std(a), mio::net::TcpStream::from_std(b));
    // Small kernel buffers, so that large frames really queue.
    (Box::new(Conn::new(a, 16 << 10)), Box::new(Conn::new(b, 0)))
}

/// One proxy for the whole run, holding one job whose members are the targets of the
/// relayed pairs (each pair a fresh rank, so no quota is reached).
struct Relay {
    proxy: super::relay::proxy::tests::Running,
    ctl: super::relay::ControlClient,
    next_rank: u32,
}

static RELAY: std::sync::Mutex<Option<Relay>> = std::sync::Mutex::new(None);
const RELAY_JOB: [u8; 16] = [0xc0; 16];
const RELAY_SECRET: &[u8] = b"conformance job secret";

/// A TCP connection whose two ends meet only through a proxy: the initiator connects to the
/// proxy, which opens the second leg to the target's listener and relays.
fn tcp_relay() -> Pair {
    use super::relay::proxy::tests as p;
    let mut g = RELAY.lock().unwrap_or_else(|e| e.into_inner());
    let relay = g.get_or_insert_with(|| {
        let proxy = p::start(|c| c.pair_buffer = 64 << 10);
        let ctl = p::control(&proxy, RELAY_JOB, RELAY_SECRET, 1 << 20, &[]);
        Relay { proxy, ctl, next_rank: 0 }
    });
    let (l, addr) = p::target();
    let (from, to) = (relay.next_rank, relay.next_rank + 1);
    relay.next_rank += 2;
    relay.ctl.add_member(to, addr).expect("add the target");
    let a = p::relay(&relay.proxy, RELAY_JOB, RELAY_SECRET, from, to).expect("relayed connection");
    let (b, _) = l.accept().expect("the proxy connects");
    for s in [&a, &b] {
        s.set_nonblocking(true).expect("non-blocking");
    }
    let (a, b) = (mio::net::TcpStream::from_std(a), mio::net::TcpStream::from_std(b));
    (Box::new(Conn::new(a, 16 << 10)), Box::new(Conn::new(b, 0)))
}

/// How each kind of route makes a connected pair.
type MakePair = fn() -> Pair;

const KINDS: [(&str, MakePair); 4] = [("mem", mem), ("shm", shm), ("tcp", tcp), ("tcp-relay", tcp_relay)];

fn header(seq: u64, len: usize) -> Header {
    let mut h = Header::new(Kind::Eager);
    h.src = 0;
    h.dst = 1;
    h.seq = seq;
    h.len = len as u64;
    h
}

fn pattern(n: usize, seed: u64) -> Vec<u8> {
    (0..n).map(|i| (i as u64).wrapping_mul(29).wrapping_add(seed * 11) as u8).collect()
}

/// Collects frames; payloads of frames whose sequence number is in `direct` land in caller
/// memory (as a matched receive would), the others in owned buffers.
#[derive(Default)]
struct Collect {
    frames: Vec<(Header, Vec<u8>)>,
    direct: Vec<(u64, Vec<u8>)>,
    announced: usize,
}

impl Deliver for Collect {
    fn header(&mut self, peer: u32, h: &Header, _whole: bool) -> Result<Sink, String> {
        assert_eq!(peer, 0);
        assert_eq!(self.announced, self.frames.len(), "a frame began before the last one ended");
        self.announced += 1;
        if let Some((_, buf)) = self.direct.iter_mut().find(|(s, _)| *s == h.seq) {
            return Ok(Sink::Mem { ptr: buf.as_mut_ptr(), cap: buf.len(), off: 0 });
        }
        Ok(Sink::Vec(Vec::new()))
    }

    fn frame(&mut self, _peer: u32, h: Header, sink: Sink) -> Result<(), String> {
        let data = match sink {
            Sink::Vec(v) => v,
            Sink::Mem { .. } => self.direct.iter().find(|(s, _)| *s == h.seq).map(|(_, b)| b.clone()).expect("direct buffer"),
            Sink::Discard => Vec::new(),
        };
        self.frames.push((h, data));
        Ok(())
    }
}

/// Move frames until `to` holds `n`, flushing the sender; fails a route that never settles.
/// Bounded in time, not passes: a TCP sender whose peer's window closed waits for the
/// kernel's persist timer, which may take longer than many passes.
fn pump(name: &str, tx: &mut dyn Route, rx: &mut dyn Route, to: &mut Collect, n: usize, done: &mut Vec<u64>) {
    let limits = Limits::new(2);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while std::time::Instant::now() < deadline {
        tx.flush(done).expect("flush");
        rx.mark_readable();
        rx.recv(0, to, &limits).expect("recv");
        if to.frames.len() >= n && tx.queued() == 0 {
            return;
        }
        std::thread::yield_now();
    }
    panic!("{name}: {} of {n} frames arrived, {} still queued", to.frames.len(), tx.queued());
}

#[test]
fn frames_arrive_whole_and_in_order() {
    for (name, make) in KINDS {
        let (mut a, mut b) = make();
        let sizes = [0usize, 1, 40, 4000, 3000, 100_000, 0, 7, 1 << 20];
        let datas: Vec<Vec<u8>> = sizes.iter().enumerate().map(|(i, &n)| pattern(n, i as u64)).collect();
        let mut done = Vec::new();
        let mut to = Collect::default();
        // Frames 5 and 8 go straight into caller memory.
        to.direct = vec![(5, vec![0u8; sizes[5]]), (8, vec![0u8; sizes[8]])];
        for (i, d) in datas.iter().enumerate() {
            let f = OutFrame::new(&header(i as u64, d.len()), Payload::Borrowed { ptr: d.as_ptr(), len: d.len() }, Some(100 + i as u64));
            match a.send(f, &mut done).expect("send") {
                SendOutcome::Sent => done.push(100 + i as u64),
                SendOutcome::Queued => {}
                SendOutcome::WouldBlock => panic!("{name}: send never refuses"),
            }
        }
        pump(name, a.as_mut(), b.as_mut(), &mut to, sizes.len(), &mut done);
        assert_eq!(to.frames.len(), sizes.len(), "{name}");
        for (i, (h, d)) in to.frames.iter().enumerate() {
            assert_eq!(h.seq, i as u64, "{name}: order");
            assert!(*d == datas[i], "{name}: frame {i} payload");
        }
        done.sort_unstable();
        assert_eq!(done, (100..100 + sizes.len() as u64).collect::<Vec<_>>(), "{name}: every frame completes once");
    }
}

#[test]
fn try_send_takes_all_or_nothing_and_never_overtakes() {
    for (name, make) in KINDS {
        let (mut a, mut b) = make();
        let big = pattern(1 << 20, 1);
        let mut done = Vec::new();
        let mut to = Collect::default();
        let small = pattern(8, 2);
        assert_eq!(a.try_send(&header(0, 8).encode(), &small).expect("try_send"), SendOutcome::Sent, "{name}: an idle route takes a small frame");
        // A large frame that cannot all go at once is queued...
        a.send(OutFrame::new(&header(1, big.len()), Payload::Borrowed { ptr: big.as_ptr(), len: big.len() }, Some(7)), &mut done).expect("send");
        let mut seq = 2;
        // ... and a small frame behind it is refused, or queued as a copy, never written first.
        while a.queued() > 0 {
            match a.try_send(&header(seq, 8).encode(), &small).expect("try_send") {
                SendOutcome::WouldBlock => break,
                SendOutcome::Queued | SendOutcome::Sent => panic!("{name}: a frame went past a queued one"),
            }
        }
        pump(name, a.as_mut(), b.as_mut(), &mut to, 2, &mut done);
        assert_eq!(a.try_send(&header(seq, 8).encode(), &small).expect("try_send"), SendOutcome::Sent, "{name}: free again once drained");
        seq += 1;
        pump(name, a.as_mut(), b.as_mut(), &mut to, 3, &mut done);
        let seqs: Vec<u64> = to.frames.iter().map(|(h, _)| h.seq).collect();
        assert_eq!(seqs, (0..seq).collect::<Vec<_>>(), "{name}");
        assert!(to.frames[1].1 == big);
        assert_eq!(done, vec![7], "{name}");
    }
}

#[test]
fn a_full_route_queues_and_the_reader_frees_it() {
    for (name, make) in KINDS {
        let (mut a, mut b) = make();
        let d = pattern(2000, 3);
        let mut done = Vec::new();
        let mut refused = 0;
        let mut sent = VecDeque::new();
        for seq in 0..2000u64 {
            match a.try_send(&header(seq, d.len()).encode(), &d).expect("try_send") {
                SendOutcome::WouldBlock => {
                    refused += 1;
                    break;
                }
                _ => sent.push_back(seq),
            }
        }
        assert!(refused > 0 || name.starts_with("tcp"), "{name}: 4 MB into a small route without ever blocking");
        let mut to = Collect::default();
        pump(name, a.as_mut(), b.as_mut(), &mut to, sent.len(), &mut done);
        assert_eq!(to.frames.len(), sent.len(), "{name}");
        assert!(to.frames.iter().all(|(_, p)| *p == d));
    }
}

#[test]
fn a_closed_peer_is_seen_where_routes_can_close() {
    for (name, make) in KINDS {
        let (a, mut b) = make();
        if !a.closes_visibly() {
            continue;
        }
        drop(a);
        let mut to = Collect::default();
        let limits = Limits::new(2);
        let mut closed = false;
        for _ in 0..10_000 {
            b.mark_readable();
            if b.recv(0, &mut to, &limits).expect("recv") == RecvOutcome::Closed {
                closed = true;
                break;
            }
            std::thread::yield_now();
        }
        assert!(closed, "{name}: the close was never seen");
    }
}

#[test]
fn garbage_is_a_protocol_error() {
    for (name, make) in KINDS {
        let (mut a, mut b) = make();
        let mut bad = header(0, 4).encode();
        bad[0] ^= 0xff; // the magic
        let mut done = Vec::new();
        let f = OutFrame { header: bad, payload: Payload::Owned(vec![1, 2, 3, 4]), sent: 0, completes: None };
        a.send(f, &mut done).expect("send");
        let limits = Limits::new(2);
        let mut to = Collect::default();
        let mut failed = false;
        for _ in 0..10_000 {
            a.flush(&mut done).expect("flush");
            b.mark_readable();
            match b.recv(0, &mut to, &limits) {
                Err(RouteError::Protocol(_)) => {
                    failed = true;
                    break;
                }
                Err(e) => panic!("{name}: {e}"),
                Ok(_) => std::thread::yield_now(),
            }
        }
        assert!(failed, "{name}: garbage accepted");
        assert!(to.frames.is_empty(), "{name}");
    }
}

#[test]
fn the_receiver_may_refuse_a_frame() {
    struct Refuse;
    impl Deliver for Refuse {
        fn header(&mut self, _: u32, _: &Header, _: bool) -> Result<Sink, String> {
            Err("not for us".into())
        }
        fn frame(&mut self, _: u32, _: Header, _: Sink) -> Result<(), String> {
            unreachable!("refused at the header")
        }
    }
    for (name, make) in KINDS {
        let (mut a, mut b) = make();
        assert_eq!(a.try_send(&header(0, 3).encode(), &[1, 2, 3]).expect("try_send"), SendOutcome::Sent);
        let limits = Limits::new(2);
        let mut refused = false;
        for _ in 0..10_000 {
            b.mark_readable();
            match b.recv(0, &mut Refuse, &limits) {
                Err(RouteError::Protocol(m)) => {
                    assert!(m.contains("not for us"), "{name}: {m}");
                    refused = true;
                    break;
                }
                Err(e) => panic!("{name}: {e}"),
                Ok(_) => std::thread::yield_now(),
            }
        }
        assert!(refused, "{name}");
    }
}

/// A route that shows frames in place shows the next one only, whole, and keeps what the
/// taker refuses for `recv`; order holds across both ways of reading.
#[test]
fn frames_taken_in_place_keep_their_order() {
    for (name, make) in KINDS {
        let (mut a, mut b) = make();
        let sizes = [5usize, 3, 100_000, 0, 9, 2];
        let datas: Vec<Vec<u8>> = sizes.iter().enumerate().map(|(i, &n)| pattern(n, i as u64)).collect();
        let mut done = Vec::new();
        for (i, d) in datas.iter().enumerate() {
            let f = OutFrame::new(&header(i as u64, d.len()), Payload::Borrowed { ptr: d.as_ptr(), len: d.len() }, None);
            a.send(f, &mut done).expect("send");
        }
        let limits = Limits::new(2);
        let mut got: Vec<(u64, Vec<u8>, bool)> = Vec::new();
        let mut to = Collect::default();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while got.len() < sizes.len() {
            assert!(std::time::Instant::now() < deadline, "{name}: {} of {} frames", got.len(), sizes.len());
            a.flush(&mut done).expect("flush");
            b.mark_readable();
            // Frame 1 is refused once: it must come again, first.
            let mut refused = false;
            let shown = b.take_next(0, &limits, &mut |h, payload| {
                if h.seq == 1 && !got.iter().any(|g| g.0 == 1) && !refused {
                    refused = true;
                    return false;
                }
                got.push((h.seq, payload.to_vec(), true));
                true
            });
            if !shown {
                if refused {
                    assert!(b.take_next(0, &limits, &mut |h, payload| {
                        got.push((h.seq, payload.to_vec(), true));
                        true
                    }), "{name}: a refused frame is shown again");
                    continue;
                }
                b.recv(0, &mut to, &limits).expect("recv");
                to.announced -= to.frames.len();
                got.extend(to.frames.drain(..).map(|(h, d)| (h.seq, d, false)));
            }
        }
        for (i, (seq, d, _)) in got.iter().enumerate() {
            assert_eq!(*seq, i as u64, "{name}: order");
            assert!(*d == datas[i], "{name}: frame {i} payload");
        }
        let in_place: Vec<u64> = got.iter().filter(|g| g.2).map(|g| g.0).collect();
        if name == "shm" {
            assert!(!in_place.contains(&2), "shm: a frame in pieces is never shown in place");
            assert!(in_place.contains(&0) && in_place.contains(&1), "shm: small whole frames are shown in place");
        } else {
            assert!(in_place.is_empty(), "{name}: shows no frame in place");
        }
    }
}
