//! The C functions of `mcapi.h`. Each checks its arguments, takes the node's lock for as
//! short as it can, and reports through its `mcapi_status` argument; no panic crosses into
//! C (a panic becomes `MCAPI_ERR_GENERAL`). Results of requests reach the caller's memory
//! when `mcapi_test`/`mcapi_wait`/`mcapi_wait_any` hand the request back.

mod channels;
mod endpoints;
mod general;
mod messages;
mod requests;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::core::{Done, Ep, Outcome, ReqId, Status};
use crate::driver::{self, block_until, Runtime, WaitEnd};

pub type McapiStatus = u32;
pub type Request = u32;

pub const MCAPI_TRUE: u8 = 1;
pub const MCAPI_FALSE: u8 = 0;
pub const TIMEOUT_INFINITE: u32 = u32::MAX;
pub const MAX_DOMAIN: u32 = 0;
pub const MAX_NODE: u32 = 65535;
pub const MAX_PORT: u32 = 65535;
pub const PORT_ANY: u32 = u32::MAX;
pub const MAX_ENDPOINTS: u32 = 1024;
pub const INVALID: u32 = u32::MAX;

/// The value of each status in `mcapi.h`.
pub fn code(s: Status) -> McapiStatus {
    use Status::*;
    match s {
        Success => 1,
        Pending => 2,
        Timeout => 3,
        ErrParameter => 4,
        ErrDomainInvalid => 5,
        ErrNodeInvalid => 6,
        ErrNodeInitFailed => 7,
        ErrNodeInitialized => 8,
        ErrNodeNotInit => 9,
        ErrNodeFinalFailed => 10,
        ErrPortInvalid => 11,
        ErrEndpInvalid => 12,
        ErrEndpExists => 13,
        ErrEndpGetLimit => 14,
        ErrEndpDeleted => 15,
        ErrEndpNotOwner => 16,
        ErrEndpRemote => 17,
        ErrEndpLimit => 19,
        ErrAttrIncompatible => 20,
        ErrAttrSize => 21,
        ErrAttrNum => 22,
        ErrAttrValue => 23,
        ErrAttrNotSupported => 24,
        ErrAttrReadOnly => 25,
        ErrMsgSize => 26,
        ErrMsgTruncated => 27,
        ErrChanOpen => 28,
        ErrChanType => 29,
        ErrChanDirection => 30,
        ErrChanConnected => 31,
        ErrChanOpenPending => 32,
        ErrChanNotOpen => 33,
        ErrChanInvalid => 34,
        ErrPktSize => 35,
        ErrSclSize => 36,
        ErrTransmission => 37,
        ErrPriority => 38,
        ErrBufInvalid => 39,
        ErrMemLimit => 40,
        ErrRequestInvalid => 41,
        ErrRequestLimit => 42,
        ErrRequestCancelled => 43,
        ErrWaitPending => 44,
        ErrGeneral => 45,
        ErrChanClosePending => 46,
    }
}

/// Names of the status codes, by value (`mcapi_display_status`).
pub const NAMES: [&str; 47] = [
    "", "MCAPI_SUCCESS", "MCAPI_PENDING", "MCAPI_TIMEOUT", "MCAPI_ERR_PARAMETER", "MCAPI_ERR_DOMAIN_INVALID", "MCAPI_ERR_NODE_INVALID", "MCAPI_ERR_NODE_INITFAILED", "MCAPI_ERR_NODE_INITIALIZED", "MCAPI_ERR_NODE_NOTINIT", "MCAPI_ERR_NODE_FINALFAILED", "MCAPI_ERR_PORT_INVALID", "MCAPI_ERR_ENDP_INVALID", "MCAPI_ERR_ENDP_EXISTS", "MCAPI_ERR_ENDP_GET_LIMIT", "MCAPI_ERR_ENDP_DELETED", "MCAPI_ERR_ENDP_NOTOWNER", "MCAPI_ERR_ENDP_REMOTE", "MCAPI_ERR_ENDP_NOPORTS", "MCAPI_ERR_ENDP_LIMIT", "MCAPI_ERR_ATTR_INCOMPATIBLE", "MCAPI_ERR_ATTR_SIZE", "MCAPI_ERR_ATTR_NUM", "MCAPI_ERR_ATTR_VALUE", "MCAPI_ERR_ATTR_NOTSUPPORTED", "MCAPI_ERR_ATTR_READONLY", "MCAPI_ERR_MSG_SIZE", "MCAPI_ERR_MSG_TRUNCATED", "MCAPI_ERR_CHAN_OPEN", "MCAPI_ERR_CHAN_TYPE", "MCAPI_ERR_CHAN_DIRECTION", "MCAPI_ERR_CHAN_CONNECTED", "MCAPI_ERR_CHAN_OPENPENDING", "MCAPI_ERR_CHAN_NOTOPEN", "MCAPI_ERR_CHAN_INVALID", "MCAPI_ERR_PKT_SIZE", "MCAPI_ERR_SCL_SIZE", "MCAPI_ERR_TRANSMISSION", "MCAPI_ERR_PRIORITY", "MCAPI_ERR_BUF_INVALID", "MCAPI_ERR_MEM_LIMIT", "MCAPI_ERR_REQUEST_INVALID", "MCAPI_ERR_REQUEST_LIMIT", "MCAPI_ERR_REQUEST_CANCELLED", "MCAPI_ERR_WAIT_PENDING", "MCAPI_ERR_GENERAL", "MCAPI_ERR_CHAN_CLOSEPENDING",
];

/// Write `s` through the caller's status pointer (if it gave one).
pub(crate) fn put(status: *mut McapiStatus, s: Status) {
    if !status.is_null() {
        // SAFETY: a non-null status argument points to a status the caller owns.
        unsafe { *status = code(s) };
    }
}

/// Run a call's body, turning a panic into `MCAPI_ERR_GENERAL`. The body returns the
/// function's value and its status.
pub(crate) fn call<T>(status: *mut McapiStatus, fail: T, body: impl FnOnce() -> (T, Status)) -> T {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok((v, s)) => {
            put(status, s);
            v
        }
        Err(_) => {
            put(status, Status::ErrGeneral);
            fail
        }
    }
}

/// Run `f` on the initialised node, under its lock, and move the frames it made.
pub(crate) fn with_node<T>(f: impl FnOnce(&mut Runtime) -> Result<T, Status>) -> Result<T, Status> {
    let mut g = driver::lock();
    let rt = driver::active(&mut g).ok_or(Status::ErrNodeNotInit)?;
    let r = f(rt);
    rt.pump();
    r
}

/// The deadline of an MCAPI timeout in milliseconds (`None`: never).
pub(crate) fn deadline(timeout: u32) -> Option<Instant> {
    (timeout != TIMEOUT_INFINITE).then(|| Instant::now() + Duration::from_millis(timeout as u64))
}

/// Where a finished request's result goes in the caller's memory: the kind (0: nowhere), and
/// up to two words (a pointer and a size).
pub(crate) const OUT_MSG: usize = 1;
pub(crate) const OUT_HANDLE: usize = 2;
pub(crate) const OUT_PACKET: usize = 3;

/// Copy a finished request's result where its call asked for it.
pub(crate) fn write_out(done: &Done, user: [usize; 3]) {
    match (&done.out, user[0]) {
        (Outcome::Data { frame, offset }, OUT_MSG) if done.size > 0 => {
            // SAFETY: the receive's caller promised `user[1]` to hold `user[2]` bytes until the
            // request completes; `done.size` is at most that.
            unsafe { std::ptr::copy_nonoverlapping(frame[*offset..].as_ptr(), user[1] as *mut u8, done.size.min(user[2])) };
        }
        (Outcome::Handle(ep), OUT_HANDLE) if user[1] != 0 => {
            // SAFETY: the caller's handle or endpoint storage, given to the call that started
            // the request.
            unsafe { *(user[1] as *mut u32) = ep.0 };
        }
        (Outcome::Packet { addr, .. }, OUT_PACKET) if user[1] != 0 => {
            // SAFETY: the caller's `void**` given to pktchan_recv_i.
            unsafe { *(user[1] as *mut usize) = *addr };
        }
        _ => {}
    }
}

/// Hand the frame of a message copied out to the caller back to the engine, for the next
/// message to arrive in (no allocation per message).
pub(crate) fn give_back(rt: &mut Runtime, done: &mut Done) {
    if matches!(done.out, Outcome::Data { .. }) {
        if let Outcome::Data { frame, .. } = std::mem::replace(&mut done.out, Outcome::Nothing) {
            rt.engine.recycle(frame);
        }
    }
}

/// Requests some thread waits for (a second waiter gets `MCAPI_ERR_WAIT_PENDING`).
static WAITED: Mutex<Vec<u32>> = Mutex::new(Vec::new());

/// Marks a request waited for, for as long as it lives.
pub(crate) struct Waiting(u32);

impl Waiting {
    pub(crate) fn claim(rid: ReqId) -> Result<Waiting, Status> {
        let mut w = WAITED.lock().unwrap_or_else(|p| p.into_inner());
        if w.contains(&rid.0) {
            return Err(Status::ErrWaitPending);
        }
        w.push(rid.0);
        Ok(Waiting(rid.0))
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        WAITED.lock().unwrap_or_else(|p| p.into_inner()).retain(|r| *r != self.0);
    }
}

/// Wait for `rid` until `deadline`; on time out the request stays pending. `shared`: the
/// caller holds the request (a second waiter on it is refused); a blocking call waiting on
/// its own request need not say so.
pub(crate) fn wait_request(rid: ReqId, deadline: Option<Instant>, shared: bool) -> Result<Done, Status> {
    let _claim = if shared { Some(Waiting::claim(rid)?) } else { None };
    let mut taken = None;
    let mut cancelled = false;
    let r = block_until(
        |rt| {
            if !rt.node.request_valid(rid) {
                cancelled = rt.node.was_cancelled(rid);
                return true;
            }
            if rt.node.is_done(rid) {
                let user = rt.node.user_words(rid).unwrap_or_default();
                let mut done = rt.node.take(rid).expect("done");
                write_out(&done, user);
                give_back(rt, &mut done);
                taken = Some(done);
                return true;
            }
            false
        },
        deadline,
    );
    match r {
        Err(WaitEnd::TimedOut) => Err(Status::Timeout),
        Err(WaitEnd::NotInitialised) => Err(Status::ErrNodeNotInit),
        Ok(()) => taken.ok_or(if cancelled { Status::ErrRequestCancelled } else { Status::ErrRequestInvalid }),
    }
}

/// Wait for a request a blocking call started; on time out take it back if the core can.
pub(crate) fn wait_blocking(rid: ReqId, timeout: u32) -> Result<Done, Status> {
    match wait_request(rid, deadline(timeout), false) {
        Err(Status::Timeout) => {
            let _ = with_node(|rt| rt.node.cancel(rid));
            Err(Status::Timeout)
        }
        r => r,
    }
}

/// Start a request with `f`, under one hold of the node's lock; store its handle for the
/// caller. The call's status: `MCAPI_PENDING`, or `MCAPI_SUCCESS` when the operation finished
/// within the call (its results are then where the caller asked for them at once; the
/// request still waits to be released by a wait). An operation that failed within the call
/// returns its error and leaves no request, except one whose wait has more to say than the
/// error ([`reported_by_wait`]): that call returns `MCAPI_PENDING` and its wait reports it.
pub(crate) fn start_request(request: *mut Request, f: impl FnOnce(&mut Runtime) -> Result<ReqId, Status>) -> Status {
    let r = with_node(|rt| {
        let rid = f(rt)?;
        let status = match rt.node.peek(rid) {
            Some(done) if done.status == Status::Success => {
                write_out(done, rt.node.user_words(rid).unwrap_or_default());
                Status::Success
            }
            Some(done) if !reported_by_wait(done.status) => {
                let failed = done.status;
                rt.node.take(rid);
                return Err(failed);
            }
            _ => Status::Pending,
        };
        // SAFETY: checked non-null by the caller of this helper.
        unsafe { *request = rid.0 };
        Ok(status)
    });
    r.unwrap_or_else(|s| s)
}

/// Errors a non-blocking call leaves to its wait even when it knows them at once: a
/// truncated receive, whose size only the wait reports.
pub(crate) fn reported_by_wait(s: Status) -> bool {
    s == Status::ErrMsgTruncated
}

/// The value of a wait or test that found its request finished: `MCAPI_TRUE` only for an
/// operation that succeeded (MCAPI 2.000 4.6.2: a failed operation's error is passed on in
/// the status, with `MCAPI_FALSE`).
pub(crate) fn finished(status: Status) -> u8 {
    if status == Status::Success {
        MCAPI_TRUE
    } else {
        MCAPI_FALSE
    }
}

pub(crate) fn ep(h: u32) -> Ep {
    Ep(h)
}

/// A status of a finished request, with a truncated receive counting as its own status.
pub(crate) fn status_of(done: &Done) -> Status {
    done.status
}
