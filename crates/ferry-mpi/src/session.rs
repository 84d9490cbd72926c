//! MPI-4 sessions: `MPI_Session_init` brings the runtime up without `MPI_Init` (the runtime
//! counts its users, see `runtime.rs`), process sets `mpi://WORLD` and `mpi://SELF` give
//! groups, and `MPI_Comm_create_from_group` makes a communicator from a group without a
//! parent communicator. Errors of these calls go to the session's error handler.

use std::collections::BTreeMap;
use std::ffi::CStr;
use std::os::raw::{c_char, c_int};
use std::sync::{Arc, Mutex};

use crate::boundary::{call, call_anytime, die};
use crate::comm::{out_arg, Comm};
use crate::consts::*;
use crate::errhandler::{check_errhandler, CommErrhandlerFn};
use crate::error::{err, MpiError, MpiResult};
use crate::info::Hints;
use crate::runtime::{self, Runtime};

/// What a session holds: its error handler and the hints it was started with.
struct Session {
    errhandler: MPI_Errhandler,
    hints: Hints,
}

#[derive(Default)]
struct Table {
    sessions: BTreeMap<MPI_Session, Session>,
    next: i32,
}

static TABLE: Mutex<Option<Table>> = Mutex::new(None);

fn with_table<T>(f: impl FnOnce(&mut Table) -> T) -> T {
    let mut g = TABLE.lock().unwrap_or_else(|p| p.into_inner());
    f(g.get_or_insert_with(Table::default))
}

/// MPICH's "direct" kind for sessions (its `MPI_SESSION_NULL` is 0x38000000).
const SESSION_BASE: i32 = 0xb800_0000u32 as i32;

/// The process sets every process has.
const PSETS: [&str; 2] = ["mpi://WORLD", "mpi://SELF"];

fn check_session(session: MPI_Session) -> MpiResult<()> {
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
fn handler_of(rt: &Runtime, session: MPI_Session) -> MPI_Errhandler {
    with_table(|t| t.sessions.get(&session).map(|s| s.errhandler)).unwrap_or_else(|| rt.errhandler_of(MPI_COMM_SELF))
}

/// Run `body` as the MPI function `name`; an error goes to the handler `eh` picks (given the
/// runtime), which a user handler receives with `object` (the session) as its handle.
fn call_with(name: &'static str, object: c_int, eh: impl FnOnce(&Runtime) -> MPI_Errhandler, body: impl FnOnce(&mut Runtime) -> MpiResult<()>) -> c_int {
    let mut failed: Option<(MpiError, MPI_Errhandler)> = None;
    let rc = call(name, MPI_COMM_SELF, |rt| {
        if let Err(e) = body(rt) {
            let h = eh(rt);
            failed = Some((e, h));
        }
        Ok(())
    });
    if rc != MPI_SUCCESS {
        return rc;
    }
    match failed {
        None => MPI_SUCCESS,
        Some((e, h)) => raise(name, object, h, e),
    }
}

/// Apply error handler `eh` to `e` (no lock held).
fn raise(name: &str, object: c_int, eh: MPI_Errhandler, e: MpiError) -> c_int {
    if eh == MPI_ERRORS_RETURN {
        return e.class;
    }
    if let Some(f) = crate::errhandler::user_handler(eh) {
        crate::errhandler::invoke(f, object, e.class);
        return e.class;
    }
    let msg = format!("Fatal error in {name}: {e}");
    let code = e.class.max(1);
    match runtime::lock().as_mut() {
        Some(rt) => rt.abort_job(&msg, code),
        None => die(&msg, code),
    }
}

fn c_string(p: *const c_char, what: &str, max: c_int) -> MpiResult<String> {
    if p.is_null() {
        return err(MPI_ERR_ARG, format!("{what} is NULL"));
    }
    // SAFETY: MPI passes a NUL-terminated string (checked non-null above).
    let b = unsafe { CStr::from_ptr(p) }.to_bytes();
    if b.len() >= max as usize {
        return err(MPI_ERR_ARG, format!("{what} has {} bytes; at most {} fit", b.len(), max - 1));
    }
    Ok(String::from_utf8_lossy(b).into_owned())
}

/// The world ranks of process set `name`.
fn pset_members(rt: &Runtime, name: &str) -> MpiResult<Vec<u32>> {
    match name {
        "mpi://WORLD" => Ok(rt.comm(MPI_COMM_WORLD)?.group.to_vec()),
        "mpi://SELF" => Ok(vec![rt.world_rank]),
        _ => err(MPI_ERR_ARG, format!("no process set is named {name:?} (there are {})", PSETS.join(", "))),
    }
}

fn thread_level_name(level: c_int) -> &'static str {
    ["MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED", "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"].get(level as usize).copied().unwrap_or("MPI_THREAD_SINGLE")
}

/// The thread level a session's `thread_level` hint asks for (`MPI_THREAD_SINGLE` if none).
fn requested_level(hints: &Hints) -> c_int {
    let asked = hints.iter().find(|(k, _)| k == "thread_level").map(|(_, v)| v.as_str());
    match asked {
        Some("MPI_THREAD_MULTIPLE") => MPI_THREAD_MULTIPLE,
        Some("MPI_THREAD_SERIALIZED") => MPI_THREAD_SERIALIZED,
        Some("MPI_THREAD_FUNNELED") => MPI_THREAD_FUNNELED,
        _ => MPI_THREAD_SINGLE,
    }
}

fn session_init(info: MPI_Info, errhandler: MPI_Errhandler, session: *mut MPI_Session) -> MpiResult<()> {
    let o = out_arg(session, "session")?;
    check_errhandler(errhandler)?;
    // The info object lives in the runtime: without one yet, only MPI_INFO_NULL can be valid.
    let hints = match crate::runtime::lock().as_ref() {
        Some(rt) => crate::info::optional(rt, info)?,
        None if info == MPI_INFO_NULL => Vec::new(),
        None => return err(MPI_ERR_INFO, format!("invalid info handle {info:#x} (no info object exists before the first session or MPI_Init)")),
    };
    runtime::session_begin(requested_level(&hints))?;
    *o = with_table(|t| {
        t.next += 1;
        let h = SESSION_BASE | (t.next & 0x03ff_ffff);
        t.sessions.insert(h, Session { errhandler, hints });
        h
    });
    Ok(())
}

crate::mpi_export! { MPI_Session_init, PMPI_Session_init, (info: MPI_Info, errhandler: MPI_Errhandler, session: *mut MPI_Session) {
    // No session (and maybe no runtime) yet: errors go to the handler being installed when it
    // is a valid one, else they are fatal.
    call_anytime("MPI_Session_init", || match session_init(info, errhandler, session) {
        Ok(()) => MPI_SUCCESS,
        Err(e) => {
            let eh = if check_errhandler(errhandler).is_ok() { errhandler } else { MPI_ERRORS_ARE_FATAL };
            raise("MPI_Session_init", MPI_SESSION_NULL, eh, e)
        }
    })
}}

crate::mpi_export! { MPI_Session_finalize, PMPI_Session_finalize, (session: *mut MPI_Session) {
    // SAFETY: MPI passes a pointer to the caller's handle; checked for NULL first.
    let h = if session.is_null() { MPI_SESSION_NULL } else { unsafe { *session } };
    let rc = call_with("MPI_Session_finalize", h, |rt| handler_of(rt, h), |_| {
        let o = out_arg(session, "session")?;
        check_session(h)?;
        with_table(|t| t.sessions.remove(&h));
        *o = MPI_SESSION_NULL;
        Ok(())
    });
    if rc != MPI_SUCCESS {
        return rc;
    }
    // Outside the runtime's lock: the last user takes the runtime down.
    call_anytime("MPI_Session_finalize", || match runtime::session_end() {
        Ok(()) => MPI_SUCCESS,
        Err(e) => die(&format!("Fatal error in MPI_Session_finalize: {e}"), 1),
    })
}}

crate::mpi_export! { MPI_Session_get_num_psets, PMPI_Session_get_num_psets, (session: MPI_Session, info: MPI_Info, npset_names: *mut c_int) {
    call_with("MPI_Session_get_num_psets", session, |rt| handler_of(rt, session), |rt| {
        check_session(session)?;
        crate::info::optional(rt, info)?;
        *out_arg(npset_names, "npset_names")? = PSETS.len() as c_int;
        Ok(())
    })
}}

crate::mpi_export! { MPI_Session_get_nth_pset, PMPI_Session_get_nth_pset, (session: MPI_Session, info: MPI_Info, n: c_int, pset_len: *mut c_int, pset_name: *mut c_char) {
    call_with("MPI_Session_get_nth_pset", session, |rt| handler_of(rt, session), |rt| {
        check_session(session)?;
        crate::info::optional(rt, info)?;
        let len = out_arg(pset_len, "pset_len")?;
        let Some(name) = usize::try_from(n).ok().and_then(|i| PSETS.get(i)) else {
            return err(MPI_ERR_ARG, format!("n {n} is not in 0..{}", PSETS.len()));
        };
        if *len < 0 {
            return err(MPI_ERR_ARG, format!("pset_len {} is negative", *len));
        }
        // With room for nothing, only the length (with the NUL) is asked for.
        if *len > 0 {
            if pset_name.is_null() {
                return err(MPI_ERR_ARG, "pset_name is NULL");
            }
            let k = name.len().min(*len as usize - 1);
            // SAFETY: the caller's buffer holds `*len` bytes (MPI's contract); we write k + 1.
            unsafe {
                std::ptr::copy_nonoverlapping(name.as_ptr() as *const c_char, pset_name, k);
                *pset_name.add(k) = 0;
            }
        }
        *len = name.len() as c_int + 1;
        Ok(())
    })
}}

crate::mpi_export! { MPI_Session_get_info, PMPI_Session_get_info, (session: MPI_Session, info_used: *mut MPI_Info) {
    call_with("MPI_Session_get_info", session, |rt| handler_of(rt, session), |rt| {
        check_session(session)?;
        let o = out_arg(info_used, "info_used")?;
        let mut hints = with_table(|t| t.sessions.get(&session).map(|s| s.hints.clone())).unwrap_or_default();
        crate::info::set(&mut hints, "thread_level", thread_level_name(rt.thread_level));
        *o = rt.infos.add(hints);
        Ok(())
    })
}}

crate::mpi_export! { MPI_Session_get_pset_info, PMPI_Session_get_pset_info, (session: MPI_Session, pset_name: *const c_char, info: *mut MPI_Info) {
    call_with("MPI_Session_get_pset_info", session, |rt| handler_of(rt, session), |rt| {
        check_session(session)?;
        let o = out_arg(info, "info")?;
        let name = c_string(pset_name, "pset_name", MPI_MAX_PSET_NAME_LEN)?;
        let size = pset_members(rt, &name)?.len();
        *o = rt.infos.add(vec![("mpi_size".to_string(), size.to_string())]);
        Ok(())
    })
}}

crate::mpi_export! { MPI_Group_from_session_pset, PMPI_Group_from_session_pset, (session: MPI_Session, pset_name: *const c_char, newgroup: *mut MPI_Group) {
    call_with("MPI_Group_from_session_pset", session, |rt| handler_of(rt, session), |rt| {
        check_session(session)?;
        let o = out_arg(newgroup, "newgroup")?;
        let name = c_string(pset_name, "pset_name", MPI_MAX_PSET_NAME_LEN)?;
        let members = pset_members(rt, &name)?;
        *o = rt.add_group(Arc::new(members));
        Ok(())
    })
}}

/// What every creation of a communicator from groups takes besides its groups (MPI-4 7.4.2,
/// 7.6.2): the string tag, the hints and the error handler for the new communicator.
pub(crate) struct FromGroups {
    pub stringtag: String,
    hints: Hints,
    errhandler: MPI_Errhandler,
}

impl FromGroups {
    pub(crate) fn new(rt: &Runtime, stringtag: *const c_char, info: MPI_Info, errhandler: MPI_Errhandler) -> MpiResult<Self> {
        let stringtag = c_string(stringtag, "stringtag", MPI_MAX_STRINGTAG_LEN)?;
        let hints = crate::info::optional(rt, info)?;
        check_errhandler(errhandler)?;
        Ok(FromGroups { stringtag, hints, errhandler })
    }

    /// Where the members agree on a context: `MPI_COMM_WORLD`'s internal context, which
    /// every process has whichever model it started with.
    pub(crate) fn context(rt: &Runtime) -> MpiResult<u32> {
        Ok(rt.comm(MPI_COMM_WORLD)?.ctx + 1)
    }

    /// The new communicator `c` with the call's error handler and hints, registered.
    pub(crate) fn finish(self, rt: &mut Runtime, mut c: Comm) -> MPI_Comm {
        c.errhandler = self.errhandler;
        c.hints = self.hints;
        rt.add_comm(c)
    }
}

/// Run `body`, which makes a communicator from groups, as the MPI function `name` and store
/// its result in `newcomm`. There is no communicator yet: errors go to the handler given
/// for the new one when it is valid, else to `MPI_COMM_SELF`'s.
pub(crate) fn call_creating(name: &'static str, errhandler: MPI_Errhandler, newcomm: *mut MPI_Comm, body: impl FnOnce(&mut Runtime) -> MpiResult<MPI_Comm>) -> c_int {
    let pick = |rt: &Runtime| if check_errhandler(errhandler).is_ok() { errhandler } else { rt.errhandler_of(MPI_COMM_SELF) };
    call_with(name, MPI_COMM_NULL, pick, |rt| {
        let o = out_arg(newcomm, "newcomm")?;
        *o = body(rt)?;
        Ok(())
    })
}

/// `MPI_Comm_create_from_group`: collective over the group's members, who agree on a context
/// over `MPI_COMM_WORLD`'s internal context with a tag made from the string tag. With
/// `MPI_GROUP_EMPTY` it is local and makes `MPI_COMM_NULL`.
fn create_from_group(rt: &mut Runtime, group: MPI_Group, stringtag: *const c_char, info: MPI_Info, eh: MPI_Errhandler) -> MpiResult<MPI_Comm> {
    let g = rt.group(group)?;
    let args = FromGroups::new(rt, stringtag, info, eh)?;
    if g.is_empty() {
        return Ok(MPI_COMM_NULL);
    }
    let Some(me) = g.iter().position(|&w| w == rt.world_rank) else {
        return err(MPI_ERR_GROUP, "this process is not a member of the group");
    };
    let tag = crate::internal::stringtag_tag(args.stringtag.as_bytes());
    let (ctx, _) = crate::comm::agree_context_among(rt, FromGroups::context(rt)?, &g, me, tag, &[])?;
    let c = Comm::new(ctx, g.to_vec(), rt.world_rank);
    Ok(args.finish(rt, c))
}

crate::mpi_export! { MPI_Comm_create_from_group, PMPI_Comm_create_from_group, (group: MPI_Group, stringtag: *const c_char, info: MPI_Info, errhandler: MPI_Errhandler, newcomm: *mut MPI_Comm) {
    call_creating("MPI_Comm_create_from_group", errhandler, newcomm, |rt| create_from_group(rt, group, stringtag, info, errhandler))
}}

crate::mpi_export! { MPI_Session_create_errhandler, PMPI_Session_create_errhandler, (f: Option<CommErrhandlerFn>, eh: *mut MPI_Errhandler) {
    call_anytime("MPI_Session_create_errhandler", || {
        if eh.is_null() { return MPI_ERR_ARG; }
        let Some(f) = f else { return MPI_ERR_ARG };
        // SAFETY: checked non-null.
        unsafe { *eh = crate::errhandler::register(f) };
        MPI_SUCCESS
    })
}}

crate::mpi_export! { MPI_Session_set_errhandler, PMPI_Session_set_errhandler, (session: MPI_Session, errhandler: MPI_Errhandler) {
    call_with("MPI_Session_set_errhandler", session, |rt| handler_of(rt, session), |_| {
        check_session(session)?;
        check_errhandler(errhandler)?;
        with_table(|t| t.sessions.get_mut(&session).map(|s| s.errhandler = errhandler));
        Ok(())
    })
}}

crate::mpi_export! { MPI_Session_get_errhandler, PMPI_Session_get_errhandler, (session: MPI_Session, errhandler: *mut MPI_Errhandler) {
    call_with("MPI_Session_get_errhandler", session, |rt| handler_of(rt, session), |_| {
        check_session(session)?;
        let o = out_arg(errhandler, "errhandler")?;
        *o = crate::errhandler::got(with_table(|t| t.sessions.get(&session).map(|s| s.errhandler)).unwrap_or(MPI_ERRORS_ARE_FATAL));
        Ok(())
    })
}}

crate::mpi_export! { MPI_Session_call_errhandler, PMPI_Session_call_errhandler, (session: MPI_Session, errorcode: c_int) {
    let valid = call_with("MPI_Session_call_errhandler", session, |rt| handler_of(rt, session), |_| check_session(session));
    if valid != MPI_SUCCESS {
        return valid;
    }
    // The handler runs as for an error inside a call on the session; it returned, so do we.
    call_with("MPI_Session_call_errhandler", session, |rt| handler_of(rt, session), |_| Err(MpiError::new(errorcode, format!("error code {errorcode} raised by the program"))));
    MPI_SUCCESS
}}

crate::mpi_export! { MPI_Info_create_env, PMPI_Info_create_env, (_argc: c_int, _argv: *mut *mut c_char, info: *mut MPI_Info) {
    // Ferry keeps info objects in its runtime: this works once MPI_Init or a session has
    // brought it up (the standard also allows it before).
    call("MPI_Info_create_env", MPI_COMM_SELF, |rt| {
        let o = out_arg(info, "info")?;
        let hints = crate::info::env_hints(rt);
        *o = rt.infos.add(hints);
        Ok(())
    })
}}
