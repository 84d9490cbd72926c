//! An engine's service runs inside every wait: a rank blocked in a wait for something else
//! still answers the messages its service consumes (as an MPI window's target does).

mod common;

use std::time::{Duration, Instant};

use ferry_core::engine::{Engine, Pattern, Service};

/// Answers every message on context 9 with its bytes reversed, on context 10, same tag.
struct Echo {
    sent: Vec<(u64, Vec<u8>)>,
    served: usize,
}

impl Service for Echo {
    fn poll(&mut self, e: &mut Engine) -> bool {
        let mut moved = false;
        while let Some((st, mut data)) = e.take_whole(&Pattern { ctx: 9, src: None, tag: None }) {
            data.reverse();
            // SAFETY: `data` is kept in `sent` until the engine is done with it.
            if let Some(rid) = unsafe { e.isend(st.source, 10, st.tag, data.as_ptr(), data.len(), false) } {
                self.sent.push((rid, data));
            }
            self.served += 1;
            moved = true;
        }
        self.sent.retain(|(rid, _)| !e.is_done(*rid));
        moved
    }
}

#[test]
fn a_service_answers_while_its_engine_waits_for_something_else() {
    let mut es = common::engines(2, 4096, b"k");
    let mut e1 = es.pop().expect("two engines");
    let mut e0 = es.pop().expect("two engines");
    e1.set_service(Box::new(Echo { sent: Vec::new(), served: 0 }));
    let server = std::thread::spawn(move || {
        // Waits for nothing that will happen: only the service does any work here.
        e1.wait_until_deadline(Some(Instant::now() + Duration::from_secs(2)), |_| false).expect("no failure");
        e1
    });
    for tag in 0..3 {
        let msg = vec![1u8, 2, 3, tag as u8];
        let mut back = vec![0u8; 4];
        // SAFETY: both buffers outlive the wait below.
        let r = unsafe { e0.irecv(Pattern { ctx: 10, src: Some(1), tag: Some(tag) }, back.as_mut_ptr(), back.len()) };
        let s = unsafe { e0.isend(1, 9, tag, msg.as_ptr(), msg.len(), false) };
        e0.wait_until(|e| e.is_done(r) && s.is_none_or(|s| e.is_done(s))).expect("no failure");
        assert_eq!(back, vec![tag as u8, 3, 2, 1]);
    }
    let mut e1 = server.join().expect("the server thread");
    // The service stays installed after its passes.
    let (st, data) = {
        let msg = [5u8];
        // SAFETY: `msg` outlives the wait below.
        let s = unsafe { e0.isend(1, 9, 7, msg.as_ptr(), 1, false) };
        let mut back = [0u8; 1];
        let r = unsafe { e0.irecv(Pattern { ctx: 10, src: Some(1), tag: Some(7) }, back.as_mut_ptr(), 1) };
        while !e0.is_done(r) || s.is_some_and(|s| !e0.is_done(s)) {
            e0.progress(Some(Duration::ZERO)).unwrap();
            e1.progress(Some(Duration::ZERO)).unwrap();
        }
        (e0.take(r).expect("done").expect("ok"), back)
    };
    assert_eq!((st.bytes, data), (1, [5u8]));
}
