//! Waits with a deadline, and a peer that vanished under a writer. This file is its own test
//! binary because it sets SIGPIPE back to its default action (killing the process), as it is
//! in a C program that loads the library: a write to a vanished peer must not raise it.

mod common;

use std::time::{Duration, Instant};

use ferry_core::engine::EngineError;

#[test]
fn a_wait_with_a_deadline_ends_at_the_deadline() {
    let mut es = common::engines(2, 4096, b"k");
    for (nap, at_most) in [(Duration::ZERO, Duration::from_millis(200)), (Duration::from_millis(120), Duration::from_millis(600))] {
        let start = Instant::now();
        es[0].wait_until_deadline(Some(start + nap), |_| false).expect("no failure");
        let took = start.elapsed();
        assert!(took >= nap && took < at_most, "a wait until +{nap:?} took {took:?}");
    }
}

#[test]
fn writing_to_a_vanished_peer_raises_no_sigpipe() {
    // SAFETY: restoring a signal's default action has no memory effects.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    let mut es = common::engines(2, 4096, b"k");
    let msg = vec![7u8; 1000];
    let mut buf = vec![0u8; 1000];
    let (a, b) = es.split_at_mut(1);
    let (e0, e1) = (&mut a[0], &mut b[0]);
    // SAFETY: the buffers outlive the requests, which complete within this block.
    let r = unsafe { e1.irecv(ferry_core::engine::Pattern { ctx: 0, src: Some(0), tag: Some(1) }, buf.as_mut_ptr(), buf.len()) };
    let s = unsafe { e0.isend(1, 0, 1, msg.as_ptr(), msg.len(), false) };
    while !e1.is_done(r) || s.is_some_and(|s| !e0.is_done(s)) {
        e0.progress(Some(Duration::ZERO)).unwrap();
        e1.progress(Some(Duration::ZERO)).unwrap();
    }
    drop(es.pop()); // rank 1 goes away without a goodbye: its socket closes
    std::thread::sleep(Duration::from_millis(50));
    // Write before reading the close: the first write draws a reset, the next ones EPIPE.
    let mut err = None;
    for _ in 0..20 {
        // SAFETY: `msg` outlives every request of this loop (the engine is dropped first).
        let s = unsafe { es[0].isend(1, 0, 2, msg.as_ptr(), msg.len(), false) };
        if let Some(s) = s {
            if let Err(e) = es[0].wait_until(|e| e.is_done(s)) {
                err = Some(e);
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let e = err.expect("the lost peer is reported");
    assert!(matches!(e, EngineError::Transport(_) | EngineError::PeerLost(1)), "{e}");
    assert!(e.to_string().contains("rank 1"), "the error names the rank: {e}");
}
