//! `MPI_Comm_spawn` and `MPI_Comm_spawn_multiple`: the parents' root asks the launcher for a
//! job of children that will connect to a port the root opened (`Role::Spawn`); every
//! parent then takes part in the meeting as in `MPI_Comm_accept`. A spawned job's
//! `MPI_Init` connects to that port over `MPI_COMM_WORLD` (`join_parents`).

use std::os::unix::ffi::OsStringExt;
use std::path::Path;

use ferry_core::{SpawnCommand, SpawnRequest};

use super::{meet, Role};
use crate::consts::*;
use crate::error::{err, MpiError, MpiResult};
use crate::info;
use crate::objects::Runtime;

/// One command of a spawn as the C caller gave it (read at the root only).
pub(crate) struct SpawnArgs {
    pub program: String,
    pub args: Vec<Vec<u8>>,
    pub maxprocs: i32,
    pub info: MPI_Info,
}

/// Spawn the children `commands` describe (`Some` at `root` only) from intracommunicator
/// `comm`: the intercommunicator to them. Every member returns the same error class when
/// the children could not be started (`MPI_ERR_SPAWN`), the root the precise reason.
pub(crate) fn spawn(rt: &mut Runtime, comm: i32, root: i32, commands: Option<Vec<SpawnArgs>>) -> MpiResult<i32> {
    let request = commands.map(|c| request(rt, c));
    let role = Role::Spawn(request.as_ref().and_then(|r| r.as_ref().ok()));
    let met = meet(rt, comm, root, role);
    match request {
        // The root's own reason beats the group's generic one.
        Some(Err(e)) => Err(e),
        _ => met,
    }
}

/// In a spawned job's `MPI_Init`: connect to the parents over `MPI_COMM_WORLD` and keep the
/// intercommunicator as the parent. Nothing in a job that was not spawned.
pub(crate) fn join_parents(rt: &mut Runtime) -> MpiResult<()> {
    let port = rt.job().parent_port().map_err(|e| MpiError::new(MPI_ERR_SPAWN, format!("cannot learn the parents' port: {e}")))?;
    if let Some(port) = port {
        rt.parent = meet(rt, MPI_COMM_WORLD, 0, Role::Connect(&port))?;
    }
    Ok(())
}

/// The launcher's request for `commands` (the port is filled in by the root's meeting).
fn request(rt: &mut Runtime, commands: Vec<SpawnArgs>) -> MpiResult<SpawnRequest> {
    let cwd = std::env::current_dir().map_err(|e| MpiError::new(MPI_ERR_SPAWN, format!("cannot read the working directory: {e}")))?;
    let mut out = Vec::with_capacity(commands.len());
    let mut total: i64 = 0;
    for c in commands {
        if c.maxprocs < 1 {
            return err(MPI_ERR_ARG, format!("maxprocs {} for {:?}: at least one process", c.maxprocs, c.program));
        }
        total += i64::from(c.maxprocs);
        if c.program.is_empty() {
            return err(MPI_ERR_ARG, "the command is empty");
        }
        let mut cmd = SpawnCommand { program: c.program.into_bytes(), args: c.args, nprocs: c.maxprocs as u32, wdir: Vec::new(), path: Vec::new() };
        let mut wdir = cwd.clone();
        if c.info != MPI_INFO_NULL {
            let hints = info::hints(rt, c.info)?;
            if let Some(w) = info::lookup(&hints, "wdir") {
                wdir = cwd.join(w);
            }
            if let Some(p) = info::lookup(&hints, "path") {
                cmd.path = cwd.join(p).into_os_string().into_vec();
            }
            if let Some(h) = info::lookup(&hints, "host") {
                check_host(rt, h)?;
            }
            for key in ["hostfile", "add-hostfile"] {
                if let Some(f) = info::lookup(&hints, key) {
                    check_hostfile(rt, &cwd.join(f))?;
                }
            }
        }
        cmd.wdir = wdir.into_os_string().into_vec();
        out.push(cmd);
    }
    if total > i64::from(rt.universe) {
        return err(MPI_ERR_SPAWN, format!("{total} processes asked for; MPI_UNIVERSE_SIZE is {}", rt.universe));
    }
    Ok(SpawnRequest { port: Vec::new(), commands: out })
}

/// Whether `host` names this host (spawn starts children here only).
fn is_this_host(rt: &mut Runtime, host: &str) -> bool {
    let me = rt.job().processor_name().to_owned();
    let short = |h: &str| h.split('.').next().unwrap_or(h).to_owned();
    matches!(host, "localhost" | "127.0.0.1" | "::1") || host == me || short(host) == short(&me)
}

fn check_host(rt: &mut Runtime, host: &str) -> MpiResult<()> {
    if is_this_host(rt, host.trim()) {
        Ok(())
    } else {
        err(MPI_ERR_SPAWN, format!("host {host:?}: ferry run starts spawned processes on its own host only"))
    }
}

/// A hostfile may name this host only (first word of each line; `#` starts a comment).
fn check_hostfile(rt: &mut Runtime, file: &Path) -> MpiResult<()> {
    let text = std::fs::read_to_string(file).map_err(|e| MpiError::new(MPI_ERR_SPAWN, format!("hostfile {}: {e}", file.display())))?;
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        if let Some(host) = line.split_whitespace().next() {
            let host = host.split(':').next().unwrap_or(host);
            check_host(rt, host)?;
        }
    }
    Ok(())
}
