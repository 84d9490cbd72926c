//! Messages: send and receive, blocking and not, and the count waiting.

use super::{call, ep, start_request, status_of, wait_blocking, with_node, write_out, McapiStatus, Request, OUT_MSG};
use crate::core::{Outcome, Status};
use crate::wire::HEADER_LEN;

unsafe fn bytes<'a>(buffer: *const u8, size: usize) -> &'a [u8] {
    if size == 0 {
        &[]
    } else {
        // SAFETY: the caller's buffer of `size` bytes (checked non-null by the caller).
        unsafe { std::slice::from_raw_parts(buffer, size) }
    }
}

/// # Safety
/// C caller.
#[no_mangle]
pub unsafe extern "C" fn mcapi_msg_send_i(send: u32, recv: u32, buffer: *const u8, size: usize, priority: u32, request: *mut Request, status: *mut McapiStatus) {
    call(status, (), || {
        if request.is_null() || (buffer.is_null() && size > 0) {
            return ((), Status::ErrParameter);
        }
        // SAFETY: checked above.
        let data = unsafe { bytes(buffer, size) };
        let st = start_request(request, |rt| match rt.node.msg_send(ep(send), ep(recv), data, priority, [0; 3])? {
            Some(rid) => Ok(rid),
            None => rt.node.reqs.done_now(crate::core::Done { status: Status::Success, size, out: Outcome::Nothing }, [0; 3]),
        });
        ((), st)
    })
}

/// # Safety
/// C caller.
#[no_mangle]
pub unsafe extern "C" fn mcapi_msg_send(send: u32, recv: u32, buffer: *const u8, size: usize, priority: u32, status: *mut McapiStatus) {
    call(status, (), || {
        if buffer.is_null() && size > 0 {
            return ((), Status::ErrParameter);
        }
        // SAFETY: checked above.
        let data = unsafe { bytes(buffer, size) };
        let r = with_node(|rt| {
            let timeout = rt.node.endpoint_timeout(ep(send));
            Ok((rt.node.msg_send(ep(send), ep(recv), data, priority, [0; 3])?, timeout))
        });
        match r {
            Ok((None, _)) => ((), Status::Success),
            Ok((Some(rid), timeout)) => match wait_blocking(rid, timeout) {
                Ok(d) => ((), status_of(&d)),
                Err(s) => ((), s),
            },
            Err(s) => ((), s),
        }
    })
}

/// # Safety
/// C caller.
#[no_mangle]
pub unsafe extern "C" fn mcapi_msg_recv_i(recv: u32, buffer: *mut u8, size: usize, request: *mut Request, status: *mut McapiStatus) {
    call(status, (), || {
        if request.is_null() || (buffer.is_null() && size > 0) {
            return ((), Status::ErrParameter);
        }
        ((), start_request(request, |rt| rt.node.msg_recv(ep(recv), size, [OUT_MSG, buffer as usize, size])))
    })
}

/// # Safety
/// C caller.
#[no_mangle]
pub unsafe extern "C" fn mcapi_msg_recv(recv: u32, buffer: *mut u8, size: usize, received: *mut usize, status: *mut McapiStatus) {
    call(status, (), || {
        if received.is_null() || (buffer.is_null() && size > 0) {
            return ((), Status::ErrParameter);
        }
        let user = [OUT_MSG, buffer as usize, size];
        let r = with_node(|rt| {
            // A message already queued is copied at once, without a request.
            if let Some(d) = rt.node.msg_take_first(ep(recv), size)? {
                write_out(&d, user);
                return Ok(Err(d));
            }
            let timeout = rt.node.endpoint_timeout(ep(recv));
            Ok(Ok((rt.node.msg_recv(ep(recv), size, user)?, timeout)))
        });
        let done = match r {
            Ok(Err(d)) => d,
            Ok(Ok((rid, timeout))) => match wait_blocking(rid, timeout) {
                Ok(d) => d,
                Err(s) => return ((), s),
            },
            Err(s) => return ((), s),
        };
        // SAFETY: checked non-null above.
        unsafe { *received = done.size };
        let _ = HEADER_LEN;
        ((), status_of(&done))
    })
}

/// # Safety
/// C caller.
#[no_mangle]
pub unsafe extern "C" fn mcapi_msg_available(recv: u32, status: *mut McapiStatus) -> u32 {
    call(status, 0, || match with_node(|rt| rt.node.msg_available(ep(recv))) {
        Ok(n) => (n as u32, Status::Success),
        Err(s) => (0, s),
    })
}
