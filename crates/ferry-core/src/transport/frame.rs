//! Frames as routes see them: an encoded header with a payload to write, and the sink an
//! inbound payload is delivered into. Every route (ring pair, TCP connection, in-memory pair)
//! speaks in these, so the engine never asks which kind of route it holds.

use ferry_wire::{Header, HEADER_LEN};

/// A frame waiting to be written.
pub struct OutFrame {
    pub header: [u8; HEADER_LEN],
    pub payload: Payload,
    /// Bytes of header and payload already written (a stream route writes in pieces).
    pub(crate) sent: usize,
    /// The request this frame completes once fully written.
    pub completes: Option<u64>,
}

pub enum Payload {
    None,
    Owned(Vec<u8>),
    /// Caller memory that stays valid until `completes` is reported (eager sends while they
    /// are queued, rendezvous data).
    Borrowed { ptr: *const u8, len: usize },
}

impl Payload {
    pub fn bytes(&self) -> &[u8] {
        match self {
            Payload::None => &[],
            Payload::Owned(v) => v,
            // A zero-length payload may come with any pointer, NULL included.
            Payload::Borrowed { len: 0, .. } => &[],
            // SAFETY: the sender keeps this buffer valid until the frame is reported written.
            Payload::Borrowed { ptr, len } => unsafe { std::slice::from_raw_parts(*ptr, *len) },
        }
    }
}

impl OutFrame {
    pub fn new(header: &Header, payload: Payload, completes: Option<u64>) -> OutFrame {
        OutFrame { header: header.encode(), payload, sent: 0, completes }
    }

    /// A frame whose bytes are copied now: the caller's buffer is free once this returns.
    pub fn copied(header: &[u8; HEADER_LEN], payload: &[u8]) -> OutFrame {
        OutFrame { header: *header, payload: if payload.is_empty() { Payload::None } else { Payload::Owned(payload.to_vec()) }, sent: 0, completes: None }
    }

    pub(crate) fn total(&self) -> usize {
        HEADER_LEN + self.payload.bytes().len()
    }
}

/// Where an inbound payload goes.
pub enum Sink {
    /// Caller memory: the first `cap` bytes land at `ptr + off`, the rest is counted and
    /// dropped (a truncated receive).
    Mem { ptr: *mut u8, cap: usize, off: usize },
    /// An owned buffer (unexpected messages, control payloads).
    Vec(Vec<u8>),
    /// Read and drop.
    Discard,
}

impl Sink {
    pub fn put(&mut self, data: &[u8]) {
        match self {
            Sink::Mem { ptr, cap, off } => {
                let n = data.len().min(cap.saturating_sub(*off));
                if n > 0 {
                    // SAFETY: the engine made this sink from a buffer of `cap` bytes that stays
                    // valid until the request completes (MPI's rule for receive buffers).
                    unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), ptr.add(*off), n) };
                }
                *off += data.len();
            }
            Sink::Vec(v) => v.extend_from_slice(data),
            Sink::Discard => {}
        }
    }

    /// Room to read into directly, when the sink is caller memory not yet full.
    pub(crate) fn direct(&mut self, want: usize) -> Option<&mut [u8]> {
        match self {
            Sink::Mem { ptr, cap, off } if *off < *cap => {
                let n = want.min(*cap - *off);
                // SAFETY: as in `put`; the slice lies within the caller's buffer.
                Some(unsafe { std::slice::from_raw_parts_mut(ptr.add(*off), n) })
            }
            _ => None,
        }
    }

    pub(crate) fn advance(&mut self, n: usize) {
        if let Sink::Mem { off, .. } = self {
            *off += n;
        }
    }

    /// The owned bytes, for a sink that collected them.
    pub fn into_vec(self) -> Vec<u8> {
        match self {
            Sink::Vec(v) => v,
            _ => Vec::new(),
        }
    }
}
