//! A ring pair to a peer of this host as a route: small frames go into the ring as one
//! record (sequence, envelope and a small payload in one cache line), larger ones in pieces
//! that the receiver copies out as they come, straight into the receive buffer when it is
//! known, so the copies of sender and receiver overlap.

use std::collections::VecDeque;

use ferry_wire::{Header, Limits, HEADER_LEN};

use super::{Link, PartialWrite};
use crate::transport::{Deliver, OutFrame, RecvOutcome, Route, RouteError, SendOutcome, Sink};

/// Ring records read per [`Route::recv`] call before other routes get their turn.
const RECORDS_PER_RECV: usize = 64;

/// A frame whose pieces are arriving.
struct Incoming {
    header: Header,
    sink: Sink,
    got: u64,
}

/// The ring ends to one local peer, with the frames waiting for room in its ring.
pub struct ShmRoute {
    link: Link,
    out: VecDeque<OutFrame>,
    /// Progress of `out.front()` when it is written in pieces.
    cursor: PartialWrite,
    /// Frames up to this payload size go into the ring whole, larger ones in pieces.
    whole_max: usize,
    incoming: Option<Incoming>,
}

impl ShmRoute {
    pub fn new(link: Link) -> ShmRoute {
        let whole_max = link.tx.capacity() / 4 - HEADER_LEN;
        ShmRoute { link, out: VecDeque::new(), cursor: PartialWrite::new(), whole_max, incoming: None }
    }

}

impl Route for ShmRoute {
    fn try_send(&mut self, header: &[u8; HEADER_LEN], payload: &[u8]) -> Result<SendOutcome, RouteError> {
        if !self.out.is_empty() || payload.len() > self.whole_max || !self.link.tx.try_write(header, payload) {
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
            let payload = f.payload.bytes();
            let before = self.cursor.sent();
            let written = if payload.len() <= self.whole_max {
                self.link.tx.try_write(&f.header, payload)
            } else {
                self.link.tx.write_partial(&f.header, payload, &mut self.cursor)
            };
            if !written {
                return Ok(moved || self.cursor.sent() != before);
            }
            moved = true;
            self.cursor = PartialWrite::new();
            done.extend(self.out.pop_front().and_then(|f| f.completes));
        }
        Ok(moved)
    }

    fn queued(&self) -> usize {
        self.out.len()
    }

    fn recv(&mut self, peer: u32, to: &mut dyn Deliver, limits: &Limits) -> Result<RecvOutcome, RouteError> {
        // The space of the records read goes back to the sender once per batch.
        let r = self.recv_batch(peer, to, limits);
        self.link.rx.release();
        r
    }

    fn take_next(&mut self, limits: &Limits, take: &mut dyn FnMut(&Header, &[u8]) -> bool) -> bool {
        if self.incoming.is_some() {
            return false;
        }
        let Ok(Some(piece)) = self.link.rx.peek() else { return false };
        if !(piece.first && piece.last) {
            return false;
        }
        let len = piece.payload.len();
        let Ok(h) = first_header(piece.header, len as u64, true, limits) else { return false };
        if !take(&h, piece.payload) {
            return false;
        }
        self.take_record(len);
        self.link.rx.release();
        true
    }

    fn input_pending(&self) -> bool {
        self.link.rx.has_data()
    }

    fn output_ready(&self) -> bool {
        !self.out.is_empty() && self.link.tx.space_freed()
    }

    fn closes_visibly(&self) -> bool {
        false
    }

    fn source(&mut self) -> Option<&mut dyn mio::event::Source> {
        None
    }
}

/// The header of a frame's first record, checked before anything is delivered: `carried`
/// payload bytes came with it, all of them when the record is the whole frame (pieces that
/// follow are checked as they come).
#[inline(always)]
fn first_header(raw: &[u8], carried: u64, whole: bool, limits: &Limits) -> Result<Header, String> {
    let h = Header::decode(raw, limits).map_err(|e| e.to_string())?;
    if raw.len() != HEADER_LEN {
        return Err("a record header of the wrong size".to_string());
    }
    if (whole && carried != h.len) || carried > h.len {
        return Err(format!("frame announced {} bytes and carried {carried}", h.len));
    }
    Ok(h)
}

/// Records with payloads at least this large give their room back at once; smaller ones once
/// per batch (one store and one fence for many).
const RELEASE_AT_ONCE: usize = 4096;

impl ShmRoute {
    /// Step over the record just read, handing its room back now if it was large.
    fn take_record(&mut self, payload: usize) {
        if payload >= RELEASE_AT_ONCE {
            self.link.rx.consume();
        } else {
            self.link.rx.step();
        }
    }

    fn recv_batch(&mut self, peer: u32, to: &mut dyn Deliver, limits: &Limits) -> Result<RecvOutcome, RouteError> {
        let mut any = false;
        for _ in 0..RECORDS_PER_RECV {
            let piece = match self.link.rx.peek() {
                Ok(Some(p)) => p,
                Ok(None) => break,
                Err(e) => return Err(RouteError::Protocol(e.to_string())),
            };
            any = true;
            let (first, last, len) = (piece.first, piece.last, piece.payload.len() as u64);
            if first && last && self.incoming.is_none() {
                // The common case, a whole frame in one record: straight to the receiver.
                let h = first_header(piece.header, len, true, limits).map_err(RouteError::Protocol)?;
                let r = to.whole(peer, h, piece.payload);
                self.take_record(len as usize);
                r.map_err(RouteError::Protocol)?;
                continue;
            }
            let step = if first {
                if self.incoming.is_some() {
                    Err("a frame began inside another".to_string())
                } else {
                    // The first piece of a frame streamed in several (whole ones went above).
                    first_header(piece.header, len, false, limits).and_then(|h| {
                        to.header(peer, &h, false).map(|mut sink| {
                            sink.put(piece.payload);
                            self.incoming = Some(Incoming { header: h, sink, got: len });
                        })
                    })
                }
            } else {
                match self.incoming.as_mut() {
                    Some(inc) if inc.got + len > inc.header.len => Err(format!("frame announced {} bytes and carried more", inc.header.len)),
                    Some(inc) => {
                        inc.sink.put(piece.payload);
                        inc.got += len;
                        Ok(())
                    }
                    None => Err("a frame continued that never began".to_string()),
                }
            };
            // A piece of a streamed frame: its room goes back at once, so the sender
            // writes the next piece while we copy this one.
            self.link.rx.consume();
            step.map_err(RouteError::Protocol)?;
            if last {
                let inc = self.incoming.take().expect("set by its first piece");
                if inc.got != inc.header.len {
                    return Err(RouteError::Protocol(format!("frame announced {} bytes and carried {}", inc.header.len, inc.got)));
                }
                to.frame(peer, inc.header, inc.sink).map_err(RouteError::Protocol)?;
            }
        }
        Ok(if any { RecvOutcome::Progress } else { RecvOutcome::WouldBlock })
    }
}
