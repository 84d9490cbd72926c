//! Environment management below the exports (`exports/environment.rs`): strings handed out
//! to C, and the library's version.

use std::ffi::c_char;
use std::os::raw::c_int;

use crate::consts::*;
use crate::error::{err, MpiResult};

/// Copy `s` into a C buffer of `cap` bytes (NUL-terminated) and report its length.
pub(crate) fn write_cstr(s: &str, buf: *mut c_char, cap: usize, len: *mut c_int) -> MpiResult<()> {
    if buf.is_null() {
        return err(MPI_ERR_ARG, "output string is NULL");
    }
    let n = s.len().min(cap.saturating_sub(1));
    // SAFETY: MPI guarantees `buf` holds at least `cap` bytes for these outputs.
    unsafe {
        std::ptr::copy_nonoverlapping(s.as_ptr() as *const c_char, buf, n);
        *buf.add(n) = 0;
    }
    if !len.is_null() {
        // SAFETY: checked non-null.
        unsafe { *len = n as c_int };
    }
    Ok(())
}

/// The library version string.
pub fn library_version() -> String {
    format!("Ferry {} (MPICH ABI, MPI {}.{}; shared memory and TCP)", env!("CARGO_PKG_VERSION"), MPI_VERSION, MPI_SUBVERSION)
}
