//! One relayed pair: the client's connection, the second leg to the target, and a bounded
//! buffer per direction. A full buffer stops reading from its source (the kernel's window
//! then pushes back on the sender), so a side that stops reading stalls only its own pair
//! and the proxy's memory stays bounded.

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, SocketAddrV4};
use std::time::Instant;

use crate::transport::relay::wire::JobId;

/// Bytes on their way in one direction.
pub(super) struct Pipe {
    buf: Box<[u8]>,
    start: usize,
    end: usize,
    /// Bytes written out to the destination.
    pub(super) written: u64,
}

impl Pipe {
    pub(super) fn new(cap: usize) -> Pipe {
        Pipe { buf: vec![0u8; cap.max(1)].into_boxed_slice(), start: 0, end: 0, written: 0 }
    }

    pub(super) fn len(&self) -> usize {
        self.end - self.start
    }

    pub(super) fn is_full(&self) -> bool {
        self.len() == self.buf.len()
    }

    /// Put bytes in front of what the source will send (the proxy's own frame, or bytes read
    /// with the request). The caller keeps them within the capacity.
    pub(super) fn push(&mut self, bytes: &[u8]) {
        let n = bytes.len().min(self.buf.len() - self.end);
        self.buf[self.end..self.end + n].copy_from_slice(&bytes[..n]);
        self.end += n;
    }

    /// Read once from `src` into the free space: the bytes read, 0 at end of stream.
    fn fill<R: Read>(&mut self, src: &mut R) -> io::Result<usize> {
        if self.end == self.buf.len() && self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        let n = src.read(&mut self.buf[self.end..])?;
        self.end += n;
        Ok(n)
    }

    /// Write once to `dst` what waits.
    fn drain<W: Write>(&mut self, dst: &mut W) -> io::Result<usize> {
        let n = dst.write(&self.buf[self.start..self.end])?;
        self.start += n;
        self.written += n as u64;
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        }
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
}

impl Side {
    pub(super) fn new(stream: mio::net::TcpStream) -> Side {
        Side { stream, readable: true, writable: true, eof: false, shut: false }
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
            Ok(0) => {
                src.eof = true;
                moved = true;
            }
            Ok(_) => moved = true,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => src.readable = false,
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
    fn a_pipe_never_holds_more_than_its_capacity_and_keeps_order() {
        let mut p = Pipe::new(100);
        let mut src = Src { left: 1000, chunk: 37, next: 0 };
        let mut out = Vec::new();
        while out.len() < 1000 {
            while !p.is_full() {
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
        assert_eq!(p.written, 1000);
    }
}
