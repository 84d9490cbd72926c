//! One TCP connection to a peer as a route: inbound bytes become frames whose payloads land
//! straight in the sink the receiver chose (large remainders are read into it directly,
//! without passing through the connection's buffer); outbound frames are written in order
//! with `writev` and report which requests they complete.

use std::collections::VecDeque;
use std::os::fd::AsRawFd;
use std::io::{self, IoSlice, Read};

use ferry_wire::{Header, Limits, HEADER_LEN};

use crate::transport::{Deliver, OutFrame, RecvOutcome, Route, RouteError, SendOutcome, Sink};

const RBUF: usize = 64 << 10;
/// Payload remainders at least this large are read straight into caller memory.
const DIRECT_MIN: usize = 8 << 10;
/// Frames delivered per [`Route::recv`] call before other routes get their turn.
const FRAMES_PER_RECV: usize = 64;

enum RxState {
    Header,
    Payload { header: Header, sink: Sink, left: u64 },
}

/// One TCP connection to a peer.
pub struct Conn {
    pub stream: mio::net::TcpStream,
    rbuf: Box<[u8]>,
    rstart: usize,
    rend: usize,
    rx: RxState,
    out: VecDeque<OutFrame>,
    /// The socket may hold unread bytes. Cleared by a short read or `WouldBlock` (for a
    /// stream socket a short read means the kernel buffer is empty, so with edge-triggered
    /// epoll no further read is needed until the next readable event, which sets it again).
    maybe_readable: bool,
    /// The peer closed its side: read until end of stream, whatever a short read suggests
    /// (the frames and the close may come with one edge-triggered event).
    peer_closed: bool,
}

/// What one step of reading produced.
enum Step {
    Frame,
    /// Bytes arrived, no frame completed yet.
    Bytes,
    WouldBlock,
    Eof,
}

impl Conn {
    /// Wrap a connected (or connecting) stream; `sndbuf` bytes of kernel send buffer, or the
    /// kernel's autotuning when 0.
    pub fn new(stream: mio::net::TcpStream, sndbuf: usize) -> Conn {
        let _ = stream.set_nodelay(true);
        if sndbuf > 0 {
            super::set_sndbuf(&stream, sndbuf);
        }
        Conn { stream, rbuf: vec![0u8; RBUF].into_boxed_slice(), rstart: 0, rend: 0, rx: RxState::Header, out: VecDeque::new(), maybe_readable: true, peer_closed: false }
    }

    /// Queue a frame; written by the next flush.
    pub fn push(&mut self, f: OutFrame) {
        self.out.push_back(f);
    }

    fn fill(&mut self) -> io::Result<Option<usize>> {
        if self.rstart == self.rend {
            self.rstart = 0;
            self.rend = 0;
        } else if self.rstart > RBUF / 2 {
            self.rbuf.copy_within(self.rstart..self.rend, 0);
            self.rend -= self.rstart;
            self.rstart = 0;
        }
        if !self.maybe_readable {
            return Ok(None);
        }
        let want = RBUF - self.rend;
        match self.stream.read(&mut self.rbuf[self.rend..]) {
            Ok(0) => Ok(Some(0)),
            Ok(n) => {
                self.rend += n;
                if n < want && !self.peer_closed {
                    self.maybe_readable = false;
                }
                Ok(Some(n))
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                self.maybe_readable = false;
                Ok(None)
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(Some(1)),
            Err(e) => Err(e),
        }
    }

    /// Read until one frame is complete (handed to `to`), or nothing more is there.
    fn step(&mut self, peer: u32, to: &mut dyn Deliver, limits: &Limits) -> Result<Step, RouteError> {
        let mut moved = false;
        loop {
            match &mut self.rx {
                RxState::Header => {
                    if self.rend - self.rstart >= HEADER_LEN {
                        let h = Header::decode(&self.rbuf[self.rstart..self.rend], limits).map_err(|e| RouteError::Protocol(format!("malformed frame: {e}")))?;
                        self.rstart += HEADER_LEN;
                        let sink = to.header(peer, &h, false).map_err(RouteError::Protocol)?;
                        if h.len == 0 {
                            to.frame(peer, h, sink).map_err(RouteError::Protocol)?;
                            return Ok(Step::Frame);
                        }
                        self.rx = RxState::Payload { left: h.len, header: h, sink };
                        moved = true;
                        continue;
                    }
                }
                RxState::Payload { sink, left, .. } => {
                    if *left > 0 && self.rend > self.rstart {
                        let n = (*left).min((self.rend - self.rstart) as u64) as usize;
                        sink.put(&self.rbuf[self.rstart..self.rstart + n]);
                        self.rstart += n;
                        *left -= n as u64;
                    }
                    if *left == 0 {
                        let RxState::Payload { header, sink, .. } = std::mem::replace(&mut self.rx, RxState::Header) else {
                            unreachable!("matched above")
                        };
                        to.frame(peer, header, sink).map_err(RouteError::Protocol)?;
                        return Ok(Step::Frame);
                    }
                    if *left as usize >= DIRECT_MIN {
                        if !self.maybe_readable {
                            return Ok(if moved { Step::Bytes } else { Step::WouldBlock });
                        }
                        if let Some(room) = sink.direct(*left as usize) {
                            let want = room.len();
                            match self.stream.read(room) {
                                Ok(0) => return Ok(Step::Eof),
                                Ok(n) => {
                                    if n < want && !self.peer_closed {
                                        self.maybe_readable = false;
                                    }
                                    sink.advance(n);
                                    *left -= n as u64;
                                    moved = true;
                                    continue;
                                }
                                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                                    self.maybe_readable = false;
                                    return Ok(if moved { Step::Bytes } else { Step::WouldBlock });
                                }
                                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                                Err(e) => return Err(e.into()),
                            }
                        }
                    }
                }
            }
            match self.fill()? {
                None => return Ok(if moved { Step::Bytes } else { Step::WouldBlock }),
                Some(0) => return Ok(Step::Eof),
                Some(_) => moved = true,
            }
        }
    }

    /// Read at most one whole frame (connection set-up reads frame by frame, so that it
    /// stops exactly where the authenticated traffic begins).
    pub fn recv_one(&mut self, peer: u32, to: &mut dyn Deliver, limits: &Limits) -> Result<RecvOutcome, RouteError> {
        match self.step(peer, to, limits)? {
            Step::Frame | Step::Bytes => Ok(RecvOutcome::Progress),
            Step::WouldBlock => Ok(RecvOutcome::WouldBlock),
            Step::Eof => Ok(RecvOutcome::Closed),
        }
    }

    fn write_out(&mut self, done: &mut Vec<u64>) -> io::Result<()> {
        while !self.out.is_empty() {
            let mut slices: Vec<IoSlice<'_>> = Vec::with_capacity(32);
            for f in self.out.iter().take(16) {
                let hdr_left = HEADER_LEN.saturating_sub(f.sent);
                if hdr_left > 0 {
                    slices.push(IoSlice::new(&f.header[f.sent..]));
                    slices.push(IoSlice::new(f.payload.bytes()));
                } else {
                    slices.push(IoSlice::new(&f.payload.bytes()[f.sent - HEADER_LEN..]));
                }
            }
            let n = match send_nosignal(self.stream.as_raw_fd(), &slices) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            drop(slices);
            let mut n = n;
            while n > 0 {
                let f = self.out.front_mut().expect("bytes written belong to queued frames");
                let left = f.total() - f.sent;
                if n >= left {
                    n -= left;
                    let f = self.out.pop_front().expect("front exists");
                    done.extend(f.completes);
                } else {
                    f.sent += n;
                    n = 0;
                }
            }
            // Zero-length frames complete without bytes of their own only when at the front.
            while self.out.front().is_some_and(|f| f.total() == f.sent) {
                let f = self.out.pop_front().expect("front exists");
                done.extend(f.completes);
            }
        }
        Ok(())
    }
}

impl Route for Conn {
    fn try_send(&mut self, header: &[u8; HEADER_LEN], payload: &[u8]) -> Result<SendOutcome, RouteError> {
        if !self.out.is_empty() {
            return Ok(SendOutcome::WouldBlock);
        }
        let total = HEADER_LEN + payload.len();
        let mut sent = 0;
        while sent < total {
            let r = if sent < HEADER_LEN {
                send_nosignal(self.stream.as_raw_fd(), &[IoSlice::new(&header[sent..]), IoSlice::new(payload)])
            } else {
                send_nosignal(self.stream.as_raw_fd(), &[IoSlice::new(&payload[sent - HEADER_LEN..])])
            };
            match r {
                Ok(n) => sent += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) => return Err(e.into()),
            }
        }
        if sent == total {
            return Ok(SendOutcome::Sent);
        }
        let mut f = OutFrame::copied(header, payload);
        f.sent = sent;
        self.out.push_back(f);
        Ok(SendOutcome::Queued)
    }

    fn send(&mut self, f: OutFrame, done: &mut Vec<u64>) -> Result<SendOutcome, RouteError> {
        if !self.out.is_empty() {
            self.out.push_back(f);
            self.write_out(done)?;
            return Ok(SendOutcome::Queued);
        }
        // Alone in the queue: written whole means sent, and its completion is the caller's.
        self.out.push_back(f);
        let mut mine = Vec::new();
        self.write_out(&mut mine)?;
        if self.out.is_empty() {
            return Ok(SendOutcome::Sent);
        }
        Ok(SendOutcome::Queued)
    }

    fn enqueue(&mut self, f: OutFrame) {
        self.push(f);
    }

    fn flush(&mut self, done: &mut Vec<u64>) -> Result<bool, RouteError> {
        let before = (self.out.len(), self.out.front().map_or(0, |f| f.sent));
        self.write_out(done)?;
        Ok(before != (self.out.len(), self.out.front().map_or(0, |f| f.sent)))
    }

    fn queued(&self) -> usize {
        self.out.len()
    }

    fn recv(&mut self, peer: u32, to: &mut dyn Deliver, limits: &Limits) -> Result<RecvOutcome, RouteError> {
        let mut any = false;
        for _ in 0..FRAMES_PER_RECV {
            match self.step(peer, to, limits)? {
                Step::Frame => any = true,
                Step::Bytes => return Ok(RecvOutcome::Progress),
                Step::WouldBlock => break,
                Step::Eof => return Ok(RecvOutcome::Closed),
            }
        }
        Ok(if any { RecvOutcome::Progress } else { RecvOutcome::WouldBlock })
    }

    fn input_pending(&self) -> bool {
        self.maybe_readable || self.rend - self.rstart >= HEADER_LEN
    }

    fn output_ready(&self) -> bool {
        false
    }

    fn closes_visibly(&self) -> bool {
        true
    }

    fn source(&mut self) -> Option<&mut dyn mio::event::Source> {
        Some(&mut self.stream)
    }

    fn mark_readable(&mut self) {
        self.maybe_readable = true;
    }

    fn mark_read_closed(&mut self) {
        self.peer_closed = true;
    }
}

/// `writev` that does not raise SIGPIPE when the peer has gone: a C program that loads the
/// library has not ignored the signal, which would kill it; the error comes back as EPIPE.
fn send_nosignal(fd: std::os::fd::RawFd, slices: &[IoSlice<'_>]) -> io::Result<usize> {
    // SAFETY: an all-zero msghdr is valid (no address, no control data).
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    // IoSlice has the layout of iovec on Unix; sendmsg only reads through the pointer.
    msg.msg_iov = slices.as_ptr() as *mut libc::iovec;
    msg.msg_iovlen = slices.len() as _;
    // SAFETY: `msg` describes `slices`, which outlive the call; `fd` is our open socket.
    let n = unsafe { libc::sendmsg(fd, &msg, libc::MSG_NOSIGNAL) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}
