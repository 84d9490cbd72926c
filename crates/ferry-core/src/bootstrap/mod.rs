//! Bootstrap: the PMI-1 wire protocol, its client (in every rank) and server (in the launcher).
//!
//! `pmi_wire` is the pure codec, `pmi_server` the launcher's pure state machine for a job of
//! N ranks, `pmi_client` the blocking client the MPI library calls during `MPI_Init`. The
//! client works under `ferry run` and under any PMI-1 launcher (MPICH's Hydra, Slurm's PMI-1).
//!
//! `job` turns a launch into a [`Job`] and a ready engine: the one start-up of every face;
//! `node` does the same for an MCAPI node, which may also start without a launcher, from a
//! hosts file (`hosts_file`, a pure parser) or a same-host rendezvous (`rendezvous`).
//!
//! `meeting` (pure) and `port` (its driver) let two jobs meet at run time through a port
//! name and become each other's engine peers (a bridge): see docs/dynamic.md.

pub mod dial_plan;
pub mod hosts_file;
pub mod job;
pub mod meeting;
pub mod node;
pub mod pmi_client;
pub mod pmi_server;
pub mod port;
pub mod rendezvous;
mod singleton_spawn;
pub use ferry_wire::pmi as pmi_wire;

pub use job::{Job, JobError};
pub use node::{Locate, NodeMode};
pub use pmi_client::PmiClient;
pub use pmi_server::{Action, NameRequest, PmiServer, RankState};
pub use pmi_wire::{Command, LineSplitter, PmiError, Response, ResponseKind, SpawnCommand, SpawnRequest};

/// KVS key under which `ferry run` hands every rank the per-job secret (64 lowercase hex
/// digits: 32 random bytes). Only ever travels through PMI, never on a command line or in
/// the environment.
pub const JOB_SECRET_KEY: &str = "ferry-job-secret";
/// The key under which `ferry run` leaves, in a spawned job's key-value space, the port
/// name its parents accept on.
pub const PARENT_PORT_KEY: &str = "ferry-parent-port";

/// KVS key under which rank 0 publishes a secret it generated when the launcher did not seed
/// [`JOB_SECRET_KEY`] (a foreign launcher such as Hydra). A different key from the launcher's,
/// so that whether the launcher seeded the secret reads the same in every rank, whenever
/// each rank looks.
pub const JOB_SECRET_FALLBACK_KEY: &str = "ferry-job-secret-from-rank0";

/// KVS key MPICH reads to learn which ranks share a node; the server seeds it.
pub const PMI_PROCESS_MAPPING_KEY: &str = "PMI_process_mapping";

/// Length of the hex form of the job secret.
pub const JOB_SECRET_HEX_LEN: usize = 64;

/// Whether `s` has the form of a job secret: 64 lowercase hex digits.
pub fn is_job_secret(s: &str) -> bool {
    s.len() == JOB_SECRET_HEX_LEN && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Hex form of 32 secret bytes.
pub fn job_secret_hex(bytes: &[u8; 32]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A fresh job secret from the operating system's random source.
pub fn generate_job_secret() -> Result<String, PmiError> {
    let mut bytes = [0u8; 32];
    getrandom::getrandom(&mut bytes).map_err(|e| PmiError::Io(format!("cannot generate the job secret: {e}")))?;
    Ok(job_secret_hex(&bytes))
}
