//! The protocol core driven deterministically: ranks joined by in-memory links, frames
//! delivered in an order a seed chooses (one frame at a time per link, links interleaved,
//! payloads in pieces), with a bounded drive that fails a test which never settles.

use std::collections::VecDeque;

use ferry_wire::{Header, Kind, Limits};
use proptest::prelude::*;

use super::*;
use crate::transport::{Deliver, Sink};

/// A small deterministic generator (xorshift), so a failing seed replays exactly.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// A frame on its way: the bytes as the route would carry them.
struct Wire {
    header: Header,
    payload: Vec<u8>,
}

/// A frame being delivered in pieces.
struct Arriving {
    header: Header,
    sink: Sink,
    rest: Vec<u8>,
}

struct Net {
    ranks: Vec<Protocol>,
    /// `links[src][dst]`: frames in order.
    links: Vec<Vec<VecDeque<Wire>>>,
    arriving: Vec<Vec<Option<Arriving>>>,
    /// Per rank: requests whose frames are out, to report written later.
    written: Vec<Vec<ReqId>>,
    rng: Rng,
    limits: Limits,
}

impl Net {
    fn new(n: u32, eager: usize, seed: u64) -> Net {
        let n_ = n as usize;
        Net {
            ranks: (0..n).map(|r| Protocol::new(r, n, eager)).collect(),
            links: (0..n_).map(|_| (0..n_).map(|_| VecDeque::new()).collect()).collect(),
            arriving: (0..n_).map(|_| (0..n_).map(|_| None).collect()).collect(),
            written: vec![Vec::new(); n_],
            rng: Rng(seed | 1),
            limits: Limits::new(n),
        }
    }

    /// Collect what every rank wants sent, and perform its single-copy reads.
    fn collect(&mut self) {
        for r in 0..self.ranks.len() {
            loop {
                while let Some((dst, f)) = self.ranks[r].next_frame() {
                    let header = Header::decode(&f.header, &self.limits).expect("the core writes valid headers");
                    assert_eq!(header.len as usize, f.payload.bytes().len());
                    self.links[r][dst as usize].push_back(Wire { header, payload: f.payload.bytes().to_vec() });
                    self.written[r].extend(f.completes);
                }
                let Some(read) = self.ranks[r].next_read() else { break };
                // Every rank lives in this process: the address is a pointer here.
                // SAFETY: the sender keeps its buffer until RndvFin; the receive buffer holds `len`.
                unsafe { std::ptr::copy_nonoverlapping(read.addr as *const u8, read.buf, read.len) };
                self.ranks[r].read_done(read, Ok(()));
            }
        }
    }

    /// One step: report some written frames, or move one piece of one frame. Returns false
    /// when nothing was left to do.
    fn step(&mut self) -> bool {
        self.collect();
        let n = self.ranks.len();
        if self.rng.below(4) == 0 {
            let r = self.rng.below(n);
            if let Some(rid) = self.written[r].pop() {
                self.ranks[r].frame_written(rid);
                return true;
            }
        }
        let busy: Vec<(usize, usize)> = (0..n).flat_map(|s| (0..n).map(move |d| (s, d))).filter(|&(s, d)| self.arriving[s][d].is_some() || !self.links[s][d].is_empty()).collect();
        if busy.is_empty() {
            let mut any = false;
            for r in 0..n {
                for rid in std::mem::take(&mut self.written[r]) {
                    self.ranks[r].frame_written(rid);
                    any = true;
                }
            }
            return any;
        }
        let (s, d) = busy[self.rng.below(busy.len())];
        match self.arriving[s][d].take() {
            None => {
                let w = self.links[s][d].pop_front().expect("busy link");
                // A third of the frames arrive whole in one call, as from a ring record.
                if self.rng.below(3) == 0 {
                    self.ranks[d].whole(s as u32, w.header, &w.payload).expect("a valid frame is accepted");
                    return true;
                }
                let whole = self.rng.below(2) == 0;
                let sink = self.ranks[d].header(s as u32, &w.header, whole).expect("a valid frame is accepted");
                self.arriving[s][d] = Some(Arriving { header: w.header, sink, rest: w.payload });
                if self.rng.below(2) == 0 {
                    self.piece(s, d);
                }
            }
            Some(a) => {
                self.arriving[s][d] = Some(a);
                self.piece(s, d);
            }
        }
        true
    }

    fn piece(&mut self, s: usize, d: usize) {
        let mut a = self.arriving[s][d].take().expect("arriving");
        let n = if a.rest.len() <= 1 { a.rest.len() } else { 1 + self.rng.below(a.rest.len()) };
        let rest = a.rest.split_off(n);
        a.sink.put(&a.rest);
        a.rest = rest;
        if a.rest.is_empty() {
            self.ranks[d].frame(s as u32, a.header, a.sink).expect("a valid frame is accepted");
        } else {
            self.arriving[s][d] = Some(a);
        }
    }

    /// Step until `done` or nothing moves; panics after a bound (a test that never settles).
    fn drive(&mut self, mut done: impl FnMut(&Net) -> bool) {
        for _ in 0..1_000_000 {
            if done(self) {
                return;
            }
            if !self.step() && done(self) {
                return;
            }
        }
        panic!("the exchange never settled");
    }

    fn settle(&mut self) {
        for _ in 0..1_000_000 {
            if !self.step() {
                return;
            }
        }
        panic!("the exchange never settled");
    }
}

fn pattern(n: usize, seed: usize) -> Vec<u8> {
    (0..n).map(|i| (i.wrapping_mul(31).wrapping_add(seed * 7) % 251) as u8).collect()
}

fn pat(ctx: u32, src: Option<u32>, tag: Option<i32>) -> Pattern {
    Pattern { ctx, src, tag }
}

fn take_ok(p: &mut Protocol, rid: ReqId) -> Status {
    p.take(rid).expect("completed").expect("succeeded")
}

#[test]
fn eager_and_rendezvous_deliver_with_status() {
    for size in [0usize, 1, 64, 65, 10_000] {
        let mut net = Net::new(2, 64, 7 + size as u64);
        let data = pattern(size, 1);
        let mut buf = vec![0u8; size + 3];
        let s = unsafe { net.ranks[0].isend(1, 0, 5, data.as_ptr(), size, false) };
        let r = unsafe { net.ranks[1].irecv(pat(0, Some(0), Some(5)), buf.as_mut_ptr(), buf.len()) };
        net.settle();
        take_ok(&mut net.ranks[0], s);
        let st = take_ok(&mut net.ranks[1], r);
        assert_eq!((st.source, st.tag, st.bytes, st.truncated), (0, 5, size, false));
        assert!(buf[..size] == data[..]);
        assert!(!net.ranks[0].has_requests() && !net.ranks[1].has_requests());
    }
}

#[test]
fn a_sixteen_mebibyte_message_arrives_in_rendezvous_chunks() {
    let size = 16 << 20;
    let mut net = Net::new(2, 1024, 3);
    let data = pattern(size, 2);
    let mut buf = vec![0u8; size];
    let r = unsafe { net.ranks[1].irecv(pat(0, None, None), buf.as_mut_ptr(), size) };
    let s = unsafe { net.ranks[0].isend(1, 0, 1, data.as_ptr(), size, false) };
    net.settle();
    take_ok(&mut net.ranks[0], s);
    assert_eq!(take_ok(&mut net.ranks[1], r).bytes, size);
    assert!(buf == data);
}

#[test]
fn truncation_is_reported_for_eager_rendezvous_and_unexpected() {
    for (size, post_first) in [(100usize, true), (100, false), (5000, true), (5000, false)] {
        let mut net = Net::new(2, 1024, 11);
        let data = pattern(size, 3);
        let mut buf = vec![0u8; 10];
        let mut r = None;
        if post_first {
            r = Some(unsafe { net.ranks[1].irecv(pat(0, Some(0), None), buf.as_mut_ptr(), buf.len()) });
        }
        let s = unsafe { net.ranks[0].isend(1, 0, 0, data.as_ptr(), size, false) };
        net.settle();
        let r = r.unwrap_or_else(|| unsafe { net.ranks[1].irecv(pat(0, Some(0), None), buf.as_mut_ptr(), buf.len()) });
        net.settle();
        take_ok(&mut net.ranks[0], s);
        let st = take_ok(&mut net.ranks[1], r);
        assert_eq!((st.bytes, st.truncated), (10, true), "size {size}, posted first: {post_first}");
        assert!(buf[..] == data[..10]);
    }
}

#[test]
fn a_synchronous_send_completes_only_once_matched() {
    for size in [8usize, 4000] {
        let mut net = Net::new(2, 1024, 5);
        let data = pattern(size, 4);
        let mut buf = vec![0u8; size];
        let s = unsafe { net.ranks[0].isend(1, 0, 0, data.as_ptr(), size, true) };
        net.settle();
        assert!(!net.ranks[0].is_done(s), "size {size}: done before any receive was posted");
        let r = unsafe { net.ranks[1].irecv(pat(0, None, None), buf.as_mut_ptr(), size) };
        net.settle();
        take_ok(&mut net.ranks[0], s);
        take_ok(&mut net.ranks[1], r);
        assert!(buf == data);
    }
}

#[test]
fn sends_to_self_match_in_memory() {
    let mut net = Net::new(1, 64, 1);
    let data = pattern(500, 5);
    let mut buf = vec![0u8; 500];
    let s = unsafe { net.ranks[0].isend(0, 3, 1, data.as_ptr(), 500, true) };
    assert!(!net.ranks[0].is_done(s), "a synchronous send to self waits for its receive");
    let r = unsafe { net.ranks[0].irecv(pat(3, Some(0), Some(1)), buf.as_mut_ptr(), 500) };
    take_ok(&mut net.ranks[0], s);
    assert_eq!(take_ok(&mut net.ranks[0], r).bytes, 500);
    assert!(buf == data);
    assert!(!net.ranks[0].has_frames());
}

#[test]
fn cancel_takes_back_only_unmatched_receives() {
    let mut net = Net::new(2, 64, 9);
    let mut buf = [0u8; 4];
    let r = unsafe { net.ranks[1].irecv(pat(0, Some(0), Some(1)), buf.as_mut_ptr(), 4) };
    assert!(net.ranks[1].cancel(r));
    assert!(take_ok(&mut net.ranks[1], r).cancelled);
    let data = [1u8, 2, 3, 4];
    let s = unsafe { net.ranks[0].isend(1, 0, 1, data.as_ptr(), 4, false) };
    let r = unsafe { net.ranks[1].irecv(pat(0, Some(0), Some(1)), buf.as_mut_ptr(), 4) };
    net.settle();
    assert!(!net.ranks[1].cancel(r), "a completed receive cannot be cancelled");
    assert!(!take_ok(&mut net.ranks[1], r).cancelled);
    take_ok(&mut net.ranks[0], s);
    assert_eq!(buf, data);
}

#[test]
fn probe_and_matched_probe_see_the_oldest_unexpected_message() {
    let mut net = Net::new(2, 64, 13);
    let a = pattern(10, 1);
    let b = pattern(3000, 2);
    let s1 = unsafe { net.ranks[0].isend(1, 0, 7, a.as_ptr(), a.len(), false) };
    let s2 = unsafe { net.ranks[0].isend(1, 0, 8, b.as_ptr(), b.len(), false) };
    net.settle();
    let st = net.ranks[1].peek(&pat(0, None, None)).expect("something arrived");
    assert_eq!((st.tag, st.bytes), (7, 10));
    let (mid, st) = net.ranks[1].improbe(&pat(0, None, Some(8))).expect("the rendezvous announcement arrived");
    assert_eq!(st.bytes, 3000);
    assert_eq!(net.ranks[1].peek(&pat(0, None, Some(8))), None, "a matched probe removes the message");
    let mut buf = vec![0u8; 3000];
    let r = unsafe { net.ranks[1].imrecv(mid, buf.as_mut_ptr(), buf.len()) };
    net.settle();
    assert_eq!(take_ok(&mut net.ranks[1], r).bytes, 3000);
    assert!(buf == b);
    take_ok(&mut net.ranks[0], s1);
    take_ok(&mut net.ranks[0], s2);
}

#[test]
fn take_whole_hands_over_eager_messages_only_and_keeps_their_order() {
    let mut net = Net::new(2, 64, 17);
    let a = pattern(10, 1);
    let b = pattern(3000, 2);
    let c = pattern(20, 3);
    let sends: Vec<ReqId> = [&a, &b, &c].iter().map(|m| unsafe { net.ranks[0].isend(1, 0, 5, m.as_ptr(), m.len(), false) }).collect();
    net.settle();
    let any = pat(0, None, None);
    let (st, data) = net.ranks[1].take_whole(&any).expect("the eager message, whole");
    assert_eq!((st.bytes, &data), (10, &a));
    assert_eq!(net.ranks[1].take_whole(&any), None, "the oldest is a rendezvous announcement");
    let (mid, st) = net.ranks[1].improbe(&any).expect("the announcement");
    assert_eq!(st.bytes, 3000);
    let mut buf = vec![0u8; 3000];
    let r = unsafe { net.ranks[1].imrecv(mid, buf.as_mut_ptr(), buf.len()) };
    net.settle();
    assert_eq!(take_ok(&mut net.ranks[1], r).bytes, 3000);
    assert_eq!(net.ranks[1].take_whole(&any).map(|(_, d)| d), Some(c));
    assert_eq!(net.ranks[1].take_whole(&any), None);
    for s in sends {
        take_ok(&mut net.ranks[0], s);
    }
}

#[test]
fn single_copy_reads_replace_the_data_frames() {
    let mut net = Net::new(2, 64, 17);
    for r in 0..2 {
        net.ranks[r].set_local(1 - r as u32, 64);
        net.ranks[r].set_single_copy(true);
    }
    let data = pattern(100_000, 6);
    let mut buf = vec![0u8; data.len()];
    let s = unsafe { net.ranks[0].isend(1, 0, 0, data.as_ptr(), data.len(), false) };
    let r = unsafe { net.ranks[1].irecv(pat(0, Some(0), Some(0)), buf.as_mut_ptr(), buf.len()) };
    net.settle();
    take_ok(&mut net.ranks[0], s);
    take_ok(&mut net.ranks[1], r);
    assert!(buf == data);
}

#[test]
fn the_single_copy_is_offered_up_to_the_limit_or_at_any_size_when_asked() {
    // (length, offer at any size, read expected) with a limit of 10,000 bytes.
    for (len, any, read) in [(5000, false, true), (10_000, false, true), (10_001, false, false), (40_000, false, false), (40_000, true, true)] {
        let mut net = Net::new(2, 64, 23);
        for r in 0..2 {
            net.ranks[r].set_local(1 - r as u32, 64);
            net.ranks[r].set_single_copy_up_to(Some(10_000));
        }
        let data = pattern(len, 8);
        let mut buf = vec![0u8; len];
        let max = if any { usize::MAX } else { 10_000 };
        let s = unsafe { net.ranks[0].isend_up_to(1, 0, 0, data.as_ptr(), len, false, max) };
        let r = unsafe { net.ranks[1].irecv(pat(0, Some(0), Some(0)), buf.as_mut_ptr(), len) };
        let mut reads = 0;
        for _ in 0..10_000 {
            while let Some(rd) = net.ranks[1].next_read() {
                reads += 1;
                // SAFETY: as in `Net::pump`: both ranks live here; the sender keeps its buffer.
                unsafe { std::ptr::copy_nonoverlapping(rd.addr as *const u8, rd.buf, rd.len) };
                net.ranks[1].read_done(rd, Ok(()));
            }
            if !net.step() {
                break;
            }
        }
        net.settle();
        take_ok(&mut net.ranks[0], s);
        take_ok(&mut net.ranks[1], r);
        assert!(buf == data, "len {len}");
        assert_eq!(reads, usize::from(read), "len {len}, any size {any}");
    }
}

#[test]
fn a_failed_single_copy_read_falls_back_to_data_frames() {
    let mut net = Net::new(2, 64, 19);
    for r in 0..2 {
        net.ranks[r].set_local(1 - r as u32, 64);
        net.ranks[r].set_single_copy(true);
    }
    let data = pattern(5000, 7);
    let mut buf = vec![0u8; data.len()];
    let s = unsafe { net.ranks[0].isend(1, 0, 0, data.as_ptr(), data.len(), false) };
    let r = unsafe { net.ranks[1].irecv(pat(0, Some(0), Some(0)), buf.as_mut_ptr(), buf.len()) };
    // Deliver by hand, refusing the read.
    for _ in 0..10_000 {
        while let Some(read) = net.ranks[1].next_read() {
            net.ranks[1].read_done(read, Err("not permitted".into()));
        }
        if !net.step() {
            break;
        }
    }
    net.settle();
    take_ok(&mut net.ranks[0], s);
    take_ok(&mut net.ranks[1], r);
    assert!(buf == data);
}

#[test]
fn a_lost_peer_fails_what_depends_on_it_and_nothing_else() {
    let mut net = Net::new(3, 64, 23);
    let mut buf = [0u8; 8];
    let mut other = [0u8; 8];
    let r = unsafe { net.ranks[0].irecv(pat(0, Some(1), None), buf.as_mut_ptr(), 8) };
    let keep = unsafe { net.ranks[0].irecv(pat(0, Some(2), None), other.as_mut_ptr(), 8) };
    let big = pattern(1000, 1);
    let s = unsafe { net.ranks[0].isend(1, 0, 0, big.as_ptr(), big.len(), false) };
    net.ranks[0].peer_lost(1);
    assert_eq!(net.ranks[0].take(r), Some(Err(EngineError::PeerLost(1))));
    assert_eq!(net.ranks[0].take(s), Some(Err(EngineError::PeerLost(1))));
    assert!(!net.ranks[0].is_done(keep));
    let late = unsafe { net.ranks[0].isend(1, 0, 0, big.as_ptr(), 8, false) };
    assert_eq!(net.ranks[0].take(late), Some(Err(EngineError::PeerLost(1))));
    assert!(net.ranks[0].cancel(keep));
}

#[test]
fn detached_requests_complete_on_their_own() {
    let mut net = Net::new(2, 64, 29);
    let data = pattern(2000, 1);
    let mut buf = vec![0u8; 2000];
    let s = unsafe { net.ranks[0].isend(1, 0, 0, data.as_ptr(), data.len(), false) };
    net.ranks[0].detach(s);
    assert_eq!(net.ranks[0].sends_outstanding(), 1);
    let r = unsafe { net.ranks[1].irecv(pat(0, None, None), buf.as_mut_ptr(), buf.len()) };
    net.settle();
    assert_eq!(net.ranks[0].sends_outstanding(), 0);
    assert!(!net.ranks[0].has_requests(), "a detached request leaves when it completes");
    take_ok(&mut net.ranks[1], r);
}

#[test]
fn the_small_send_path_keeps_sequence_numbers() {
    let mut net = Net::new(2, 64, 31);
    let data = pattern(8, 1);
    let seq = net.ranks[0].eager_seq(1, 8).expect("fits eagerly");
    let mut h = frame(Kind::Eager, 0, 1, seq, 8);
    h.tag = 4;
    net.ranks[0].commit_eager(1);
    net.links[0][1].push_back(Wire { header: h, payload: data.clone() });
    let s = unsafe { net.ranks[0].isend(1, 0, 4, data.as_ptr(), 8, false) };
    let mut a = [0u8; 8];
    let mut b = [0u8; 8];
    let ra = unsafe { net.ranks[1].irecv(pat(0, Some(0), Some(4)), a.as_mut_ptr(), 8) };
    let rb = unsafe { net.ranks[1].irecv(pat(0, Some(0), Some(4)), b.as_mut_ptr(), 8) };
    net.settle();
    take_ok(&mut net.ranks[0], s);
    take_ok(&mut net.ranks[1], ra);
    take_ok(&mut net.ranks[1], rb);
    assert!(a[..] == data[..] && b[..] == data[..]);
    assert_eq!(net.ranks[0].eager_seq(1, 65), None, "above the eager limit");
    assert_eq!(net.ranks[0].eager_seq(0, 1), None, "to self");
}

fn frame(kind: Kind, src: u32, dst: u32, seq: u64, len: u64) -> Header {
    let mut h = Header::new(kind);
    h.src = src;
    h.dst = dst;
    h.seq = seq;
    h.len = len;
    h
}

#[test]
fn hostile_frames_are_refused() {
    let mut p = Protocol::new(0, 3, 64);
    assert!(p.header(1, &frame(Kind::Eager, 2, 0, 1, 0), true).is_err(), "source not the route's peer");
    assert!(p.header(1, &frame(Kind::Eager, 1, 2, 1, 0), true).is_err(), "not addressed to us");
    assert!(p.header(1, &frame(Kind::Eager, 1, 0, 5, 0), true).is_err(), "sequence gap");
    assert!(p.header(1, &frame(Kind::RndvData, 1, 0, 77, 10), true).is_err(), "data for no request");
    assert!(p.header(1, &frame(Kind::Hello, 1, 0, 0, 0), true).is_err(), "handshake frame after the handshake");
    assert!(p.header(9, &frame(Kind::Eager, 9, 0, 1, 0), true).is_err(), "unknown rank");
    // The same, delivered whole in one call.
    assert!(p.whole(1, frame(Kind::Eager, 2, 0, 1, 0), &[]).is_err(), "whole: source not the route's peer");
    assert!(p.whole(1, frame(Kind::Eager, 1, 2, 1, 0), &[]).is_err(), "whole: not addressed to us");
    assert!(p.whole(1, frame(Kind::Eager, 1, 0, 5, 0), &[]).is_err(), "whole: sequence gap");
    assert!(p.whole(9, frame(Kind::Eager, 9, 0, 1, 0), &[]).is_err(), "whole: unknown rank");
    assert!(p.whole(1, frame(Kind::RndvData, 1, 0, 77, 1), &[0]).is_err(), "whole: data for no request");
    // An RTS with an address from a rank that is not local.
    let h = frame(Kind::Rts, 1, 0, 1, 24);
    let mut sink = p.header(1, &h, true).expect("an RTS header is fine");
    sink.put(&[0u8; 24]);
    assert!(p.frame(1, h, sink).is_err());
    // A CTS and a SyncAck for sends that do not exist.
    let h = frame(Kind::Cts, 2, 0, 0, 16);
    let mut sink = p.header(2, &h, true).unwrap();
    sink.put(&[0u8; 16]);
    assert!(p.frame(2, h, sink).is_err());
    let h = frame(Kind::SyncAck, 2, 0, 3, 0);
    let sink = p.header(2, &h, true).unwrap();
    assert!(p.frame(2, h, sink).is_err());
}

/// One message of a property run.
#[derive(Clone, Debug)]
struct Msg {
    src: u32,
    dst: u32,
    tag: i32,
    size: usize,
    sync: bool,
    /// Whether the receive is posted before the send starts.
    post_first: bool,
    /// Network steps between this message's calls and the next message's.
    gap: u8,
}

fn msg(n: u32) -> impl Strategy<Value = Msg> {
    let sizes = prop::sample::select(vec![0usize, 1, 8, 63, 64, 65, 300, 5000]);
    (0..n, 0..n, 0..3i32, sizes, any::<bool>(), any::<bool>(), 0..6u8).prop_map(|(src, dst, tag, size, sync, post_first, gap)| Msg { src, dst, tag, size, sync, post_first, gap })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// Nothing is lost, messages between a pair with one tag never overtake each other, and
    /// every rendezvous completes, whatever the interleaving of routes and pieces.
    #[test]
    fn nothing_lost_no_overtaking_every_rendezvous_completes(msgs in prop::collection::vec(msg(4), 1..40), seed in any::<u64>(), single_copy in any::<bool>()) {
        let mut net = Net::new(4, 64, seed);
        if single_copy {
            for a in 0..4u32 {
                for b in 0..4u32 {
                    if a != b {
                        net.ranks[a as usize].set_local(b, 64);
                    }
                }
                net.ranks[a as usize].set_single_copy(true);
            }
        }
        let datas: Vec<Vec<u8>> = msgs.iter().enumerate().map(|(i, m)| pattern(m.size, i)).collect();
        let mut bufs: Vec<Vec<u8>> = msgs.iter().map(|m| vec![0u8; m.size]).collect();
        let mut sends = Vec::new();
        let mut recvs = Vec::new();
        for (i, m) in msgs.iter().enumerate() {
            let p = pat(0, Some(m.src), Some(m.tag));
            let buf = bufs[i].as_mut_ptr();
            let recv = |net: &mut Net| unsafe { net.ranks[m.dst as usize].irecv(p, buf, m.size) };
            if m.post_first {
                recvs.push((m.dst, recv(&mut net)));
            }
            sends.push((m.src, unsafe { net.ranks[m.src as usize].isend(m.dst, 0, m.tag, datas[i].as_ptr(), m.size, m.sync) }));
            if !m.post_first {
                recvs.push((m.dst, recv(&mut net)));
            }
            for _ in 0..m.gap {
                net.step();
            }
        }
        net.drive(|net| sends.iter().chain(recvs.iter()).all(|&(r, id)| net.ranks[r as usize].is_done(id)));
        for &(r, id) in &sends {
            prop_assert!(net.ranks[r as usize].take(id).expect("done").is_ok());
        }
        for (i, &(r, id)) in recvs.iter().enumerate() {
            let st = net.ranks[r as usize].take(id).expect("done").expect("ok");
            prop_assert_eq!((st.source, st.tag, st.bytes, st.truncated), (msgs[i].src, msgs[i].tag, msgs[i].size, false));
        }
        // Receives of one (source, tag) at one rank were posted in send order, so each got
        // the message of the same index: anything else is overtaking.
        for i in 0..msgs.len() {
            prop_assert!(bufs[i] == datas[i], "message {} arrived wrong", i);
        }
        net.settle();
        for r in &net.ranks {
            prop_assert!(!r.has_requests());
            prop_assert_eq!(r.busy_delta, 0);
        }
    }
}

fn any_frame() -> impl Strategy<Value = (u32, Header, Vec<u8>)> {
    let kinds = prop::sample::select(vec![Kind::Eager, Kind::Rts, Kind::Cts, Kind::RndvData, Kind::SyncAck, Kind::RndvFin, Kind::Bye, Kind::Hello]);
    (0..4u32, 0..4u32, kinds, 0..4u64, 0..3u32, -1..3i32, any::<bool>(), prop::collection::vec(any::<u8>(), 0..40)).prop_map(|(peer, src, kind, seq, ctx, tag, sync, payload)| {
        let mut h = Header::new(kind);
        h.src = src;
        h.dst = 0;
        h.seq = seq;
        h.context = ctx;
        h.tag = tag;
        h.flags = if sync { ferry_wire::flags::SYNC } else { 0 };
        h.len = payload.len() as u64;
        (peer, h, payload)
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Whatever frames peers send, in whatever order, the core answers with a refusal at
    /// worst: it never panics, and what it refuses leaves it usable.
    #[test]
    fn hostile_frame_sequences_never_panic(frames in prop::collection::vec(any_frame(), 0..40)) {
        let mut p = Protocol::new(0, 4, 16);
        p.set_local(1, 16);
        p.set_single_copy(true);
        let mut bufs = vec![vec![0u8; 24]; 4];
        for (i, b) in bufs.iter_mut().enumerate() {
            unsafe { p.irecv(pat((i % 2) as u32, if i == 0 { None } else { Some(i as u32) }, None), b.as_mut_ptr(), b.len()) };
        }
        let out = pattern(100, 1);
        let s = unsafe { p.isend(2, 0, 1, out.as_ptr(), out.len(), true) };
        for (i, (peer, h, payload)) in frames.into_iter().enumerate() {
            if i % 2 == 1 && payload.len() as u64 == h.len {
                // As a ring record: whole, its length checked by the route.
                let _ = p.whole(peer, h, &payload);
            } else if let Ok(mut sink) = p.header(peer, &h, true) {
                sink.put(&payload);
                let _ = p.frame(peer, h, sink);
            }
            while p.next_frame().is_some() {}
            while let Some(r) = p.next_read() {
                p.read_done(r, Err("refused".into()));
            }
        }
        // Still usable: a send to self matches a fresh receive.
        let mut b = [0u8; 3];
        let r = unsafe { p.irecv(pat(7, Some(0), Some(5)), b.as_mut_ptr(), 3) };
        let me = unsafe { p.isend(0, 7, 5, [1u8, 2, 3].as_ptr(), 3, false) };
        prop_assert_eq!(take_ok(&mut p, r).bytes, 3);
        prop_assert!(p.take(me).is_some());
        let _ = s;
    }
}

#[test]
fn a_receive_of_a_message_already_here_completes_without_a_request() {
    let mut p = Protocol::new(0, 3, 64);
    let eager = |p: &mut Protocol, src: u32, seq: u64, tag: i32, body: &[u8], sync: bool| {
        let mut h = frame(Kind::Eager, src, 0, seq, body.len() as u64);
        h.context = 4;
        h.tag = tag;
        h.flags = if sync { ferry_wire::flags::SYNC } else { 0 };
        p.whole(src, h, body).expect("a valid frame");
    };
    eager(&mut p, 1, 1, 7, b"first", false);
    eager(&mut p, 1, 2, 7, b"second!", true);
    eager(&mut p, 2, 1, 9, b"long message", false);
    let mut b = [0u8; 8];
    // Nothing matches tag 8: nothing happens.
    assert_eq!(unsafe { p.recv_now(&pat(4, Some(1), Some(8)), b.as_mut_ptr(), 8) }, None);
    // The oldest match first, then the next; the synchronous one is acknowledged.
    let st = unsafe { p.recv_now(&pat(4, None, Some(7)), b.as_mut_ptr(), 8) }.expect("here");
    assert_eq!((st.source, st.tag, st.bytes, st.truncated, &b[..5]), (1, 7, 5, false, &b"first"[..]));
    assert!(p.next_frame().is_none(), "no acknowledgement for a standard send");
    let st = unsafe { p.recv_now(&pat(4, Some(1), None), b.as_mut_ptr(), 8) }.expect("here");
    assert_eq!((st.bytes, &b[..7]), (7, &b"second!"[..]));
    let (to, ack) = p.next_frame().expect("the synchronous send is acknowledged");
    let ack = Header::decode(&ack.header, &Limits::new(3)).unwrap();
    assert_eq!((to, ack.kind, ack.seq), (1, Kind::SyncAck, 2));
    // Truncated to the buffer, and said so.
    let st = unsafe { p.recv_now(&pat(4, None, None), b.as_mut_ptr(), 8) }.expect("here");
    assert_eq!((st.source, st.bytes, st.truncated, &b[..]), (2, 8, true, &b"long mes"[..]));
    assert_eq!(unsafe { p.recv_now(&pat(4, None, None), b.as_mut_ptr(), 8) }, None, "all taken");
    // A message whose payload is still arriving is left for a posted receive.
    let mut h = frame(Kind::Eager, 2, 0, 2, 4);
    h.context = 4;
    let mut sink = p.header(2, &h, false).expect("a valid header");
    assert_eq!(unsafe { p.recv_now(&pat(4, None, None), b.as_mut_ptr(), 8) }, None, "not all here");
    let r = unsafe { p.irecv(pat(4, None, None), b.as_mut_ptr(), 8) };
    sink.put(b"tail");
    p.frame(2, h, sink).unwrap();
    assert_eq!(p.take(r).map(|s| s.map(|s| s.bytes)), Some(Ok(4)));
    assert_eq!(&b[..4], b"tail");
}

#[test]
fn a_frame_read_in_place_is_received_only_when_it_is_the_next_match() {
    let mut p = Protocol::new(0, 3, 64);
    let eager = |src: u32, seq: u64, tag: i32, body: &[u8], sync: bool| {
        let mut h = frame(Kind::Eager, src, 0, seq, body.len() as u64);
        h.context = 4;
        h.tag = tag;
        h.flags = if sync { ferry_wire::flags::SYNC } else { 0 };
        h
    };
    let mut b = [0u8; 8];
    let any = pat(4, Some(1), None);
    assert!(p.may_recv_in_place(&any), "nothing queued");
    // Not the next sequence number, another kind, another tag, another context: not taken.
    assert_eq!(unsafe { p.recv_in_place(1, &any, &eager(1, 2, 7, b"x", false), b"x", b.as_mut_ptr(), 8) }, None);
    let rts = frame(Kind::Rts, 1, 0, 1, 16);
    assert_eq!(unsafe { p.recv_in_place(1, &any, &rts, &[0; 16], b.as_mut_ptr(), 8) }, None);
    assert_eq!(unsafe { p.recv_in_place(1, &pat(4, Some(1), Some(8)), &eager(1, 1, 7, b"x", false), b"x", b.as_mut_ptr(), 8) }, None);
    assert_eq!(unsafe { p.recv_in_place(1, &pat(5, Some(1), None), &eager(1, 1, 7, b"x", false), b"x", b.as_mut_ptr(), 8) }, None);
    // A frame claiming another sender on this peer's route is left for the usual way, which refuses it.
    assert_eq!(unsafe { p.recv_in_place(1, &any, &eager(2, 1, 7, b"x", false), b"x", b.as_mut_ptr(), 8) }, None);
    // The next one, matching: copied, truncated to the buffer, its sequence number used up.
    let st = unsafe { p.recv_in_place(1, &any, &eager(1, 1, 7, b"long message", false), b"long message", b.as_mut_ptr(), 8) }.expect("taken");
    assert_eq!((st.source, st.tag, st.bytes, st.truncated, &b[..]), (1, 7, 8, true, &b"long mes"[..]));
    assert!(p.next_frame().is_none(), "no acknowledgement for a standard send");
    assert_eq!(unsafe { p.recv_in_place(1, &any, &eager(1, 1, 7, b"x", false), b"x", b.as_mut_ptr(), 8) }, None, "sequence number 1 is gone");
    // A synchronous send is acknowledged.
    let st = unsafe { p.recv_in_place(1, &any, &eager(1, 2, 9, b"sync", true), b"sync", b.as_mut_ptr(), 8) }.expect("taken");
    assert_eq!((st.tag, st.bytes, &b[..4]), (9, 4, &b"sync"[..]));
    let (to, ack) = p.next_frame().expect("acknowledged");
    let ack = Header::decode(&ack.header, &Limits::new(3)).unwrap();
    assert_eq!((to, ack.kind, ack.seq), (1, Kind::SyncAck, 2));
    // The usual way goes on from the next sequence number.
    p.whole(1, eager(1, 3, 7, b"third", false), b"third").expect("in sequence");
    // With a matching message queued, or any receive posted in the context, nothing may
    // be taken in place: either would be overtaken.
    assert!(!p.may_recv_in_place(&any));
    assert!(p.may_recv_in_place(&pat(4, Some(2), None)), "a message from another source is no match");
    assert!(unsafe { p.recv_now(&any, b.as_mut_ptr(), 8) }.is_some());
    assert!(p.may_recv_in_place(&any));
    let r = unsafe { p.irecv(pat(4, Some(2), None), b.as_mut_ptr(), 8) };
    assert!(!p.may_recv_in_place(&any), "a posted receive might match");
    assert!(p.may_recv_in_place(&pat(6, Some(1), None)), "another context is free");
    assert!(p.cancel(r));
}

#[test]
fn a_short_frame_read_in_place_is_received_only_when_it_is_the_next_match() {
    let mut p = Protocol::new(0, 3, 64);
    let mut b = [0u8; 8];
    let any = pat(4, Some(1), None);
    let short = |p: &mut Protocol, pat: &Pattern, ctx: u32, tag: i32, seq: u64, body: &[u8], b: &mut [u8; 8]| unsafe { p.recv_short_in_place(1, pat, ctx, tag, seq, body, b.as_mut_ptr(), 8) };
    // Not the next sequence number, another context, another tag: not taken.
    assert_eq!(short(&mut p, &any, 4, 7, 2, b"x", &mut b), None);
    assert_eq!(short(&mut p, &any, 5, 7, 1, b"x", &mut b), None);
    assert_eq!(short(&mut p, &pat(4, Some(1), Some(8)), 4, 7, 1, b"x", &mut b), None);
    // The next one: copied, truncated to the buffer, its sequence number used up.
    let st = short(&mut p, &any, 4, 7, 1, b"long message", &mut b).expect("taken");
    assert_eq!((st.source, st.tag, st.bytes, st.truncated, &b[..]), (1, 7, 8, true, &b"long mes"[..]));
    assert_eq!(short(&mut p, &any, 4, 7, 1, b"x", &mut b), None, "sequence number 1 is gone");
    let st = short(&mut p, &pat(4, Some(1), Some(9)), 4, 9, 2, b"ok", &mut b).expect("taken");
    assert_eq!((st.tag, st.bytes, st.truncated, &b[..2]), (9, 2, false, &b"ok"[..]));
    assert!(p.next_frame().is_none(), "nothing to acknowledge");
    // The usual way goes on from the next sequence number.
    let mut h = frame(Kind::Eager, 1, 0, 3, 5);
    h.context = 4;
    p.whole(1, h, b"third").expect("in sequence");
}
