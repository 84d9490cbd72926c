//! Request state: what a pending send or receive waits for, and how it ended.

use super::matching::Pattern;

/// Engine-wide request id; the API layer maps its handles to these.
pub type ReqId = u64;

/// How a receive ended (source is a world rank; the API layer maps it to the communicator).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Status {
    pub source: u32,
    pub tag: i32,
    /// Bytes delivered into the receive buffer.
    pub bytes: usize,
    pub cancelled: bool,
    /// The message was longer than the buffer (MPI_ERR_TRUNCATE).
    pub truncated: bool,
}

/// Why an operation could not complete.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EngineError {
    /// The connection to this world rank was lost without an orderly goodbye.
    PeerLost(u32),
    /// The process of this world rank (a peer on this host) ended without a goodbye.
    PeerDied { rank: u32, pid: u32 },
    /// A transport failure that ends communication (message names the cause).
    Transport(String),
    /// The context was revoked (fault-tolerant MPI): by this process or by a peer's notice.
    Revoked(u32),
    /// A receive from any source could have matched a message of this world rank, which
    /// failed (fault-tolerant MPI).
    AnySourceFailed(u32),
}

impl std::fmt::Display for EngineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EngineError::PeerLost(r) => write!(f, "connection to rank {r} lost (the process died or closed its socket)"),
            EngineError::PeerDied { rank, pid } => write!(f, "rank {rank} (pid {pid}) died: its process ended without finalizing"),
            EngineError::Transport(s) => f.write_str(s),
            EngineError::Revoked(c) => write!(f, "context {c} was revoked"),
            EngineError::AnySourceFailed(r) => write!(f, "rank {r} failed, and a receive from any source could have matched its message"),
        }
    }
}

pub(crate) enum RecvState {
    /// In the posted queue.
    Posted,
    /// Matched an eager message whose payload is still arriving into an owned buffer.
    AwaitEager,
    /// Matched; the payload is arriving straight into the buffer.
    Receiving,
    /// Rendezvous: CTS sent, data arriving; `got` bytes so far of `total`.
    Rndv { total: u64, got: u64 },
}

pub(crate) struct RecvReq {
    pub buf: *mut u8,
    pub cap: usize,
    pub pat: Pattern,
    pub state: RecvState,
    pub status: Status,
}

pub(crate) enum SendState {
    /// Waiting for its frames to be written (or, for a synchronous eager send, acknowledged).
    InFlight,
    /// Rendezvous: RTS sent, waiting for the receiver's CTS.
    AwaitCts { ptr: *const u8, len: usize, dst: u32 },
}

pub(crate) struct SendReq {
    pub state: SendState,
    pub peer: u32,
}

pub(crate) enum ReqKind {
    Send(SendReq),
    Recv(RecvReq),
}

pub(crate) struct Req {
    pub kind: ReqKind,
    /// Set when the request has completed.
    pub done: Option<Result<Status, EngineError>>,
    /// Freed by the user before completion: drop it silently when it completes.
    pub detached: bool,
    /// Counted on the status board (moving data) until it completes.
    pub busy: bool,
}
