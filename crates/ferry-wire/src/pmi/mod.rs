//! The PMI-1 "simple" wire protocol without I/O: one line per message, `cmd=NAME key=value ...`,
//! as MPICH's simple PMI client and Hydra speak it. Bytes in, typed [`Command`] or [`Response`]
//! out, and back; [`LineSplitter`] cuts a byte stream into lines.
//!
//! The grammar accepted (checked against MPICH 4.0's simple PMI client and Hydra 4.0's server,
//! and MPICH 4.1's `pmi_wire.c` parser):
//!
//! ```text
//! line   = "cmd=" name *( 1*SP attr ) *SP [ "\n" ]      ; at most MAX_LINE bytes with the "\n"
//! attr   = name "=" value
//! name   = 1*( ALPHA / DIGIT / "_" / "-" / "/" )
//! value  = 1*( %x21-5B / %x5D-7E )                       ; printable, no space, no backslash
//! ```
//!
//! Backslash is refused in values because MPICH 4.1 and later read it as an escape and MPICH
//! 4.0 does not, so its meaning would depend on the peer. One exception to the grammar: the
//! `message` of `cmd=abort` (MPICH 4.1+ writes it unescaped as the last attribute, spaces
//! included), so for `abort` everything after `message=` up to the end of the line is the
//! message. Attributes this codec does not know are checked for syntax and then ignored, as
//! Hydra does, so newer peers that add optional attributes still interoperate.
//!
//! A response whose `rc` is not zero parses as [`Response::Failed`], whatever its name: the
//! protocol allows such a reply to omit its normal attributes.
//!
//! `command` holds the requests, `response` the replies, `line` the grammar both share and
//! `splitter` the cutting of a stream into lines.

mod command;
mod line;
mod response;
mod spawn;
mod splitter;

pub use command::{command_name, response_kind_of, Command};
pub use line::{check_value, msg_token};
pub use response::{Response, ResponseKind};
pub use spawn::{SpawnCommand, SpawnRequest};
pub use splitter::LineSplitter;

use thiserror::Error;

/// Longest line, including its newline, that this codec reads or writes. A `put` at the
/// limits our server advertises (kvsname 256, key 64, value 1024 bytes) needs about 1,400.
pub const MAX_LINE: usize = 4096;
/// The PMI version this codec speaks (`pmi_version=1 pmi_subversion=1`).
pub const PMI_VERSION: i32 = 1;
pub const PMI_SUBVERSION: i32 = 1;

/// Everything that can go wrong in the bootstrap layer: a malformed line, a refused request,
/// a broken channel, a bad environment.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PmiError {
    #[error("PMI line longer than {max} bytes")]
    LineTooLong { max: usize },
    #[error("PMI line contains byte 0x{byte:02x} at offset {offset}; only printable ASCII is allowed")]
    BadByte { byte: u8, offset: usize },
    #[error("PMI line does not start with \"cmd=\"")]
    MissingCmd,
    #[error("PMI line has a malformed name {0:?}")]
    BadName(String),
    #[error("PMI attribute {0:?} has no value")]
    MissingValue(String),
    #[error("PMI attribute {0} appears twice")]
    DuplicateAttribute(String),
    #[error("unknown PMI command {0:?}")]
    UnknownCommand(String),
    #[error("unknown PMI response {0:?}")]
    UnknownResponse(String),
    #[error("cmd={cmd}: missing attribute {attr}")]
    MissingAttribute { cmd: String, attr: &'static str },
    #[error("cmd={cmd}: {attr}={value:?} is not {expected}")]
    BadValue { cmd: String, attr: &'static str, value: String, expected: &'static str },
    #[error("PMI {what} is {len} bytes; the limit is {max}")]
    TooLong { what: &'static str, len: usize, max: usize },
    #[error("PMI {what} {value:?} is invalid: {why}")]
    InvalidArgument { what: &'static str, value: String, why: &'static str },
    #[error("PMI environment: {0}")]
    Env(String),
    #[error("PMI channel: {0}")]
    Io(String),
    #[error("the PMI server closed the connection")]
    Closed,
    #[error("unexpected PMI response: expected cmd={expected}, got cmd={got}")]
    UnexpectedResponse { expected: &'static str, got: &'static str },
    #[error("the PMI server refused {cmd}: rc={rc} {msg}")]
    Refused { cmd: &'static str, rc: i32, msg: String },
    #[error("PMI is already finalized")]
    Finalized,
}

#[cfg(test)]
mod tests;
