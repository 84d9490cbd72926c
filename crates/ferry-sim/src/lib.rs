//! Ferry's discrete-event simulator. It runs the schedules of `ferry-coll` — the very ones
//! the engine executes — under a LogGP cost model whose parameters may depend on the number
//! of communicating processes (nLogP, `ferry-model`), with one send and one receive port per
//! node, interfering background transfers and a cost for reading node status. Pure code: no
//! clocks, threads or I/O; the same inputs give the same outputs bit for bit.
//!
//! - [`engine`]: the event loop and the cost of a message;
//! - [`background`]: interfering traffic and the patterns of the status-based study;
//! - [`collective`]: one collective call, status reads included;
//! - [`occ_mpe`]: the status-based collectives study (SEEDS.md S1);
//! - [`sweep`]: algorithms compared over process counts and sizes;
//! - [`trace`]: per-message timelines as JSON lines or Chrome trace events.

pub mod background;
pub mod collective;
pub mod engine;
pub mod occ_mpe;
mod program;
pub mod sweep;
pub mod trace;

pub use engine::{MessageRecord, Outcome, Ports, Sim, SimError, Time, Transfer};
