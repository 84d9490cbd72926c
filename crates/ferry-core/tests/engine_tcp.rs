//! The engine over real loopback sockets: several engines in one process, one thread each.

mod common;
use common::engines;

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use ferry_core::engine::matching::Pattern;
use ferry_core::engine::{Engine, EngineConfig};
use ferry_core::transport::business_card::{BusinessCard, GlobalId};
use ferry_core::transport::tcp::listen;

fn pattern(n: usize, seed: usize) -> Vec<u8> {
    (0..n).map(|i| (i.wrapping_mul(31).wrapping_add(seed * 7) % 251) as u8).collect()
}

fn wait(e: &mut Engine, r: u64) -> ferry_core::engine::Status {
    e.wait_until(|e| e.is_done(r)).unwrap();
    e.take(r).unwrap().unwrap()
}

/// Every rank sends to every other rank, sizes across the eager/rendezvous boundary, and
/// every rank initiates at once, so simultaneous connects race.
#[test]
fn all_to_all_sizes_and_connect_races() {
    let n = 4;
    let sizes = [0usize, 1, 100, 4096, 4097, 100_000, 3 << 20];
    let handles: Vec<_> = engines(n, 4096, b"k")
        .into_iter()
        .map(|mut e| {
            std::thread::spawn(move || {
                let me = e.rank() as usize;
                let mut bufs: Vec<(usize, usize, Vec<u8>, u64)> = Vec::new();
                for peer in 0..n as usize {
                    for (k, &sz) in sizes.iter().enumerate() {
                        let mut b = vec![0u8; sz];
                        let r = unsafe { e.irecv(Pattern { ctx: 0, src: Some(peer as u32), tag: Some(k as i32) }, b.as_mut_ptr(), sz) };
                        bufs.push((peer, k, b, r));
                    }
                }
                let out: Vec<Vec<u8>> = (0..sizes.len()).map(|k| pattern(sizes[k], me)).collect();
                let mut sends = Vec::new();
                for peer in 0..n as u32 {
                    for (k, d) in out.iter().enumerate() {
                        sends.extend(unsafe { e.isend(peer, 0, k as i32, d.as_ptr(), d.len(), k % 2 == 0) });
                    }
                }
                for s in sends {
                    wait(&mut e, s);
                }
                for (peer, k, b, r) in bufs.iter() {
                    let st = wait(&mut e, *r);
                    assert_eq!(st.source as usize, *peer);
                    assert_eq!(st.bytes, sizes[*k]);
                    assert!(*b == pattern(sizes[*k], *peer), "data from {peer} size {}", sizes[*k]);
                }
                e.finalize().unwrap();
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

/// Unexpected messages (sent before the receive is posted) keep their order, wildcards match
/// the oldest, and truncation is reported.
#[test]
fn unexpected_order_and_truncation() {
    let mut es = engines(2, 1024, b"k");
    let mut b = es.pop().unwrap();
    let mut a = es.pop().unwrap();
    let t = std::thread::spawn(move || {
        let msgs: Vec<Vec<u8>> = (0..20).map(|i| pattern(if i % 3 == 0 { 5000 } else { 10 + i }, i)).collect();
        let rs: Vec<u64> = msgs.iter().enumerate().filter_map(|(i, m)| unsafe { a.isend(1, 0, (i % 2) as i32, m.as_ptr(), m.len(), false) }).collect();
        for r in rs {
            wait(&mut a, r);
        }
        a.finalize().unwrap();
    });
    // Let everything arrive unexpected first.
    let probe = Pattern { ctx: 0, src: None, tag: None };
    b.wait_until(|e| e.outstanding() == 0).unwrap();
    let mut seen = 0;
    while seen < 1 {
        b.progress(Some(Duration::from_millis(10))).unwrap();
        if b.peek(&probe).is_some() {
            seen += 1;
        }
    }
    for i in 0..20usize {
        let len = if i % 3 == 0 { 5000 } else { 10 + i };
        let cap = if i == 19 { 5 } else { 6000 };
        let mut buf = vec![0u8; cap];
        let r = unsafe { b.irecv(Pattern { ctx: 0, src: Some(0), tag: None }, buf.as_mut_ptr(), cap) };
        let st = wait(&mut b, r);
        assert_eq!(st.tag, (i % 2) as i32, "message {i}");
        if i == 19 {
            assert!(st.truncated);
            assert_eq!(&buf[..], &pattern(len, i)[..5]);
        } else {
            assert!(!st.truncated);
            assert_eq!(&buf[..len], &pattern(len, i)[..]);
        }
    }
    t.join().unwrap();
}

/// A connection with the wrong secret never delivers anything, and the right one works.
#[test]
fn wrong_secret_cannot_connect() {
    let mut good = engines(2, 1024, b"right");
    // An engine that believes it is rank 0 of the same job but holds another secret.
    let lo = IpAddr::V4(Ipv4Addr::LOCALHOST);
    let l = listen(lo, lo, None).unwrap();
    let mut cards = vec![BusinessCard { addr: l.advertise, id: GlobalId { front: "h".into(), host: "h".into(), pid: 0 } }];
    cards.push(BusinessCard { addr: good[1].listen_addr(), id: GlobalId { front: "h".into(), host: "h".into(), pid: 1 } });
    let mut evil = Engine::new(EngineConfig {
        rank: 0,
        size: 2,
        secret: b"wrong".to_vec(),
        cards,
        listener: l.socket,
        eager_limit: 1024,
        spin: Duration::from_micros(10),
        connect_timeout: Duration::from_secs(2),
        tcp_sndbuf: 0,
        shm: None,
        lost_peer_fatal: true,
        retry_refused: false,
    })
    .unwrap();
    let msg = b"forged";
    let _ = unsafe { evil.isend(1, 0, 0, msg.as_ptr(), msg.len(), false) };
    for _ in 0..50 {
        let _ = evil.progress(Some(Duration::from_millis(5)));
        good[1].progress(Some(Duration::from_millis(5))).unwrap();
    }
    assert!(good[1].peek(&Pattern { ctx: 0, src: None, tag: None }).is_none());
    assert_eq!(good[1].connection_count(), 0);
    // The evil side notices its handshake failed.
    assert!(evil.progress(Some(Duration::ZERO)).is_err());
    let _ = good.remove(0);
}
