//! Ferry's MCAPI face: the Multicore Communications API 2.0 (`include/mcapi.h`,
//! `libmcapi.so`) on the same engine and routes as the MPI face.
//!
//! - `wire`: the MCAPI frame codec (pure, fuzzed);
//! - `core`: one node's endpoints, messages, channels and requests (sans IO);
//! - `driver`: a node's process: bootstrap, the engine, the communication thread, waits;
//! - `shared_slots`: the host memory of packet channels' receive slots;
//! - `api`: the C functions.

pub mod api;
pub mod core;
pub mod driver;
pub mod shared_slots;
pub mod wire;
