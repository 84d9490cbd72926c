//! Info objects: ordered (key, value) string pairs that programs pass as hints. Ferry acts on
//! none of them yet, but keeps every hint given to a communicator and hands it back, so code
//! that sets hints and reads them again runs unchanged. `MPI_INFO_ENV` describes how the
//! process was started.

use std::ffi::CStr;
use std::os::raw::{c_char, c_int};

use crate::consts::*;
use crate::error::{err, MpiResult};
pub use crate::objects::records::Hints;
use crate::objects::Runtime;

pub const MAX_INFO_KEY: usize = 255;
pub const MAX_INFO_VAL: usize = 1024;

/// The hints of `h` for reading (`MPI_INFO_ENV` included).
pub fn hints(rt: &Runtime, h: MPI_Info) -> MpiResult<Hints> {
    if h == MPI_INFO_ENV {
        return Ok(env_hints(rt));
    }
    match rt.infos.table.get(&h) {
        Some(v) => Ok(v.clone()),
        None if h == MPI_INFO_NULL => err(MPI_ERR_ARG, "MPI_INFO_NULL is not an info object"),
        None => err(MPI_ERR_INFO, format!("invalid info handle {h:#x}")),
    }
}

/// The hints of `h` for changing: `MPI_INFO_ENV` is predefined and stays as it is.
pub(crate) fn hints_mut(rt: &mut Runtime, h: MPI_Info) -> MpiResult<&mut Hints> {
    if h == MPI_INFO_ENV {
        return err(MPI_ERR_INFO, "MPI_INFO_ENV is predefined and cannot be changed or freed");
    }
    match rt.infos.table.get_mut(&h) {
        Some(v) => Ok(v),
        None if h == MPI_INFO_NULL => err(MPI_ERR_ARG, "MPI_INFO_NULL is not an info object"),
        None => err(MPI_ERR_INFO, format!("invalid info handle {h:#x}")),
    }
}

/// Set `key` to `value` in the user's info object `h` (an OUT hint, as
/// `MPI_Comm_split_type`'s unguided split gives one).
pub fn set_in(rt: &mut Runtime, h: MPI_Info, key: &str, value: &str) -> MpiResult<()> {
    set(hints_mut(rt, h)?, key, value);
    Ok(())
}

/// Hints of an optional info argument: `MPI_INFO_NULL` is none.
pub fn optional(rt: &Runtime, h: MPI_Info) -> MpiResult<Hints> {
    if h == MPI_INFO_NULL {
        Ok(Vec::new())
    } else {
        hints(rt, h)
    }
}

/// Set `key` to `value` in `hints`, keeping the key's place if it is there already.
pub fn set(hints: &mut Hints, key: &str, value: &str) {
    match hints.iter_mut().find(|(k, _)| k == key) {
        Some(kv) => kv.1 = value.to_string(),
        None => hints.push((key.to_string(), value.to_string())),
    }
}

/// What `MPI_INFO_ENV` holds: how this process was started, as far as Ferry knows it.
pub(crate) fn env_hints(rt: &Runtime) -> Hints {
    let args: Vec<String> = std::env::args().collect();
    let mut h = Vec::new();
    if let Some(cmd) = args.first() {
        h.push(("command".to_string(), cmd.clone()));
    }
    h.push(("argv".to_string(), args.get(1..).unwrap_or_default().join(" ")));
    let size = rt.comm(MPI_COMM_WORLD).map_or(1, |c| c.size());
    h.push(("maxprocs".to_string(), size.to_string()));
    h.push(("host".to_string(), rt.processor_name().to_string()));
    if let Ok(dir) = std::env::current_dir() {
        h.push(("wdir".to_string(), dir.display().to_string()));
    }
    let level = ["MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED", "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"];
    h.push(("thread_level".to_string(), level.get(rt.thread_level as usize).unwrap_or(&"MPI_THREAD_SINGLE").to_string()));
    h
}

pub(crate) fn c_str<'a>(p: *const c_char, class: c_int, what: &str, max: usize) -> MpiResult<&'a str> {
    if p.is_null() {
        return err(class, format!("{what} is NULL"));
    }
    // SAFETY: MPI passes a null-terminated string (checked non-null above).
    let s = unsafe { CStr::from_ptr(p) }.to_str().map_err(|_| crate::error::MpiError::new(class, format!("{what} is not valid UTF-8")))?;
    if s.is_empty() {
        return err(class, format!("{what} is empty"));
    }
    if s.len() > max {
        return err(class, format!("{what} is {} characters long (at most {max})", s.len()));
    }
    Ok(s)
}

pub(crate) fn key_arg<'a>(p: *const c_char) -> MpiResult<&'a str> {
    c_str(p, MPI_ERR_INFO_KEY, "key", MAX_INFO_KEY)
}

/// Copy `s` into the caller's buffer `dst` of `room` characters plus the terminating null.
pub(crate) fn copy_out(s: &str, dst: *mut c_char, room: usize) {
    let n = s.len().min(room);
    // SAFETY: the caller's buffer holds `room` + 1 characters (MPI's contract for the call).
    unsafe {
        std::ptr::copy_nonoverlapping(s.as_ptr() as *const c_char, dst, n);
        *dst.add(n) = 0;
    }
}

pub(crate) fn lookup<'a>(h: &'a Hints, key: &str) -> Option<&'a str> {
    h.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}
