//! Info objects: ordered (key, value) string pairs that programs pass as hints. Ferry acts on
//! none of them yet, but keeps every hint given to a communicator and hands it back, so code
//! that sets hints and reads them again runs unchanged. `MPI_INFO_ENV` describes how the
//! process was started.

use std::ffi::CStr;
use std::os::raw::{c_char, c_int};

use crate::boundary::call;
use crate::comm::out_arg;
use crate::consts::*;
use crate::error::{err, MpiResult};
use crate::runtime::Runtime;

pub const MAX_INFO_KEY: usize = 255;
pub const MAX_INFO_VAL: usize = 1024;

/// Hints in the order they were first set (the order `MPI_Info_get_nthkey` reports).
pub type Hints = Vec<(String, String)>;

/// The info objects of a process, by handle.
#[derive(Default)]
pub struct Infos {
    table: ferry_core::fastmap::FastMap<i32, Hints>,
    next: i32,
}

impl Infos {
    pub fn add(&mut self, h: Hints) -> i32 {
        let handle = 0x9c000000u32 as i32 | self.next;
        self.next += 1;
        self.table.insert(handle, h);
        handle
    }
}

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
fn hints_mut(rt: &mut Runtime, h: MPI_Info) -> MpiResult<&mut Hints> {
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

fn c_str<'a>(p: *const c_char, class: c_int, what: &str, max: usize) -> MpiResult<&'a str> {
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

fn key_arg<'a>(p: *const c_char) -> MpiResult<&'a str> {
    c_str(p, MPI_ERR_INFO_KEY, "key", MAX_INFO_KEY)
}

/// Copy `s` into the caller's buffer `dst` of `room` characters plus the terminating null.
fn copy_out(s: &str, dst: *mut c_char, room: usize) {
    let n = s.len().min(room);
    // SAFETY: the caller's buffer holds `room` + 1 characters (MPI's contract for the call).
    unsafe {
        std::ptr::copy_nonoverlapping(s.as_ptr() as *const c_char, dst, n);
        *dst.add(n) = 0;
    }
}

fn lookup<'a>(h: &'a Hints, key: &str) -> Option<&'a str> {
    h.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}

crate::mpi_export! { MPI_Info_create, PMPI_Info_create, (info: *mut MPI_Info) {
    call("MPI_Info_create", MPI_COMM_WORLD, |rt| { let o = out_arg(info, "info")?; *o = rt.infos.add(Vec::new()); Ok(()) })
}}

crate::mpi_export! { MPI_Info_set, PMPI_Info_set, (info: MPI_Info, key: *const c_char, value: *const c_char) {
    call("MPI_Info_set", MPI_COMM_WORLD, |rt| {
        let k = key_arg(key)?;
        let v = c_str(value, MPI_ERR_INFO_VALUE, "value", MAX_INFO_VAL)?;
        set(hints_mut(rt, info)?, k, v);
        Ok(())
    })
}}

crate::mpi_export! { MPI_Info_get, PMPI_Info_get, (info: MPI_Info, key: *const c_char, valuelen: c_int, value: *mut c_char, flag: *mut c_int) {
    call("MPI_Info_get", MPI_COMM_WORLD, |rt| {
        let h = hints(rt, info)?;
        let k = key_arg(key)?;
        if valuelen < 0 {
            return err(MPI_ERR_ARG, format!("valuelen {valuelen} is negative"));
        }
        if value.is_null() {
            return err(MPI_ERR_ARG, "value is NULL");
        }
        let f = out_arg(flag, "flag")?;
        match lookup(&h, k) {
            Some(v) => { copy_out(v, value, valuelen as usize); *f = 1; }
            None => *f = 0,
        }
        Ok(())
    })
}}

crate::mpi_export! { MPI_Info_get_valuelen, PMPI_Info_get_valuelen, (info: MPI_Info, key: *const c_char, valuelen: *mut c_int, flag: *mut c_int) {
    call("MPI_Info_get_valuelen", MPI_COMM_WORLD, |rt| {
        let h = hints(rt, info)?;
        let k = key_arg(key)?;
        let (l, f) = (out_arg(valuelen, "valuelen")?, out_arg(flag, "flag")?);
        match lookup(&h, k) {
            Some(v) => { *l = v.len() as c_int; *f = 1; }
            None => *f = 0,
        }
        Ok(())
    })
}}

crate::mpi_export! { MPI_Info_get_string, PMPI_Info_get_string, (info: MPI_Info, key: *const c_char, buflen: *mut c_int, value: *mut c_char, flag: *mut c_int) {
    call("MPI_Info_get_string", MPI_COMM_WORLD, |rt| {
        let h = hints(rt, info)?;
        let k = key_arg(key)?;
        let (l, f) = (out_arg(buflen, "buflen")?, out_arg(flag, "flag")?);
        if *l < 0 {
            return err(MPI_ERR_ARG, format!("buflen {} is negative", *l));
        }
        if *l > 0 && value.is_null() {
            return err(MPI_ERR_ARG, "value is NULL");
        }
        match lookup(&h, k) {
            Some(v) => {
                if *l > 0 {
                    copy_out(v, value, *l as usize - 1);
                }
                *l = v.len() as c_int + 1;
                *f = 1;
            }
            None => *f = 0,
        }
        Ok(())
    })
}}

crate::mpi_export! { MPI_Info_get_nkeys, PMPI_Info_get_nkeys, (info: MPI_Info, nkeys: *mut c_int) {
    call("MPI_Info_get_nkeys", MPI_COMM_WORLD, |rt| { let n = hints(rt, info)?.len(); *out_arg(nkeys, "nkeys")? = n as c_int; Ok(()) })
}}

crate::mpi_export! { MPI_Info_get_nthkey, PMPI_Info_get_nthkey, (info: MPI_Info, n: c_int, key: *mut c_char) {
    call("MPI_Info_get_nthkey", MPI_COMM_WORLD, |rt| {
        let h = hints(rt, info)?;
        if n < 0 || n as usize >= h.len() {
            return err(MPI_ERR_ARG, format!("n {n} is not below the number of keys, {}", h.len()));
        }
        if key.is_null() {
            return err(MPI_ERR_ARG, "key is NULL");
        }
        copy_out(&h[n as usize].0, key, MAX_INFO_KEY);
        Ok(())
    })
}}

crate::mpi_export! { MPI_Info_delete, PMPI_Info_delete, (info: MPI_Info, key: *const c_char) {
    call("MPI_Info_delete", MPI_COMM_WORLD, |rt| {
        let h = hints_mut(rt, info)?;
        let k = key_arg(key)?;
        match h.iter().position(|(x, _)| x == k) {
            Some(i) => { h.remove(i); Ok(()) }
            None => err(MPI_ERR_INFO_NOKEY, format!("key \"{k}\" is not in the info object")),
        }
    })
}}

crate::mpi_export! { MPI_Info_dup, PMPI_Info_dup, (info: MPI_Info, newinfo: *mut MPI_Info) {
    call("MPI_Info_dup", MPI_COMM_WORLD, |rt| { let h = hints(rt, info)?; let o = out_arg(newinfo, "newinfo")?; *o = rt.infos.add(h); Ok(()) })
}}

crate::mpi_export! { MPI_Info_free, PMPI_Info_free, (info: *mut MPI_Info) {
    call("MPI_Info_free", MPI_COMM_WORLD, |rt| {
        let o = out_arg(info, "info")?;
        hints_mut(rt, *o)?;
        rt.infos.table.remove(&*o);
        *o = MPI_INFO_NULL;
        Ok(())
    })
}}

crate::mpi_export! { MPI_Comm_set_info, PMPI_Comm_set_info, (comm: MPI_Comm, info: MPI_Info) {
    call("MPI_Comm_set_info", comm, |rt| {
        rt.comm(comm)?;
        let given = hints(rt, info)?;
        let c = rt.comms.get_mut(&comm).expect("checked above");
        given.iter().for_each(|(k, v)| set(&mut c.hints, k, v));
        Ok(())
    })
}}

crate::mpi_export! { MPI_Comm_get_info, PMPI_Comm_get_info, (comm: MPI_Comm, info: *mut MPI_Info) {
    call("MPI_Comm_get_info", comm, |rt| {
        let h = rt.comm(comm)?.hints.clone();
        let o = out_arg(info, "info_used")?;
        *o = rt.infos.add(h);
        Ok(())
    })
}}
