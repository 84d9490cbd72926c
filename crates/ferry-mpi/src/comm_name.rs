//! Communicator names (`MPI_Comm_set_name`, `MPI_Comm_get_name`). A name is an attribute of
//! the communicator under a keyval of the library's own: it goes when the communicator is
//! freed, and a duplicate does not inherit it (the keyval copies nothing), as the standard
//! says. `MPI_COMM_WORLD` and `MPI_COMM_SELF` are named so until renamed.

use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_void};
use std::sync::OnceLock;

use crate::attr::{PMPI_Comm_create_keyval, PMPI_Comm_get_attr, PMPI_Comm_set_attr};
use crate::boundary::call;
use crate::comm::out_arg;
use crate::consts::*;
use crate::error::err;

/// The keyval names live under, made on first use.
static KEYVAL: OnceLock<c_int> = OnceLock::new();

/// Frees a name when its communicator goes, or when a new name replaces it.
unsafe extern "C" fn free_name(_comm: c_int, _key: c_int, val: *mut c_void, _extra: *mut c_void) -> c_int {
    // SAFETY: every value under KEYVAL is a leaked Box<String> (MPI_Comm_set_name), deleted once.
    drop(unsafe { Box::from_raw(val as *mut String) });
    MPI_SUCCESS
}

fn keyval() -> Result<c_int, c_int> {
    if let Some(k) = KEYVAL.get() {
        return Ok(*k);
    }
    let mut k = MPI_KEYVAL_INVALID;
    // SAFETY: plain FFI into this library with valid arguments.
    let rc = unsafe { PMPI_Comm_create_keyval(None, Some(free_name), &mut k, std::ptr::null_mut()) };
    if rc != MPI_SUCCESS {
        return Err(rc);
    }
    // Another thread may have made one meanwhile: either serves.
    Ok(*KEYVAL.get_or_init(|| k))
}

fn check_comm(name: &'static str, comm: MPI_Comm) -> c_int {
    call(name, comm, |rt| rt.comm(comm).map(drop))
}

crate::mpi_export! { MPI_Comm_set_name, PMPI_Comm_set_name, (comm: MPI_Comm, name: *const c_char) {
    let rc = check_comm("MPI_Comm_set_name", comm);
    if rc != MPI_SUCCESS {
        return rc;
    }
    if name.is_null() {
        return call("MPI_Comm_set_name", comm, |_| err(MPI_ERR_ARG, "comm_name is NULL"));
    }
    // SAFETY: MPI passes a NUL-terminated string (checked non-NULL above).
    let bytes = unsafe { CStr::from_ptr(name) }.to_bytes();
    // Longer names are cut to what MPI_Comm_get_name can return.
    let kept = &bytes[..bytes.len().min(MPI_MAX_OBJECT_NAME as usize - 1)];
    let key = match keyval() {
        Ok(k) => k,
        Err(rc) => return rc,
    };
    let value = Box::into_raw(Box::new(String::from_utf8_lossy(kept).into_owned()));
    let rc = PMPI_Comm_set_attr(comm, key, value as *mut c_void);
    if rc != MPI_SUCCESS {
        // SAFETY: not stored: still ours.
        drop(unsafe { Box::from_raw(value) });
    }
    rc
}}

crate::mpi_export! { MPI_Comm_get_name, PMPI_Comm_get_name, (comm: MPI_Comm, name: *mut c_char, resultlen: *mut c_int) {
    let rc = check_comm("MPI_Comm_get_name", comm);
    if rc != MPI_SUCCESS {
        return rc;
    }
    let mut set: *mut String = std::ptr::null_mut();
    let mut flag = 0;
    if let Some(&key) = KEYVAL.get() {
        let rc = PMPI_Comm_get_attr(comm, key, &mut set as *mut *mut String as *mut c_void, &mut flag);
        if rc != MPI_SUCCESS {
            return rc;
        }
    }
    let text = if flag != 0 {
        // SAFETY: the value under KEYVAL is a live Box<String> until deleted with the comm.
        unsafe { (*set).clone() }
    } else {
        match comm {
            MPI_COMM_WORLD => "MPI_COMM_WORLD".to_string(),
            MPI_COMM_SELF => "MPI_COMM_SELF".to_string(),
            _ => String::new(),
        }
    };
    call("MPI_Comm_get_name", comm, |_| {
        let len = out_arg(resultlen, "resultlen")?;
        let out = crate::typeinfo::out_slice(name, MPI_MAX_OBJECT_NAME as usize, "comm_name")?;
        let bytes = text.as_bytes();
        for (o, &b) in out.iter_mut().zip(bytes) {
            *o = b as c_char;
        }
        out[bytes.len()] = 0;
        *len = bytes.len() as c_int;
        Ok(())
    })
}}
