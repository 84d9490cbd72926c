//! The tools information interface (MPI-4.1 chapter 15.3): one file per part, as in `crate::tools`; here the interface's init and finalize.

mod category;
mod cvar;
mod event;
mod instance;
mod pvar;
mod registration;
mod source;

use std::os::raw::c_int;
use std::sync::atomic::Ordering;

use crate::consts::*;
use crate::tools::*;

/// Run an MPI_T function body: its error is the return code.
pub(crate) fn run(body: impl FnOnce() -> Result<(), c_int>) -> c_int {
    crate::boundary::call_anytime("MPI_T", || match body() {
        Ok(()) => MPI_SUCCESS,
        Err(code) => code,
    })
}

crate::mpi_export! { MPI_T_init_thread, PMPI_T_init_thread, (required: c_int, provided: *mut c_int) {
    run(|| {
        let mut s = STATE.lock().unwrap_or_else(|p| p.into_inner());
        if provided.is_null() {
            return Err(MPI_ERR_ARG);
        }
        // The interface serialises its own calls: every thread level is safe for it. Its
        // calls may come from a thread of their own: MPI calls take the runtime's lock now.
        crate::objects::elision::forbid();
        put(provided, required.clamp(MPI_THREAD_SINGLE, MPI_THREAD_MULTIPLE));
        s.inits += 1;
        INITS.store(s.inits, Ordering::Release);
        Ok(())
    })
}}
crate::mpi_export! { MPI_T_finalize, PMPI_T_finalize, () {
    run(|| {
        let mut s = state()?;
        s.inits -= 1;
        INITS.store(s.inits, Ordering::Release);
        Ok(())
    })
}}
