//! Caching (MPI-4.1 chapter 7.7): keyvals and attributes of communicators, windows and
//! datatypes.

use std::os::raw::{c_int, c_void};

use crate::attr::*;
use crate::boundary::call;
use crate::consts::*;
use crate::error::{err, MpiError, MpiResult, out_arg};
use crate::objects::Runtime;

/// Run `f` under the runtime lock as MPI function `name`, applying `comm`'s error handler.
pub(crate) fn locked(name: &'static str, comm: i32, f: impl FnOnce(&mut Runtime) -> MpiResult<()>) -> c_int {
    call(name, comm, |rt| f(rt))
}

/// As [`locked`], with the error handler of the object the call is about (a window's own).
pub(crate) fn locked_on(name: &'static str, kind: Kind, obj: i32, f: impl FnOnce(&mut Runtime) -> MpiResult<()>) -> c_int {
    match kind {
        Kind::Win => crate::exports::one_sided::win_call(name, obj, f),
        _ => locked(name, handler_comm(kind, obj), f),
    }
}

pub(crate) fn report(name: &'static str, kind: Kind, obj: i32, e: MpiError) -> c_int {
    locked_on(name, kind, obj, |_| Err(e))
}

pub(crate) fn create_keyval(kind: Kind, copy: Option<CopyFn>, delete: Option<DeleteFn>, keyval: *mut c_int, extra: *mut c_void, name: &'static str) -> c_int {
    locked(name, MPI_COMM_WORLD, |_| {
        let o = out_arg(keyval, "keyval")?;
        *o = with_store(|s| {
            s.next += 1;
            let h = kind.handle_base() | (s.next & 0x3f_ffff);
            s.keyvals.insert(h, Keyval { kind, copy, delete, extra: extra as usize, freed: false, uses: 0 });
            h
        });
        Ok(())
    })
}

pub(crate) fn free_keyval(kind: Kind, keyval: *mut c_int, name: &'static str) -> c_int {
    locked(name, MPI_COMM_WORLD, |_| {
        let o = out_arg(keyval, "keyval")?;
        if is_predefined_key(*o) {
            return err(MPI_ERR_KEYVAL, format!("the predefined keyval {:#x} cannot be freed", *o));
        }
        with_store(|s| -> MpiResult<()> {
            // Freed again while attributes still use it (through a copy of the handle, or
            // from a delete callback, as MPICH allows): nothing more to do.
            if check_keyval_in_use(s, kind, *o)?.freed {
                return Ok(());
            }
            let k = s.keyvals.get_mut(&*o).expect("checked");
            k.freed = true;
            if k.uses == 0 {
                s.keyvals.remove(&*o);
            }
            Ok(())
        })?;
        *o = MPI_KEYVAL_INVALID;
        Ok(())
    })
}

pub(crate) fn set_attr(kind: Kind, obj: i32, key: i32, val: *mut c_void, name: &'static str) -> c_int {
    let mut old = None;
    let rc = locked_on(name, kind, obj, |rt| {
        check_object(rt, kind, obj)?;
        if is_predefined_key(key) || crate::win::is_window_key(key) {
            return err(MPI_ERR_KEYVAL, format!("the predefined attribute {key:#x} cannot be set"));
        }
        with_store(|s| {
            check_keyval(s, kind, key)?;
            old = s.values.get(&(kind, obj)).and_then(|v| v.iter().find(|a| a.0 == key)).map(|a| a.1);
            Ok(())
        })
    });
    if rc != MPI_SUCCESS {
        return rc;
    }
    // Setting over a value deletes the old one first; if that fails, the old value stays.
    if let Some(v) = old {
        if let Err(e) = run_delete(obj, key, v) {
            return report(name, kind, obj, e);
        }
    }
    with_store(|s| {
        let list = s.values.entry((kind, obj)).or_default();
        match list.iter_mut().find(|a| a.0 == key) {
            Some(a) => a.1 = val as usize,
            None => {
                list.push((key, val as usize));
                if let Some(k) = s.keyvals.get_mut(&key) {
                    k.uses += 1;
                }
            }
        }
    });
    MPI_SUCCESS
}

pub(crate) fn get_attr(kind: Kind, obj: i32, key: i32, val: *mut c_void, flag: *mut c_int, name: &'static str) -> c_int {
    locked_on(name, kind, obj, |rt| {
        check_object(rt, kind, obj)?;
        let f = out_arg(flag, "flag")?;
        let o = out_arg(val as *mut *mut c_void, "attribute_val")?;
        if kind == Kind::Win && crate::win::is_window_key(key) {
            *o = crate::win::window_attr(rt, obj, key)?;
            *f = 1;
            return Ok(());
        }
        if kind == Kind::Comm && is_predefined_key(key) {
            // The standard attaches them to MPI_COMM_WORLD; like MPICH and Open MPI, every
            // communicator answers for them, so a library asking its own duplicate succeeds.
            match predefined(rt, key) {
                Some(cell) => {
                    *o = cell.as_ptr() as *mut c_void;
                    *f = 1;
                }
                None => *f = 0,
            }
            return Ok(());
        }
        let found = with_store(|s| -> MpiResult<Option<usize>> {
            check_keyval_in_use(s, kind, key)?;
            Ok(s.values.get(&(kind, obj)).and_then(|v| v.iter().find(|a| a.0 == key)).map(|a| a.1))
        })?;
        match found {
            Some(v) => {
                *o = v as *mut c_void;
                *f = 1;
            }
            None => *f = 0,
        }
        Ok(())
    })
}

pub(crate) fn delete_attr(kind: Kind, obj: i32, key: i32, name: &'static str) -> c_int {
    let mut val = 0;
    let rc = locked_on(name, kind, obj, |rt| {
        check_object(rt, kind, obj)?;
        if is_predefined_key(key) || crate::win::is_window_key(key) {
            return err(MPI_ERR_KEYVAL, format!("the predefined attribute {key:#x} cannot be deleted"));
        }
        with_store(|s| {
            check_keyval_in_use(s, kind, key)?;
            match s.values.get(&(kind, obj)).and_then(|v| v.iter().find(|a| a.0 == key)) {
                Some(a) => {
                    val = a.1;
                    Ok(())
                }
                None => err(MPI_ERR_KEYVAL, format!("no attribute with keyval {key:#x} is set on this {}", kind.what())),
            }
        })
    });
    if rc != MPI_SUCCESS {
        return rc;
    }
    if let Err(e) = run_delete(obj, key, val) {
        return report(name, kind, obj, e);
    }
    remove_one(kind, obj, key);
    MPI_SUCCESS
}

/// Before `obj` is freed: run its delete callbacks, or report why it cannot be freed.
/// `MPI_SUCCESS` means the caller goes on to free it.
pub(crate) fn before_free(name: &'static str, kind: Kind, obj: i32) -> c_int {
    let predefined = match kind {
        Kind::Comm => obj == MPI_COMM_WORLD || obj == MPI_COMM_SELF,
        Kind::Type => Runtime::is_predefined_type(obj),
        Kind::Win => false,
    };
    if predefined {
        return MPI_SUCCESS;
    }
    match delete_all(kind, obj) {
        Ok(()) => MPI_SUCCESS,
        Err(e) => report(name, kind, obj, e),
    }
}

/// After `old` was duplicated into `new`: run the copy callbacks in creation order. On a
/// failing callback the new object is freed (by `undo`) and the error reported.
pub(crate) fn after_dup(name: &'static str, kind: Kind, old: i32, new: i32, undo: impl FnOnce(&mut Runtime)) -> c_int {
    let attrs = with_store(|s| s.values.get(&(kind, old)).cloned().unwrap_or_default());
    for (key, val) in attrs {
        let Some((copy, extra)) = with_store(|s| s.keyvals.get(&key).map(|k| (k.copy, k.extra))) else { continue };
        let Some(f) = copy else { continue };
        let (mut out, mut flag): (*mut c_void, c_int) = (std::ptr::null_mut(), 0);
        // SAFETY: registered with MPI's copy-callback signature; `out` and `flag` are ours.
        let code = unsafe { f(old, key, extra as *mut c_void, val as *mut c_void, &mut out as *mut *mut c_void as *mut c_void, &mut flag) };
        if code != MPI_SUCCESS {
            // The copies made so far go with the new object, without delete callbacks: the
            // user never saw it.
            with_store(|s| {
                for (k, _) in s.values.remove(&(kind, new)).unwrap_or_default() {
                    release(s, k);
                }
            });
            let e = callback_error("copy", key, code);
            return locked(name, handler_comm(kind, old), |rt| {
                undo(rt);
                Err(e)
            });
        }
        if flag != 0 {
            with_store(|s| {
                s.values.entry((kind, new)).or_default().push((key, out as usize));
                if let Some(k) = s.keyvals.get_mut(&key) {
                    k.uses += 1;
                }
            });
        }
    }
    MPI_SUCCESS
}

crate::mpi_export! { MPI_Comm_create_keyval, PMPI_Comm_create_keyval, (copy: Option<CopyFn>, delete: Option<DeleteFn>, keyval: *mut c_int, extra: *mut c_void) {
    create_keyval(Kind::Comm, copy, delete, keyval, extra, "MPI_Comm_create_keyval")
}}
crate::mpi_export! { MPI_Type_create_keyval, PMPI_Type_create_keyval, (copy: Option<CopyFn>, delete: Option<DeleteFn>, keyval: *mut c_int, extra: *mut c_void) {
    create_keyval(Kind::Type, copy, delete, keyval, extra, "MPI_Type_create_keyval")
}}
crate::mpi_export! { MPI_Comm_free_keyval, PMPI_Comm_free_keyval, (keyval: *mut c_int) {
    free_keyval(Kind::Comm, keyval, "MPI_Comm_free_keyval")
}}
crate::mpi_export! { MPI_Type_free_keyval, PMPI_Type_free_keyval, (keyval: *mut c_int) {
    free_keyval(Kind::Type, keyval, "MPI_Type_free_keyval")
}}
crate::mpi_export! { MPI_Comm_set_attr, PMPI_Comm_set_attr, (comm: MPI_Comm, key: c_int, val: *mut c_void) {
    set_attr(Kind::Comm, comm, key, val, "MPI_Comm_set_attr")
}}
crate::mpi_export! { MPI_Type_set_attr, PMPI_Type_set_attr, (dt: MPI_Datatype, key: c_int, val: *mut c_void) {
    set_attr(Kind::Type, dt, key, val, "MPI_Type_set_attr")
}}
crate::mpi_export! { MPI_Attr_put, PMPI_Attr_put, (comm: MPI_Comm, key: c_int, val: *mut c_void) {
    set_attr(Kind::Comm, comm, key, val, "MPI_Attr_put")
}}
crate::mpi_export! { MPI_Comm_get_attr, PMPI_Comm_get_attr, (comm: MPI_Comm, key: c_int, val: *mut c_void, flag: *mut c_int) {
    get_attr(Kind::Comm, comm, key, val, flag, "MPI_Comm_get_attr")
}}
crate::mpi_export! { MPI_Type_get_attr, PMPI_Type_get_attr, (dt: MPI_Datatype, key: c_int, val: *mut c_void, flag: *mut c_int) {
    get_attr(Kind::Type, dt, key, val, flag, "MPI_Type_get_attr")
}}
crate::mpi_export! { MPI_Attr_get, PMPI_Attr_get, (comm: MPI_Comm, key: c_int, val: *mut c_void, flag: *mut c_int) {
    get_attr(Kind::Comm, comm, key, val, flag, "MPI_Attr_get")
}}
crate::mpi_export! { MPI_Comm_delete_attr, PMPI_Comm_delete_attr, (comm: MPI_Comm, key: c_int) {
    delete_attr(Kind::Comm, comm, key, "MPI_Comm_delete_attr")
}}
crate::mpi_export! { MPI_Type_delete_attr, PMPI_Type_delete_attr, (dt: MPI_Datatype, key: c_int) {
    delete_attr(Kind::Type, dt, key, "MPI_Type_delete_attr")
}}
crate::mpi_export! { MPI_Win_create_keyval, PMPI_Win_create_keyval, (copy: Option<CopyFn>, delete: Option<DeleteFn>, keyval: *mut c_int, extra: *mut c_void) {
    // Windows are never duplicated: the copy callback is kept but never called.
    create_keyval(Kind::Win, copy, delete, keyval, extra, "MPI_Win_create_keyval")
}}
crate::mpi_export! { MPI_Win_free_keyval, PMPI_Win_free_keyval, (keyval: *mut c_int) {
    free_keyval(Kind::Win, keyval, "MPI_Win_free_keyval")
}}
crate::mpi_export! { MPI_Win_set_attr, PMPI_Win_set_attr, (win: MPI_Win, key: c_int, val: *mut c_void) {
    set_attr(Kind::Win, win, key, val, "MPI_Win_set_attr")
}}
crate::mpi_export! { MPI_Win_get_attr, PMPI_Win_get_attr, (win: MPI_Win, key: c_int, val: *mut c_void, flag: *mut c_int) {
    get_attr(Kind::Win, win, key, val, flag, "MPI_Win_get_attr")
}}
crate::mpi_export! { MPI_Win_delete_attr, PMPI_Win_delete_attr, (win: MPI_Win, key: c_int) {
    delete_attr(Kind::Win, win, key, "MPI_Win_delete_attr")
}}
