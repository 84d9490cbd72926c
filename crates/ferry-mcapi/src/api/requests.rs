//! Requests: test, wait, wait for any, cancel; and the names of status codes.

use std::time::Instant;

use super::{call, deadline, finished, wait_request, with_node, write_out, McapiStatus, Request, INVALID, MCAPI_FALSE, NAMES};
use crate::core::{ReqId, Status};
use crate::driver::{block_until, WaitEnd};

/// The request a caller's storage names, if it is a live one.
fn live(request: *const Request) -> Result<ReqId, Status> {
    if request.is_null() {
        return Err(Status::ErrParameter);
    }
    // SAFETY: the caller's request storage.
    let rid = ReqId(unsafe { *request });
    with_node(|rt| if rt.node.request_valid(rid) { Ok(rid) } else { Err(Status::ErrRequestInvalid) })
}

/// `MCAPI_TRUE` when the operation finished and succeeded; `MCAPI_FALSE` with
/// `MCAPI_PENDING` while it runs, or with its error when it failed (the request stays, for
/// the wait that releases it).
///
/// # Safety
/// C caller.
#[no_mangle]
pub unsafe extern "C" fn mcapi_test(request: *mut Request, size: *mut usize, status: *mut McapiStatus) -> u8 {
    call(status, MCAPI_FALSE, || {
        if size.is_null() {
            return (MCAPI_FALSE, Status::ErrParameter);
        }
        let rid = match live(request) {
            Ok(r) => r,
            Err(s) => return (MCAPI_FALSE, s),
        };
        let r = with_node(|rt| {
            if !rt.node.is_done(rid) {
                return Ok(None);
            }
            // Test leaves the request to the wait that releases it.
            let user = rt.node.user_words(rid).unwrap_or_default();
            let d = rt.node.peek(rid).expect("done");
            write_out(d, user);
            Ok(Some((d.size, d.status)))
        });
        match r {
            Ok(None) => (MCAPI_FALSE, Status::Pending),
            Ok(Some((n, st))) => {
                // SAFETY: checked non-null above.
                unsafe { *size = n };
                (finished(st), st)
            }
            Err(s) => (MCAPI_FALSE, s),
        }
    })
}

/// `MCAPI_TRUE` when the operation finished and succeeded; `MCAPI_FALSE` with its error when
/// it failed (the request is released either way), or with `MCAPI_TIMEOUT`.
///
/// # Safety
/// C caller.
#[no_mangle]
pub unsafe extern "C" fn mcapi_wait(request: *mut Request, size: *mut usize, timeout: u32, status: *mut McapiStatus) -> u8 {
    call(status, MCAPI_FALSE, || {
        if size.is_null() {
            return (MCAPI_FALSE, Status::ErrParameter);
        }
        let rid = match live(request) {
            Ok(r) => r,
            Err(s) => return (MCAPI_FALSE, s),
        };
        match wait_request(rid, deadline(timeout), true) {
            Ok(d) => {
                // SAFETY: checked non-null above.
                unsafe { *size = d.size };
                (finished(d.status), d.status)
            }
            Err(s) => (MCAPI_FALSE, s),
        }
    })
}

/// The index of the request that finished (and is released), with its operation's status:
/// a failed operation's error too, so that the caller knows which request it was.
///
/// # Safety
/// C caller.
#[no_mangle]
pub unsafe extern "C" fn mcapi_wait_any(number: usize, requests: *mut *mut Request, size: *mut usize, timeout: u32, status: *mut McapiStatus) -> u32 {
    call(status, INVALID, || {
        if number == 0 || requests.is_null() || size.is_null() {
            return (INVALID, Status::ErrParameter);
        }
        let mut rids = Vec::with_capacity(number);
        for i in 0..number {
            // SAFETY: the caller's array of `number` request pointers.
            let p = unsafe { *requests.add(i) };
            match live(p) {
                Ok(r) => rids.push(r),
                Err(s) => return (INVALID, s),
            }
        }
        let mut found = None;
        let until: Option<Instant> = deadline(timeout);
        let r = block_until(
            |rt| {
                let Some(i) = rids.iter().position(|r| rt.node.is_done(*r)) else { return false };
                let user = rt.node.user_words(rids[i]).unwrap_or_default();
                let d = rt.node.take(rids[i]).expect("done");
                write_out(&d, user);
                found = Some((i, d));
                true
            },
            until,
        );
        match (r, found) {
            (Ok(()), Some((i, d))) => {
                // SAFETY: checked non-null above.
                unsafe { *size = d.size };
                (i as u32, d.status)
            }
            (Err(WaitEnd::TimedOut), _) => (INVALID, Status::Timeout),
            (Err(WaitEnd::NotInitialised), _) => (INVALID, Status::ErrNodeNotInit),
            (Ok(()), None) => (INVALID, Status::ErrRequestInvalid),
        }
    })
}

/// # Safety
/// C caller.
#[no_mangle]
pub unsafe extern "C" fn mcapi_cancel(request: *mut Request, status: *mut McapiStatus) {
    call(status, (), || {
        let rid = match live(request) {
            Ok(r) => r,
            Err(s) => return ((), s),
        };
        ((), with_node(|rt| rt.node.cancel(rid)).err().unwrap_or(Status::Success))
    })
}

/// # Safety
/// C caller: `message` holds `size` bytes.
#[no_mangle]
pub unsafe extern "C" fn mcapi_display_status(status: McapiStatus, message: *mut libc::c_char, size: usize) -> *mut libc::c_char {
    let Some(name) = NAMES.get(status as usize).filter(|n| !n.is_empty()) else { return std::ptr::null_mut() };
    if message.is_null() || size == 0 {
        return std::ptr::null_mut();
    }
    let n = name.len().min(size - 1);
    // SAFETY: the caller's buffer of `size` bytes; we write n + 1 <= size.
    unsafe {
        std::ptr::copy_nonoverlapping(name.as_ptr(), message as *mut u8, n);
        *message.add(n) = 0;
    }
    message
}
