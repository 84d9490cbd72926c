//! Messages: send and receive, blocking and not, and the count waiting.

use super::{call, deadline, ep, give_back, start_request, status_of, wait_blocking, with_node, write_out, McapiStatus, Request, OUT_MSG};
use crate::core::{Outcome, Status};
use crate::driver::{block_until_from, WaitEnd};

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
        // A message that left needs no request, nor the endpoint's timeout.
        let r = with_node(|rt| {
            let held = rt.node.msg_send(ep(send), ep(recv), data, priority, [0; 3])?;
            Ok(held.map(|rid| (rid, rt.node.endpoint_timeout(ep(send)))))
        });
        match r {
            Ok(None) => ((), Status::Success),
            Ok(Some((rid, timeout))) => match wait_blocking(rid, timeout) {
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
        // No request: each pass takes a message queued at the endpoint (after those the
        // receives posted before this one take), copies it out and hands its frame back.
        let mut result = None;
        let waited = block_until_from(
            |rt| {
                if rt.finalized {
                    result = Some(Err(Status::ErrNodeNotInit));
                    return true;
                }
                match rt.node.msg_take_first(ep(recv), size) {
                    Ok(None) => false,
                    Ok(Some(mut d)) => {
                        write_out(&d, user);
                        give_back(rt, &mut d);
                        result = Some(Ok(d));
                        true
                    }
                    Err(s) => {
                        result = Some(Err(s));
                        true
                    }
                }
            },
            |rt| deadline(rt.node.endpoint_timeout(ep(recv))),
        );
        let done = match (waited, result) {
            (_, Some(Ok(d))) => d,
            (_, Some(Err(s))) => return ((), s),
            (Err(WaitEnd::TimedOut), None) => return ((), Status::Timeout),
            (_, None) => return ((), Status::ErrNodeNotInit),
        };
        // SAFETY: checked non-null above.
        unsafe { *received = done.size };
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
