//! Attributes cached on communicators, datatypes and windows, the keyvals that name them, and
//! the predefined attributes (of `MPI_COMM_WORLD`, answered on every communicator).
//!
//! User callbacks (copy on dup, delete on free, delete-attr and set-over) run with no lock
//! held, so they may call MPI themselves: every operation validates under the runtime lock,
//! runs the callback unlocked, then commits. Delete callbacks run in the reverse order of
//! the attributes' creation, copy callbacks in the order of creation.

use std::collections::BTreeMap;
use std::os::raw::{c_int, c_void};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Mutex, MutexGuard};

use crate::consts::*;
use crate::error::{err, MpiError, MpiResult};
use crate::objects::Runtime;

/// `MPI_Comm_copy_attr_function` and `MPI_Type_copy_attr_function` (handles are ints).
pub type CopyFn = unsafe extern "C" fn(c_int, c_int, *mut c_void, *mut c_void, *mut c_void, *mut c_int) -> c_int;
/// `MPI_Comm_delete_attr_function` and `MPI_Type_delete_attr_function`.
pub type DeleteFn = unsafe extern "C" fn(c_int, c_int, *mut c_void, *mut c_void) -> c_int;

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub enum Kind {
    Comm,
    Type,
    Win,
}

impl Kind {
    pub(crate) fn what(self) -> &'static str {
        match self {
            Kind::Comm => "communicator",
            Kind::Type => "datatype",
            Kind::Win => "window",
        }
    }
    /// MPICH's object kind bits (22..25) of a keyval handle.
    pub(crate) fn handle_base(self) -> i32 {
        match self {
            Kind::Comm => 0xa440_0000u32 as i32,
            Kind::Type => 0xa4c0_0000u32 as i32,
            Kind::Win => 0xa600_0000u32 as i32,
        }
    }
}

pub(crate) struct Keyval {
    pub(crate) kind: Kind,
    pub(crate) copy: Option<CopyFn>,
    pub(crate) delete: Option<DeleteFn>,
    pub(crate) extra: usize,
    /// Freed by the user; kept while attributes still use it.
    pub(crate) freed: bool,
    pub(crate) uses: usize,
}

#[derive(Default)]
pub(crate) struct Store {
    pub(crate) keyvals: BTreeMap<i32, Keyval>,
    pub(crate) next: i32,
    /// Attributes of each object, in the order they were first set: (keyval, value).
    pub(crate) values: BTreeMap<(Kind, i32), Vec<(i32, usize)>>,
}

static STORE: Mutex<Option<Store>> = Mutex::new(None);

fn store() -> MutexGuard<'static, Option<Store>> {
    STORE.lock().unwrap_or_else(|p| p.into_inner())
}

pub(crate) fn with_store<T>(f: impl FnOnce(&mut Store) -> T) -> T {
    f(store().get_or_insert_with(Store::default))
}

/// Storage of the predefined attributes of `MPI_COMM_WORLD`: MPI hands out pointers to them.
static TAG_UB: AtomicI32 = AtomicI32::new(i32::MAX);
static HOST: AtomicI32 = AtomicI32::new(MPI_PROC_NULL);
static IO: AtomicI32 = AtomicI32::new(MPI_ANY_SOURCE);
static WTIME_IS_GLOBAL: AtomicI32 = AtomicI32::new(0);
static UNIVERSE_SIZE: AtomicI32 = AtomicI32::new(1);
static LASTUSEDCODE: AtomicI32 = AtomicI32::new(MPI_ERR_LASTCODE);
static APPNUM: AtomicI32 = AtomicI32::new(0);

/// The predefined attribute `key`, if it is one. Tags go up to `i32::MAX`: the wire carries
/// a 32-bit tag and only negative tags are refused.
pub(crate) fn predefined(rt: &Runtime, key: i32) -> Option<&'static AtomicI32> {
    let cell = match key {
        MPI_TAG_UB => &TAG_UB,
        MPI_HOST => &HOST,
        MPI_IO => &IO,
        MPI_WTIME_IS_GLOBAL => &WTIME_IS_GLOBAL,
        MPI_APPNUM => &APPNUM,
        MPI_UNIVERSE_SIZE => {
            UNIVERSE_SIZE.store(rt.universe, Ordering::Relaxed);
            &UNIVERSE_SIZE
        }
        MPI_LASTUSEDCODE => {
            LASTUSEDCODE.store(crate::errhandler::last_used_code(), Ordering::Relaxed);
            &LASTUSEDCODE
        }
        _ => return None,
    };
    Some(cell)
}

pub(crate) fn is_predefined_key(key: i32) -> bool {
    [MPI_TAG_UB, MPI_HOST, MPI_IO, MPI_WTIME_IS_GLOBAL, MPI_UNIVERSE_SIZE, MPI_LASTUSEDCODE, MPI_APPNUM].contains(&key)
}

/// Check that `obj` is a live object of `kind`.
pub(crate) fn check_object(rt: &mut Runtime, kind: Kind, obj: i32) -> MpiResult<()> {
    match kind {
        Kind::Comm => rt.comm(obj).map(|_| ()),
        Kind::Type => rt.any_datatype(obj).map(|_| ()),
        Kind::Win => rt.win(obj).map(|_| ()),
    }
}

/// A keyval usable for a new attribute of `kind`.
pub(crate) fn check_keyval(s: &Store, kind: Kind, key: i32) -> MpiResult<&Keyval> {
    match check_keyval_in_use(s, kind, key)? {
        k if k.freed => err(MPI_ERR_KEYVAL, format!("keyval {key:#x} was freed")),
        k => Ok(k),
    }
}

/// A keyval of `kind` that still names attributes: one the program freed stays usable for
/// reading and deleting the attributes still set with it (MPI: the keyval goes with its
/// last attribute).
pub(crate) fn check_keyval_in_use(s: &Store, kind: Kind, key: i32) -> MpiResult<&Keyval> {
    if key == MPI_KEYVAL_INVALID {
        return err(MPI_ERR_KEYVAL, "MPI_KEYVAL_INVALID is not a keyval");
    }
    match s.keyvals.get(&key) {
        Some(k) if k.kind != kind => err(MPI_ERR_KEYVAL, format!("keyval {key:#x} is for {} attributes, not {} ones", k.kind.what(), kind.what())),
        Some(k) => Ok(k),
        None => err(MPI_ERR_KEYVAL, format!("invalid keyval {key:#x}")),
    }
}

/// The error a user callback returned.
pub(crate) fn callback_error(what: &str, key: i32, code: c_int) -> MpiError {
    MpiError::new(code, format!("the {what} callback of keyval {key:#x} returned error {code}"))
}

/// The communicator whose error handler an attribute call of `kind` on `obj` uses.
pub(crate) fn handler_comm(kind: Kind, obj: i32) -> i32 {
    if kind == Kind::Comm { obj } else { MPI_COMM_WORLD }
}

/// Forget one use of `key`; a freed keyval goes when its last attribute does.
pub(crate) fn release(s: &mut Store, key: i32) {
    if let Some(k) = s.keyvals.get_mut(&key) {
        k.uses = k.uses.saturating_sub(1);
        if k.freed && k.uses == 0 {
            s.keyvals.remove(&key);
        }
    }
}

/// Call the delete callback of `key` for the value `val` on `obj` (no lock held).
pub(crate) fn run_delete(obj: i32, key: i32, val: usize) -> MpiResult<()> {
    let (f, extra) = with_store(|s| s.keyvals.get(&key).map(|k| (k.delete, k.extra))).unwrap_or((None, 0));
    let Some(f) = f else { return Ok(()) };
    // SAFETY: the function was registered with MPI's delete-callback signature; MPI passes
    // the value and extra state back exactly as the user gave them.
    let code = unsafe { f(obj, key, val as *mut c_void, extra as *mut c_void) };
    if code != MPI_SUCCESS {
        return Err(callback_error("delete", key, code));
    }
    Ok(())
}

pub(crate) fn remove_one(kind: Kind, obj: i32, key: i32) {
    with_store(|s| {
        if let Some(list) = s.values.get_mut(&(kind, obj)) {
            list.retain(|a| a.0 != key);
            if list.is_empty() {
                s.values.remove(&(kind, obj));
            }
        }
        release(s, key);
    });
}

/// Delete every attribute of `obj`, newest first (no lock held). Stops at the first delete
/// callback that fails, leaving that attribute and the older ones in place.
pub fn delete_all(kind: Kind, obj: i32) -> MpiResult<()> {
    while let Some((key, val)) = with_store(|s| s.values.get(&(kind, obj)).and_then(|v| v.last().copied())) {
        run_delete(obj, key, val)?;
        remove_one(kind, obj, key);
    }
    Ok(())
}

/// At `MPI_Finalize`: the attributes of `MPI_COMM_SELF` are deleted first, as if it were
/// freed, then those of `MPI_COMM_WORLD`; then everything is forgotten.
pub fn at_finalize() -> MpiResult<()> {
    delete_all(Kind::Comm, MPI_COMM_SELF)?;
    delete_all(Kind::Comm, MPI_COMM_WORLD)?;
    *store() = None;
    Ok(())
}

/// `MPI_COMM_DUP_FN` / `MPI_TYPE_DUP_FN`: copy the value itself. MPICH's header names this
/// function, so programs built against it link to it here.
#[no_mangle]
pub unsafe extern "C" fn MPIR_Dup_fn(_obj: c_int, _key: c_int, _extra: *mut c_void, val_in: *mut c_void, val_out: *mut c_void, flag: *mut c_int) -> c_int {
    if val_out.is_null() || flag.is_null() {
        return MPI_ERR_ARG;
    }
    // SAFETY: MPI passes a pointer to a `void *` for the copy and one to an int flag.
    unsafe {
        *(val_out as *mut *mut c_void) = val_in;
        *flag = 1;
    }
    MPI_SUCCESS
}
