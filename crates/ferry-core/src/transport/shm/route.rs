//! A ring pair to a peer of this host as a route: small frames go into the ring as one
//! record (sequence, envelope and a small payload in one cache line), larger ones in pieces
//! that the receiver copies out as they come, straight into the receive buffer when it is
//! known, so the copies of sender and receiver overlap.

use std::collections::VecDeque;

use ferry_wire::{Header, Kind, Limits, HEADER_LEN};

use super::{Link, PartialWrite};
use crate::transport::{eager_header, Deliver, OutFrame, RecvOutcome, Route, RouteError, SendOutcome, Sink};

/// Ring records read per [`Route::recv`] call before other routes get their turn.
const RECORDS_PER_RECV: usize = 64;

/// The short header of a whole eager frame of a standard send: context, tag and sequence
/// number (little-endian u32, i32, u64). The ring says the rest: the sender is its producer,
/// the receiver its consumer, the payload's length the record's.
const EAGER_HEADER_LEN: usize = 16;

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
    /// Our world rank: the receiver of every frame that comes out of this route's ring.
    me: u32,
}

impl ShmRoute {
    /// The route of the rings in `link`, on the rank `me`.
    pub fn new(link: Link, me: u32) -> ShmRoute {
        let whole_max = link.tx.capacity() / 4 - HEADER_LEN;
        ShmRoute { link, out: VecDeque::new(), cursor: PartialWrite::new(), whole_max, incoming: None, me }
    }
}

/// The short header of a standard send's eager frame.
#[inline(always)]
fn short_header(context: u32, tag: i32, seq: u64) -> [u8; EAGER_HEADER_LEN] {
    let mut short = [0u8; EAGER_HEADER_LEN];
    short[0..4].copy_from_slice(&context.to_le_bytes());
    short[4..8].copy_from_slice(&tag.to_le_bytes());
    short[8..16].copy_from_slice(&seq.to_le_bytes());
    short
}

/// The header of a record that holds a whole frame from `peer` to `me`, checked: a full one,
/// or the short one of an eager frame.
#[inline(always)]
fn whole_header(me: u32, peer: u32, raw: &[u8], carried: u64, limits: &Limits) -> Result<Header, String> {
    if raw.len() != EAGER_HEADER_LEN {
        return first_header(raw, carried, true, limits);
    }
    if carried > limits.max_payload {
        return Err(format!("eager frame of {carried} bytes exceeds the {} allowed", limits.max_payload));
    }
    let word = |o: usize| u32::from_le_bytes(raw[o..o + 4].try_into().expect("4 bytes"));
    let seq = u64::from_le_bytes(raw[8..16].try_into().expect("8 bytes"));
    Ok(Header { kind: Kind::Eager, flags: 0, src: peer, dst: me, context: word(0), tag: word(4) as i32, seq, len: carried })
}

impl Route for ShmRoute {
    fn try_send(&mut self, header: &[u8; HEADER_LEN], payload: &[u8]) -> Result<SendOutcome, RouteError> {
        if !self.out.is_empty() || payload.len() > self.whole_max || !self.link.tx.try_write(header, payload) {
            return Ok(SendOutcome::WouldBlock);
        }
        Ok(SendOutcome::Sent)
    }

    #[inline]
    fn try_send_eager(&mut self, from: u32, to: u32, context: u32, tag: i32, seq: u64, payload: &[u8]) -> Result<SendOutcome, RouteError> {
        self.send_eager(from, to, context, tag, seq, payload)
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
                match Header::plain_eager(&f.header) {
                    Some((from, context, tag, seq)) if from == self.me => self.link.tx.try_write(&short_header(context, tag, seq), payload),
                    _ => self.link.tx.try_write(&f.header, payload),
                }
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
        self.recv_into(peer, to, limits)
    }

    fn take_next(&mut self, peer: u32, limits: &Limits, take: &mut dyn FnMut(&Header, &[u8]) -> bool) -> bool {
        self.take_next_with(peer, limits, take)
    }

    /// Records to read, or the room of records read in place to hand back (which a pass
    /// of the engine's progress then does: see [`take_short_eager`](ShmRoute::take_short_eager)).
    fn input_pending(&self) -> bool {
        self.link.rx.has_data() || self.link.rx.holds_room()
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

    /// [`Route::try_send_eager`], called directly (not through the trait) by the engine.
    #[inline]
    pub fn send_eager(&mut self, from: u32, to: u32, context: u32, tag: i32, seq: u64, payload: &[u8]) -> Result<SendOutcome, RouteError> {
        if from != self.me {
            return self.try_send(&eager_header(from, to, context, tag, seq, payload.len()).encode(), payload);
        }
        if !self.out.is_empty() || payload.len() > self.whole_max || !self.link.tx.try_write(&short_header(context, tag, seq), payload) {
            return Ok(SendOutcome::WouldBlock);
        }
        Ok(SendOutcome::Sent)
    }

    /// [`Route::recv`] for any receiver type, called directly by the engine.
    #[inline]
    pub fn recv_into<D: Deliver + ?Sized>(&mut self, peer: u32, to: &mut D, limits: &Limits) -> Result<RecvOutcome, RouteError> {
        // The space of the records read goes back to the sender once per batch.
        let r = self.recv_batch(peer, to, limits);
        self.link.rx.release();
        r
    }

    /// [`Route::take_next`] for any taker, called directly by the engine.
    #[inline]
    pub fn take_next_with(&mut self, peer: u32, limits: &Limits, take: impl FnOnce(&Header, &[u8]) -> bool) -> bool {
        if self.incoming.is_some() {
            return false;
        }
        let Ok(Some(piece)) = self.link.rx.peek() else { return false };
        if !(piece.first && piece.last) {
            return false;
        }
        let len = piece.payload.len();
        let Ok(h) = whole_header(self.me, peer, piece.header, len as u64, limits) else { return false };
        if !take(&h, piece.payload) {
            return false;
        }
        self.take_record(len);
        self.link.rx.release_some();
        true
    }

    /// [`take_next_with`](Self::take_next_with) for the commonest record, a standard
    /// send's small eager frame with its short header: `take` gets its context, tag,
    /// sequence number and payload, and says whether it took them. `None` when the next
    /// record is not such a frame (or a frame is arriving in pieces): ask `take_next_with`.
    #[inline(always)]
    pub fn take_short_eager(&mut self, limits: &Limits, take: impl FnOnce(u32, i32, u64, &[u8]) -> bool) -> Option<bool> {
        if self.incoming.is_some() {
            return None;
        }
        let (raw, payload) = self.link.rx.peek_whole()?;
        if raw.len() != EAGER_HEADER_LEN || payload.len() as u64 > limits.max_payload {
            return None;
        }
        let word = |o: usize| u32::from_le_bytes(raw[o..o + 4].try_into().expect("4 bytes"));
        let seq = u64::from_le_bytes(raw[8..16].try_into().expect("8 bytes"));
        let len = payload.len();
        if !take(word(0), word(4) as i32, seq, payload) {
            return Some(false);
        }
        self.take_record(len);
        // The room goes back to the sender once an eighth of the ring is read this way, or
        // at the next read of this route by the engine's progress (`input_pending` says
        // there is something to do until then): one release for many records.
        self.link.rx.release_some();
        Some(true)
    }

    /// Whether a record waits in the ring (not counting room to hand back).
    #[inline]
    pub fn has_record(&self) -> bool {
        self.link.rx.has_data()
    }

    fn recv_batch<D: Deliver + ?Sized>(&mut self, peer: u32, to: &mut D, limits: &Limits) -> Result<RecvOutcome, RouteError> {
        let mut any = false;
        let me = self.me;
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
                let h = whole_header(me, peer, piece.header, len, limits).map_err(RouteError::Protocol)?;
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

#[cfg(test)]
#[path = "route_tests.rs"]
mod tests;
