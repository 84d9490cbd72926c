//! An in-memory route pair, for tests: frames travel through a bounded queue in each
//! direction, so the same code paths as on a real route (would-block, queued frames written
//! later, close) can be driven deterministically in one thread.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use ferry_wire::{Header, Limits, HEADER_LEN};

use crate::transport::{Deliver, OutFrame, RecvOutcome, Route, RouteError, SendOutcome};

struct Chan {
    frames: VecDeque<([u8; HEADER_LEN], Vec<u8>)>,
    /// Payload bytes the queue holds at most (a frame larger than this goes alone).
    capacity: usize,
    held: usize,
    closed: bool,
}

impl Chan {
    fn room_for(&self, n: usize) -> bool {
        !self.closed && (self.frames.is_empty() || self.held + n <= self.capacity)
    }
}

/// One end of an in-memory route pair.
pub struct MemRoute {
    tx: Arc<Mutex<Chan>>,
    rx: Arc<Mutex<Chan>>,
    out: VecDeque<OutFrame>,
}

/// Two connected ends; each direction holds up to `capacity` payload bytes in flight.
pub fn mem_pair(capacity: usize) -> (MemRoute, MemRoute) {
    let chan = || Arc::new(Mutex::new(Chan { frames: VecDeque::new(), capacity, held: 0, closed: false }));
    let (ab, ba) = (chan(), chan());
    (MemRoute { tx: ab.clone(), rx: ba.clone(), out: VecDeque::new() }, MemRoute { tx: ba, rx: ab, out: VecDeque::new() })
}

fn lock(c: &Mutex<Chan>) -> std::sync::MutexGuard<'_, Chan> {
    c.lock().unwrap_or_else(|p| p.into_inner())
}

impl MemRoute {
    fn push(&self, header: &[u8; HEADER_LEN], payload: &[u8]) -> bool {
        let mut c = lock(&self.tx);
        if !c.room_for(payload.len()) {
            return false;
        }
        c.held += payload.len();
        c.frames.push_back((*header, payload.to_vec()));
        true
    }
}

impl Drop for MemRoute {
    fn drop(&mut self) {
        lock(&self.tx).closed = true;
        lock(&self.rx).closed = true;
    }
}

impl Route for MemRoute {
    fn try_send(&mut self, header: &[u8; HEADER_LEN], payload: &[u8]) -> Result<SendOutcome, RouteError> {
        if !self.out.is_empty() || !self.push(header, payload) {
            return Ok(SendOutcome::WouldBlock);
        }
        Ok(SendOutcome::Sent)
    }

    fn enqueue(&mut self, f: OutFrame) {
        self.out.push_back(f);
    }

    fn flush(&mut self, done: &mut Vec<u64>) -> Result<bool, RouteError> {
        let mut moved = false;
        while let Some(f) = self.out.front() {
            if !self.push(&f.header, f.payload.bytes()) {
                break;
            }
            moved = true;
            done.extend(self.out.pop_front().and_then(|f| f.completes));
        }
        Ok(moved)
    }

    fn queued(&self) -> usize {
        self.out.len()
    }

    fn recv(&mut self, peer: u32, to: &mut dyn Deliver, limits: &Limits) -> Result<RecvOutcome, RouteError> {
        let mut any = false;
        for _ in 0..64 {
            let next = {
                let mut c = lock(&self.rx);
                let f = c.frames.pop_front();
                if let Some((_, p)) = &f {
                    c.held -= p.len();
                }
                (f, c.closed)
            };
            let (header, payload) = match next {
                (Some(f), _) => f,
                (None, true) if !any => return Ok(RecvOutcome::Closed),
                (None, _) => break,
            };
            any = true;
            let h = Header::decode(&header, limits).map_err(|e| RouteError::Protocol(format!("malformed frame: {e}")))?;
            if h.len != payload.len() as u64 {
                return Err(RouteError::Protocol(format!("frame announced {} bytes and carried {}", h.len, payload.len())));
            }
            let mut sink = to.header(peer, &h, true).map_err(RouteError::Protocol)?;
            sink.put(&payload);
            to.frame(peer, h, sink).map_err(RouteError::Protocol)?;
        }
        Ok(if any { RecvOutcome::Progress } else { RecvOutcome::WouldBlock })
    }

    fn input_pending(&self) -> bool {
        let c = lock(&self.rx);
        !c.frames.is_empty() || c.closed
    }

    fn output_ready(&self) -> bool {
        !self.out.is_empty() && self.out.front().is_some_and(|f| lock(&self.tx).room_for(f.payload.bytes().len()))
    }

    fn closes_visibly(&self) -> bool {
        true
    }

    fn source(&mut self) -> Option<&mut dyn mio::event::Source> {
        None
    }
}
