//! The engine over shared memory, and in mixed jobs, with several engines in one process
//! driven from one thread (each `pump` gives every engine one non-blocking pass), so that
//! the tests can look at the status board between steps.

mod common;
use common::shm_engines;

use std::time::{Duration, Instant};

use ferry_core::engine::matching::Pattern;
use ferry_core::engine::{Engine, ReqId, Status};

fn pattern(n: usize, seed: usize) -> Vec<u8> {
    (0..n).map(|i| (i.wrapping_mul(31).wrapping_add(seed * 7) % 251) as u8).collect()
}

fn pump(es: &mut [Engine]) {
    for e in es.iter_mut() {
        e.progress(Some(Duration::ZERO)).unwrap();
    }
}

/// Pump until `done` holds (at most 20 s).
fn pump_until(es: &mut [Engine], mut done: impl FnMut(&[Engine]) -> bool) {
    let start = Instant::now();
    while !done(es) {
        assert!(start.elapsed() < Duration::from_secs(20), "no progress");
        pump(es);
    }
}

fn recv_any(e: &mut Engine, src: u32, tag: i32, buf: &mut [u8]) -> ReqId {
    // SAFETY: the tests keep `buf` alive until the request is taken.
    unsafe { e.irecv(Pattern { ctx: 0, src: Some(src), tag: Some(tag) }, buf.as_mut_ptr(), buf.len()) }
}

fn take(e: &mut Engine, r: ReqId) -> Status {
    e.take(r).expect("done").expect("no error")
}

/// Every rank sends to every other rank, sizes across the eager, rendezvous, piece and
/// single-copy boundaries, on one host and across two emulated hosts.
fn all_to_all(host_of: &[usize], single_copy: bool) {
    let mut es = shm_engines(host_of, 16 << 10, 2048, single_copy);
    let n = es.len();
    let sizes = [0usize, 1, 2048, 2049, 3000, 16 << 10, 100_000, 1 << 20];
    let mut sends = Vec::new();
    let mut recvs = Vec::new();
    let mut bufs: Vec<Vec<u8>> = Vec::new();
    let datas: Vec<Vec<u8>> = (0..n * n * sizes.len()).map(|k| pattern(sizes[k % sizes.len()], k)).collect();
    for (k, data) in datas.iter().enumerate() {
        let (s, d) = (k / sizes.len() / n, k / sizes.len() % n);
        if s != d {
            bufs.push(vec![0u8; data.len()]);
        }
    }
    let mut b = 0;
    for (k, data) in datas.iter().enumerate() {
        let (s, d, i) = (k / sizes.len() / n, k / sizes.len() % n, k % sizes.len());
        if s == d {
            continue;
        }
        // SAFETY: `datas` outlives the requests.
        if let Some(r) = unsafe { es[s].isend(d as u32, 0, i as i32, data.as_ptr(), data.len(), k % 3 == 0) } {
            sends.push((s, r));
        }
        let r = recv_any(&mut es[d], s as u32, i as i32, &mut bufs[b]);
        recvs.push((d, r, b, k));
        b += 1;
    }
    pump_until(&mut es, |es| sends.iter().all(|&(s, r)| es[s].is_done(r)) && recvs.iter().all(|&(d, r, _, _)| es[d].is_done(r)));
    for (d, r, b, k) in recvs {
        let st = take(&mut es[d], r);
        assert_eq!((st.bytes, st.truncated), (datas[k].len(), false), "message {k}");
        assert!(bufs[b] == datas[k], "message {k} arrived wrong");
    }
    for (s, r) in sends {
        take(&mut es[s], r);
    }
    for e in &es {
        if let Some((board, locals)) = e.status_board() {
            assert!(locals.iter().all(|&r| e.peer_in_flight(r) == Some(0)), "board not back to idle: {:?}", board.snapshot());
        }
    }
}

#[test]
fn shm_all_to_all_single_copy() {
    all_to_all(&[0, 0, 0], true);
}

#[test]
fn shm_all_to_all_pipelined() {
    all_to_all(&[0, 0, 0], false);
}

#[test]
fn shm_mixed_job_two_hosts() {
    all_to_all(&[0, 0, 1, 1], true);
}

/// The board shows a transfer from the moment it starts moving data until it is done, to
/// every rank of the host; ranks of another host are not on it.
#[test]
fn shm_status_board_tracks_transfers() {
    for single_copy in [true, false] {
        let mut es = shm_engines(&[0, 0, 0, 1], 16 << 10, 1024, single_copy);
        let data = pattern(1 << 20, 1);
        let mut buf = vec![0u8; data.len()];
        assert_eq!((es[2].peer_in_flight(0), es[2].peer_in_flight(3), es[3].peer_in_flight(0)), (Some(0), None, None));
        // SAFETY: `data` outlives the request.
        let s = unsafe { es[0].isend(1, 0, 9, data.as_ptr(), data.len(), false) }.expect("a rendezvous send is tracked");
        assert_eq!(es[2].peer_in_flight(0), Some(1), "the sender is busy as soon as it starts");
        assert_eq!(es[2].peer_in_flight(1), Some(0));
        let r = recv_any(&mut es[1], 0, 9, &mut buf);
        assert_eq!(es[2].peer_in_flight(1), Some(0), "a posted receive moves nothing yet");
        // Rank 1 matches the announcement; with a single copy it is done at once, through
        // the ring it stays busy until the last piece.
        es[1].progress(Some(Duration::ZERO)).unwrap();
        if !single_copy {
            assert_eq!(es[2].peer_in_flight(1), Some(1), "receiving through the ring");
        }
        pump_until(&mut es, |es| es[0].is_done(s) && es[1].is_done(r));
        assert_eq!(es[2].peer_in_flight(0), Some(0));
        assert_eq!(es[2].peer_in_flight(1), Some(0));
        take(&mut es[1], r);
        take(&mut es[0], s);
        assert!(buf == data);
        // Small sends that fit the ring are done inside isend and never show.
        let small = [7u8; 100];
        // SAFETY: `small` outlives the request.
        let s = unsafe { es[0].isend(2, 0, 1, small.as_ptr(), small.len(), false) };
        assert!(s.is_none(), "a small send that fits the ring needs no request");
        assert_eq!(es[1].peer_in_flight(0), Some(0));
        let mut got = [0u8; 100];
        let r = recv_any(&mut es[2], 0, 1, &mut got);
        pump_until(&mut es, |es| es[2].is_done(r));
        take(&mut es[2], r);
        assert_eq!(got, small);
    }
}

/// Bytes in a ring that are not a well-formed frame from its writer: the reader reports a
/// protocol error naming the writer and does not deliver anything.
#[test]
fn shm_malformed_ring_data_is_a_protocol_error() {
    use ferry_wire::{Header, Kind};
    let good = |seq: u64| {
        let mut h = Header::new(Kind::Eager);
        h.src = 0;
        h.dst = 1;
        h.seq = seq;
        h.len = 4;
        h
    };
    let mut forged = good(1);
    forged.src = 2;
    let mut long = good(1);
    long.len = 100;
    let cases: Vec<(&str, Vec<u8>, Vec<u8>)> = vec![
        ("not a header", b"this is not a frame header at all, really".to_vec(), b"data".to_vec()),
        ("forged source", forged.encode().to_vec(), b"data".to_vec()),
        ("short payload", long.encode().to_vec(), b"data".to_vec()),
        ("sequence gap", good(5).encode().to_vec(), b"data".to_vec()),
    ];
    for (what, header, payload) in cases {
        let (mut es, mut links) = common::shm_engines_but(&[0, 0, 0], 16 << 10, 1024, false, Some(0));
        let e1 = es[1].as_mut().expect("rank 1 has an engine");
        let mut buf = [0u8; 4];
        let r = recv_any(e1, 0, 0, &mut buf);
        let to_1 = links.iter_mut().find(|(p, _)| *p == 1).expect("a ring to rank 1");
        assert!(to_1.1.tx.try_write(&header, &payload), "{what}: ring has room");
        let err = e1.progress(Some(Duration::ZERO)).expect_err(what);
        assert!(err.to_string().contains("protocol error from rank 0"), "{what}: {err}");
        assert!(!e1.is_done(r) || e1.take(r).is_none_or(|x| x.is_err()), "{what}: nothing delivered");
        assert_eq!(buf, [0u8; 4], "{what}: nothing delivered");
    }
}
