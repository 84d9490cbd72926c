//! One relayed pair: the client's connection, the second leg to the target, and a bounded
//! buffer per direction. A full buffer stops reading from its source (the kernel's window
//! then pushes back on the sender), so a side that stops reading stalls only its own pair
//! and the proxy's memory stays bounded.
//!
//! A direction's buffer is a kernel pipe driven by splice(2) where the kernel gives one of
//! the pair's buffer size (bytes then never pass through the proxy's memory), else a ring in
//! the proxy's memory with plain reads and writes. Both hold at most the same bound.

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, SocketAddrV4};
use std::os::fd::AsRawFd;
use std::time::Instant;

use super::splice::{KernelPipe, SpliceIn};
use crate::transport::relay::wire::JobId;

/// Bytes in the proxy's memory on their way in one direction, in a ring of fixed capacity.
pub(super) struct Ring {
    buf: Box<[u8]>,
    start: usize,
    end: usize,
}

impl Ring {
    fn new(cap: usize) -> Ring {
        Ring { buf: vec![0u8; cap.max(1)].into_boxed_slice(), start: 0, end: 0 }
    }

    fn len(&self) -> usize {
        self.end - self.start
    }

    fn push(&mut self, bytes: &[u8]) {
        let n = bytes.len().min(self.buf.len() - self.end);
        self.buf[self.end..self.end + n].copy_from_slice(&bytes[..n]);
        self.end += n;
    }

    /// Read once from `src` into the free space: the bytes read (0 at end of stream) and
    /// the bytes asked for.
    fn fill<R: Read>(&mut self, src: &mut R) -> io::Result<(usize, usize)> {
        if self.end == self.buf.len() && self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        let asked = self.buf.len() - self.end;
        let n = src.read(&mut self.buf[self.end..])?;
        self.end += n;
        Ok((n, asked))
    }

    /// Write once to `dst` what waits.
    fn drain<W: Write>(&mut self, dst: &mut W) -> io::Result<usize> {
        let n = dst.write(&self.buf[self.start..self.end])?;
        self.start += n;
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        }
        Ok(n)
    }
}

enum Store {
    /// Everything passes through the ring.
    Copy(Ring),
    /// Bulk passes through the kernel pipe (`held` bytes in it now). Small messages are
    /// read into `head` instead, while the pipe is empty: a splice costs more than a copy for
    /// a few bytes, and the extra read that tells a spliced source is drained (see
    /// [`Filled::Stuck`]) doubles what a small message costs. `head` is also where the
    /// proxy's own frame and the bytes that came with the request go. It is written out
    /// before the pipe, and only filled while the pipe is empty, so the order holds.
    Kernel { head: Ring, pipe: KernelPipe, held: usize, bulk: bool },
}

/// Reads of this size or more go through the kernel pipe, smaller ones are copied: the size
/// of `head`.
const BULK: usize = 16 << 10;

/// What one read into a pipe did.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Filled {
    /// Bytes read; 0 is the source's end of stream. `dry`: fewer than asked for, so the source
    /// has nothing more now (its next arrival wakes the poller again).
    Bytes { n: usize, dry: bool },
    /// The source has nothing now.
    Dry,
    /// The kernel pipe takes nothing now although its byte bound is not reached (its slots
    /// are taken by small segments): drain it first, the source may still hold bytes.
    Stuck,
}

/// Bytes on their way in one direction, at most `cap` of them.
pub(super) struct Pipe {
    store: Store,
    cap: usize,
    /// Bytes written out to the destination.
    pub(super) written: u64,
}

impl Pipe {
    /// A pipe of `cap` bytes: spliced if `splice` and the kernel gives a pipe that size.
    pub(super) fn new(cap: usize, splice: bool) -> Pipe {
        let cap = cap.max(1);
        let store = match splice.then(|| KernelPipe::new(cap)) {
            Some(Ok(pipe)) => Store::Kernel { head: Ring::new(cap.min(BULK)), pipe, held: 0, bulk: false },
            _ => Store::Copy(Ring::new(cap)),
        };
        Pipe { store, cap, written: 0 }
    }

    pub(super) fn spliced(&self) -> bool {
        matches!(self.store, Store::Kernel { .. })
    }

    pub(super) fn len(&self) -> usize {
        match &self.store {
            Store::Copy(r) => r.len(),
            Store::Kernel { head, held, .. } => head.len() + held,
        }
    }

    pub(super) fn is_full(&self) -> bool {
        self.len() >= self.cap
    }

    /// Put bytes in front of what the source will send (the proxy's own frame, or bytes read
    /// with the request). The caller keeps them within the capacity.
    pub(super) fn push(&mut self, bytes: &[u8]) {
        let room = self.cap - self.len();
        let bytes = &bytes[..bytes.len().min(room)];
        match &mut self.store {
            Store::Copy(r) => r.push(bytes),
            Store::Kernel { head, .. } => head.push(bytes),
        }
    }

    /// Read once from `src` into the free space (the caller checked there is some).
    fn fill(&mut self, src: &mut mio::net::TcpStream) -> io::Result<Filled> {
        let room = self.cap - self.len();
        let copied = match &mut self.store {
            Store::Copy(r) => r.fill(src),
            Store::Kernel { head, held: 0, bulk: false, .. } if head.len() == 0 => {
                // `head` holds at most `cap`, so the bound holds.
                let got = head.fill(src);
                if let Ok((n, asked)) = got {
                    if n == asked {
                        // It came in bulk: splice from now on.
                        if let Store::Kernel { bulk, .. } = &mut self.store {
                            *bulk = true;
                        }
                    }
                }
                got
            }
            Store::Kernel { pipe, held, bulk, .. } => {
                return match pipe.splice_in(src.as_raw_fd(), room)? {
                    SpliceIn::Moved(n) => {
                        *held += n;
                        *bulk = n >= BULK;
                        // A short splice may have stopped at the pipe's slots, not at the end
                        // of what the socket holds: never take it for a drained source.
                        Ok(Filled::Bytes { n, dry: false })
                    }
                    // With the pipe empty its slots are all free, so the socket had nothing.
                    SpliceIn::Blocked if *held == 0 => Ok(Filled::Dry),
                    SpliceIn::Blocked => Ok(Filled::Stuck),
                };
            }
        };
        match copied {
            Ok((n, asked)) => Ok(Filled::Bytes { n, dry: n > 0 && n < asked }),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(Filled::Dry),
            Err(e) => Err(e),
        }
    }

    /// Write once to `dst` what waits.
    fn drain(&mut self, dst: &mut mio::net::TcpStream) -> io::Result<usize> {
        let n = match &mut self.store {
            Store::Copy(r) => r.drain(dst)?,
            Store::Kernel { head, .. } if head.len() > 0 => head.drain(dst)?,
            Store::Kernel { pipe, held, .. } => {
                let n = pipe.splice_out(dst.as_raw_fd(), *held)?;
                *held -= n;
                n
            }
        };
        self.written += n as u64;
        Ok(n)
    }
}

/// One socket of a pair and what the poller last said about it.
pub(super) struct Side {
    pub(super) stream: mio::net::TcpStream,
    pub(super) readable: bool,
    pub(super) writable: bool,
    /// End of stream read from it.
    pub(super) eof: bool,
    /// Its write side shut (its peer's end of stream passed on).
    pub(super) shut: bool,
    /// The poller reported its peer's end of stream or an error: read until the socket says
    /// so, since no further wakeup will come.
    pub(super) closing: bool,
}

impl Side {
    pub(super) fn new(stream: mio::net::TcpStream) -> Side {
        Side { stream, readable: true, writable: true, eof: false, shut: false, closing: false }
    }
}

pub(super) enum PairState {
    /// The second leg's connect is in progress; relaying waits for it.
    Connecting { since: Instant },
    Relaying,
}

pub(super) struct Pair {
    pub(super) job: JobId,
    pub(super) from: u32,
    pub(super) to: u32,
    pub(super) client_addr: SocketAddr,
    pub(super) target_addr: SocketAddrV4,
    pub(super) client: Side,
    pub(super) target: Side,
    /// Client to target, and back.
    pub(super) up: Pipe,
    pub(super) down: Pipe,
    pub(super) state: PairState,
    /// Bytes of `down` that are the proxy's own frame, not relayed data.
    pub(super) own_down: u64,
    /// Bytes of both buffers as the proxy's total last counted them.
    pub(super) counted: usize,
}

/// What a round of relaying left.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Flow {
    /// Waiting for the poller.
    Idle,
    /// Still ready to move bytes: come back soon (after other clients had their turn).
    More,
    /// Both directions ended and were passed on: close the pair.
    Done,
}

/// Rounds of reading and writing per turn, so a fast pair does not starve the others.
const ROUNDS_PER_TURN: usize = 8;

impl Pair {
    pub(super) fn buffered(&self) -> usize {
        self.up.len() + self.down.len()
    }

    /// Descriptors its kernel pipes hold.
    pub(super) fn pipe_fds(&self) -> usize {
        2 * (self.up.spliced() as usize + self.down.spliced() as usize)
    }

    /// Relayed bytes client -> target and target -> client.
    pub(super) fn bytes(&self) -> (u64, u64) {
        (self.up.written, self.down.written.saturating_sub(self.own_down))
    }

    /// Move what can be moved without blocking, for a bounded number of rounds.
    pub(super) fn pump(&mut self) -> io::Result<Flow> {
        for _ in 0..ROUNDS_PER_TURN {
            let a = step(&mut self.client, &mut self.up, &mut self.target)?;
            let b = step(&mut self.target, &mut self.down, &mut self.client)?;
            if self.client.shut && self.target.shut {
                return Ok(Flow::Done);
            }
            if !a && !b {
                return Ok(Flow::Idle);
            }
        }
        Ok(Flow::More)
    }
}

/// One round in one direction: read from `src` into `pipe` while there is room, write to
/// `dst`, pass an end of stream on once everything before it is out. Whether anything moved.
fn step(src: &mut Side, pipe: &mut Pipe, dst: &mut Side) -> io::Result<bool> {
    let mut moved = false;
    if src.readable && !src.eof && !pipe.is_full() {
        match pipe.fill(&mut src.stream) {
            Ok(Filled::Bytes { n: 0, .. }) => {
                src.eof = true;
                moved = true;
            }
            Ok(Filled::Bytes { dry, .. }) => {
                moved = true;
                // A short read drained the socket; the poller reports the next arrival (it
                // wakes on every one), so a read that would find nothing is saved. Not once
                // the peer closed: that is reported once, and the end of stream still waits.
                if dry && !src.closing {
                    src.readable = false;
                }
            }
            Ok(Filled::Dry) => src.readable = false,
            Ok(Filled::Stuck) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => moved = true,
            Err(e) => return Err(e),
        }
    }
    if dst.writable && pipe.len() > 0 {
        match pipe.drain(&mut dst.stream) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(_) => moved = true,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => dst.writable = false,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => moved = true,
            Err(e) => return Err(e),
        }
    }
    if src.eof && pipe.len() == 0 && !dst.shut {
        dst.shut = true;
        moved = true;
        // The peer may already be gone; the pair ends all the same.
        let _ = dst.stream.shutdown(Shutdown::Write);
    }
    Ok(moved)
}

#[cfg(test)]
impl Pipe {
    /// Bytes in the kernel pipe as the kernel counts them, and as the pipe counts them.
    fn queued(&self) -> Option<(usize, usize)> {
        match &self.store {
            Store::Kernel { pipe, held, .. } => Some((pipe.queued(), *held)),
            Store::Copy(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out `chunk` bytes per read from a pattern, then would block.
    struct Src {
        left: usize,
        chunk: usize,
        next: u8,
    }

    impl Read for Src {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.left == 0 {
                return Err(io::ErrorKind::WouldBlock.into());
            }
            let n = buf.len().min(self.chunk).min(self.left);
            for b in &mut buf[..n] {
                *b = self.next;
                self.next = self.next.wrapping_add(1);
            }
            self.left -= n;
            Ok(n)
        }
    }

    #[test]
    fn a_ring_never_holds_more_than_its_capacity_and_keeps_order() {
        let mut p = Ring::new(100);
        let mut src = Src { left: 1000, chunk: 37, next: 0 };
        let mut out = Vec::new();
        while out.len() < 1000 {
            while p.len() < 100 {
                match p.fill(&mut src) {
                    Ok(_) => {}
                    Err(_) => break,
                }
                assert!(p.len() <= 100);
            }
            // A slow writer takes 13 bytes at a time.
            let mut w = Vec::new();
            let mut lim = std::io::Cursor::new([0u8; 13]);
            let n = p.drain(&mut lim).unwrap();
            w.extend_from_slice(&lim.get_ref()[..n]);
            out.extend_from_slice(&w);
        }
        assert_eq!(out, (0..1000).map(|i| i as u8).collect::<Vec<u8>>());
    }

    /// Two connected non-blocking loopback sockets.
    fn tcp_pair() -> (mio::net::TcpStream, mio::net::TcpStream) {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let a = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (b, _) = l.accept().unwrap();
        for s in [&a, &b] {
            s.set_nonblocking(true).unwrap();
        }
        (mio::net::TcpStream::from_std(a), mio::net::TcpStream::from_std(b))
    }

    fn pattern(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i % 251) as u8).collect()
    }

    /// Send `data` into `pipe` through one socket pair and out through another, `each`
    /// bytes at a time, never letting the destination read more than `sip` per turn, and
    /// check the bound all along; what the destination got (what the pipe held first, then
    /// `data`).
    fn through(pipe: &mut Pipe, data: &[u8], each: usize, sip: usize) -> Vec<u8> {
        let (mut tx, mut src) = tcp_pair();
        let (mut dst, mut rx) = tcp_pair();
        let (mut sent, mut out, mut buf) = (0, Vec::new(), vec![0u8; sip]);
        let (mut turns, expect) = (0, data.len() + pipe.len());
        while out.len() < expect {
            turns += 1;
            assert!(turns < 1_000_000, "no progress: {} of {} bytes", out.len(), data.len());
            if sent < data.len() {
                match tx.write(&data[sent..(sent + each).min(data.len())]) {
                    Ok(n) => sent += n,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(e) => panic!("{e}"),
                }
            }
            while !pipe.is_full() {
                match pipe.fill(&mut src).unwrap() {
                    Filled::Bytes { n, .. } => assert!(n > 0, "no end of stream here"),
                    Filled::Dry | Filled::Stuck => break,
                }
                assert!(pipe.len() <= pipe.cap, "{} bytes held past a bound of {}", pipe.len(), pipe.cap);
                if let Some((kernel, held)) = pipe.queued() {
                    assert_eq!(kernel, held, "the kernel and the pipe agree on what it holds");
                }
            }
            if pipe.len() > 0 {
                match pipe.drain(&mut dst) {
                    Ok(_) => {}
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(e) => panic!("{e}"),
                }
            }
            match rx.read(&mut buf) {
                Ok(n) => out.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => panic!("{e}"),
            }
        }
        out
    }

    #[test]
    fn a_spliced_pipe_keeps_its_bound_and_the_order_of_head_small_and_bulk_bytes() {
        let cap = 64 << 10;
        let data = pattern(3 << 20);
        // Small writes (copied through the head), then bulk (spliced), with a slow reader.
        for (each, sip) in [(100, 1 << 20), (1 << 20, 1 << 20), (1 << 20, 7000), (BULK, 300)] {
            let mut p = Pipe::new(cap, true);
            assert!(p.spliced(), "the kernel gives a pipe of {cap} bytes");
            p.push(b"own frame");
            let got = through(&mut p, &data, each, sip);
            assert!(got == [b"own frame".as_slice(), &data].concat(), "bytes intact and in order (writes of {each})");
            assert_eq!(p.written, got.len() as u64);
        }
    }

    #[test]
    fn a_copying_pipe_relays_the_same() {
        let data = pattern(1 << 20);
        let mut p = Pipe::new(64 << 10, false);
        assert!(!p.spliced());
        p.push(b"own frame");
        let got = through(&mut p, &data, 5000, 3000);
        assert!(got == [b"own frame".as_slice(), &data].concat());
    }
}
