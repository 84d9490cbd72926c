//! The grammar both sides share: which bytes may appear in names, values and messages,
//! cutting a line into its command name and attributes, and writing one with every value
//! checked.

use std::fmt;

use super::{PmiError, MAX_LINE};

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

pub(super) fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'/'
}

fn is_value_byte(b: u8) -> bool {
    (0x21..=0x7e).contains(&b) && b != b'\\'
}

fn is_message_byte(b: u8) -> bool {
    (0x20..=0x7e).contains(&b)
}

/// A line cut into its command name and attributes, all borrowed from the input.
pub(super) struct RawLine<'a> {
    pub(super) cmd: &'a str,
    attrs: Vec<(&'a str, &'a str)>,
    /// The free-text `message` of `abort`.
    pub(super) message: Option<&'a str>,
}

impl<'a> RawLine<'a> {
    pub(super) fn split(line: &'a [u8]) -> Result<RawLine<'a>, PmiError> {
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

    pub(super) fn get(&self, attr: &str) -> Option<&'a str> {
        self.attrs.iter().find(|(k, _)| *k == attr).map(|(_, v)| *v)
    }

    pub(super) fn require(&self, attr: &'static str) -> Result<&'a str, PmiError> {
        self.get(attr).ok_or_else(|| PmiError::MissingAttribute { cmd: self.cmd.to_owned(), attr })
    }

    pub(super) fn int(&self, attr: &'static str) -> Result<i32, PmiError> {
        let v = self.require(attr)?;
        parse_int(v).ok_or_else(|| PmiError::BadValue {
            cmd: self.cmd.to_owned(),
            attr,
            value: v.to_owned(),
            expected: "a decimal 32-bit integer",
        })
    }

    pub(super) fn uint(&self, attr: &'static str) -> Result<u32, PmiError> {
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
pub(super) struct LineWriter {
    line: String,
}

impl LineWriter {
    pub(super) fn new(cmd: &str) -> LineWriter {
        LineWriter { line: format!("cmd={cmd}") }
    }

    pub(super) fn int(&mut self, attr: &str, v: impl fmt::Display) {
        self.line.push_str(&format!(" {attr}={v}"));
    }

    pub(super) fn value(&mut self, attr: &'static str, v: &str) -> Result<(), PmiError> {
        check_value(attr, v)?;
        self.line.push_str(&format!(" {attr}={v}"));
        Ok(())
    }

    pub(super) fn message(&mut self, m: &str) -> Result<(), PmiError> {
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

    pub(super) fn finish(mut self) -> Result<String, PmiError> {
        self.line.push('\n');
        if self.line.len() > MAX_LINE {
            return Err(PmiError::TooLong { what: "line", len: self.line.len(), max: MAX_LINE });
        }
        Ok(self.line)
    }
}
