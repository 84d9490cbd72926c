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

use std::fmt;
use std::num::NonZeroI32;

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

/// A request from a rank to the process manager.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// `cmd=init pmi_version=V pmi_subversion=S`
    Init { version: i32, subversion: i32 },
    /// `cmd=get_maxes`
    GetMaxes,
    /// `cmd=get_appnum`
    GetAppnum,
    /// `cmd=get_my_kvsname`
    GetMyKvsname,
    /// `cmd=get_universe_size`
    GetUniverseSize,
    /// `cmd=put kvsname=K key=k value=v` (`kvsname` is optional in PMI 1.1)
    Put { kvsname: Option<String>, key: String, value: String },
    /// `cmd=get kvsname=K key=k`
    Get { kvsname: Option<String>, key: String },
    /// `cmd=barrier_in`
    BarrierIn,
    /// `cmd=finalize`
    Finalize,
    /// `cmd=abort exitcode=N [message=free text to the end of the line]`; no reply is sent.
    /// `exitcode` defaults to 1 when absent (PMI 1.1). MPICH 4.0 sends no message.
    Abort { exitcode: i32, message: Option<String> },
}

/// The names of the replies, so a refusal can say which request it answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ResponseKind {
    ResponseToInit,
    Maxes,
    Appnum,
    MyKvsname,
    UniverseSize,
    PutResult,
    GetResult,
    BarrierOut,
    FinalizeAck,
    /// Not part of PMI-1: our server's answer to a line it cannot attribute to any command.
    Error,
}

impl ResponseKind {
    pub const ALL: [ResponseKind; 10] = [
        ResponseKind::ResponseToInit,
        ResponseKind::Maxes,
        ResponseKind::Appnum,
        ResponseKind::MyKvsname,
        ResponseKind::UniverseSize,
        ResponseKind::PutResult,
        ResponseKind::GetResult,
        ResponseKind::BarrierOut,
        ResponseKind::FinalizeAck,
        ResponseKind::Error,
    ];

    /// The `cmd=` name on the wire.
    pub fn name(self) -> &'static str {
        match self {
            ResponseKind::ResponseToInit => "response_to_init",
            ResponseKind::Maxes => "maxes",
            ResponseKind::Appnum => "appnum",
            ResponseKind::MyKvsname => "my_kvsname",
            ResponseKind::UniverseSize => "universe_size",
            ResponseKind::PutResult => "put_result",
            ResponseKind::GetResult => "get_result",
            ResponseKind::BarrierOut => "barrier_out",
            ResponseKind::FinalizeAck => "finalize_ack",
            ResponseKind::Error => "error",
        }
    }

    pub fn from_name(name: &str) -> Option<ResponseKind> {
        ResponseKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

impl fmt::Display for ResponseKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A reply from the process manager to a rank.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Response {
    /// `cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0`
    ResponseToInit { version: i32, subversion: i32 },
    /// `cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024`
    Maxes { kvsname_max: u32, keylen_max: u32, vallen_max: u32 },
    /// `cmd=appnum appnum=0`
    Appnum { appnum: i32 },
    /// `cmd=my_kvsname kvsname=K`
    MyKvsname { kvsname: String },
    /// `cmd=universe_size size=N` (Hydra answers -1 for "unlimited")
    UniverseSize { size: i32 },
    /// `cmd=put_result rc=0 msg=success`
    PutResult,
    /// `cmd=get_result rc=0 msg=success value=v`
    GetResult { value: String },
    /// `cmd=barrier_out`
    BarrierOut,
    /// `cmd=finalize_ack`
    FinalizeAck,
    /// Any reply with a non-zero `rc`, e.g. `cmd=get_result rc=-1 msg=key_x_not_found`.
    Failed { kind: ResponseKind, rc: NonZeroI32, msg: String },
}

impl Command {
    /// The `cmd=` name on the wire.
    pub fn name(&self) -> &'static str {
        match self {
            Command::Init { .. } => "init",
            Command::GetMaxes => "get_maxes",
            Command::GetAppnum => "get_appnum",
            Command::GetMyKvsname => "get_my_kvsname",
            Command::GetUniverseSize => "get_universe_size",
            Command::Put { .. } => "put",
            Command::Get { .. } => "get",
            Command::BarrierIn => "barrier_in",
            Command::Finalize => "finalize",
            Command::Abort { .. } => "abort",
        }
    }

    /// The reply this command expects; `None` for `abort`, which gets none.
    pub fn response_kind(&self) -> Option<ResponseKind> {
        response_kind_of(self.name())
    }

    /// Parse one line (with or without its trailing newline).
    pub fn parse(line: &[u8]) -> Result<Command, PmiError> {
        let raw = RawLine::split(line)?;
        let cmd = raw.cmd;
        let command = match cmd {
            "init" => Command::Init { version: raw.int("pmi_version")?, subversion: raw.int("pmi_subversion")? },
            "get_maxes" => Command::GetMaxes,
            "get_appnum" => Command::GetAppnum,
            "get_my_kvsname" => Command::GetMyKvsname,
            "get_universe_size" => Command::GetUniverseSize,
            "put" => Command::Put {
                kvsname: raw.get("kvsname").map(str::to_owned),
                key: raw.require("key")?.to_owned(),
                value: raw.require("value")?.to_owned(),
            },
            "get" => Command::Get { kvsname: raw.get("kvsname").map(str::to_owned), key: raw.require("key")?.to_owned() },
            "barrier_in" => Command::BarrierIn,
            "finalize" => Command::Finalize,
            "abort" => Command::Abort {
                exitcode: match raw.get("exitcode") {
                    Some(_) => raw.int("exitcode")?,
                    None => 1,
                },
                message: raw.message.map(str::to_owned),
            },
            other => return Err(PmiError::UnknownCommand(other.to_owned())),
        };
        Ok(command)
    }

    /// The line for this command, newline included. Fails when a field would not survive
    /// the trip (a space in a value, an empty key, a line over [`MAX_LINE`]).
    pub fn to_line(&self) -> Result<String, PmiError> {
        let mut w = LineWriter::new(self.name());
        match self {
            Command::Init { version, subversion } => {
                w.int("pmi_version", *version);
                w.int("pmi_subversion", *subversion);
            }
            Command::Put { kvsname, key, value } => {
                if let Some(k) = kvsname {
                    w.value("kvsname", k)?;
                }
                w.value("key", key)?;
                w.value("value", value)?;
            }
            Command::Get { kvsname, key } => {
                if let Some(k) = kvsname {
                    w.value("kvsname", k)?;
                }
                w.value("key", key)?;
            }
            Command::Abort { exitcode, message } => {
                w.int("exitcode", *exitcode);
                if let Some(m) = message {
                    w.message(m)?;
                }
            }
            Command::GetMaxes
            | Command::GetAppnum
            | Command::GetMyKvsname
            | Command::GetUniverseSize
            | Command::BarrierIn
            | Command::Finalize => {}
        }
        w.finish()
    }
}

/// Which reply answers the command called `name` (also for names of malformed lines, so a
/// refusal can carry the name the sender waits for).
pub fn response_kind_of(command_name: &str) -> Option<ResponseKind> {
    Some(match command_name {
        "init" => ResponseKind::ResponseToInit,
        "get_maxes" => ResponseKind::Maxes,
        "get_appnum" => ResponseKind::Appnum,
        "get_my_kvsname" => ResponseKind::MyKvsname,
        "get_universe_size" => ResponseKind::UniverseSize,
        "put" => ResponseKind::PutResult,
        "get" => ResponseKind::GetResult,
        "barrier_in" => ResponseKind::BarrierOut,
        "finalize" => ResponseKind::FinalizeAck,
        _ => return None,
    })
}

/// The `cmd=` name at the start of `line`, if the line starts with a well-formed one.
/// Lets a server answer a malformed request with the reply name its sender waits for.
pub fn command_name(line: &[u8]) -> Option<&str> {
    let rest = line.strip_prefix(b"cmd=")?;
    let end = rest.iter().position(|&b| !is_name_byte(b)).unwrap_or(rest.len());
    match rest.get(end) {
        None | Some(b' ') | Some(b'\n') if end > 0 => std::str::from_utf8(&rest[..end]).ok(),
        _ => None,
    }
}

impl Response {
    pub fn kind(&self) -> ResponseKind {
        match self {
            Response::ResponseToInit { .. } => ResponseKind::ResponseToInit,
            Response::Maxes { .. } => ResponseKind::Maxes,
            Response::Appnum { .. } => ResponseKind::Appnum,
            Response::MyKvsname { .. } => ResponseKind::MyKvsname,
            Response::UniverseSize { .. } => ResponseKind::UniverseSize,
            Response::PutResult => ResponseKind::PutResult,
            Response::GetResult { .. } => ResponseKind::GetResult,
            Response::BarrierOut => ResponseKind::BarrierOut,
            Response::FinalizeAck => ResponseKind::FinalizeAck,
            Response::Failed { kind, .. } => *kind,
        }
    }

    /// A refusal of kind `kind` with `rc = -1` and `text` made into a valid `msg` token.
    pub fn refusal(kind: ResponseKind, text: &str) -> Response {
        Response::Failed { kind, rc: NonZeroI32::new(-1).expect("-1 is not zero"), msg: msg_token(text) }
    }

    /// Parse one line (with or without its trailing newline).
    pub fn parse(line: &[u8]) -> Result<Response, PmiError> {
        let raw = RawLine::split(line)?;
        let kind = ResponseKind::from_name(raw.cmd).ok_or_else(|| PmiError::UnknownResponse(raw.cmd.to_owned()))?;
        let rc = match raw.get("rc") {
            Some(_) => raw.int("rc")?,
            None => 0,
        };
        if let Some(rc) = NonZeroI32::new(rc) {
            let msg = raw.get("msg").unwrap_or("").to_owned();
            return Ok(Response::Failed { kind, rc, msg });
        }
        let response = match kind {
            ResponseKind::ResponseToInit => {
                Response::ResponseToInit { version: raw.int("pmi_version")?, subversion: raw.int("pmi_subversion")? }
            }
            ResponseKind::Maxes => Response::Maxes {
                kvsname_max: raw.uint("kvsname_max")?,
                keylen_max: raw.uint("keylen_max")?,
                vallen_max: raw.uint("vallen_max")?,
            },
            ResponseKind::Appnum => Response::Appnum { appnum: raw.int("appnum")? },
            ResponseKind::MyKvsname => Response::MyKvsname { kvsname: raw.require("kvsname")?.to_owned() },
            ResponseKind::UniverseSize => Response::UniverseSize { size: raw.int("size")? },
            ResponseKind::PutResult => Response::PutResult,
            ResponseKind::GetResult => Response::GetResult { value: raw.require("value")?.to_owned() },
            ResponseKind::BarrierOut => Response::BarrierOut,
            ResponseKind::FinalizeAck => Response::FinalizeAck,
            ResponseKind::Error => {
                return Err(PmiError::BadValue {
                    cmd: raw.cmd.to_owned(),
                    attr: "rc",
                    value: rc.to_string(),
                    expected: "a non-zero error code",
                })
            }
        };
        Ok(response)
    }

    /// The line for this response, newline included, in the exact form Hydra 4.0 writes
    /// (`rc=0 msg=success` where Hydra puts them).
    pub fn to_line(&self) -> Result<String, PmiError> {
        let mut w = LineWriter::new(self.kind().name());
        match self {
            Response::ResponseToInit { version, subversion } => {
                w.int("pmi_version", *version);
                w.int("pmi_subversion", *subversion);
                w.int("rc", 0);
            }
            Response::Maxes { kvsname_max, keylen_max, vallen_max } => {
                w.int("kvsname_max", *kvsname_max);
                w.int("keylen_max", *keylen_max);
                w.int("vallen_max", *vallen_max);
            }
            Response::Appnum { appnum } => w.int("appnum", *appnum),
            Response::MyKvsname { kvsname } => w.value("kvsname", kvsname)?,
            Response::UniverseSize { size } => w.int("size", *size),
            Response::PutResult => {
                w.int("rc", 0);
                w.value("msg", "success")?;
            }
            Response::GetResult { value } => {
                w.int("rc", 0);
                w.value("msg", "success")?;
                w.value("value", value)?;
            }
            Response::BarrierOut | Response::FinalizeAck => {}
            Response::Failed { rc, msg, .. } => {
                w.int("rc", rc.get());
                if !msg.is_empty() {
                    w.value("msg", msg)?;
                }
            }
        }
        w.finish()
    }
}

/// Turn free text into a valid `msg` value: every byte outside the value alphabet becomes
/// `_` (Hydra's style: `key_x_not_found`), and the result is cut to 200 bytes.
pub fn msg_token(text: &str) -> String {
    let mut out: String = text.bytes().take(200).map(|b| if is_value_byte(b) { b as char } else { '_' }).collect();
    if out.is_empty() {
        out.push('_');
    }
    out
}

/// Check that `value` can travel as a PMI value: 1 or more bytes of printable ASCII other
/// than space and backslash.
pub fn check_value(what: &'static str, value: &str) -> Result<(), PmiError> {
    if value.is_empty() {
        return Err(PmiError::InvalidArgument { what, value: String::new(), why: "it is empty" });
    }
    if !value.bytes().all(is_value_byte) {
        return Err(PmiError::InvalidArgument {
            what,
            value: value.to_owned(),
            why: "only printable ASCII without spaces and backslashes can travel through PMI",
        });
    }
    Ok(())
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'/'
}

fn is_value_byte(b: u8) -> bool {
    (0x21..=0x7e).contains(&b) && b != b'\\'
}

fn is_message_byte(b: u8) -> bool {
    (0x20..=0x7e).contains(&b)
}

/// A line cut into its command name and attributes, all borrowed from the input.
struct RawLine<'a> {
    cmd: &'a str,
    attrs: Vec<(&'a str, &'a str)>,
    /// The free-text `message` of `abort`.
    message: Option<&'a str>,
}

impl<'a> RawLine<'a> {
    fn split(line: &'a [u8]) -> Result<RawLine<'a>, PmiError> {
        let body = line.strip_suffix(b"\n").unwrap_or(line);
        if body.len() + 1 > MAX_LINE {
            return Err(PmiError::LineTooLong { max: MAX_LINE });
        }
        if let Some(offset) = body.iter().position(|&b| !is_message_byte(b)) {
            return Err(PmiError::BadByte { byte: body[offset], offset });
        }
        // Only printable ASCII is left, so this cannot fail; map it anyway rather than panic.
        let text = std::str::from_utf8(body).map_err(|_| PmiError::MissingCmd)?;
        let rest = text.strip_prefix("cmd=").ok_or(PmiError::MissingCmd)?;
        let name_end = rest.find(' ').unwrap_or(rest.len());
        let cmd = &rest[..name_end];
        if cmd.is_empty() || !cmd.bytes().all(is_name_byte) {
            return Err(PmiError::BadName(cmd.to_owned()));
        }
        let mut raw = RawLine { cmd, attrs: Vec::new(), message: None };
        let mut rest = &rest[name_end..];
        loop {
            rest = rest.trim_start_matches(' ');
            if rest.is_empty() {
                break;
            }
            if cmd == "abort" {
                if let Some(message) = rest.strip_prefix("message=") {
                    raw.message = Some(message);
                    break;
                }
            }
            let token_start = text.len() - rest.len();
            let token_end = rest.find(' ').unwrap_or(rest.len());
            let token = &rest[..token_end];
            rest = &rest[token_end..];
            let (key, value) = token.split_once('=').ok_or_else(|| PmiError::MissingValue(token.to_owned()))?;
            if key.is_empty() || !key.bytes().all(is_name_byte) {
                return Err(PmiError::BadName(key.to_owned()));
            }
            if value.is_empty() {
                return Err(PmiError::MissingValue(key.to_owned()));
            }
            if let Some(offset) = value.bytes().position(|b| !is_value_byte(b)) {
                let offset_in_line = token_start + key.len() + 1 + offset;
                return Err(PmiError::BadByte { byte: value.as_bytes()[offset], offset: offset_in_line });
            }
            if key == "cmd" || raw.attrs.iter().any(|(k, _)| *k == key) {
                return Err(PmiError::DuplicateAttribute(key.to_owned()));
            }
            raw.attrs.push((key, value));
        }
        Ok(raw)
    }

    fn get(&self, attr: &str) -> Option<&'a str> {
        self.attrs.iter().find(|(k, _)| *k == attr).map(|(_, v)| *v)
    }

    fn require(&self, attr: &'static str) -> Result<&'a str, PmiError> {
        self.get(attr).ok_or_else(|| PmiError::MissingAttribute { cmd: self.cmd.to_owned(), attr })
    }

    fn int(&self, attr: &'static str) -> Result<i32, PmiError> {
        let v = self.require(attr)?;
        parse_int(v).ok_or_else(|| PmiError::BadValue {
            cmd: self.cmd.to_owned(),
            attr,
            value: v.to_owned(),
            expected: "a decimal 32-bit integer",
        })
    }

    fn uint(&self, attr: &'static str) -> Result<u32, PmiError> {
        let v = self.require(attr)?;
        let bad = || PmiError::BadValue {
            cmd: self.cmd.to_owned(),
            attr,
            value: v.to_owned(),
            expected: "a non-negative decimal 32-bit integer",
        };
        if !v.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        v.parse().map_err(|_| bad())
    }
}

/// `-?[0-9]+` that fits an `i32`; no `+`, no spaces, no hex.
fn parse_int(v: &str) -> Option<i32> {
    let digits = v.strip_prefix('-').unwrap_or(v);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    v.parse().ok()
}

/// Builds one line, validating every value it is given.
struct LineWriter {
    line: String,
}

impl LineWriter {
    fn new(cmd: &str) -> LineWriter {
        LineWriter { line: format!("cmd={cmd}") }
    }

    fn int(&mut self, attr: &str, v: impl fmt::Display) {
        self.line.push_str(&format!(" {attr}={v}"));
    }

    fn value(&mut self, attr: &'static str, v: &str) -> Result<(), PmiError> {
        check_value(attr, v)?;
        self.line.push_str(&format!(" {attr}={v}"));
        Ok(())
    }

    fn message(&mut self, m: &str) -> Result<(), PmiError> {
        if !m.bytes().all(is_message_byte) {
            return Err(PmiError::InvalidArgument {
                what: "abort message",
                value: m.to_owned(),
                why: "only printable ASCII can travel through PMI",
            });
        }
        self.line.push_str(" message=");
        self.line.push_str(m);
        Ok(())
    }

    fn finish(mut self) -> Result<String, PmiError> {
        self.line.push('\n');
        if self.line.len() > MAX_LINE {
            return Err(PmiError::TooLong { what: "line", len: self.line.len(), max: MAX_LINE });
        }
        Ok(self.line)
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn cmd(line: &str) -> Result<Command, PmiError> {
        Command::parse(line.as_bytes())
    }

    fn resp(line: &str) -> Result<Response, PmiError> {
        Response::parse(line.as_bytes())
    }

    #[test]
    fn parses_what_mpich_4_0_sends() {
        assert_eq!(cmd("cmd=init pmi_version=1 pmi_subversion=1\n"), Ok(Command::Init { version: 1, subversion: 1 }));
        assert_eq!(cmd("cmd=get_maxes\n"), Ok(Command::GetMaxes));
        assert_eq!(cmd("cmd=get_appnum\n"), Ok(Command::GetAppnum));
        assert_eq!(cmd("cmd=get_my_kvsname\n"), Ok(Command::GetMyKvsname));
        assert_eq!(cmd("cmd=get_universe_size\n"), Ok(Command::GetUniverseSize));
        assert_eq!(
            cmd("cmd=put kvsname=kvs_1_0 key=bc-3 value=tcp://10.0.0.1:4000\n"),
            Ok(Command::Put { kvsname: Some("kvs_1_0".into()), key: "bc-3".into(), value: "tcp://10.0.0.1:4000".into() })
        );
        assert_eq!(
            cmd("cmd=get kvsname=kvs_1_0 key=PMI_process_mapping\n"),
            Ok(Command::Get { kvsname: Some("kvs_1_0".into()), key: "PMI_process_mapping".into() })
        );
        assert_eq!(cmd("cmd=barrier_in\n"), Ok(Command::BarrierIn));
        assert_eq!(cmd("cmd=finalize\n"), Ok(Command::Finalize));
        assert_eq!(cmd("cmd=abort exitcode=3\n"), Ok(Command::Abort { exitcode: 3, message: None }));
    }

    #[test]
    fn parses_what_hydra_4_0_answers() {
        // Captured from Debian's mpiexec.hydra 4.0.2.
        assert_eq!(
            resp("cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n"),
            Ok(Response::ResponseToInit { version: 1, subversion: 1 })
        );
        assert_eq!(
            resp("cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024\n"),
            Ok(Response::Maxes { kvsname_max: 256, keylen_max: 64, vallen_max: 1024 })
        );
        assert_eq!(resp("cmd=appnum appnum=0\n"), Ok(Response::Appnum { appnum: 0 }));
        assert_eq!(
            resp("cmd=my_kvsname kvsname=kvs_5740_0_1382544503_vm\n"),
            Ok(Response::MyKvsname { kvsname: "kvs_5740_0_1382544503_vm".into() })
        );
        assert_eq!(resp("cmd=universe_size size=-1\n"), Ok(Response::UniverseSize { size: -1 }));
        assert_eq!(resp("cmd=put_result rc=0 msg=success\n"), Ok(Response::PutResult));
        assert_eq!(
            resp("cmd=get_result rc=0 msg=success value=(vector,(0,1,1))\n"),
            Ok(Response::GetResult { value: "(vector,(0,1,1))".into() })
        );
        assert_eq!(
            resp("cmd=get_result rc=-1 msg=key_nokey_not_found value=unknown\n"),
            Ok(Response::Failed {
                kind: ResponseKind::GetResult,
                rc: NonZeroI32::new(-1).unwrap(),
                msg: "key_nokey_not_found".into()
            })
        );
        assert_eq!(resp("cmd=barrier_out\n"), Ok(Response::BarrierOut));
        assert_eq!(resp("cmd=finalize_ack\n"), Ok(Response::FinalizeAck));
    }

    #[test]
    fn formats_exactly_like_hydra() {
        let lines = [
            (
                Response::ResponseToInit { version: 1, subversion: 1 },
                "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n",
            ),
            (
                Response::Maxes { kvsname_max: 256, keylen_max: 64, vallen_max: 1024 },
                "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024\n",
            ),
            (Response::Appnum { appnum: 0 }, "cmd=appnum appnum=0\n"),
            (Response::UniverseSize { size: 4 }, "cmd=universe_size size=4\n"),
            (Response::PutResult, "cmd=put_result rc=0 msg=success\n"),
            (Response::GetResult { value: "v".into() }, "cmd=get_result rc=0 msg=success value=v\n"),
            (Response::BarrierOut, "cmd=barrier_out\n"),
            (Response::FinalizeAck, "cmd=finalize_ack\n"),
        ];
        for (r, want) in lines {
            assert_eq!(r.to_line().unwrap(), want);
        }
        assert_eq!(
            Command::Put { kvsname: Some("k".into()), key: "a".into(), value: "b".into() }.to_line().unwrap(),
            "cmd=put kvsname=k key=a value=b\n"
        );
        assert_eq!(Command::Init { version: 1, subversion: 1 }.to_line().unwrap(), "cmd=init pmi_version=1 pmi_subversion=1\n");
    }

    #[test]
    fn abort_message_runs_to_the_end_of_the_line() {
        // MPICH 4.1+ writes the message raw, spaces and '=' included.
        assert_eq!(
            cmd("cmd=abort exitcode=7 message=oh no: x=1 failed  \n"),
            Ok(Command::Abort { exitcode: 7, message: Some("oh no: x=1 failed  ".into()) })
        );
        assert_eq!(cmd("cmd=abort\n"), Ok(Command::Abort { exitcode: 1, message: None }));
        assert_eq!(cmd("cmd=abort message=\n"), Ok(Command::Abort { exitcode: 1, message: Some(String::new()) }));
        // Elsewhere a space still ends a value.
        assert!(matches!(cmd("cmd=put key=a value=b c\n"), Err(PmiError::MissingValue(_))));
    }

    #[test]
    fn refuses_malformed_lines() {
        assert_eq!(cmd("garbage\n"), Err(PmiError::MissingCmd));
        assert_eq!(cmd(""), Err(PmiError::MissingCmd));
        assert_eq!(cmd("cmd=\n"), Err(PmiError::BadName(String::new())));
        assert_eq!(cmd("cmd=frobnicate\n"), Err(PmiError::UnknownCommand("frobnicate".into())));
        assert!(matches!(cmd("cmd=init pmi_version=1\n"), Err(PmiError::MissingAttribute { attr: "pmi_subversion", .. })));
        assert!(matches!(cmd("cmd=init pmi_version=+1 pmi_subversion=1\n"), Err(PmiError::BadValue { .. })));
        assert!(matches!(cmd("cmd=init pmi_version=99999999999 pmi_subversion=1\n"), Err(PmiError::BadValue { .. })));
        assert!(matches!(cmd("cmd=put key=a key=b value=c\n"), Err(PmiError::DuplicateAttribute(_))));
        assert!(matches!(cmd("cmd=put cmd=get key=a value=c\n"), Err(PmiError::DuplicateAttribute(_))));
        assert!(matches!(cmd("cmd=put key= value=c\n"), Err(PmiError::MissingValue(_))));
        assert!(matches!(cmd("cmd=put key=a\\b value=c\n"), Err(PmiError::BadByte { byte: b'\\', offset: 13 })));
        assert!(matches!(cmd("cmd=put ke*y=a value=c\n"), Err(PmiError::BadName(_))));
        assert!(matches!(cmd("cmd=put =a value=c\n"), Err(PmiError::BadName(_))));
        assert!(matches!(cmd("cmd=barrier_in\r\n"), Err(PmiError::BadByte { byte: b'\r', .. })));
        assert!(matches!(cmd("cmd=barrier_in\n\n"), Err(PmiError::BadByte { byte: b'\n', .. })));
        assert!(matches!(Command::parse(b"cmd=put key=\xc3\xa9 value=c"), Err(PmiError::BadByte { byte: 0xc3, .. })));
        let long = format!("cmd=put key=a value={}\n", "x".repeat(MAX_LINE));
        assert_eq!(cmd(&long), Err(PmiError::LineTooLong { max: MAX_LINE }));
        assert!(matches!(resp("cmd=maxes kvsname_max=-1 keylen_max=1 vallen_max=1\n"), Err(PmiError::BadValue { .. })));
        assert!(matches!(resp("cmd=error\n"), Err(PmiError::BadValue { .. })));
        assert!(matches!(resp("cmd=nope\n"), Err(PmiError::UnknownResponse(_))));
    }

    #[test]
    fn tolerates_extra_spaces_and_unknown_attributes() {
        assert_eq!(cmd("cmd=barrier_in  group=WORLD \n"), Ok(Command::BarrierIn));
        assert_eq!(
            resp("cmd=maxes  kvsname_max=1 keylen_max=2  vallen_max=3 extra=x"),
            Ok(Response::Maxes { kvsname_max: 1, keylen_max: 2, vallen_max: 3 })
        );
    }

    #[test]
    fn formatting_refuses_what_would_not_survive() {
        let bad = Command::Put { kvsname: None, key: "a b".into(), value: "c".into() };
        assert!(matches!(bad.to_line(), Err(PmiError::InvalidArgument { what: "key", .. })));
        let bad = Command::Put { kvsname: None, key: "a".into(), value: String::new() };
        assert!(matches!(bad.to_line(), Err(PmiError::InvalidArgument { what: "value", .. })));
        let bad = Command::Abort { exitcode: 1, message: Some("two\nlines".into()) };
        assert!(bad.to_line().is_err());
        let bad = Command::Put { kvsname: None, key: "a".into(), value: "x".repeat(MAX_LINE) };
        assert!(matches!(bad.to_line(), Err(PmiError::TooLong { .. })));
    }

    #[test]
    fn refusal_messages_are_tokens() {
        let r = Response::refusal(ResponseKind::PutResult, "value is 2000 bytes; limit 1024");
        let line = r.to_line().unwrap();
        assert_eq!(line, "cmd=put_result rc=-1 msg=value_is_2000_bytes;_limit_1024\n");
        assert_eq!(Response::parse(line.as_bytes()), Ok(r));
        assert_eq!(msg_token(""), "_");
    }

    #[test]
    fn command_name_of_malformed_lines() {
        assert_eq!(command_name(b"cmd=put key"), Some("put"));
        assert_eq!(command_name(b"cmd=barrier_in"), Some("barrier_in"));
        assert_eq!(command_name(b"cmd=get\n"), Some("get"));
        assert_eq!(command_name(b"cmd=ge*t"), None);
        assert_eq!(command_name(b"garbage"), None);
        assert_eq!(command_name(b"cmd="), None);
    }

    #[test]
    fn splitter_cuts_lines_and_survives_overlong_ones() {
        let mut s = LineSplitter::new();
        s.push(b"cmd=a\ncmd=");
        assert_eq!(s.next_line(), Some(Ok(b"cmd=a".to_vec())));
        assert_eq!(s.next_line(), None);
        assert_eq!(s.pending(), 4);
        s.push(b"b\n");
        assert_eq!(s.next_line(), Some(Ok(b"cmd=b".to_vec())));
        s.push(&vec![b'x'; MAX_LINE + 10]);
        assert_eq!(s.next_line(), Some(Err(PmiError::LineTooLong { max: MAX_LINE })));
        assert_eq!(s.next_line(), None);
        s.push(b"still the long one\ncmd=c\n");
        assert_eq!(s.next_line(), Some(Ok(b"cmd=c".to_vec())));
        assert_eq!(s.next_line(), None);
        // An overlong line that arrives with its newline in one chunk.
        let mut long = vec![b'y'; MAX_LINE + 1];
        long.extend_from_slice(b"\ncmd=d\n");
        s.push(&long);
        assert_eq!(s.next_line(), Some(Err(PmiError::LineTooLong { max: MAX_LINE })));
        assert_eq!(s.next_line(), Some(Ok(b"cmd=d".to_vec())));
        assert_eq!(s.pending(), 0);
    }

    // A PMI value: printable ASCII without space or backslash.
    const VALUE: &str = "[!-\\[\\]-~]{1,40}";
    const NAME: &str = "[a-zA-Z0-9_/-]{1,20}";

    fn any_command() -> impl Strategy<Value = Command> {
        prop_oneof![
            (any::<i32>(), any::<i32>()).prop_map(|(version, subversion)| Command::Init { version, subversion }),
            Just(Command::GetMaxes),
            Just(Command::GetAppnum),
            Just(Command::GetMyKvsname),
            Just(Command::GetUniverseSize),
            (proptest::option::of(VALUE), VALUE, VALUE).prop_map(|(kvsname, key, value)| Command::Put { kvsname, key, value }),
            (proptest::option::of(VALUE), VALUE).prop_map(|(kvsname, key)| Command::Get { kvsname, key }),
            Just(Command::BarrierIn),
            Just(Command::Finalize),
            (any::<i32>(), proptest::option::of("[ -~]{0,60}"))
                .prop_map(|(exitcode, message)| Command::Abort { exitcode, message }),
        ]
    }

    fn any_response() -> impl Strategy<Value = Response> {
        prop_oneof![
            (any::<i32>(), any::<i32>()).prop_map(|(version, subversion)| Response::ResponseToInit { version, subversion }),
            (any::<u32>(), any::<u32>(), any::<u32>()).prop_map(|(kvsname_max, keylen_max, vallen_max)| Response::Maxes {
                kvsname_max,
                keylen_max,
                vallen_max
            }),
            any::<i32>().prop_map(|appnum| Response::Appnum { appnum }),
            VALUE.prop_map(|kvsname| Response::MyKvsname { kvsname }),
            any::<i32>().prop_map(|size| Response::UniverseSize { size }),
            Just(Response::PutResult),
            VALUE.prop_map(|value| Response::GetResult { value }),
            Just(Response::BarrierOut),
            Just(Response::FinalizeAck),
            (0..ResponseKind::ALL.len(), any::<i32>().prop_filter("non-zero", |rc| *rc != 0), proptest::option::of(VALUE))
                .prop_map(|(k, rc, msg)| Response::Failed {
                    kind: ResponseKind::ALL[k],
                    rc: NonZeroI32::new(rc).unwrap(),
                    msg: msg.unwrap_or_default()
                }),
        ]
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
            let _ = Command::parse(&bytes);
            let _ = Response::parse(&bytes);
            let _ = command_name(&bytes);
            let mut s = LineSplitter::new();
            s.push(&bytes);
            while s.next_line().is_some() {}
        }

        #[test]
        fn almost_valid_lines_never_panic(
            cmd in NAME,
            attrs in proptest::collection::vec(("[a-z_=]{0,8}", "[ -~]{0,12}"), 0..6),
            nl in any::<bool>(),
        ) {
            let mut line = format!("cmd={cmd}");
            for (k, v) in attrs {
                line.push_str(&format!(" {k}={v}"));
            }
            if nl { line.push('\n'); }
            let _ = Command::parse(line.as_bytes());
            let _ = Response::parse(line.as_bytes());
        }

        #[test]
        fn commands_round_trip(c in any_command()) {
            let line = c.to_line().unwrap();
            prop_assert!(line.len() <= MAX_LINE);
            prop_assert_eq!(Command::parse(line.as_bytes()), Ok(c.clone()));
            prop_assert_eq!(command_name(line.as_bytes()), Some(c.name()));
        }

        #[test]
        fn responses_round_trip(r in any_response()) {
            let line = r.to_line().unwrap();
            prop_assert_eq!(Response::parse(line.as_bytes()), Ok(r));
        }

        #[test]
        fn splitting_does_not_depend_on_chunking(
            lines in proptest::collection::vec("[ -~]{0,30}", 0..8),
            cuts in proptest::collection::vec(0usize..400, 0..8),
        ) {
            let stream: Vec<u8> = lines.iter().flat_map(|l| format!("{l}\n").into_bytes()).collect();
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(stream.len())).collect();
            cuts.sort();
            let mut s = LineSplitter::new();
            let mut got = Vec::new();
            let mut from = 0;
            for c in cuts.into_iter().chain([stream.len()]) {
                s.push(&stream[from..c]);
                from = c;
                while let Some(line) = s.next_line() {
                    got.push(String::from_utf8(line.unwrap()).unwrap());
                }
            }
            prop_assert_eq!(got, lines);
        }
    }
}
