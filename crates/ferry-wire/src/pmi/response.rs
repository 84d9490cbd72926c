//! The replies of the process manager: their names, parsing them from a line and writing
//! them in the exact form Hydra does. A reply with a non-zero `rc` is a refusal.

use std::fmt;
use std::num::NonZeroI32;

use super::line::{msg_token, LineWriter, RawLine};
use super::PmiError;

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
    /// Ferry's answer to `ferry_spawn`: the children's job name.
    SpawnResult,
    PublishResult,
    LookupResult,
    UnpublishResult,
    /// Not part of PMI-1: our server's answer to a line it cannot attribute to any command.
    Error,
}

impl ResponseKind {
    pub const ALL: [ResponseKind; 14] = [
        ResponseKind::ResponseToInit,
        ResponseKind::Maxes,
        ResponseKind::Appnum,
        ResponseKind::MyKvsname,
        ResponseKind::UniverseSize,
        ResponseKind::PutResult,
        ResponseKind::GetResult,
        ResponseKind::BarrierOut,
        ResponseKind::FinalizeAck,
        ResponseKind::SpawnResult,
        ResponseKind::PublishResult,
        ResponseKind::LookupResult,
        ResponseKind::UnpublishResult,
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
            ResponseKind::SpawnResult => "ferry_spawn_result",
            ResponseKind::PublishResult => "publish_result",
            ResponseKind::LookupResult => "lookup_result",
            ResponseKind::UnpublishResult => "unpublish_result",
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
    /// `cmd=ferry_spawn_result rc=0 kvsname=K`
    SpawnResult { kvsname: String },
    /// `cmd=publish_result rc=0`
    PublishResult,
    /// `cmd=lookup_result rc=0 port=P`
    LookupResult { port: String },
    /// `cmd=unpublish_result rc=0`
    UnpublishResult,
    /// Any reply with a non-zero `rc`, e.g. `cmd=get_result rc=-1 msg=key_x_not_found`.
    Failed { kind: ResponseKind, rc: NonZeroI32, msg: String },
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
            Response::SpawnResult { .. } => ResponseKind::SpawnResult,
            Response::PublishResult => ResponseKind::PublishResult,
            Response::LookupResult { .. } => ResponseKind::LookupResult,
            Response::UnpublishResult => ResponseKind::UnpublishResult,
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
            ResponseKind::SpawnResult => Response::SpawnResult { kvsname: raw.require("kvsname")?.to_owned() },
            ResponseKind::PublishResult => Response::PublishResult,
            ResponseKind::LookupResult => Response::LookupResult { port: raw.require("port")?.to_owned() },
            ResponseKind::UnpublishResult => Response::UnpublishResult,
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
            Response::SpawnResult { kvsname } => {
                w.int("rc", 0);
                w.value("kvsname", kvsname)?;
            }
            Response::LookupResult { port } => {
                w.int("rc", 0);
                w.value("port", port)?;
            }
            Response::PublishResult | Response::UnpublishResult => w.int("rc", 0),
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
