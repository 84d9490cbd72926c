//! User error handlers (`MPI_Comm_create_errhandler`) and user error classes, codes and
//! strings (`MPI_Add_error_class`, ...). The boundary calls a user handler after it has
//! released the runtime, so the handler may call MPI.

use std::collections::BTreeMap;
use std::os::raw::c_int;
use std::sync::{Mutex, MutexGuard};

use crate::consts::*;
use crate::error::{err, MpiResult};

/// `MPI_Comm_errhandler_function`: `void (MPI_Comm *, int *, ...)`.
pub type CommErrhandlerFn = unsafe extern "C" fn(*mut MPI_Comm, *mut c_int, ...);

/// MPICH's "direct" kind for error handlers, next to the builtin 0x54000000 ones.
const USER_BASE: i32 = 0x9400_0000u32 as i32;

#[derive(Default)]
pub(crate) struct Table {
    /// User handlers: the function and the references the program holds to the handle (the
    /// one from its creation and one per `MPI_*_get_errhandler`); at none it may no longer
    /// be attached, but the objects that use it keep it working.
    handlers: BTreeMap<i32, (CommErrhandlerFn, u32)>,
    next: i32,
    /// User error codes above `MPI_ERR_LASTCODE`: code -> its class (a class is its own).
    codes: BTreeMap<i32, i32>,
    pub(crate) strings: BTreeMap<i32, String>,
}

static TABLE: Mutex<Option<Table>> = Mutex::new(None);

pub(crate) fn with_table<T>(f: impl FnOnce(&mut Table) -> T) -> T {
    let mut g: MutexGuard<'static, Option<Table>> = TABLE.lock().unwrap_or_else(|p| p.into_inner());
    f(g.get_or_insert_with(Table::default))
}

/// The function of a user error handler `eh`, freed or not.
pub fn user_handler(eh: MPI_Errhandler) -> Option<CommErrhandlerFn> {
    with_table(|t| t.handlers.get(&eh).map(|h| h.0))
}

/// Whether `eh` may be attached to a communicator now.
pub fn check_errhandler(eh: MPI_Errhandler) -> MpiResult<()> {
    if eh == MPI_ERRORS_ARE_FATAL || eh == MPI_ERRORS_ABORT || eh == MPI_ERRORS_RETURN || with_table(|t| t.handlers.get(&eh).is_some_and(|h| h.1 > 0)) {
        Ok(())
    } else if eh == MPI_ERRHANDLER_NULL {
        err(MPI_ERR_ARG, "MPI_ERRHANDLER_NULL is not an error handler")
    } else {
        err(MPI_ERR_ARG, format!("invalid error handler {eh:#x}"))
    }
}

/// Free one reference to the user's handle `eh` (predefined ones only become
/// `MPI_ERRHANDLER_NULL`). A handle from `MPI_Comm_get_errhandler` is a reference of its
/// own, so freeing it leaves the creator's handle usable; freeing more often than the
/// program got the handle is not refused.
pub fn free(eh: MPI_Errhandler) -> MpiResult<()> {
    if user_handler(eh).is_none() {
        check_errhandler(eh)?;
    }
    with_table(|t| {
        if let Some(h) = t.handlers.get_mut(&eh) {
            h.1 = h.1.saturating_sub(1);
        }
    });
    Ok(())
}

/// The handle `MPI_*_get_errhandler` gives the program: one more reference to a user
/// handler (the program frees it with `MPI_Errhandler_free`).
pub fn got(eh: MPI_Errhandler) -> MPI_Errhandler {
    with_table(|t| {
        if let Some(h) = t.handlers.get_mut(&eh) {
            h.1 += 1;
        }
    });
    eh
}

/// A handle for the user's handler `f` (of a communicator or a session: both take the
/// handle and the code by pointer).
pub fn register(f: CommErrhandlerFn) -> MPI_Errhandler {
    with_table(|t| {
        t.next += 1;
        let h = USER_BASE | (t.next & 0x03ff_ffff);
        t.handlers.insert(h, (f, 1));
        h
    })
}

/// Run a user handler for `code` on `comm` (no lock held).
pub fn invoke(f: CommErrhandlerFn, comm: MPI_Comm, code: c_int) {
    let (mut c, mut e) = (comm, code);
    // SAFETY: registered by MPI_Comm_create_errhandler with MPI's signature; the standard
    // passes the communicator and the code by pointer and no further arguments in C.
    unsafe { f(&mut c, &mut e) };
}

/// The class of an error code above `MPI_ERR_LASTCODE`, if the user made it.
pub fn user_class(code: c_int) -> Option<c_int> {
    with_table(|t| t.codes.get(&code).copied())
}

/// The string the user gave a class or code.
pub fn user_string(code: c_int) -> Option<String> {
    with_table(|t| t.codes.contains_key(&code).then(|| t.strings.get(&code).cloned().unwrap_or_default()))
}

/// The largest error code in use (`MPI_LASTUSEDCODE`).
pub fn last_used_code() -> c_int {
    with_table(|t| t.codes.keys().next_back().copied().unwrap_or(MPI_ERR_LASTCODE))
}

/// A new code above every code in use, of `class` (or its own class when `None`).
pub(crate) fn add_code(class: Option<c_int>) -> c_int {
    with_table(|t| {
        let code = t.codes.keys().next_back().copied().unwrap_or(MPI_ERR_LASTCODE) + 1;
        t.codes.insert(code, class.unwrap_or(code));
        code
    })
}

/// Which of the program's additions [`remove`] takes back.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Added {
    Class,
    Code,
    String,
}

/// Take back a class, a code or a string the program added (MPICH's `MPIX_Delete_error_*`,
/// MPI-4.1's `MPI_Remove_error_*`). As MPI-4.1 has it, only what the program added, and in the
/// reverse order: a code's string before the code, a class's codes and string before it.
pub(crate) fn remove(what: Added, value: c_int) -> MpiResult<()> {
    with_table(|t| {
        let Some(&class) = t.codes.get(&value) else {
            return err(MPI_ERR_ARG, format!("{value} is not an error class or code the program added"));
        };
        match what {
            Added::String => {
                if t.strings.remove(&value).is_none() {
                    return err(MPI_ERR_ARG, format!("error {value} has no string the program added"));
                }
                return Ok(());
            }
            Added::Code if class == value => return err(MPI_ERR_ARG, format!("{value} is an error class, not a code")),
            Added::Class if class != value => return err(MPI_ERR_ARG, format!("{value} is an error code, not a class")),
            Added::Class if t.codes.iter().any(|(&c, &k)| k == value && c != value) => {
                return err(MPI_ERR_ARG, format!("error class {value} still has codes: remove them first"));
            }
            _ => {}
        }
        if t.strings.contains_key(&value) {
            return err(MPI_ERR_ARG, format!("error {value} still has its string: remove it first"));
        }
        t.codes.remove(&value);
        Ok(())
    })
}

/// Class of any error code, predefined or the user's (for `MPI_Error_class`).
pub fn class_of(code: c_int) -> Option<c_int> {
    if (MPI_SUCCESS..=MPI_ERR_LASTCODE).contains(&code) {
        return Some(if crate::predefined::error_class_name(code).is_some() { code } else { MPI_ERR_UNKNOWN });
    }
    user_class(code)
}
