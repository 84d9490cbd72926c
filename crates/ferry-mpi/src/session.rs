//! MPI-4 sessions: the table of sessions and their process sets, `mpi://WORLD` and
//! `mpi://SELF`, which give groups. Errors of these calls go to the session's error handler.
//! `MPI_Session_init`, which brings the runtime up without `MPI_Init`, is in `lifecycle.rs`
//! (the runtime counts its users); `MPI_Comm_create_from_group`, which makes a communicator
//! from such a group, in `comm/from_group.rs`.

use std::collections::BTreeMap;
use std::os::raw::c_int;
use std::sync::Mutex;

use crate::consts::*;
use crate::error::{err, MpiResult};
use crate::objects::records::Hints;
use crate::objects::Runtime;

/// What a session holds: its error handler and the hints it was started with.
pub(crate) struct Session {
    pub(crate) errhandler: MPI_Errhandler,
    pub(crate) hints: Hints,
}

#[derive(Default)]
pub(crate) struct Table {
    pub(crate) sessions: BTreeMap<MPI_Session, Session>,
    next: i32,
}

static TABLE: Mutex<Option<Table>> = Mutex::new(None);

pub(crate) fn with_table<T>(f: impl FnOnce(&mut Table) -> T) -> T {
    let mut g = TABLE.lock().unwrap_or_else(|p| p.into_inner());
    f(g.get_or_insert_with(Table::default))
}

/// MPICH's "direct" kind for sessions (its `MPI_SESSION_NULL` is 0x38000000).
const SESSION_BASE: i32 = 0xb800_0000u32 as i32;

/// The process sets every process has.
pub(crate) const PSETS: [&str; 2] = ["mpi://WORLD", "mpi://SELF"];

pub(crate) fn check_session(session: MPI_Session) -> MpiResult<()> {
    if with_table(|t| t.sessions.contains_key(&session)) {
        Ok(())
    } else if session == MPI_SESSION_NULL {
        err(MPI_ERR_SESSION, "MPI_SESSION_NULL is not a session")
    } else {
        err(MPI_ERR_SESSION, format!("invalid session handle {session:#x}"))
    }
}

/// The error handler errors of a call on `session` go to: the session's, or for an invalid
/// session that of `MPI_COMM_SELF` (errors tied to no valid object).
pub(crate) fn handler_of(rt: &Runtime, session: MPI_Session) -> MPI_Errhandler {
    with_table(|t| t.sessions.get(&session).map(|s| s.errhandler)).unwrap_or_else(|| rt.errhandler_of(MPI_COMM_SELF))
}

/// The world ranks of process set `name`.
pub(crate) fn pset_members(rt: &Runtime, name: &str) -> MpiResult<Vec<u32>> {
    match name {
        "mpi://WORLD" => Ok(rt.comm(MPI_COMM_WORLD)?.group.to_vec()),
        "mpi://SELF" => Ok(vec![rt.world_rank]),
        _ => err(MPI_ERR_ARG, format!("no process set is named {name:?} (there are {})", PSETS.join(", "))),
    }
}

pub(crate) fn thread_level_name(level: c_int) -> &'static str {
    ["MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED", "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"].get(level as usize).copied().unwrap_or("MPI_THREAD_SINGLE")
}

/// The thread level a session's `thread_level` hint asks for (`MPI_THREAD_SINGLE` if none).
pub(crate) fn requested_level(hints: &Hints) -> c_int {
    let asked = hints.iter().find(|(k, _)| k == "thread_level").map(|(_, v)| v.as_str());
    match asked {
        Some("MPI_THREAD_MULTIPLE") => MPI_THREAD_MULTIPLE,
        Some("MPI_THREAD_SERIALIZED") => MPI_THREAD_SERIALIZED,
        Some("MPI_THREAD_FUNNELED") => MPI_THREAD_FUNNELED,
        _ => MPI_THREAD_SINGLE,
    }
}

/// Register a new session with its error handler and hints; its handle.
pub(crate) fn open(errhandler: MPI_Errhandler, hints: Hints) -> MPI_Session {
    with_table(|t| {
        t.next += 1;
        let h = SESSION_BASE | (t.next & 0x03ff_ffff);
        t.sessions.insert(h, Session { errhandler, hints });
        h
    })
}
