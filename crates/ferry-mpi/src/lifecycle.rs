//! The runtime's life: MPI_Init and MPI_Finalize for the World Model, the first and the last
//! session for the Sessions Model. Bringing the runtime up starts the job and fills the hooks
//! that the objects hold for the features; taking it down flushes and waits for every rank.
//! It knows every feature that has a part in that, so it sits above the features, and only
//! the exports use it.

use std::sync::atomic::Ordering;
use std::sync::MutexGuard;

use ferry_core::config;
use ferry_core::Job;

use crate::consts::*;
use crate::errhandler::check_errhandler;
use crate::error::{err, out_arg, MpiError, MpiResult};
use crate::objects::coll_selection::Selection;
use crate::objects::elision;
use crate::objects::records::Hooks;
use crate::objects::runtime::{finalized, lock, set_thread_facts, wtime, Runtime, ACTIVE, DONE, GONE, SESSIONS, STATE};
use crate::session;

/// Start the World Model: the runtime comes up unless a session brought it up already.
pub fn init(required: i32) -> MpiResult<i32> {
    let mut guard = lock();
    match STATE.load(Ordering::Acquire) {
        ACTIVE => return err(MPI_ERR_OTHER, "MPI_Init called twice"),
        DONE => return err(MPI_ERR_OTHER, "MPI_Init called after MPI_Finalize"),
        _ => {}
    }
    let provided = match guard.as_ref() {
        Some(rt) => rt.thread_level,
        None => {
            let elide = config::LOCK_ELISION.flag().map_err(|e| MpiError::new(MPI_ERR_OTHER, e.to_string()))?;
            let provided = bring_up(&mut guard, required)?;
            let rt = guard.as_mut().expect("just brought up");
            // One call at a time, and nothing else reaches the runtime: calls may skip its
            // lock until a session, the tool interface or a progress thread appears.
            if provided < MPI_THREAD_MULTIPLE && rt.progress.is_none() && SESSIONS.load(Ordering::Acquire) == 0 {
                elision::start(rt, elide);
            }
            provided
        }
    };
    STATE.store(ACTIVE, Ordering::Release);
    Ok(provided)
}

/// `MPI_Session_init`: the runtime comes up unless it is up already, at the thread level the
/// hints ask for, and the session is registered.
pub(crate) fn session_init(info: MPI_Info, errhandler: MPI_Errhandler, session: *mut MPI_Session) -> MpiResult<()> {
    let o = out_arg(session, "session")?;
    check_errhandler(errhandler)?;
    // Info objects exist before the runtime does (MPI_INFO_ENV only with it).
    let hints = match lock().as_ref() {
        Some(rt) => crate::info::optional(rt, info)?,
        None if info == MPI_INFO_NULL => Vec::new(),
        None => crate::info::hints_of(None, info)?,
    };
    session_begin(session::requested_level(&hints))?;
    *o = session::open(errhandler, hints);
    Ok(())
}

/// A session begins: the runtime comes up unless it is up already.
fn session_begin(required: i32) -> MpiResult<()> {
    let mut guard = lock();
    if guard.is_none() {
        bring_up(&mut guard, required)?;
    }
    SESSIONS.fetch_add(1, Ordering::AcqRel);
    Ok(())
}

/// A session ended (`MPI_Session_finalize`): the runtime goes down if it was the last user.
pub fn session_end() -> MpiResult<()> {
    let left = SESSIONS.fetch_sub(1, Ordering::AcqRel) - 1;
    if left == 0 && STATE.load(Ordering::Acquire) != ACTIVE {
        return shut_down();
    }
    Ok(())
}

/// Bring the runtime up: the job (PMI, business cards, engine), then the predefined comms.
fn bring_up(guard: &mut MutexGuard<'static, Option<Runtime>>, required: i32) -> MpiResult<i32> {
    if GONE.load(Ordering::Acquire) {
        return err(MPI_ERR_OTHER, "Ferry's runtime went down with the last session or MPI_Finalize and cannot start again in this process");
    }
    wtime();
    // Before anything else: a bad collective knob fails every rank at once, with a message.
    let coll = Selection::from_env().map_err(|e| MpiError::new(MPI_ERR_ARG, e))?;
    let async_progress = config::ASYNC_PROGRESS.flag().map_err(|e| MpiError::new(MPI_ERR_OTHER, e.to_string()))?;
    crate::objects::fault::set_recovery(config::RECOVERY.flag().map_err(|e| MpiError::new(MPI_ERR_OTHER, e.to_string()))?);
    let (job, engine) = Job::start()?;
    let provided = required.clamp(MPI_THREAD_SINGLE, MPI_THREAD_MULTIPLE);
    let hooks = Hooks {
        finish_generalized: crate::generalized::finish,
        query_generalized: crate::generalized::query,
        free_generalized: crate::generalized::free,
        finish_partitioned: crate::p2p::partitioned::finish,
    };
    let wins: Box<dyn std::any::Any + Send> = Box::new(crate::win::Wins::default());
    let mut rt = Runtime::new(job, engine, provided, coll, hooks, wins);
    rt.universe = rt.job().universe_size();
    // A spawned job meets its parents before MPI_Init returns (MPI_Comm_get_parent).
    crate::dynamic::join_parents(&mut rt)?;
    **guard = Some(rt);
    set_thread_facts(Some((provided, std::thread::current().id())));
    crate::objects::threads::configure(guard.as_ref().expect("just set"), provided == MPI_THREAD_MULTIPLE);
    if async_progress {
        let rt = guard.as_mut().expect("just set");
        match crate::progress::start(rt) {
            Ok(t) => rt.progress = Some(t),
            Err(e) => {
                set_thread_facts(None);
                **guard = None;
                return err(MPI_ERR_OTHER, format!("cannot start the progress thread: {e}"));
            }
        }
    }
    Ok(provided)
}

/// End the World Model; the runtime goes down unless sessions still use it.
pub fn finalize() -> MpiResult<()> {
    if STATE.load(Ordering::Acquire) != ACTIVE {
        let why = if finalized() { "MPI_Finalize called twice" } else { "MPI_Finalize called before MPI_Init" };
        return err(MPI_ERR_OTHER, why);
    }
    STATE.store(DONE, Ordering::Release);
    if SESSIONS.load(Ordering::Acquire) > 0 {
        return Ok(());
    }
    shut_down()
}

/// Orderly end: flush every queued frame, wait for every rank, leave the launcher.
fn shut_down() -> MpiResult<()> {
    // The progress thread needs the lock to stop: join it first.
    let thread = lock().as_mut().and_then(|rt| rt.progress.take());
    if let Some(t) = thread {
        t.stop();
    }
    let mut guard = lock();
    let Some(rt) = guard.as_mut() else { return err(MPI_ERR_OTHER, "the runtime is not up") };
    if let Some(report) = rt.coll.report(rt.world_rank) {
        eprint!("{report}");
    }
    // The last call: no other thread may be inside MPI now, so this wait keeps the lock.
    let ids = crate::p2p::bsend_ids(rt);
    rt.engine.wait_until(|e| ids.iter().all(|id| e.is_done(*id)))?;
    crate::p2p::reap_bsends(rt);
    // Sends the user freed are waited for inside the engine; freed receives that did
    // complete are unpacked, the others are dropped with the runtime.
    rt.engine.finalize()?;
    rt.reap_orphans();
    // The requests the program still holds go down with the runtime: tell the tools that asked.
    crate::tools::requests_left(rt);
    rt.job().barrier()?;
    rt.job().finalize()?;
    elision::forget();
    set_thread_facts(None);
    *guard = None;
    GONE.store(true, Ordering::Release);
    Ok(())
}

