//! Performance variables, read from what the library keeps anyway (no counting is added
//! to any path for them):
//!
//! - `ferry_coll_calls`: the collective calls begun on a communicator (bound to
//!   `MPI_T_BIND_MPI_COMM`; its collective sequence number), class COUNTER, `MPI_UNSIGNED`;
//! - `ferry_requests_active`: the requests the library holds for the process now
//!   (non-blocking, persistent, generalized), class LEVEL, `MPI_UNSIGNED_LONG_LONG`.
//!
//! Both are continuous and read-only: they cannot be started, stopped, written or reset.
//! Sessions own their handles; freeing a session frees them. No enumerations exist.

use std::os::raw::{c_char, c_int, c_void};

use super::{initialised, name_arg, put, put_str, run, state, State};
use crate::consts::*;
use crate::runtime::Runtime;

/// `MPI_T_PVAR_ALL_HANDLES`: a handle value no pvar handle can take, MPICH's data object.
#[repr(transparent)]
pub struct AllHandles(*const u8);
// SAFETY: the pointer is a constant address that is only compared, never dereferenced.
unsafe impl Sync for AllHandles {}
static ALL_HANDLES_TARGET: u8 = 0;
#[no_mangle]
pub static MPI_T_PVAR_ALL_HANDLES: AllHandles = AllHandles(&ALL_HANDLES_TARGET);

/// One performance variable.
struct Pvar {
    name: &'static str,
    meaning: &'static str,
    class: c_int,
    datatype: MPI_Datatype,
    bind: c_int,
    read: fn(&Runtime, Option<MPI_Comm>) -> Option<u64>,
}

const PVARS: &[Pvar] = &[
    Pvar {
        name: "ferry_coll_calls",
        meaning: "collective calls begun on the communicator (blocking, non-blocking and persistent starts), modulo 2^32",
        class: MPI_T_PVAR_CLASS_COUNTER,
        datatype: MPI_UNSIGNED,
        bind: MPI_T_BIND_MPI_COMM,
        read: |rt, comm| rt.comms.get(&comm?).map(|c| c.coll_seq.total() as u64),
    },
    Pvar {
        name: "ferry_requests_active",
        meaning: "requests the library holds for this process: non-blocking operations in flight, persistent and generalized requests not yet freed",
        class: MPI_T_PVAR_CLASS_LEVEL,
        datatype: MPI_UNSIGNED_LONG_LONG,
        bind: MPI_T_BIND_NO_OBJECT,
        read: |rt, _| Some(rt.reqs.len() as u64),
    },
];

/// A handle: the variable, the communicator it is bound to, its session.
struct Handle {
    pvar: usize,
    comm: Option<MPI_Comm>,
    session: usize,
}

/// A session: the handles allocated in it.
#[derive(Default)]
struct Session {
    handles: Vec<usize>,
}

/// How many performance variables there are (all in the one category).
pub(super) fn count() -> usize {
    PVARS.len()
}

fn pvar(index: c_int) -> Result<&'static Pvar, c_int> {
    usize::try_from(index).ok().and_then(|i| PVARS.get(i)).ok_or(MPI_T_ERR_INVALID_INDEX)
}

fn session<'a>(s: &State, p: *mut c_void) -> Result<&'a mut Session, c_int> {
    if !s.sessions.contains(&(p as usize)) {
        return Err(MPI_T_ERR_INVALID_SESSION);
    }
    // SAFETY: a live session is a leaked Box<Session> (session_create), freed only by
    // session_free, which removes it from the set first; the state lock is held.
    Ok(unsafe { &mut *(p as *mut Session) })
}

/// The handle `h` of session `sp`.
fn handle<'a>(s: &State, sp: *mut c_void, h: *mut c_void) -> Result<&'a Handle, c_int> {
    let sess = session(s, sp)?;
    if !sess.handles.contains(&(h as usize)) {
        return Err(MPI_T_ERR_INVALID_HANDLE);
    }
    // SAFETY: a handle listed in a live session is a leaked Box<Handle> (handle_alloc).
    Ok(unsafe { &*(h as *const Handle) })
}

fn is_all(h: *mut c_void) -> bool {
    std::ptr::eq(h as *const u8, MPI_T_PVAR_ALL_HANDLES.0)
}

/// Read a variable from the runtime: `None` when the bound object is gone. Before
/// `MPI_Init` and after `MPI_Finalize` no object exists and no request is held.
fn read_value(p: &Pvar, comm: Option<MPI_Comm>) -> Result<Option<u64>, c_int> {
    // A user's reduction function runs inside an MPI call that holds the runtime.
    if crate::op::in_user_function() {
        return Err(MPI_T_ERR_INVALID);
    }
    if let Some(rt) = crate::generalized::reentered() {
        // SAFETY: a generalized request's callback runs inside an MPI call on this thread,
        // which lent its runtime for the callback's duration.
        return Ok((p.read)(unsafe { &*rt }, comm));
    }
    let rt = crate::runtime::lock();
    Ok(match rt.as_ref() {
        Some(rt) => (p.read)(rt, comm),
        None if p.bind == MPI_T_BIND_NO_OBJECT => Some(0),
        None => None,
    })
}

crate::mpi_export! { MPI_T_pvar_get_num, PMPI_T_pvar_get_num, (num: *mut c_int) {
    run(|| {
        initialised()?;
        if num.is_null() {
            return Err(MPI_ERR_ARG);
        }
        put(num, PVARS.len() as c_int);
        Ok(())
    })
}}

crate::mpi_export! { MPI_T_pvar_get_info, PMPI_T_pvar_get_info, (index: c_int, name: *mut c_char, name_len: *mut c_int, verbosity: *mut c_int,
        var_class: *mut c_int, datatype: *mut MPI_Datatype, enumtype: *mut *mut c_void, desc: *mut c_char, desc_len: *mut c_int,
        bind: *mut c_int, readonly: *mut c_int, continuous: *mut c_int, atomic: *mut c_int) {
    run(|| {
        initialised()?;
        let p = pvar(index)?;
        put_str(p.name, name, name_len);
        put(verbosity, MPI_T_VERBOSITY_TUNER_BASIC);
        put(var_class, p.class);
        put(datatype, p.datatype);
        put(enumtype, std::ptr::null_mut());
        put_str(p.meaning, desc, desc_len);
        put(bind, p.bind);
        put(readonly, 1);
        put(continuous, 1);
        put(atomic, 0);
        Ok(())
    })
}}

crate::mpi_export! { MPI_T_pvar_get_index, PMPI_T_pvar_get_index, (name: *const c_char, var_class: c_int, index: *mut c_int) {
    run(|| {
        initialised()?;
        let n = name_arg(name)?;
        let i = PVARS.iter().position(|p| p.name == n && p.class == var_class).ok_or(MPI_T_ERR_INVALID_NAME)?;
        if index.is_null() {
            return Err(MPI_ERR_ARG);
        }
        put(index, i as c_int);
        Ok(())
    })
}}

crate::mpi_export! { MPI_T_pvar_session_create, PMPI_T_pvar_session_create, (session_out: *mut *mut c_void) {
    run(|| {
        let mut s = state()?;
        if session_out.is_null() {
            return Err(MPI_ERR_ARG);
        }
        let p = Box::into_raw(Box::<Session>::default()) as *mut c_void;
        s.sessions.insert(p as usize);
        put(session_out, p);
        Ok(())
    })
}}

crate::mpi_export! { MPI_T_pvar_session_free, PMPI_T_pvar_session_free, (session_io: *mut *mut c_void) {
    run(|| {
        let mut s = state()?;
        // SAFETY: a non-NULL session argument points to a session handle (MPI's contract).
        let p = unsafe { session_io.as_mut() }.ok_or(MPI_T_ERR_INVALID_SESSION)?;
        if !s.sessions.remove(&(*p as usize)) {
            return Err(MPI_T_ERR_INVALID_SESSION);
        }
        // SAFETY: it was live (just removed from the set): a leaked Box<Session>, and so
        // is each handle it lists.
        let sess = unsafe { Box::from_raw(*p as *mut Session) };
        for h in sess.handles {
            // SAFETY: as above.
            drop(unsafe { Box::from_raw(h as *mut Handle) });
        }
        *p = std::ptr::null_mut();
        Ok(())
    })
}}

crate::mpi_export! { MPI_T_pvar_handle_alloc, PMPI_T_pvar_handle_alloc, (session_p: *mut c_void, index: c_int, obj: *mut c_void, handle_out: *mut *mut c_void, count: *mut c_int) {
    run(|| {
        initialised()?;
        let p = pvar(index)?;
        if handle_out.is_null() || count.is_null() {
            return Err(MPI_ERR_ARG);
        }
        // Looked at before the state is locked: the runtime may be held by an MPI call whose
        // event callback waits for the state (the lock order is runtime, then state).
        let comm = match p.bind {
            MPI_T_BIND_MPI_COMM => {
                // SAFETY: for a variable bound to a communicator, MPI passes a pointer to one.
                let c = unsafe { (obj as *const MPI_Comm).as_ref() }.copied().ok_or(MPI_T_ERR_INVALID_HANDLE)?;
                // The communicator must exist now.
                read_value(p, Some(c))?.ok_or(MPI_T_ERR_INVALID_HANDLE)?;
                Some(c)
            }
            _ => None,
        };
        let s = state()?;
        let sess = session(&s, session_p)?;
        let h = Box::into_raw(Box::new(Handle { pvar: index as usize, comm, session: session_p as usize })) as *mut c_void;
        sess.handles.push(h as usize);
        put(handle_out, h);
        put(count, 1);
        Ok(())
    })
}}

crate::mpi_export! { MPI_T_pvar_handle_free, PMPI_T_pvar_handle_free, (session_p: *mut c_void, handle_io: *mut *mut c_void) {
    run(|| {
        let s = state()?;
        // SAFETY: a non-NULL handle argument points to a handle (MPI's contract).
        let h = unsafe { handle_io.as_mut() }.ok_or(MPI_T_ERR_INVALID_HANDLE)?;
        let owner = handle(&s, session_p, *h)?.session;
        let sess = session(&s, owner as *mut c_void)?;
        sess.handles.retain(|x| *x != *h as usize);
        // SAFETY: listed in its session until just now: a leaked Box<Handle>.
        drop(unsafe { Box::from_raw(*h as *mut Handle) });
        *h = std::ptr::null_mut();
        Ok(())
    })
}}

/// Start and stop: the variables are continuous, so there is nothing to start or stop;
/// for `MPI_T_PVAR_ALL_HANDLES` that is success, as the standard says.
fn start_stop(session_p: *mut c_void, h: *mut c_void) -> Result<(), c_int> {
    let s = state()?;
    if is_all(h) {
        return session(&s, session_p).map(drop);
    }
    handle(&s, session_p, h)?;
    Err(MPI_T_ERR_PVAR_NO_STARTSTOP)
}

/// Write and reset: the variables are read-only.
fn write_reset(session_p: *mut c_void, h: *mut c_void, all_allowed: bool) -> Result<(), c_int> {
    let s = state()?;
    if all_allowed && is_all(h) {
        return session(&s, session_p).map(drop);
    }
    handle(&s, session_p, h)?;
    Err(MPI_T_ERR_PVAR_NO_WRITE)
}

crate::mpi_export! { MPI_T_pvar_start, PMPI_T_pvar_start, (session_p: *mut c_void, h: *mut c_void) {
    run(|| start_stop(session_p, h))
}}

crate::mpi_export! { MPI_T_pvar_stop, PMPI_T_pvar_stop, (session_p: *mut c_void, h: *mut c_void) {
    run(|| start_stop(session_p, h))
}}

crate::mpi_export! { MPI_T_pvar_reset, PMPI_T_pvar_reset, (session_p: *mut c_void, h: *mut c_void) {
    run(|| write_reset(session_p, h, true))
}}

crate::mpi_export! { MPI_T_pvar_write, PMPI_T_pvar_write, (session_p: *mut c_void, h: *mut c_void, _buf: *const c_void) {
    run(|| write_reset(session_p, h, false))
}}

crate::mpi_export! { MPI_T_pvar_readreset, PMPI_T_pvar_readreset, (session_p: *mut c_void, h: *mut c_void, _buf: *mut c_void) {
    run(|| write_reset(session_p, h, false))
}}

crate::mpi_export! { MPI_T_pvar_read, PMPI_T_pvar_read, (session_p: *mut c_void, h: *mut c_void, buf: *mut c_void) {
    run(|| {
        let s = state()?;
        let hd = handle(&s, session_p, h)?;
        let (p, comm) = (&PVARS[hd.pvar], hd.comm);
        if buf.is_null() {
            return Err(MPI_ERR_ARG);
        }
        // Not held while the runtime is read (see MPI_T_pvar_handle_alloc).
        drop(s);
        let v = read_value(p, comm)?.ok_or(MPI_T_ERR_INVALID_HANDLE)?;
        // SAFETY: the buffer holds `count` (1) elements of the variable's datatype.
        unsafe {
            if p.datatype == MPI_UNSIGNED {
                *(buf as *mut u32) = v as u32;
            } else {
                *(buf as *mut u64) = v;
            }
        }
        Ok(())
    })
}}

crate::mpi_export! { MPI_T_enum_get_info, PMPI_T_enum_get_info, (_enumtype: *mut c_void, _num: *mut c_int, _name: *mut c_char, _name_len: *mut c_int) {
    run(|| {
        initialised()?;
        Err(MPI_T_ERR_INVALID_HANDLE)
    })
}}

crate::mpi_export! { MPI_T_enum_get_item, PMPI_T_enum_get_item, (_enumtype: *mut c_void, _index: c_int, _value: *mut c_int, _name: *mut c_char, _name_len: *mut c_int) {
    run(|| {
        initialised()?;
        Err(MPI_T_ERR_INVALID_HANDLE)
    })
}}
