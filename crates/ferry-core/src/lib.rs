//! Ferry's runtime below the API layer: the configuration registry, bootstrap through PMI-1,
//! the transports that move frames, the engine that matches and completes messages, and the
//! datatype maps that say which bytes of a user buffer a message covers.

pub mod bootstrap;
pub mod bufpool;
pub mod config;
pub mod datatype;
pub mod engine;
pub mod fastmap;
pub mod log;
pub mod reduce_op;
pub mod sync;
pub mod transport;

// The faces start from a job and reach nothing else of the bootstrap.
pub use bootstrap::{Job, JobError};
