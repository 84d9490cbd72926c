//! Ferry's runtime below the API layer: the configuration registry, bootstrap through PMI-1,
//! the transports that move frames, and the engine that matches and completes messages.
//! Datatype maps and reduction kernels are pure and live in `ferry-data`.

pub mod bootstrap;
pub mod bufpool;
pub mod config;
pub mod engine;
pub mod fastmap;
pub mod log;
mod small_copy;
pub mod sync;
pub mod transport;

// The faces start from a job and reach nothing else of the bootstrap.
pub use bootstrap::{Job, JobError, Locate, NodeMode};
/// Dynamic processes: two jobs meet through a port and join a bridge (docs/dynamic.md).
pub use bootstrap::meeting::{Meeting, MeetingError, Side};
pub use bootstrap::port::{connect as connect_port, Port, PortError};
pub use bootstrap::{SpawnCommand, SpawnRequest};
