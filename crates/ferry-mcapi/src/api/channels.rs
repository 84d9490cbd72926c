//! Packet and scalar channels: connect, open, send, receive, release, close.

use super::{call, deadline, ep, start_request, wait_blocking, with_node, write_out, McapiStatus, Request, OUT_HANDLE, OUT_PACKET};
use crate::driver::{block_until, WaitEnd};
use crate::core::{Done, Outcome, Status};

unsafe fn connect(send: u32, recv: u32, scalar: bool, request: *mut Request, status: *mut McapiStatus) {
    call(status, (), || {
        if request.is_null() {
            return ((), Status::ErrParameter);
        }
        ((), start_request(request, |rt| rt.node.connect(ep(send), ep(recv), scalar, [0; 3])))
    })
}

unsafe fn open(handle: *mut u32, endpoint: u32, scalar: bool, sender: bool, request: *mut Request, status: *mut McapiStatus) {
    call(status, (), || {
        if request.is_null() || handle.is_null() {
            return ((), Status::ErrParameter);
        }
        ((), start_request(request, |rt| rt.node.open(ep(endpoint), scalar, sender, [OUT_HANDLE, handle as usize, 0])))
    })
}

unsafe fn close(handle: u32, scalar: bool, sender: bool, request: *mut Request, status: *mut McapiStatus) {
    call(status, (), || {
        if request.is_null() {
            return ((), Status::ErrParameter);
        }
        ((), start_request(request, |rt| rt.node.close(ep(handle), scalar, sender, [0; 3])))
    })
}

/// # Safety
/// C caller.
#[no_mangle]
pub unsafe extern "C" fn mcapi_pktchan_connect_i(send: u32, recv: u32, request: *mut Request, status: *mut McapiStatus) {
    unsafe { connect(send, recv, false, request, status) }
}

/// # Safety
/// C caller.
#[no_mangle]
pub unsafe extern "C" fn mcapi_sclchan_connect_i(send: u32, recv: u32, request: *mut Request, status: *mut McapiStatus) {
    unsafe { connect(send, recv, true, request, status) }
}

/// # Safety
/// C caller.
#[no_mangle]
pub unsafe extern "C" fn mcapi_pktchan_recv_open_i(handle: *mut u32, endpoint: u32, request: *mut Request, status: *mut McapiStatus) {
    unsafe { open(handle, endpoint, false, false, request, status) }
}

/// # Safety
/// C caller.
#[no_mangle]
pub unsafe extern "C" fn mcapi_pktchan_send_open_i(handle: *mut u32, endpoint: u32, request: *mut Request, status: *mut McapiStatus) {
    unsafe { open(handle, endpoint, false, true, request, status) }
}

/// # Safety
/// C caller.
#[no_mangle]
pub unsafe extern "C" fn mcapi_sclchan_recv_open_i(handle: *mut u32, endpoint: u32, request: *mut Request, status: *mut McapiStatus) {
    unsafe { open(handle, endpoint, true, false, request, status) }
}

/// # Safety
/// C caller.
#[no_mangle]
pub unsafe extern "C" fn mcapi_sclchan_send_open_i(handle: *mut u32, endpoint: u32, request: *mut Request, status: *mut McapiStatus) {
    unsafe { open(handle, endpoint, true, true, request, status) }
}

/// # Safety
/// C caller.
#[no_mangle]
pub unsafe extern "C" fn mcapi_pktchan_recv_close_i(handle: u32, request: *mut Request, status: *mut McapiStatus) {
    unsafe { close(handle, false, false, request, status) }
}

/// # Safety
/// C caller.
#[no_mangle]
pub unsafe extern "C" fn mcapi_pktchan_send_close_i(handle: u32, request: *mut Request, status: *mut McapiStatus) {
    unsafe { close(handle, false, true, request, status) }
}

/// # Safety
/// C caller.
#[no_mangle]
pub unsafe extern "C" fn mcapi_sclchan_recv_close_i(handle: u32, request: *mut Request, status: *mut McapiStatus) {
    unsafe { close(handle, true, false, request, status) }
}

/// # Safety
/// C caller.
#[no_mangle]
pub unsafe extern "C" fn mcapi_sclchan_send_close_i(handle: u32, request: *mut Request, status: *mut McapiStatus) {
    unsafe { close(handle, true, true, request, status) }
}

/// # Safety
/// C caller.
#[no_mangle]
pub unsafe extern "C" fn mcapi_pktchan_send_i(handle: u32, buffer: *const u8, size: usize, request: *mut Request, status: *mut McapiStatus) {
    call(status, (), || {
        if request.is_null() || (buffer.is_null() && size > 0) {
            return ((), Status::ErrParameter);
        }
        // SAFETY: the caller's buffer of `size` bytes.
        let data = if size == 0 { &[][..] } else { unsafe { std::slice::from_raw_parts(buffer, size) } };
        let st = start_request(request, |rt| match rt.node.pkt_send(ep(handle), data, [0; 3])? {
            Some(rid) => Ok(rid),
            None => rt.node.reqs.done_now(Done { status: Status::Success, size, out: Outcome::Nothing }, [0; 3]),
        });
        ((), st)
    })
}

/// # Safety
/// C caller.
#[no_mangle]
pub unsafe extern "C" fn mcapi_pktchan_send(handle: u32, buffer: *const u8, size: usize, status: *mut McapiStatus) {
    call(status, (), || {
        if buffer.is_null() && size > 0 {
            return ((), Status::ErrParameter);
        }
        // SAFETY: the caller's buffer of `size` bytes.
        let data = if size == 0 { &[][..] } else { unsafe { std::slice::from_raw_parts(buffer, size) } };
        // With the window full, wait for a credit before handing the data over: the packet
        // is then copied once, where it goes (a shared receive slot), not held meanwhile.
        let timeout = match with_node(|rt| Ok((rt.node.pkt_ready(ep(handle)), rt.node.endpoint_timeout(ep(handle))))) {
            Ok((true, _)) => None,
            Ok((false, t)) => Some(t),
            Err(s) => return ((), s),
        };
        if let Some(t) = timeout {
            match block_until(|rt| rt.node.pkt_ready(ep(handle)), deadline(t)) {
                Ok(()) => {}
                Err(WaitEnd::TimedOut) => return ((), Status::Timeout),
                Err(WaitEnd::NotInitialised) => return ((), Status::ErrNodeNotInit),
            }
        }
        match with_node(|rt| Ok((rt.node.pkt_send(ep(handle), data, [0; 3])?, rt.node.endpoint_timeout(ep(handle))))) {
            Ok((None, _)) => ((), Status::Success),
            Ok((Some(rid), t)) => ((), wait_blocking(rid, t).map_or_else(|s| s, |d| d.status)),
            Err(s) => ((), s),
        }
    })
}

/// # Safety
/// C caller.
#[no_mangle]
pub unsafe extern "C" fn mcapi_pktchan_recv_i(handle: u32, buffer: *mut *mut u8, request: *mut Request, status: *mut McapiStatus) {
    call(status, (), || {
        if request.is_null() || buffer.is_null() {
            return ((), Status::ErrParameter);
        }
        ((), start_request(request, |rt| rt.node.pkt_recv(ep(handle), [OUT_PACKET, buffer as usize, 0])))
    })
}

/// # Safety
/// C caller.
#[no_mangle]
pub unsafe extern "C" fn mcapi_pktchan_recv(handle: u32, buffer: *mut *mut u8, received: *mut usize, status: *mut McapiStatus) {
    call(status, (), || {
        if buffer.is_null() || received.is_null() {
            return ((), Status::ErrParameter);
        }
        let user = [OUT_PACKET, buffer as usize, 0];
        let r = with_node(|rt| Ok((rt.node.pkt_recv(ep(handle), user)?, rt.node.endpoint_timeout(ep(handle)))));
        let (rid, timeout) = match r {
            Ok(x) => x,
            Err(s) => return ((), s),
        };
        match wait_blocking(rid, timeout) {
            Ok(d) => {
                // SAFETY: checked non-null above.
                unsafe { *received = d.size };
                ((), d.status)
            }
            Err(s) => ((), s),
        }
    })
}

/// # Safety
/// C caller.
#[no_mangle]
pub unsafe extern "C" fn mcapi_pktchan_available(handle: u32, status: *mut McapiStatus) -> u32 {
    call(status, 0, || match with_node(|rt| rt.node.chan_available(ep(handle), false)) {
        Ok(n) => (n as u32, Status::Success),
        Err(s) => (0, s),
    })
}

/// # Safety
/// C caller.
#[no_mangle]
pub unsafe extern "C" fn mcapi_sclchan_available(handle: u32, status: *mut McapiStatus) -> u32 {
    call(status, 0, || match with_node(|rt| rt.node.chan_available(ep(handle), true)) {
        Ok(n) => (n as u32, Status::Success),
        Err(s) => (0, s),
    })
}

/// # Safety
/// C caller.
#[no_mangle]
pub unsafe extern "C" fn mcapi_pktchan_release(buffer: *mut u8, status: *mut McapiStatus) {
    call(status, (), || {
        if buffer.is_null() {
            return ((), Status::ErrBufInvalid);
        }
        ((), with_node(|rt| rt.node.pkt_release(buffer as usize)).err().unwrap_or(Status::Success))
    })
}

/// # Safety
/// C caller.
#[no_mangle]
pub unsafe extern "C" fn mcapi_pktchan_release_test(buffer: *mut u8, status: *mut McapiStatus) -> u8 {
    call(status, 0, || {
        if buffer.is_null() {
            return (0, Status::ErrParameter);
        }
        match with_node(|rt| rt.node.pkt_release_test(buffer as usize)) {
            Ok(true) => (1, Status::Success),
            Ok(false) => (0, Status::Pending),
            Err(s) => (0, s),
        }
    })
}

unsafe fn scl_send(handle: u32, value: u64, width: u8, status: *mut McapiStatus) {
    call(status, (), || match with_node(|rt| Ok((rt.node.scl_send(ep(handle), value, width, [0; 3])?, rt.node.endpoint_timeout(ep(handle))))) {
        Ok((None, _)) => ((), Status::Success),
        Ok((Some(rid), t)) => ((), wait_blocking(rid, t).map_or_else(|s| s, |d| d.status)),
        Err(s) => ((), s),
    })
}

/// A scalar of `width` bytes, waiting for one if none is there.
fn scl_recv(handle: u32, width: u8) -> (u64, Status) {
    let timeout = match with_node(|rt| Ok(rt.node.endpoint_timeout(ep(handle)))) {
        Ok(t) => t,
        Err(s) => return (0, s),
    };
    let mut got = Err(Status::Pending);
    let r = crate::driver::block_until(
        |rt| match rt.node.scl_try_recv(ep(handle), width) {
            Ok(None) => false,
            Ok(Some(v)) => {
                got = Ok(v);
                true
            }
            Err(s) => {
                got = Err(s);
                true
            }
        },
        super::deadline(timeout),
    );
    match (r, got) {
        (Err(crate::driver::WaitEnd::TimedOut), _) => (0, Status::Timeout),
        (Err(crate::driver::WaitEnd::NotInitialised), _) => (0, Status::ErrNodeNotInit),
        (Ok(()), Ok(v)) => (v, Status::Success),
        (Ok(()), Err(s)) => (0, s),
    }
}

/// # Safety
/// C caller.
#[no_mangle]
pub unsafe extern "C" fn mcapi_sclchan_send_uint64(handle: u32, v: u64, status: *mut McapiStatus) {
    unsafe { scl_send(handle, v, 8, status) }
}

/// # Safety
/// C caller.
#[no_mangle]
pub unsafe extern "C" fn mcapi_sclchan_send_uint32(handle: u32, v: u32, status: *mut McapiStatus) {
    unsafe { scl_send(handle, v as u64, 4, status) }
}

/// # Safety
/// C caller.
#[no_mangle]
pub unsafe extern "C" fn mcapi_sclchan_send_uint16(handle: u32, v: u16, status: *mut McapiStatus) {
    unsafe { scl_send(handle, v as u64, 2, status) }
}

/// # Safety
/// C caller.
#[no_mangle]
pub unsafe extern "C" fn mcapi_sclchan_send_uint8(handle: u32, v: u8, status: *mut McapiStatus) {
    unsafe { scl_send(handle, v as u64, 1, status) }
}

/// # Safety
/// C caller.
#[no_mangle]
pub unsafe extern "C" fn mcapi_sclchan_recv_uint64(handle: u32, status: *mut McapiStatus) -> u64 {
    call(status, 0, || scl_recv(handle, 8))
}

/// # Safety
/// C caller.
#[no_mangle]
pub unsafe extern "C" fn mcapi_sclchan_recv_uint32(handle: u32, status: *mut McapiStatus) -> u32 {
    call(status, 0, || {
        let (v, s) = scl_recv(handle, 4);
        (v as u32, s)
    })
}

/// # Safety
/// C caller.
#[no_mangle]
pub unsafe extern "C" fn mcapi_sclchan_recv_uint16(handle: u32, status: *mut McapiStatus) -> u16 {
    call(status, 0, || {
        let (v, s) = scl_recv(handle, 2);
        (v as u16, s)
    })
}

/// # Safety
/// C caller.
#[no_mangle]
pub unsafe extern "C" fn mcapi_sclchan_recv_uint8(handle: u32, status: *mut McapiStatus) -> u8 {
    call(status, 0, || {
        let (v, s) = scl_recv(handle, 1);
        (v as u8, s)
    })
}

#[allow(dead_code)]
fn unused() {
    let _ = write_out;
}
