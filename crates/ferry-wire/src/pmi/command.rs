//! The requests a rank sends to its process manager: parsing them from a line and writing
//! them as one, and which reply each one waits for.

use super::line::{is_name_byte, LineWriter, RawLine};
use super::{PmiError, ResponseKind};

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
    /// `cmd=ferry_spawn request=HEX`: start a job of children (Ferry's own command; the
    /// request is a [`SpawnRequest`](super::SpawnRequest) in hex, so that arguments with
    /// spaces survive the line).
    Spawn { request: String },
    /// `cmd=publish_name service=S port=P`
    PublishName { service: String, port: String },
    /// `cmd=lookup_name service=S`
    LookupName { service: String },
    /// `cmd=unpublish_name service=S`
    UnpublishName { service: String },
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
            Command::Spawn { .. } => "ferry_spawn",
            Command::PublishName { .. } => "publish_name",
            Command::LookupName { .. } => "lookup_name",
            Command::UnpublishName { .. } => "unpublish_name",
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
            "ferry_spawn" => Command::Spawn { request: raw.require("request")?.to_owned() },
            "publish_name" => {
                Command::PublishName { service: raw.require("service")?.to_owned(), port: raw.require("port")?.to_owned() }
            }
            "lookup_name" => Command::LookupName { service: raw.require("service")?.to_owned() },
            "unpublish_name" => Command::UnpublishName { service: raw.require("service")?.to_owned() },
            other => return Err(PmiError::UnknownCommand(other.to_owned())),
        };
        Ok(command)
    }

    /// The line for this command, newline included. Fails when a field would not survive
    /// the trip (a space in a value, an empty key, a line over [`MAX_LINE`](super::MAX_LINE)).
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
            Command::Spawn { request } => w.value("request", request)?,
            Command::PublishName { service, port } => {
                w.value("service", service)?;
                w.value("port", port)?;
            }
            Command::LookupName { service } | Command::UnpublishName { service } => w.value("service", service)?,
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
        "ferry_spawn" => ResponseKind::SpawnResult,
        "publish_name" => ResponseKind::PublishResult,
        "lookup_name" => ResponseKind::LookupResult,
        "unpublish_name" => ResponseKind::UnpublishResult,
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
