//! Engines whose peers come and go (MCAPI nodes): a lost peer fails only what involves it,
//! addresses may be learnt after the start, and a peer may start listening late. Engines of
//! one process over loopback, driven from one thread unless a test needs a late start.

mod common;
use common::{drive, result};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use ferry_core::engine::matching::Pattern;
use ferry_core::engine::{Engine, EngineConfig, EngineError};
use ferry_core::transport::business_card::{BusinessCard, GlobalId};
use ferry_core::transport::tcp::{listen, Listener};

const LO: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);
const UNKNOWN: &str = "0.0.0.0:0";

fn card(addr: SocketAddr) -> BusinessCard {
    BusinessCard { addr, id: GlobalId { front: "h".into(), host: "h".into(), pid: 0 } }
}

/// Rank `rank` of `addrs.len()`, dialling `addrs`, going on without lost peers.
fn node(rank: u32, addrs: &[SocketAddr], l: Listener, retry_refused: bool, connect_timeout: Duration) -> Engine {
    Engine::new(EngineConfig {
        rank,
        size: addrs.len() as u32,
        secret: b"node-test".to_vec(),
        cards: addrs.iter().map(|&a| card(a)).collect(),
        listener: l.socket,
        eager_limit: 4096,
        spin: Duration::from_micros(20),
        connect_timeout,
        tcp_sndbuf: 0,
        shm: None,
        lost_peer_fatal: false,
        retry_refused,
    })
    .expect("engine")
}

/// `n` nodes that know each other's addresses.
fn nodes(n: usize) -> Vec<Engine> {
    let ls: Vec<Listener> = (0..n).map(|_| listen(LO, LO, None).unwrap()).collect();
    let addrs: Vec<SocketAddr> = ls.iter().map(|l| l.advertise).collect();
    ls.into_iter().enumerate().map(|(i, l)| node(i as u32, &addrs, l, false, Duration::from_secs(10))).collect()
}


/// Send `msg` from `a` to `b` (tag 7) and check it arrives.
fn exchange(a: &mut Engine, b: &mut Engine, msg: &[u8]) {
    let mut buf = vec![0u8; msg.len()];
    let r = unsafe { b.irecv(Pattern { ctx: 0, src: Some(a.rank()), tag: Some(7) }, buf.as_mut_ptr(), buf.len()) };
    let s = unsafe { a.isend(b.rank(), 0, 7, msg.as_ptr(), msg.len(), false) };
    drive(&mut [a, b], |es| es[1].is_done(r) && s.is_none_or(|s| es[0].is_done(s)));
    if let Some(s) = s {
        result(a, s).expect("sent");
    }
    assert_eq!(result(b, r).expect("received").bytes, msg.len());
    assert_eq!(buf, msg);
}

#[test]
fn a_lost_peer_fails_what_involves_it_and_the_others_go_on() {
    let mut es = nodes(3);
    let mut e2 = es.pop().unwrap();
    let mut e1 = es.pop().unwrap();
    let mut e0 = es.pop().unwrap();
    exchange(&mut e0, &mut e1, b"hello 1");
    exchange(&mut e0, &mut e2, b"hello 2");
    // A receive from rank 1, and a rendezvous send to it that rank 1 never matches: both
    // wait on rank 1 when it dies, in the middle of the exchange.
    let mut inbox = [0u8; 16];
    let big = vec![5u8; 100_000];
    let rr = unsafe { e0.irecv(Pattern { ctx: 0, src: Some(1), tag: None }, inbox.as_mut_ptr(), inbox.len()) };
    let rs = unsafe { e0.isend(1, 0, 9, big.as_ptr(), big.len(), false) }.expect("a rendezvous send has a request");
    drive(&mut [&mut e0, &mut e1], |es| es[1].peek(&Pattern { ctx: 0, src: Some(0), tag: Some(9) }).is_some());
    drop(e1);
    e0.wait_until(|e| e.is_done(rr) && e.is_done(rs)).expect("the engine goes on");
    assert_eq!(result(&mut e0, rr), Err(EngineError::PeerLost(1)));
    assert_eq!(result(&mut e0, rs), Err(EngineError::PeerLost(1)));
    assert_eq!(e0.take_lost_peers(), [1]);
    assert!(e0.take_lost_peers().is_empty(), "each loss is reported once");
    assert!(e0.is_peer_gone(1));
    // Later calls on the lost peer complete at once, without trying to reconnect.
    let r = unsafe { e0.isend(1, 0, 1, big.as_ptr(), 10, false) }.expect("a send to a lost peer has a request");
    assert_eq!(result(&mut e0, r), Err(EngineError::PeerLost(1)));
    let r = unsafe { e0.irecv(Pattern { ctx: 0, src: Some(1), tag: None }, inbox.as_mut_ptr(), inbox.len()) };
    assert_eq!(result(&mut e0, r), Err(EngineError::PeerLost(1)));
    // Rank 2 is served as before, both ways.
    exchange(&mut e0, &mut e2, b"still here");
    exchange(&mut e2, &mut e0, &[3u8; 50_000]);
    assert!(e0.take_lost_peers().is_empty());
    e0.finalize().unwrap();
    e2.finalize().unwrap();
}

#[test]
fn a_peer_that_said_goodbye_is_gone_but_not_lost() {
    let mut es = nodes(2);
    let mut e1 = es.pop().unwrap();
    let mut e0 = es.pop().unwrap();
    exchange(&mut e1, &mut e0, b"hi");
    e1.finalize().unwrap();
    drop(e1);
    drive(&mut [&mut e0], |es| es[0].is_peer_gone(1));
    assert!(e0.take_lost_peers().is_empty());
    let msg = [1u8; 8];
    let r = unsafe { e0.isend(1, 0, 1, msg.as_ptr(), msg.len(), false) }.expect("a send to a gone peer has a request");
    assert_eq!(result(&mut e0, r), Err(EngineError::PeerLost(1)));
}

#[test]
fn an_address_set_late_is_dialled_then() {
    let (l0, l1) = (listen(LO, LO, None).unwrap(), listen(LO, LO, None).unwrap());
    let (a0, a1) = (l0.advertise, l1.advertise);
    let mut e0 = node(0, &[a0, UNKNOWN.parse().unwrap()], l0, false, Duration::from_secs(10));
    let mut e1 = node(1, &[a0, a1], l1, false, Duration::from_secs(10));
    let msg = b"after the address";
    let mut buf = [0u8; 17];
    let r = unsafe { e1.irecv(Pattern { ctx: 0, src: Some(0), tag: None }, buf.as_mut_ptr(), buf.len()) };
    let s = unsafe { e0.isend(1, 0, 0, msg.as_ptr(), msg.len(), false) }.expect("no route yet: a request");
    for _ in 0..20 {
        e0.progress(Some(Duration::from_millis(1))).unwrap();
        e1.progress(Some(Duration::from_millis(1))).unwrap();
    }
    assert!(!e0.is_done(s) && !e1.is_done(r), "nothing can leave before the address is known");
    assert_eq!(e1.connection_count(), 0);
    e0.set_peer_addr(1, a1);
    drive(&mut [&mut e0, &mut e1], |es| es[0].is_done(s) && es[1].is_done(r));
    result(&mut e0, s).unwrap();
    assert_eq!(result(&mut e1, r).unwrap().bytes, msg.len());
    assert_eq!(&buf, msg);
}

#[test]
fn a_peer_whose_address_is_unknown_may_connect_first() {
    let (l0, l1) = (listen(LO, LO, None).unwrap(), listen(LO, LO, None).unwrap());
    let (a0, a1) = (l0.advertise, l1.advertise);
    // Rank 0 knows nobody; rank 1 found rank 0.
    let mut e0 = node(0, &[a0, UNKNOWN.parse().unwrap()], l0, false, Duration::from_secs(10));
    let mut e1 = node(1, &[a0, a1], l1, false, Duration::from_secs(10));
    exchange(&mut e1, &mut e0, b"found you");
    // The answer goes back over the connection rank 1 made.
    exchange(&mut e0, &mut e1, b"welcome");
    assert_eq!(e0.connection_count(), 1);
}

#[test]
fn an_address_that_never_comes_fails_the_send_after_the_timeout() {
    let l0 = listen(LO, LO, None).unwrap();
    let a0 = l0.advertise;
    let mut e0 = node(0, &[a0, UNKNOWN.parse().unwrap()], l0, false, Duration::from_secs(1));
    let msg = [0u8; 4];
    let start = Instant::now();
    let s = unsafe { e0.isend(1, 0, 0, msg.as_ptr(), msg.len(), false) }.expect("a request");
    e0.wait_until(|e| e.is_done(s)).unwrap();
    assert!(start.elapsed() >= Duration::from_secs(1), "failed after {:?}", start.elapsed());
    assert_eq!(result(&mut e0, s), Err(EngineError::PeerLost(1)));
    assert_eq!(e0.take_lost_peers(), [1]);
}

/// A port on loopback that nothing listens on (free a moment ago).
fn free_port() -> u16 {
    std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap().local_addr().unwrap().port()
}

#[test]
fn a_peer_that_listens_late_is_reached_by_retrying() {
    let l0 = listen(LO, LO, None).unwrap();
    let a0 = l0.advertise;
    let port = free_port();
    let a1 = SocketAddr::new(LO, port);
    let mut e0 = node(0, &[a0, a1], l0, true, Duration::from_secs(10));
    let late = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        let l1 = listen(LO, LO, Some((port, port))).expect("the port is still free");
        let mut e1 = node(1, &[a0, a1], l1, true, Duration::from_secs(10));
        let mut buf = [0u8; 5];
        let r = unsafe { e1.irecv(Pattern { ctx: 0, src: Some(0), tag: None }, buf.as_mut_ptr(), buf.len()) };
        e1.wait_until(|e| e.is_done(r)).unwrap();
        e1.take(r).unwrap().unwrap();
        e1.finalize().unwrap();
        buf
    });
    let start = Instant::now();
    let msg = *b"early";
    if let Some(s) = unsafe { e0.isend(1, 0, 0, msg.as_ptr(), msg.len(), false) } {
        e0.wait_until(|e| e.is_done(s)).unwrap();
        result(&mut e0, s).expect("delivered once the peer listens");
    }
    assert!(start.elapsed() >= Duration::from_millis(250), "sent after {:?}, before the peer listened", start.elapsed());
    assert_eq!(late.join().unwrap(), msg);
    assert!(e0.take_lost_peers().is_empty());
    e0.finalize().unwrap();
}

#[test]
fn without_retries_a_refused_connect_ends_an_mpi_engine_at_once() {
    let l0 = listen(LO, LO, None).unwrap();
    let a0 = l0.advertise;
    let a1 = SocketAddr::new(LO, free_port());
    let mut e0 = Engine::new(EngineConfig {
        rank: 0,
        size: 2,
        secret: b"k".to_vec(),
        cards: vec![card(a0), card(a1)],
        listener: l0.socket,
        eager_limit: 4096,
        spin: Duration::from_micros(20),
        connect_timeout: Duration::from_secs(10),
        tcp_sndbuf: 0,
        shm: None,
        lost_peer_fatal: true,
        retry_refused: false,
    })
    .unwrap();
    let msg = [0u8; 4];
    let start = Instant::now();
    let s = unsafe { e0.isend(1, 0, 0, msg.as_ptr(), msg.len(), false) }.expect("a request");
    let e = e0.wait_until(|e| e.is_done(s)).expect_err("fatal");
    assert!(matches!(e, EngineError::Transport(ref m) if m.contains("rank 1")), "{e}");
    assert!(start.elapsed() < Duration::from_secs(5));
}
