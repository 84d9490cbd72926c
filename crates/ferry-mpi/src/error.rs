//! MPI errors as the API layer raises them: an error class and a message naming the argument;
//! and the C arguments that raise them when wrong (output arguments, arrays, strings).

use std::ffi::CStr;
use std::fmt;
use std::os::raw::{c_char, c_int};

use crate::consts::*;

/// Boxed, so that every `MpiResult` on the hot paths stays two words wide: errors are rare,
/// and a wide `Result` costs each successful call its copies.
#[derive(Debug, Clone)]
pub struct MpiError(Box<ErrorInfo>);

#[derive(Debug, Clone)]
pub struct ErrorInfo {
    pub class: i32,
    pub msg: String,
    /// The communicator whose error handler applies, when not the call's own (an error found
    /// while completing a request uses the request's communicator).
    pub comm: Option<i32>,
    /// The error follows from another process's failure (a lost connection, a local peer's
    /// death): that process, or the launcher, is the one to report the cause, and is given
    /// this long to do it before this rank ends the job itself.
    pub consequence: Option<std::time::Duration>,
}

impl MpiError {
    #[cold]
    pub fn new(class: i32, msg: impl Into<String>) -> MpiError {
        MpiError(Box::new(ErrorInfo { class, msg: msg.into(), comm: None, consequence: None }))
    }
}

impl std::ops::Deref for MpiError {
    type Target = ErrorInfo;
    fn deref(&self) -> &ErrorInfo {
        &self.0
    }
}

impl std::ops::DerefMut for MpiError {
    fn deref_mut(&mut self) -> &mut ErrorInfo {
        &mut self.0
    }
}

impl MpiError {
    pub fn on_comm(mut self, comm: i32) -> MpiError {
        self.comm.get_or_insert(comm);
        self
    }
}

impl fmt::Display for MpiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = crate::predefined::error_class_name(self.class).unwrap_or("MPI_ERR_UNKNOWN");
        write!(f, "{name}: {}", self.msg)
    }
}

pub type MpiResult<T> = Result<T, MpiError>;

#[cold]
pub fn err<T>(class: i32, msg: impl Into<String>) -> MpiResult<T> {
    Err(MpiError::new(class, msg))
}

static RECOVERY: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether recovery is enabled for this job (`FERRY_RECOVERY=1`, `ferry run
/// --enable-recovery`): a process's failure is then an error of its own class
/// (MPIX_ERR_PROC_FAILED and kin) that the program may handle, not the job's end.
#[inline]
pub fn recovery() -> bool {
    RECOVERY.load(std::sync::atomic::Ordering::Relaxed)
}

pub fn set_recovery(yes: bool) {
    RECOVERY.store(yes, std::sync::atomic::Ordering::Relaxed);
}

impl From<ferry_core::engine::EngineError> for MpiError {
    fn from(e: ferry_core::engine::EngineError) -> Self {
        use ferry_core::engine::EngineError;
        use std::time::Duration;
        match e {
            EngineError::Revoked(_) => return MpiError::new(MPIX_ERR_REVOKED, e.to_string()),
            EngineError::AnySourceFailed(_) => return MpiError::new(MPIX_ERR_PROC_FAILED_PENDING, e.to_string()),
            // With recovery enabled, a failure is the program's to handle: no other process
            // reports it for this one.
            EngineError::PeerLost(_) | EngineError::PeerDied { .. } if recovery() => {
                return MpiError::new(MPIX_ERR_PROC_FAILED, e.to_string());
            }
            _ => {}
        }
        let consequence = match e {
            // A remote peer's own report travels further (its launcher agent, the network).
            EngineError::PeerLost(_) => Some(Duration::from_millis(1000)),
            // A local peer's death: its launcher, when it watches, has seen it by now; when it
            // does not (Slurm without --kill-on-bad-exit, a launcher that started a wrapper),
            // this rank's own abort is what ends the job, so it must come soon.
            EngineError::PeerDied { .. } => Some(Duration::from_millis(300)),
            EngineError::Transport(_) | EngineError::Revoked(_) | EngineError::AnySourceFailed(_) => None,
        };
        let mut m = MpiError::new(MPI_ERR_OTHER, e.to_string());
        m.consequence = consequence;
        m
    }
}

impl From<ferry_core::JobError> for MpiError {
    fn from(e: ferry_core::JobError) -> Self {
        MpiError::new(MPI_ERR_OTHER, e.to_string())
    }
}

/// Report and end the process (no runtime to tell the job through).
pub fn die(msg: &str, code: i32) -> ! {
    eprintln!("ferry: {msg}");
    std::process::exit(code)
}

/// An output argument of an MPI call: the caller's storage for one `T`, or `MPI_ERR_ARG`
/// naming the argument when it is NULL.
pub(crate) fn out<'a, T>(p: *mut T, name: &str) -> MpiResult<&'a mut T> {
    // SAFETY: a non-null output argument points to caller storage for one T (MPI's contract).
    unsafe { p.as_mut() }.ok_or_else(|| MpiError::new(MPI_ERR_ARG, format!("{name} is NULL")))
}
pub(crate) use self::out as out_arg;

/// An array argument of `n` entries (NULL is allowed when `n` is 0).
pub(crate) fn slice<'a, T>(p: *const T, n: usize, what: &str) -> MpiResult<&'a [T]> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return err(MPI_ERR_ARG, format!("{what} is NULL"));
    }
    // SAFETY: MPI passes arrays of `count` entries for these arguments.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

/// A NUL-terminated string argument of at most `max - 1` bytes.
pub(crate) fn c_string(p: *const c_char, what: &str, max: c_int) -> MpiResult<String> {
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
