//! Transports move frames between two ranks and report readiness; they know nothing of MPI.
//!
//! Every way of reaching a peer is a [`Route`]: a shared-memory ring pair (`shm::route`), a
//! TCP connection (`tcp::conn`), an in-memory pair for tests (`mem`). They share one explicit
//! non-blocking contract, so the engine above never asks which kind it holds:
//! - sending: a frame is [`SendOutcome::Sent`] (all its bytes are out), [`SendOutcome::Queued`]
//!   (the route keeps it and reports its completion when written) or
//!   [`SendOutcome::WouldBlock`] (nothing taken; only from [`Route::try_send`]);
//! - receiving: [`Route::recv`] hands whole frames to a [`Deliver`] (which says where each
//!   payload goes as soon as the header is known) and says [`RecvOutcome::Progress`],
//!   [`RecvOutcome::WouldBlock`] or [`RecvOutcome::Closed`];
//! - readiness: a route with a file descriptor registers it with the engine's one poller
//!   ([`Route::source`]); one without (a ring) is looked at on every pass
//!   ([`Route::input_pending`]) and rings its peer's doorbell instead.
//!
//! TCP connection set-up (listening, the authentication handshake, simultaneous connects)
//! lives in `tcp::connector` and yields established routes.

pub mod business_card;
pub mod frame;
pub mod mem;
pub mod paths;
pub mod relay;
pub mod renumber;
pub mod shm;
pub mod tcp;

#[cfg(test)]
mod conformance;

pub use frame::{OutFrame, Payload, Sink};
pub use tcp::handshake;

use ferry_wire::{Header, Limits, HEADER_LEN};

/// What a route did with a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendOutcome {
    /// Every byte is written; a frame that completes a request completes it now.
    Sent,
    /// The route holds the frame (or a copy of what was left of it) and writes it later; a
    /// frame that completes a request is reported by [`Route::flush`] once written.
    Queued,
    /// Nothing was taken: the route is full or already has frames waiting.
    WouldBlock,
}

/// What reading a route produced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecvOutcome {
    /// Bytes arrived (one or more frames, or part of one).
    Progress,
    /// Nothing to read now.
    WouldBlock,
    /// The peer closed the route; no more frames will come.
    Closed,
}

/// Why a route failed.
#[derive(Debug)]
pub enum RouteError {
    /// The operating system refused (a reset connection, a failed write).
    Io(std::io::Error),
    /// The peer sent bytes that are not valid frames, or frames the receiver refused.
    Protocol(String),
}

impl std::fmt::Display for RouteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RouteError::Io(e) => write!(f, "{e}"),
            RouteError::Protocol(s) => f.write_str(s),
        }
    }
}

impl From<std::io::Error> for RouteError {
    fn from(e: std::io::Error) -> Self {
        RouteError::Io(e)
    }
}

/// The receiving side of a route: told each frame's header as soon as it is decoded (to say
/// where the payload goes), then the whole frame.
pub trait Deliver {
    /// A frame from `peer` begins. `whole`: its payload is already at hand and lands at once
    /// (no transfer in progress to account for). An error refuses the frame and fails the
    /// route.
    fn header(&mut self, peer: u32, h: &Header, whole: bool) -> Result<Sink, String>;
    /// The payload of the frame last announced is complete.
    fn frame(&mut self, peer: u32, h: Header, sink: Sink) -> Result<(), String>;
    /// A whole frame whose payload is at hand (`payload.len() == h.len`, checked by the
    /// route): [`header`](Deliver::header), the payload, then [`frame`](Deliver::frame),
    /// unless the receiver has a shorter way.
    fn whole(&mut self, peer: u32, h: Header, payload: &[u8]) -> Result<(), String> {
        let mut sink = self.header(peer, &h, true)?;
        sink.put(payload);
        self.frame(peer, h, sink)
    }
}

/// The full header of the eager frame of a standard send (no flags), for routes that carry
/// no shorter form of it.
pub(crate) fn eager_header(from: u32, to: u32, context: u32, tag: i32, seq: u64, len: usize) -> Header {
    let mut h = Header::new(ferry_wire::Kind::Eager);
    (h.src, h.dst, h.context, h.tag, h.seq, h.len) = (from, to, context, tag, seq, len as u64);
    h
}

/// One way of reaching one peer.
pub trait Route {
    /// Write a frame at once, or take a copy of what cannot be written now (`Queued`), or
    /// refuse (`WouldBlock`, also whenever frames are already queued, so order is kept). The
    /// caller's payload is free when this returns.
    fn try_send(&mut self, header: &[u8; HEADER_LEN], payload: &[u8]) -> Result<SendOutcome, RouteError>;
    /// [`try_send`](Route::try_send) for the eager frame of a standard send (`Eager`, no
    /// flags), whose header the route may carry in a shorter form of its own.
    #[allow(clippy::too_many_arguments)]
    fn try_send_eager(&mut self, from: u32, to: u32, context: u32, tag: i32, seq: u64, payload: &[u8]) -> Result<SendOutcome, RouteError> {
        self.try_send(&eager_header(from, to, context, tag, seq, payload.len()).encode(), payload)
    }
    /// Hand a frame over: `Sent` (then its completion is the caller's) or `Queued`. By
    /// default: written at once when [`try_send`](Route::try_send) takes it whole, else queued
    /// behind what waits and flushed.
    fn send(&mut self, f: OutFrame, done: &mut Vec<u64>) -> Result<SendOutcome, RouteError> {
        if self.try_send(&f.header, f.payload.bytes())? == SendOutcome::Sent {
            return Ok(SendOutcome::Sent);
        }
        self.enqueue(f);
        self.flush(done)?;
        Ok(SendOutcome::Queued)
    }
    /// Put a frame behind the frames waiting to be written.
    fn enqueue(&mut self, f: OutFrame);
    /// Write queued frames as far as possible; the requests of frames now fully written go
    /// to `done`. Returns whether any bytes moved.
    fn flush(&mut self, done: &mut Vec<u64>) -> Result<bool, RouteError>;
    /// Frames waiting to be written.
    fn queued(&self) -> usize;
    /// Read what arrived from `peer`, a bounded amount per call for fairness between routes.
    fn recv(&mut self, peer: u32, to: &mut dyn Deliver, limits: &Limits) -> Result<RecvOutcome, RouteError>;
    /// Show the next frame from the peer (`peer`) where it lies, when it is whole, here now and its
    /// header valid: `take` reads its header and payload and says whether it took the frame,
    /// which is then gone from the route. Anything else (nothing here, a frame still
    /// arriving, a malformed one) is left to [`recv`](Route::recv). Routes that cannot show
    /// a frame in place never do (the default).
    fn take_next(&mut self, _peer: u32, _limits: &Limits, _take: &mut dyn FnMut(&Header, &[u8]) -> bool) -> bool {
        false
    }
    /// Whether input may be waiting without a poller event (always asked for routes without
    /// a [`source`](Route::source)).
    fn input_pending(&self) -> bool;
    /// Whether queued frames could now make progress (room freed by the peer).
    fn output_ready(&self) -> bool;
    /// The file descriptor to register with the engine's poller, if the route has one.
    fn source(&mut self) -> Option<&mut dyn mio::event::Source>;
    /// The poller reported the route's descriptor readable.
    fn mark_readable(&mut self) {}
    /// The poller reported that the peer closed its side: read on to the end, even after a
    /// short read (no further readiness event will come for it).
    fn mark_read_closed(&mut self) {}
    /// Whether the peer sees this route close (a connection): an orderly end then says
    /// goodbye first, so that the close is not taken for a crash.
    fn closes_visibly(&self) -> bool;
}
