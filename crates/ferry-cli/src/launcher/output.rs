//! Forwards one rank's stdout or stderr to ours, a line at a time so lines of different
//! ranks never mix, each optionally tagged `[R] `.

use std::fs::File;
use std::io::{self, ErrorKind, Read, Write};
use std::os::fd::{AsRawFd, RawFd};

/// A line longer than this is forwarded in pieces (which may interleave with other ranks'
/// lines) rather than buffered without bound.
const MAX_PENDING: usize = 1 << 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sink {
    Stdout,
    Stderr,
}

/// One output pipe of one rank.
pub struct OutputStream {
    pipe: File,
    lines: Lines,
}

impl OutputStream {
    pub fn new(pipe: File, sink: Sink, tag: Option<String>) -> OutputStream {
        OutputStream { pipe, lines: Lines::new(sink, tag) }
    }

    pub fn fd(&self) -> RawFd {
        self.pipe.as_raw_fd()
    }

    /// Read what the pipe holds and forward every complete line. `false` once the pipe is
    /// at its end (the partial last line, if any, has then been written too).
    pub fn pump(&mut self) -> bool {
        match self.read_chunk() {
            Some(chunk) => {
                self.lines.forward(&chunk);
                true
            }
            None => {
                self.flush_partial();
                false
            }
        }
    }

    /// Read what the pipe holds as it is (empty when nothing is there now); `None` at its
    /// end. For an agent, which passes output on to the head unsplit.
    pub fn read_chunk(&mut self) -> Option<Vec<u8>> {
        let mut buf = vec![0u8; 64 * 1024];
        match self.pipe.read(&mut buf) {
            Ok(0) => None,
            Ok(n) => {
                buf.truncate(n);
                Some(buf)
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => Some(Vec::new()),
            Err(_) => None,
        }
    }

    pub fn flush_partial(&mut self) {
        self.lines.flush_partial();
    }
}

/// One rank's output stream as lines: what arrives in pieces (from a pipe, or from an agent
/// on another host) is written a whole line at a time, each optionally tagged.
pub struct Lines {
    sink: Sink,
    tag: Option<Vec<u8>>,
    /// Bytes of a line whose newline has not arrived yet.
    pending: Vec<u8>,
    /// Part of the current line was already written (a piece of an overlong line), so the
    /// rest must not be tagged again.
    mid_line: bool,
}

impl Lines {
    pub fn new(sink: Sink, tag: Option<String>) -> Lines {
        Lines { sink, tag: tag.map(String::into_bytes), pending: Vec::new(), mid_line: false }
    }

    /// Forward the complete lines of `data`; keep the rest for later.
    pub fn forward(&mut self, data: &[u8]) {
        let mut out = Vec::with_capacity(data.len() + 64);
        let mut rest = data;
        while let Some(nl) = rest.iter().position(|&b| b == b'\n') {
            self.start_line(&mut out);
            out.extend_from_slice(&self.pending);
            out.extend_from_slice(&rest[..=nl]);
            self.pending.clear();
            self.mid_line = false;
            rest = &rest[nl + 1..];
        }
        self.pending.extend_from_slice(rest);
        if self.pending.len() >= MAX_PENDING {
            self.start_line(&mut out);
            out.append(&mut self.pending);
            self.mid_line = true;
        }
        self.write(&out);
    }

    /// Write a last line that has no newline. Tagged output gets one, so the next rank's
    /// line starts on a line of its own; untagged output is passed on exactly as written.
    pub fn flush_partial(&mut self) {
        if self.pending.is_empty() {
            if self.mid_line && self.tag.is_some() {
                self.write(b"\n");
            }
            self.mid_line = false;
            return;
        }
        let mut out = Vec::new();
        self.start_line(&mut out);
        out.append(&mut self.pending);
        if self.tag.is_some() {
            out.push(b'\n');
        }
        self.mid_line = false;
        self.write(&out);
    }

    fn start_line(&self, out: &mut Vec<u8>) {
        if let (Some(tag), false) = (&self.tag, self.mid_line) {
            out.extend_from_slice(tag);
        }
    }

    fn write(&self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        // A closed stdout (`ferry run ... | head`) must not stop the job or block the ranks:
        // the error is dropped and the ranks' output keeps being drained.
        let _ = match self.sink {
            Sink::Stdout => {
                let mut out = io::stdout().lock();
                out.write_all(bytes).and_then(|_| out.flush())
            }
            Sink::Stderr => io::stderr().lock().write_all(bytes),
        };
    }
}
