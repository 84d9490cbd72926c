//! The C boundary: every exported function goes through [`call`], which checks that MPI is
//! initialised, runs the body with the runtime locked (a blocking body may let the lock go
//! while it waits, see `objects::threads`), catches panics, and applies the communicator's error
//! handler to any error.

use std::os::raw::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::consts::*;
use crate::error::{die, MpiError};
use crate::objects::runtime;
use crate::objects::threads::{self, Locked};

/// Run `body` for the MPI function `name`; errors go through `comm`'s error handler.
pub fn call(name: &'static str, comm: i32, body: impl FnOnce(&mut Locked) -> Result<(), MpiError>) -> c_int {
    if crate::op::in_user_function() {
        // The collective that called the user's function holds the runtime: waiting for it
        // would hang this thread forever, so end the job with the reason instead. (The
        // queries of `op_queries` are answered before they get here.)
        let what = if name == "MPI_Abort" { "the job ends" } else { "Ferry allows only MPI_Abort and the datatype and communicator queries there" };
        die(&format!("{name} was called from inside a user-defined reduction function; {what}"), 1);
    }
    // Whether requests remain for the progress thread to move once we return.
    let mut pending = false;
    // A user error handler to run once the runtime is released: (function, comm, code).
    let mut user_handler = None;
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let mut rt = match crate::generalized::reentered() {
            // SAFETY: a generalized request's callback runs inside an MPI call on this thread,
            // which lent its runtime and touches it again only once the callback returns.
            Some(p) => unsafe { Locked::lent(p) },
            None => match Locked::lock() {
                Some(rt) => rt,
                None => {
                    let why = runtime::why_down();
                    die(&format!("{name} was called {why}"), 1);
                }
            },
        };
        let rt = &mut rt;
        let result = body(rt);
        pending = crate::progress::running() && rt.has_pending_work();
        match result {
            Ok(()) => MPI_SUCCESS,
            Err(e) => {
                let target = e.comm.unwrap_or(comm);
                let eh = rt.errhandler_of(target);
                if eh == MPI_ERRORS_RETURN {
                    e.class
                } else if let Some(f) = crate::errhandler::user_handler(eh) {
                    let target = if rt.comms.contains_key(&target) { target } else { MPI_COMM_WORLD };
                    user_handler = Some((f, target, e.class));
                    e.class
                } else {
                    fatal(rt, name, &e);
                }
            }
        }
    }));
    crate::progress::after_call(pending);
    threads::after_call();
    match outcome {
        Ok(code) => {
            if let Some((f, target, class)) = user_handler {
                crate::errhandler::invoke(f, target, class);
            }
            code
        }
        Err(p) => {
            let what = p.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| p.downcast_ref::<String>().cloned()).unwrap_or_default();
            die(&format!("internal error in {name}: {what}"), 1)
        }
    }
}

/// The fatal error handler: report `e`, raised in the MPI function `name`, and end the job.
pub(crate) fn fatal(rt: &mut runtime::Runtime, name: &str, e: &MpiError) -> ! {
    let msg = format!("Fatal error in {name}: {e}");
    if let Some(grace) = e.consequence {
        // Give the failed process's own report (or the launcher's verdict on it) the time to
        // arrive first; the launcher stops this rank anyway. Said now, in case it does.
        eprintln!("ferry[rank {}]: {msg}", rt.world_rank);
        std::thread::sleep(grace);
    }
    rt.abort_job(&msg, e.class.max(1))
}

/// Like [`call`] for the few functions MPI allows before `MPI_Init` / after `MPI_Finalize`.
/// Run `body` for the MPI function `name`, which MPI-4 allows before `MPI_Init` and after
/// `MPI_Finalize` too (the info object's): with the runtime while it is up, as [`call`] (errors
/// through `MPI_COMM_WORLD`'s handler), else without it, when an error is fatal (the handler
/// a process has before MPI is up).
pub fn call_runtime_or_not(name: &'static str, body: impl FnOnce(Option<&mut Locked>) -> Result<(), MpiError>) -> c_int {
    if runtime::thread_facts().is_some() {
        return call(name, MPI_COMM_WORLD, |rt| body(Some(rt)));
    }
    call_anytime(name, || match body(None) {
        Ok(()) => MPI_SUCCESS,
        Err(e) => die(&format!("Fatal error in {name}: {e}"), e.class.max(1)),
    })
}

pub fn call_anytime(name: &'static str, body: impl FnOnce() -> c_int) -> c_int {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(code) => code,
        Err(_) => die(&format!("internal error in {name}"), 1),
    }
}
