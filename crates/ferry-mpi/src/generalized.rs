//! Generalized requests (MPI_Grequest_start): operations the program runs itself and reports
//! complete with MPI_Grequest_complete; the Wait/Test family calls its query function for the
//! status and its free function when the request goes away. Also the status setters those
//! query functions use.
//!
//! The callbacks run inside the MPI call that triggers them, with the runtime held; MPI calls
//! they make (MPI_Status_set_elements, MPI_Grequest_complete, ...) use that same runtime (see
//! [`reentered`]) instead of waiting for it.

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::os::raw::{c_int, c_void};

use crate::objects::comm::Ranks;
use crate::error::out_arg;
pub use crate::objects::request::{CancelFn, FreeFn, Grequest, QueryFn};
use crate::objects::request::{status_bytes, ApiReq, Body, Outcome};
use crate::consts::*;
use crate::error::{err, MpiError, MpiResult};
use crate::objects::Runtime;

thread_local! {
    /// The runtime of the MPI call running a program's callback on this thread.
    static IN_CALLBACK: Cell<*mut Runtime> = const { Cell::new(std::ptr::null_mut()) };
}

/// The runtime to use, without locking, for an MPI call made from inside a callback.
#[inline]
pub fn reentered() -> Option<*mut Runtime> {
    if LENT.load(Ordering::Acquire) == 0 {
        return None;
    }
    lent_here()
}

/// The thread-local part of [`reentered`], apart so that the compiler cannot look the
/// thread-local up before the counter said it is needed.
#[cold]
#[inline(never)]
fn lent_here() -> Option<*mut Runtime> {
    let p = IN_CALLBACK.with(Cell::get);
    (!p.is_null()).then_some(p)
}

/// How many callbacks run with a lent runtime now: while none does, an MPI call need not read
/// its thread-local state to know it.
static LENT: AtomicUsize = AtomicUsize::new(0);

/// Run a program's callback with `rt` lent to the MPI calls it makes. The caller holds no
/// reference into `rt` across this call.
pub(crate) fn with_callback<T>(rt: &mut Runtime, f: impl FnOnce() -> T) -> T {
    LENT.fetch_add(1, Ordering::AcqRel);
    let outer = IN_CALLBACK.with(|c| c.replace(rt as *mut Runtime));
    let r = f();
    IN_CALLBACK.with(|c| c.set(outer));
    LENT.fetch_sub(1, Ordering::AcqRel);
    r
}

fn grequest(rt: &mut Runtime, h: MPI_Request) -> MpiResult<&mut Grequest> {
    match rt.reqs.get_mut(&h).map(|r| &mut r.body) {
        Some(Body::Generalized(g)) => Ok(g),
        Some(_) => err(MPI_ERR_REQUEST, format!("request {h:#x} is not a generalized request")),
        None => err(MPI_ERR_REQUEST, format!("invalid request handle {h:#x}")),
    }
}

/// Ask the query function for the status of complete request `h` (it stays).
pub fn query(rt: &mut Runtime, h: MPI_Request) -> Outcome {
    let Ok(g) = grequest(rt, h) else { return Outcome::empty() };
    let (q, extra) = (g.query, g.extra);
    let mut st = MPI_Status { count_lo: 0, count_hi_and_cancelled: 0, MPI_SOURCE: MPI_ANY_SOURCE, MPI_TAG: MPI_ANY_TAG, MPI_ERROR: MPI_SUCCESS };
    // SAFETY: the program's query function, with its own extra state and a valid status.
    let rc = q.map_or(MPI_SUCCESS, |q| with_callback(rt, || unsafe { q(extra, &mut st) }));
    Outcome { source: st.MPI_SOURCE, tag: st.MPI_TAG, bytes: status_bytes(&st), cancelled: st.count_hi_and_cancelled & 1 != 0, error: rc, lost: None }
}

fn call_free(rt: &mut Runtime, g: &Grequest) -> c_int {
    let (f, extra) = (g.free, g.extra);
    // SAFETY: the program's free function with its own extra state.
    f.map_or(MPI_SUCCESS, |f| with_callback(rt, || unsafe { f(extra) }))
}

/// Complete request `h` for the Wait/Test family: query, then free. An error the query
/// function returns comes first; else the free function's.
pub fn finish(rt: &mut Runtime, h: MPI_Request) -> Outcome {
    let mut o = query(rt, h);
    let Some(r) = rt.reqs.remove(&h) else { return o };
    if let Body::Generalized(g) = &r.body {
        let rc = call_free(rt, g);
        if o.error == MPI_SUCCESS {
            o.error = rc;
        }
    }
    o
}

/// MPI_Request_free: free now when complete, else once MPI_Grequest_complete is called.
pub fn free(rt: &mut Runtime, h: MPI_Request) {
    let Ok(g) = grequest(rt, h) else { return };
    if !g.complete {
        g.freed = true;
        return;
    }
    if let Some(ApiReq { body: Body::Generalized(g), .. }) = rt.reqs.remove(&h) {
        call_free(rt, &g);
    }
}

/// MPI_Cancel: the cancel function learns whether the operation is complete already.
pub fn cancel(rt: &mut Runtime, h: MPI_Request) -> MpiResult<()> {
    let g = grequest(rt, h)?;
    let (c, extra, complete) = (g.cancel, g.extra, g.complete as c_int);
    // SAFETY: the program's cancel function with its own extra state.
    let rc = c.map_or(MPI_SUCCESS, |c| with_callback(rt, || unsafe { c(extra, complete) }));
    if rc != MPI_SUCCESS {
        return err(rc, "the generalized request's cancel function failed");
    }
    Ok(())
}

pub(crate) fn grequest_start(rt: &mut Runtime, query: Option<QueryFn>, free: Option<FreeFn>, cancel: Option<CancelFn>, extra: *mut c_void, req: *mut MPI_Request) -> MpiResult<()> {
    let o = out_arg(req, "request")?;
    let g = Grequest { query, free, cancel, extra, complete: false, freed: false };
    *o = rt.add_req(ApiReq { body: Body::Generalized(Box::new(g)), comm: MPI_COMM_WORLD, group: Ranks::None, unpack: None, keep: None });
    Ok(())
}

pub(crate) fn grequest_complete(rt: &mut Runtime, h: MPI_Request) -> MpiResult<()> {
    let g = grequest(rt, h)?;
    if g.complete {
        return err(MPI_ERR_REQUEST, format!("generalized request {h:#x} is already complete"));
    }
    g.complete = true;
    if g.freed {
        free(rt, h);
    }
    Ok(())
}

/// The bytes that `count` primitive elements of copies of `t` take (inverse of `elements`).
fn element_bytes(t: &ferry_data::datatype::Datatype, count: usize) -> MpiResult<usize> {
    let (size, per) = (t.size(), t.element_count());
    if size == 0 || per == 0 {
        return if count == 0 { Ok(0) } else { err(MPI_ERR_TYPE, "the datatype holds no elements") };
    }
    let rest = count % per;
    let partial = (0..=size).find(|&b| t.elements(b) == Some(rest)).ok_or_else(|| MpiError::new(MPI_ERR_TYPE, "no byte count holds that many elements"))?;
    (count / per).checked_mul(size).and_then(|b| b.checked_add(partial)).ok_or_else(|| MpiError::new(MPI_ERR_COUNT, format!("{count} elements overflow the byte count")))
}

pub(crate) fn status_mut<'a>(status: *mut MPI_Status) -> MpiResult<&'a mut MPI_Status> {
    if crate::objects::request::status_ignored(status) {
        return err(MPI_ERR_ARG, "status is NULL or MPI_STATUS_IGNORE");
    }
    // SAFETY: checked above: MPI passes a status object.
    Ok(unsafe { &mut *status })
}

pub(crate) fn set_elements(rt: &mut Runtime, status: *mut MPI_Status, dt: MPI_Datatype, count: MPI_Count) -> MpiResult<()> {
    let st = status_mut(status)?;
    if count < 0 {
        return err(MPI_ERR_COUNT, format!("count {count} is negative"));
    }
    let t = rt.any_datatype(dt)?;
    let bytes = element_bytes(&t, count as usize)? as u64;
    if bytes >> 63 != 0 {
        return err(MPI_ERR_COUNT, format!("{bytes} bytes do not fit a status"));
    }
    st.count_lo = bytes as u32 as i32;
    st.count_hi_and_cancelled = (((bytes >> 32) << 1) as i32) | (st.count_hi_and_cancelled & 1);
    Ok(())
}
