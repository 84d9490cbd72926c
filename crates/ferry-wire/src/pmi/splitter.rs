//! Cutting a byte stream into PMI lines, with bounded memory and recovery from an overlong
//! line, for both ends of a PMI channel.

use super::{PmiError, MAX_LINE};

/// Cuts a byte stream into lines of at most [`MAX_LINE`] bytes. A longer line is reported
/// once as [`PmiError::LineTooLong`] and skipped up to its newline, so one bad line does not
/// desynchronise the stream. Memory stays bounded by `MAX_LINE` plus the last pushed chunk.
#[derive(Debug, Default)]
pub struct LineSplitter {
    buf: Vec<u8>,
    /// Inside an overlong line that has been reported: drop bytes up to the next newline.
    skipping: bool,
}

impl LineSplitter {
    pub fn new() -> LineSplitter {
        LineSplitter::default()
    }

    /// Append bytes read from the stream.
    pub fn push(&mut self, mut bytes: &[u8]) {
        if self.skipping {
            match bytes.iter().position(|&b| b == b'\n') {
                Some(nl) => {
                    self.skipping = false;
                    bytes = &bytes[nl + 1..];
                }
                None => return,
            }
        }
        self.buf.extend_from_slice(bytes);
    }

    /// The next complete line without its newline, an error for an overlong one, or `None`
    /// when no complete line is buffered.
    pub fn next_line(&mut self) -> Option<Result<Vec<u8>, PmiError>> {
        match self.buf.iter().position(|&b| b == b'\n') {
            Some(nl) if nl < MAX_LINE => {
                let mut line: Vec<u8> = self.buf.drain(..=nl).collect();
                line.pop();
                Some(Ok(line))
            }
            Some(nl) => {
                self.buf.drain(..=nl);
                Some(Err(PmiError::LineTooLong { max: MAX_LINE }))
            }
            None if self.buf.len() >= MAX_LINE => {
                self.buf.clear();
                self.skipping = true;
                Some(Err(PmiError::LineTooLong { max: MAX_LINE }))
            }
            None => None,
        }
    }

    /// Bytes of an unfinished line.
    pub fn pending(&self) -> usize {
        self.buf.len()
    }
}
