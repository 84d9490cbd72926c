//! Engines of two jobs that meet at run time (a bridge): each adds the other job's processes
//! as peers numbered after its own ranks, with a secret of the bridge's own; messages of every
//! size go both ways, simultaneous connects resolve, a wrong secret is refused, and both sides
//! leave the bridge in order; two jobs meet through a port name (MPI's accept/connect) and
//! build the bridge from what they traded. Engines of one process over loopback, driven from
//! one thread (a second thread where both sides block).

mod common;
use common::{drive, result};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::ops::Range;
use std::time::Duration;

use ferry_core::bootstrap::meeting::{decode_meeting, encode_meeting, Side};
use ferry_core::bootstrap::port::{connect, Port, PortError};
use ferry_core::engine::matching::Pattern;
use ferry_core::engine::{BridgeSpec, Engine, EngineConfig, EngineError};
use ferry_core::transport::business_card::{BusinessCard, GlobalId};
use ferry_core::transport::tcp::{listen, BridgeError, Listener};

const LO: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);
const BRIDGE: u32 = 0x5eed_0001;

fn card(addr: SocketAddr) -> BusinessCard {
    BusinessCard { addr, id: GlobalId { front: "h".into(), host: "h".into(), pid: 0 } }
}

/// A job of `n` ranks with its own secret; `fatal`: a lost peer ends the engine (MPI).
fn job(n: usize, secret: &[u8], fatal: bool) -> Vec<Engine> {
    let ls: Vec<Listener> = (0..n).map(|_| listen(LO, LO, None).unwrap()).collect();
    let addrs: Vec<SocketAddr> = ls.iter().map(|l| l.advertise).collect();
    ls.into_iter()
        .enumerate()
        .map(|(i, l)| {
            Engine::new(EngineConfig {
                rank: i as u32,
                size: n as u32,
                secret: secret.to_vec(),
                cards: addrs.iter().map(|&a| card(a)).collect(),
                listener: l.socket,
                eager_limit: 4096,
                spin: Duration::from_micros(20),
                connect_timeout: Duration::from_secs(10),
                tcp_sndbuf: 0,
                shm: None,
                lost_peer_fatal: fatal,
                retry_refused: false,
            })
            .expect("engine")
        })
        .collect()
}

/// The other job as a bridge sees it: every rank with its card.
fn peers_of(other: &[Engine]) -> Vec<(u32, BusinessCard)> {
    other.iter().map(|e| (e.rank(), card(e.listen_addr()))).collect()
}

/// Join jobs `a` (accepting) and `b` over one bridge with `secret_a` and `secret_b` (the same
/// for a bridge that works); returns the peer numbers of b's ranks in a and of a's in b.
fn bridge(a: &mut [Engine], b: &mut [Engine], secret_a: &[u8], secret_b: &[u8]) -> (Range<u32>, Range<u32>) {
    let (pa, pb) = (peers_of(b), peers_of(a));
    let mut ra = 0..0;
    for e in a.iter_mut() {
        ra = e.add_bridge(BridgeSpec { id: BRIDGE, secret: secret_a.to_vec(), accepted: true, peers: pa.clone() }).expect("bridge");
    }
    let mut rb = 0..0;
    for e in b.iter_mut() {
        rb = e.add_bridge(BridgeSpec { id: BRIDGE, secret: secret_b.to_vec(), accepted: false, peers: pb.clone() }).expect("bridge");
    }
    (ra, rb)
}


/// Send `msg` from `a` to its peer `to`, received by `b` from its peer `from` (tag 7).
fn exchange(a: &mut Engine, to: u32, b: &mut Engine, from: u32, msg: &[u8]) {
    let mut buf = vec![0u8; msg.len()];
    let r = unsafe { b.irecv(Pattern { ctx: 3, src: Some(from), tag: Some(7) }, buf.as_mut_ptr(), buf.len()) };
    let s = unsafe { a.isend(to, 3, 7, msg.as_ptr(), msg.len(), false) };
    drive(&mut [a, b], |es| es[1].is_done(r) && s.is_none_or(|s| es[0].is_done(s)));
    if let Some(s) = s {
        result(a, s).expect("sent");
    }
    let st = result(b, r).expect("received");
    assert_eq!((st.source, st.bytes), (from, msg.len()));
    assert_eq!(buf, msg);
}

#[test]
fn two_jobs_exchange_messages_of_every_size_across_a_bridge() {
    let mut a = job(2, b"job a", true);
    let mut b = job(1, b"job b", true);
    let (ra, rb) = bridge(&mut a, &mut b, b"the bridge", b"the bridge");
    assert_eq!((ra.clone(), rb.clone()), (2..3, 1..3));
    assert_eq!(a[1].peer_count(), 3);
    assert_eq!(b[0].bridge_of(2), Some((BRIDGE, 1)));
    assert_eq!(a[0].bridge_of(1), None);
    let (a0, a1) = a.split_at_mut(1);
    let (a0, a1, b0) = (&mut a0[0], &mut a1[0], &mut b[0]);
    // A's rank 1 is B's peer 2; B's rank 0 is A's peer 2. Eager, then rendezvous, both ways.
    exchange(a1, 2, b0, 2, b"from a1");
    exchange(b0, 2, a1, 2, b"from b0");
    exchange(a1, 2, b0, 2, &[9u8; 300_000]);
    exchange(b0, 1, a0, 2, &[4u8; 100_000]);
    // The own job's ranks are reached as before.
    exchange(a0, 1, a1, 0, b"within a");
    for e in [a0, a1, b0] {
        assert_eq!(e.take_lost_peers(), Vec::<u32>::new());
    }
}

#[test]
fn simultaneous_connects_across_a_bridge_leave_one_connection() {
    let mut a = job(1, b"job a", true);
    let mut b = job(1, b"job b", true);
    bridge(&mut a, &mut b, b"k", b"k");
    let (a0, b0) = (&mut a[0], &mut b[0]);
    // Both are rank 0 of their job: the bridge's sides order them.
    let (mut x, mut y) = ([0u8; 5], [0u8; 5]);
    let rx = unsafe { a0.irecv(Pattern { ctx: 0, src: Some(1), tag: Some(1) }, x.as_mut_ptr(), 5) };
    let ry = unsafe { b0.irecv(Pattern { ctx: 0, src: Some(1), tag: Some(1) }, y.as_mut_ptr(), 5) };
    let sa = unsafe { a0.isend(1, 0, 1, b"hello".as_ptr(), 5, true) }.expect("synchronous");
    let sb = unsafe { b0.isend(1, 0, 1, b"olleh".as_ptr(), 5, true) }.expect("synchronous");
    drive(&mut [a0, b0], |es| es[0].is_done(rx) && es[0].is_done(sa) && es[1].is_done(ry) && es[1].is_done(sb));
    for r in [rx, sa] {
        result(a0, r).expect("done");
    }
    for r in [ry, sb] {
        result(b0, r).expect("done");
    }
    assert_eq!((&x, &y), (b"olleh", b"hello"));
    assert_eq!((a0.connection_count(), b0.connection_count()), (1, 1));
}

#[test]
fn a_wrong_bridge_secret_is_refused() {
    let mut a = job(1, b"job a", false);
    let mut b = job(1, b"job b", false);
    // B holds its job's secret instead of the bridge's.
    bridge(&mut a, &mut b, b"the bridge", b"job b");
    let (a0, b0) = (&mut a[0], &mut b[0]);
    let s = unsafe { b0.isend(1, 0, 1, b"x".as_ptr(), 1, true) }.expect("synchronous");
    drive(&mut [a0, b0], |es| es[1].is_done(s));
    assert_eq!(result(b0, s), Err(EngineError::PeerLost(1)));
    assert_eq!(a0.connection_count(), 0);
}

#[test]
fn bad_bridges_are_refused_and_change_nothing() {
    let mut a = job(1, b"job a", true);
    let b = job(1, b"job b", true);
    let spec = |id| BridgeSpec { id, secret: b"k".to_vec(), accepted: true, peers: peers_of(&b) };
    assert_eq!(a[0].add_bridge(spec(0)), Err(BridgeError::ReservedId));
    assert_eq!(a[0].add_bridge(spec(3)), Ok(1..2));
    assert_eq!(a[0].add_bridge(spec(3)), Err(BridgeError::Duplicate(3)));
    assert_eq!(a[0].peer_count(), 2);
}

#[test]
fn both_sides_leave_a_bridge_in_order() {
    let mut a = job(2, b"job a", true);
    let mut b = job(1, b"job b", true);
    let (ra, rb) = bridge(&mut a, &mut b, b"k", b"k");
    {
        let (a0, a1) = a.split_at_mut(1);
        let (a0, a1, b0) = (&mut a0[0], &mut a1[0], &mut b[0]);
        exchange(a0, 2, b0, 1, b"before");
        exchange(b0, 2, a1, 2, b"before");
        // Both sides disconnect, B in a thread of its own (each waits for the other's goodbye).
        std::thread::scope(|s| {
            let h = s.spawn(|| b0.disconnect_bridge(BRIDGE, rb.clone()));
            a0.disconnect_bridge(BRIDGE, ra.clone()).expect("orderly");
            a1.disconnect_bridge(BRIDGE, ra.clone()).expect("orderly");
            h.join().unwrap().expect("orderly");
        });
        assert!(a0.is_peer_gone(2) && b0.is_peer_gone(1) && b0.is_peer_gone(2));
        assert_eq!((a0.take_lost_peers(), b0.take_lost_peers()), (vec![], vec![]));
        // The job goes on among its own ranks.
        exchange(a1, 0, a0, 1, b"after");
    }
    for e in a.iter_mut().chain(b.iter_mut()) {
        e.finalize().expect("finalize after a disconnect");
    }
}

/// A job's side of a meeting: every rank with its card, and a context id.
fn side(job: &[Engine], ctx: u32) -> Side {
    Side { ctx, members: peers_of(job) }
}

#[test]
fn two_jobs_meet_through_a_port_and_talk() {
    let mut a = job(2, b"job a", true);
    let mut b = job(2, b"job b", true);
    let port = Port::open(LO).expect("port");
    let name = port.name();
    let (sa, sb) = (side(&a, 10), side(&b, 20));
    let timeout = Duration::from_secs(10);
    let (ma, mb) = std::thread::scope(|s| {
        let h = s.spawn(|| connect(&name, &sb, timeout));
        let ma = port.accept(&sa, timeout).expect("accepted");
        (ma, h.join().unwrap().expect("connected"))
    });
    assert_eq!((ma.bridge, &ma.secret, ma.accepted, mb.accepted), (mb.bridge, &mb.secret, true, false));
    assert_eq!((&ma.remote, &mb.remote), (&sb, &sa));
    // Each root tells its other members; every member joins the bridge.
    let (ma1, mb1) = (decode_meeting(&encode_meeting(&ma)).unwrap(), decode_meeting(&encode_meeting(&mb)).unwrap());
    for (e, m) in a.iter_mut().zip([&ma, &ma1]) {
        assert_eq!(e.add_bridge(m.spec()).unwrap(), 2..4);
    }
    for (e, m) in b.iter_mut().zip([&mb, &mb1]) {
        assert_eq!(e.add_bridge(m.spec()).unwrap(), 2..4);
    }
    let (a0, a1) = a.split_at_mut(1);
    let (b0, b1) = b.split_at_mut(1);
    exchange(&mut a1[0], 2, &mut b0[0], 3, b"a1 to b0");
    exchange(&mut b1[0], 2, &mut a0[0], 3, &[1u8; 70_000]);
}

#[test]
fn a_port_name_is_a_capability() {
    let b = job(1, b"job b", true);
    let port = Port::open(LO).expect("port");
    let name = port.name();
    let timeout = Duration::from_secs(10);
    // The right address with another secret: refused, and the port waits on.
    let (head, _) = name.rsplit_once('/').unwrap();
    let forged = format!("{head}/{}", "0".repeat(64));
    let sb = side(&b, 1);
    let m = std::thread::scope(|s| {
        let h = s.spawn(|| {
            let e = connect(&forged, &sb, timeout).expect_err("no secret, no meeting");
            assert!(matches!(e, PortError::Refused { .. }), "{e}");
            connect(&name, &sb, timeout).expect("the holder of the name gets in")
        });
        let m = port.accept(&side(&b, 2), timeout).expect("accepted");
        h.join().unwrap();
        m
    });
    assert_eq!(m.remote.ctx, 1);
    assert!(matches!(connect("ferry-port:nonsense", &sb, timeout), Err(PortError::Meeting(_))));
    // A closed port refuses.
    drop(port);
    assert!(matches!(connect(&name, &sb, timeout), Err(PortError::Io { .. })));
}
