//! Shared-memory transport for ranks of one host: a per-job segment under `/dev/shm` holding a
//! lock-free ring per ordered pair of local ranks, a futex doorbell per rank so a blocked rank
//! sleeps instead of spinning, and the status board; plus single-copy reads (`cma`) for large
//! messages. This module is the mechanism only; the engine decides what goes where.
//!
//! Use: local rank 0 calls [`Segment::create`] (the name is `/ferry-<job id>`), the others
//! [`Segment::open`]; after the bootstrap barrier that follows, any rank may [`unlink`] the
//! name (mappings stay valid), and the launcher unlinks again when the job ends, however it
//! ended. Rank `me` holds `producer(me, d)` and `consumer(s, me)` for every other local rank,
//! and waits on `doorbell(me)` with a condition over all of them (any consumer `has_data`, or
//! a blocked producer's `space_freed`): every ring end rings its peer's doorbell.

pub mod area;
pub mod cma;
pub mod doorbell;
pub mod host;
pub mod ring;
pub mod route;
pub mod segment;
pub mod status;
pub mod watch;

#[cfg(test)]
mod tests;

use std::io;
use std::time::Duration;

pub use area::HostArea;
pub use cma::{cma_available, cma_support, permit_peer_reads, read_remote, read_remote_exact, CmaSupport};
pub use doorbell::{Doorbell, Kick, WaitOutcome};
pub use host::{host_job_id, job_segment_prefix, HostConfig, HostShm, Link};
pub use route::ShmRoute;
pub use ring::{heap_ring, Consumer, PartialWrite, Piece, Producer, RingPair, RECORD_PREFIX};
pub use segment::{segment_name, unlink, Segment, SegmentLayout};
pub use status::{StatusBoard, TransferGuard};
pub use watch::ProcessWatch;

/// Why a shared-memory operation failed.
#[derive(Debug, thiserror::Error)]
pub enum ShmError {
    #[error("job id {0:?} is not 1..=200 characters of [A-Za-z0-9._-]")]
    BadJobId(String),
    #[error("shared-memory segment {0} already exists (another creator, or left by a crashed job)")]
    Exists(String),
    #[error("{op} {name}: {source}")]
    Io { op: &'static str, name: String, source: io::Error },
    #[error("{name}: gave up after {waited:?} waiting for {what}")]
    Timeout { name: String, waited: Duration, what: String },
    #[error("bad segment layout: {0}")]
    Layout(String),
    #[error("no ring from local rank {from} to {to} among {local_ranks}")]
    NoSuchRing { from: usize, to: usize, local_ranks: usize },
    #[error("ring {end} end already held by pid {holder}")]
    Claimed { end: &'static str, holder: u32 },
    #[error("shared memory corrupted: {0}")]
    Corrupt(String),
}
