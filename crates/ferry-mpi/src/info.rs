//! Info objects: ordered (key, value) string pairs that programs pass as hints. Ferry acts on
//! none of them yet, but keeps every hint given to a communicator and hands it back, so code
//! that sets hints and reads them again runs unchanged. `MPI_INFO_ENV` describes how the
//! process was started. The info objects outlive the runtime (MPI-4: a program may use them
//! before `MPI_Init` and after `MPI_Finalize`).

use std::ffi::CStr;
use std::os::raw::{c_char, c_int};
use std::sync::Mutex;

use crate::consts::*;
use crate::error::{err, MpiResult};
pub use crate::objects::records::Hints;
use crate::objects::records::Infos;
use crate::objects::Runtime;

pub const MAX_INFO_KEY: usize = 255;
pub const MAX_INFO_VAL: usize = 1024;

/// The program's info objects. MPI-4 lets a program make and use them before `MPI_Init` and
/// after `MPI_Finalize`, so they live beside the runtime, not in it, under a lock of their
/// own (taken after the runtime's, never before it).
static INFOS: Mutex<Option<Infos>> = Mutex::new(None);

fn with_infos<T>(f: impl FnOnce(&mut Infos) -> T) -> T {
    let mut g = INFOS.lock().unwrap_or_else(|p| p.into_inner());
    f(g.get_or_insert_with(Infos::default))
}

/// A new info object holding `h`.
pub fn add(h: Hints) -> MPI_Info {
    with_infos(|t| t.add(h))
}

/// The hints of `h` for reading (`MPI_INFO_ENV` included).
pub fn hints(rt: &Runtime, h: MPI_Info) -> MpiResult<Hints> {
    hints_of(Some(rt), h)
}

/// [`hints`] with or without the runtime (`MPI_INFO_ENV` only with it).
pub fn hints_of(rt: Option<&Runtime>, h: MPI_Info) -> MpiResult<Hints> {
    if h == MPI_INFO_ENV {
        return match rt {
            Some(rt) => Ok(env_hints(Some(rt))),
            None => err(MPI_ERR_INFO, "MPI_INFO_ENV describes the running job: it is there between MPI_Init and MPI_Finalize"),
        };
    }
    match with_infos(|t| t.table.get(&h).cloned()) {
        Some(v) => Ok(v),
        None if h == MPI_INFO_NULL => err(MPI_ERR_ARG, "MPI_INFO_NULL is not an info object"),
        None => err(MPI_ERR_INFO, format!("invalid info handle {h:#x}")),
    }
}

/// Change the hints of `h` with `f`: `MPI_INFO_ENV` is predefined and stays as it is.
pub(crate) fn with_hints_mut<T>(h: MPI_Info, f: impl FnOnce(&mut Hints) -> MpiResult<T>) -> MpiResult<T> {
    if h == MPI_INFO_ENV {
        return err(MPI_ERR_INFO, "MPI_INFO_ENV is predefined and cannot be changed or freed");
    }
    with_infos(|t| match t.table.get_mut(&h) {
        Some(v) => f(v),
        None if h == MPI_INFO_NULL => err(MPI_ERR_ARG, "MPI_INFO_NULL is not an info object"),
        None => err(MPI_ERR_INFO, format!("invalid info handle {h:#x}")),
    })
}

/// Free the info object `h`.
pub(crate) fn free(h: MPI_Info) -> MpiResult<()> {
    with_hints_mut(h, |_| Ok(()))?;
    with_infos(|t| t.table.remove(&h));
    Ok(())
}

/// Set `key` to `value` in the user's info object `h` (an OUT hint, as
/// `MPI_Comm_split_type`'s unguided split gives one).
pub fn set_in(_rt: &mut Runtime, h: MPI_Info, key: &str, value: &str) -> MpiResult<()> {
    with_hints_mut(h, |hints| {
        set(hints, key, value);
        Ok(())
    })
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

/// What `MPI_INFO_ENV` holds: how this process was started, as far as Ferry knows it. Without
/// the runtime (`MPI_Info_create_env` before `MPI_Init`): the command, its arguments and the
/// working directory only.
pub(crate) fn env_hints(rt: Option<&Runtime>) -> Hints {
    let args: Vec<String> = std::env::args().collect();
    let mut h = Vec::new();
    if let Some(cmd) = args.first() {
        h.push(("command".to_string(), cmd.clone()));
    }
    h.push(("argv".to_string(), args.get(1..).unwrap_or_default().join(" ")));
    if let Some(rt) = rt {
        let size = rt.comm(MPI_COMM_WORLD).map_or(1, |c| c.size());
        h.push(("maxprocs".to_string(), size.to_string()));
        h.push(("host".to_string(), rt.processor_name().to_string()));
    }
    if let Ok(dir) = std::env::current_dir() {
        h.push(("wdir".to_string(), dir.display().to_string()));
    }
    if let Some(rt) = rt {
        let level = ["MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED", "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"];
        h.push(("thread_level".to_string(), level.get(rt.thread_level as usize).unwrap_or(&"MPI_THREAD_SINGLE").to_string()));
    }
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
