//! Names of communicators (`MPI_Comm_set_name`, `MPI_Comm_get_name`): what a program or a tool
//! calls an object. A name belongs to one handle: duplicates start unnamed.

use std::os::raw::{c_char, c_int};

use crate::error::out_arg;
use crate::consts::*;
use crate::error::{err, MpiResult};

/// The name a `*_set_name` call gives: at most `MPI_MAX_OBJECT_NAME - 1` bytes, longer names
/// cut there (the standard truncates rather than fails).
pub fn read_name(name: *const c_char, what: &str) -> MpiResult<String> {
    if name.is_null() {
        return err(MPI_ERR_ARG, format!("{what} is NULL"));
    }
    // SAFETY: MPI passes a NUL-terminated string (checked non-null above).
    let bytes = unsafe { std::ffi::CStr::from_ptr(name) }.to_bytes();
    let kept = &bytes[..bytes.len().min(MPI_MAX_OBJECT_NAME as usize - 1)];
    Ok(String::from_utf8_lossy(kept).into_owned())
}

/// Write `text` for a `*_get_name` call: NUL-terminated into the caller's
/// `MPI_MAX_OBJECT_NAME` bytes, its length (without the NUL) into `resultlen`.
pub fn write_name(text: &str, name: *mut c_char, resultlen: *mut c_int, what: &str) -> MpiResult<()> {
    if name.is_null() {
        return err(MPI_ERR_ARG, format!("{what} is NULL"));
    }
    let len = out_arg(resultlen, "resultlen")?;
    let bytes = &text.as_bytes()[..text.len().min(MPI_MAX_OBJECT_NAME as usize - 1)];
    // SAFETY: MPI's contract: `name` holds MPI_MAX_OBJECT_NAME bytes; we write at most that.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr() as *const c_char, name, bytes.len());
        *name.add(bytes.len()) = 0;
    }
    *len = bytes.len() as c_int;
    Ok(())
}

/// The name of a communicator nobody named: the predefined ones have theirs.
pub(crate) fn default_name(comm: MPI_Comm) -> &'static str {
    match comm {
        MPI_COMM_WORLD => "MPI_COMM_WORLD",
        MPI_COMM_SELF => "MPI_COMM_SELF",
        _ => "",
    }
}
