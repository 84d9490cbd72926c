//! The shared-memory route's short form of eager frames: what goes into the ring, and that
//! the receiver sees each frame's header as it was sent, whichever way it reads.

use ferry_wire::{flags, Header, Kind, Limits, HEADER_LEN};

use super::{ShmRoute, EAGER_HEADER_LEN};
use crate::transport::shm::{heap_ring, Link};
use crate::transport::{Deliver, OutFrame, Payload, Route, SendOutcome, Sink};

/// Routes of ranks 0 and 1 to each other.
fn pair() -> (ShmRoute, ShmRoute) {
    let ab = heap_ring(16 << 10).expect("heap ring");
    let ba = heap_ring(16 << 10).expect("heap ring");
    (ShmRoute::new(Link { tx: ab.producer, rx: ba.consumer }, 0), ShmRoute::new(Link { tx: ba.producer, rx: ab.consumer }, 1))
}

fn eager(seq: u64, tag: i32, len: usize) -> Header {
    let mut h = Header::new(Kind::Eager);
    (h.src, h.dst, h.context, h.tag, h.seq, h.len) = (0, 1, 9, tag, seq, len as u64);
    h
}

#[derive(Default)]
struct Frames(Vec<(Header, Vec<u8>)>);

impl Deliver for Frames {
    fn header(&mut self, _: u32, _: &Header, _: bool) -> Result<Sink, String> {
        Ok(Sink::Vec(Vec::new()))
    }
    fn frame(&mut self, _: u32, h: Header, sink: Sink) -> Result<(), String> {
        let Sink::Vec(v) = sink else { unreachable!("always a Vec") };
        self.0.push((h, v));
        Ok(())
    }
}

#[test]
fn eager_frames_of_standard_sends_go_short_and_arrive_as_sent() {
    let (mut a, mut b) = pair();
    let limits = Limits::new(2);
    let mut sync = eager(3, 7, 4);
    sync.flags = flags::SYNC;
    let mut foreign = eager(4, 7, 2);
    foreign.src = 1;
    let sent = [(eager(1, 5, 8), &b"12345678"[..]), (eager(2, -1, 0), &b""[..]), (sync, &b"sync"[..]), (foreign, &b"xx"[..]), (eager(5, 6, 3), &b"abc"[..])];
    let send = |a: &mut ShmRoute| {
        for (h, p) in &sent {
            let sent = if h.flags == 0 { a.try_send_eager(h.src, h.dst, h.context, h.tag, h.seq, p) } else { a.try_send(&h.encode(), p) };
            assert_eq!(sent.expect("written"), SendOutcome::Sent);
        }
    };
    send(&mut a);
    // Standard sends from this rank take the short header, the others the full one (a
    // synchronous send's frame never comes this way: the engine sends it with try_send).
    let mut lens = Vec::new();
    for _ in 0..sent.len() {
        let piece = b.link.rx.peek().expect("well formed").expect("a record");
        lens.push(piece.header.len());
        b.link.rx.step();
    }
    assert_eq!(lens, [EAGER_HEADER_LEN, EAGER_HEADER_LEN, HEADER_LEN, HEADER_LEN, EAGER_HEADER_LEN]);
    // Again, read by the receiver: in place for the first, then the usual way.
    let (mut a, mut b) = pair();
    send(&mut a);
    let mut first = None;
    assert!(b.take_next(0, &limits, &mut |h, p| {
        first = Some((*h, p.to_vec()));
        true
    }));
    let mut got = Frames::default();
    b.recv(0, &mut got, &limits).expect("valid frames");
    let got: Vec<_> = first.into_iter().chain(got.0).collect();
    // The foreign frame keeps its claimed sender: the protocol refuses it.
    let want: Vec<_> = sent.iter().map(|(h, p)| (*h, p.to_vec())).collect();
    assert_eq!(got, want);
}

#[test]
fn a_short_eager_frame_over_the_limit_is_refused() {
    let (mut a, mut b) = pair();
    a.try_send_eager(0, 1, 9, 0, 1, &[7u8; 100]).expect("written");
    let tight = Limits { world_size: 2, max_payload: 64 };
    assert!(!b.take_next(0, &tight, &mut |_, _| true), "not shown in place");
    assert!(b.recv(0, &mut Frames::default(), &tight).is_err(), "a protocol error");
}

#[test]
fn queued_eager_frames_also_go_short() {
    let (mut a, mut b) = pair();
    let limits = Limits::new(2);
    let data = vec![5u8; 1000];
    let mut done = Vec::new();
    let frames: Vec<Header> = (1..=40).map(|s| eager(s, s as i32, data.len())).collect();
    for h in &frames {
        // What the ring does not take now waits in the route's queue, as the engine does it.
        if a.try_send_eager(0, 1, h.context, h.tag, h.seq, &data).expect("no error") == SendOutcome::WouldBlock {
            a.enqueue(OutFrame::new(h, Payload::Borrowed { ptr: data.as_ptr(), len: data.len() }, None));
        }
    }
    assert!(a.queued() > 0, "the ring filled up");
    let mut got = Frames::default();
    let mut short = 0;
    while got.0.len() < frames.len() {
        a.flush(&mut done).expect("flush");
        if let Ok(Some(piece)) = b.link.rx.peek() {
            short += usize::from(piece.header.len() == EAGER_HEADER_LEN);
        }
        b.recv(0, &mut got, &limits).expect("valid frames");
    }
    assert_eq!(got.0.iter().map(|f| f.0).collect::<Vec<_>>(), frames);
    assert!(short > 1, "queued frames went short too");
}

#[test]
fn short_eager_frames_are_taken_in_place_and_others_left() {
    let (mut a, mut b) = pair();
    let limits = Limits::new(2);
    let mut sync = eager(2, 7, 4);
    sync.flags = flags::SYNC;
    a.try_send_eager(0, 1, 9, 5, 1, b"12345678").expect("written");
    a.try_send(&sync.encode(), b"sync").expect("written");
    a.try_send_eager(0, 1, 9, 6, 3, b"abc").expect("written");
    // The first: declined, it stays; then taken.
    assert_eq!(b.take_short_eager(&limits, |_, _, _, _| false), Some(false));
    let mut seen = None;
    assert_eq!(b.take_short_eager(&limits, |ctx, tag, seq, p| {
        seen = Some((ctx, tag, seq, p.to_vec()));
        true
    }), Some(true));
    assert_eq!(seen, Some((9, 5, 1, b"12345678".to_vec())));
    // A full header (a synchronous send's frame) is not a short one: left for take_next.
    assert_eq!(b.take_short_eager(&limits, |_, _, _, _| true), None);
    let mut full = None;
    assert!(b.take_next(0, &limits, &mut |h, p| {
        full = Some((*h, p.to_vec()));
        true
    }));
    assert_eq!(full, Some((sync, b"sync".to_vec())));
    assert_eq!(b.take_short_eager(&limits, |ctx, tag, seq, p| (ctx, tag, seq, p) == (9, 6, 3, &b"abc"[..])), Some(true));
    assert_eq!(b.take_short_eager(&limits, |_, _, _, _| true), None, "the ring is empty");
    // Over the payload limit: not shown, the usual way refuses it.
    a.try_send_eager(0, 1, 9, 0, 4, &[7u8; 100]).expect("written");
    let tight = Limits { world_size: 2, max_payload: 64 };
    assert_eq!(b.take_short_eager(&tight, |_, _, _, _| true), None);
    assert!(b.recv(0, &mut Frames::default(), &tight).is_err(), "a protocol error");
}

#[test]
fn a_frame_in_pieces_is_never_taken_short() {
    let (mut a, mut b) = pair();
    let limits = Limits::new(2);
    let big = vec![3u8; 12 << 10];
    let h = eager(1, 1, big.len());
    a.enqueue(OutFrame::new(&h, Payload::Borrowed { ptr: big.as_ptr(), len: big.len() }, None));
    a.flush(&mut Vec::new()).expect("flush");
    assert_eq!(b.take_short_eager(&limits, |_, _, _, _| true), None);
    let mut got = Frames::default();
    while got.0.is_empty() {
        b.recv(0, &mut got, &limits).expect("valid frames");
        a.flush(&mut Vec::new()).expect("flush");
    }
    assert_eq!(got.0[0].1, big);
}
