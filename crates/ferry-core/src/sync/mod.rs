//! Waiting and ordering primitives below every layer: the futex calls that both the
//! shared-memory doorbells and the API layers' own threads (a progress thread) sleep on, and
//! the process-wide barrier of an elided lock. Nothing here knows of rings, sockets or ranks.

pub mod futex;
pub mod membarrier;
pub mod readable;

pub use futex::{futex_wait, futex_wake};
pub use readable::wait_readable;
