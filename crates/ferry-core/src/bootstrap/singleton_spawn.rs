//! Spawn from a singleton (a program started without a launcher): with no launcher to ask,
//! the process starts one itself — `ferry run` for the children, told the parent's port in
//! `FERRY_PARENT_PORT` — ties it to its own life (the kernel kills it when the singleton dies,
//! and its ranks die with it) and waits for it at the end.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use super::SpawnRequest;
use crate::config;

/// Start `ferry run` for the one command of `request`.
pub(super) fn start(request: &SpawnRequest, universe: u32) -> Result<Child, String> {
    let [c] = request.commands.as_slice() else {
        return Err("a singleton spawns one command at a time (start the parents with ferry run for MPI_Comm_spawn_multiple)".into());
    };
    if u64::from(c.nprocs) + 1 > u64::from(universe) {
        return Err(format!("{} more processes would exceed the universe size {universe} (see FERRY_UNIVERSE_SIZE)", c.nprocs));
    }
    let ferry = find_ferry()?;
    let mut program = PathBuf::from(OsStr::from_bytes(&c.program));
    if !c.path.is_empty() && !c.program.contains(&b'/') {
        let p = Path::new(OsStr::from_bytes(&c.path)).join(&program);
        if p.is_file() {
            program = p;
        }
    }
    let mut cmd = Command::new(&ferry);
    cmd.arg("run").arg("-n").arg(c.nprocs.to_string()).arg("--universe-size").arg(c.nprocs.to_string());
    // The port name is a capability: in the environment, which only its owner can read,
    // not on a command line every local user can.
    cmd.env(config::PARENT_PORT.name, OsStr::from_bytes(&request.port)).arg("--").arg(program);
    cmd.args(c.args.iter().map(|a| OsStr::from_bytes(a)));
    cmd.current_dir(OsStr::from_bytes(&c.wdir)).stdin(Stdio::null());
    // SAFETY: getpid is always safe.
    let me = unsafe { libc::getpid() };
    // SAFETY: runs between fork and exec and calls only prctl, getppid and _exit, which are
    // async-signal-safe.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) != 0 || libc::getppid() != me {
                libc::_exit(127);
            }
            Ok(())
        });
    }
    cmd.spawn().map_err(|e| format!("cannot start {}: {e}", ferry.display()))
}

/// `FERRY_BINARY`, else `ferry` beside the library (an installation's bin/, the build tree's
/// target/release), else on `PATH`.
fn find_ferry() -> Result<PathBuf, String> {
    if config::FERRY_BINARY.is_set() {
        return Ok(PathBuf::from(config::FERRY_BINARY.value()));
    }
    let mut candidates = Vec::new();
    if let Some(dir) = library_dir() {
        for rel in ["ferry", "../bin/ferry", "../target/release/ferry", "../release/ferry"] {
            candidates.push(dir.join(rel));
        }
    }
    if let Some(path) = std::env::var_os("PATH") {
        candidates.extend(std::env::split_paths(&path).map(|d| d.join("ferry")));
    }
    candidates
        .into_iter()
        .find(|c| c.is_file())
        .ok_or_else(|| "no ferry program to run the children (set FERRY_BINARY, or put ferry on PATH)".to_string())
}

/// The directory of the shared object this code is in (libmpi), as the dynamic linker
/// loaded it.
fn library_dir() -> Option<PathBuf> {
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr reads the address of a function of this object and fills `info`.
    let found = unsafe { libc::dladdr(library_dir as *const libc::c_void, &mut info) };
    if found == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dladdr gives a NUL-terminated path that lives as long as the object is loaded.
    let path = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) };
    let path = std::fs::canonicalize(OsStr::from_bytes(path.to_bytes())).ok()?;
    path.parent().map(Path::to_path_buf)
}
