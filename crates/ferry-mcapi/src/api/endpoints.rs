//! Endpoints: create, get (blocking with a timeout, or a request), delete, attributes.

use super::{call, ep, start_request, wait_blocking, with_node, McapiStatus, Request, INVALID, MAX_DOMAIN, MAX_NODE, MAX_PORT, OUT_HANDLE, PORT_ANY, TIMEOUT_INFINITE};
use crate::core::attributes;
use crate::core::{Done, Outcome, Status};

/// # Safety
/// C caller.
#[no_mangle]
pub unsafe extern "C" fn mcapi_endpoint_create(port_id: u32, status: *mut McapiStatus) -> u32 {
    call(status, INVALID, || {
        if port_id != PORT_ANY && port_id > MAX_PORT {
            return (INVALID, Status::ErrPortInvalid);
        }
        match with_node(|rt| rt.node.create_endpoint((port_id != PORT_ANY).then_some(port_id))) {
            Ok(e) => (e.0, Status::Success),
            Err(s) => (INVALID, s),
        }
    })
}

fn get_args(domain_id: u32, node_id: u32, port_id: u32) -> Result<(), Status> {
    if domain_id > MAX_DOMAIN {
        return Err(Status::ErrDomainInvalid);
    }
    if node_id > MAX_NODE {
        return Err(Status::ErrNodeInvalid);
    }
    if port_id > MAX_PORT {
        return Err(Status::ErrPortInvalid);
    }
    Ok(())
}

/// # Safety
/// C caller.
#[no_mangle]
pub unsafe extern "C" fn mcapi_endpoint_get_i(domain_id: u32, node_id: u32, port_id: u32, endpoint: *mut u32, request: *mut Request, status: *mut McapiStatus) {
    call(status, (), || {
        if endpoint.is_null() || request.is_null() {
            return ((), Status::ErrParameter);
        }
        if let Err(s) = get_args(domain_id, node_id, port_id) {
            return ((), s);
        }
        ((), start_request(request, |rt| rt.node.get_endpoint(domain_id, node_id, port_id, [OUT_HANDLE, endpoint as usize, 0])))
    })
}

/// # Safety
/// C caller.
#[no_mangle]
pub unsafe extern "C" fn mcapi_endpoint_get(domain_id: u32, node_id: u32, port_id: u32, timeout: u32, status: *mut McapiStatus) -> u32 {
    call(status, INVALID, || {
        if let Err(s) = get_args(domain_id, node_id, port_id) {
            return (INVALID, s);
        }
        let rid = match with_node(|rt| rt.node.get_endpoint(domain_id, node_id, port_id, [0; 3])) {
            Ok(r) => r,
            Err(s) => return (INVALID, s),
        };
        match wait_blocking(rid, timeout) {
            Ok(d) => match (d.status, d.out) {
                (Status::Success, Outcome::Handle(e)) => (e.0, Status::Success),
                (s, _) => (INVALID, s),
            },
            Err(s) => (INVALID, s),
        }
    })
}

/// # Safety
/// C caller.
#[no_mangle]
pub unsafe extern "C" fn mcapi_endpoint_delete(endpoint: u32, status: *mut McapiStatus) {
    call(status, (), || match with_node(|rt| rt.node.delete_endpoint(ep(endpoint))) {
        Ok(()) => ((), Status::Success),
        Err(s) => ((), s),
    })
}

/// # Safety
/// C caller.
#[no_mangle]
pub unsafe extern "C" fn mcapi_endpoint_get_attribute(endpoint: u32, num: u32, attribute: *mut u8, size: usize, status: *mut McapiStatus) {
    call(status, (), || {
        if attribute.is_null() {
            return ((), Status::ErrParameter);
        }
        // A local endpoint answers at once; a remote one is asked of its node.
        let r = with_node(|rt| match rt.node.snapshot(ep(endpoint)) {
            Some(s) => Ok(Ok(s)),
            None => {
                rt.node.endpoint_info(ep(endpoint)).ok_or(Status::ErrEndpInvalid)?;
                attributes::read(&[0; 13], num, size)?;
                Ok(Err(rt.node.attr_query(ep(endpoint))?))
            }
        });
        let snap = match r {
            Ok(Ok(s)) => s,
            Ok(Err(rid)) => match wait_blocking(rid, TIMEOUT_INFINITE) {
                Ok(Done { out: Outcome::Attrs(s), .. }) => s,
                Ok(d) => return ((), d.status),
                Err(s) => return ((), s),
            },
            Err(s) => return ((), s),
        };
        match attributes::read(&snap, num, size) {
            Ok(bytes) => {
                // SAFETY: the caller's attribute storage of `size` bytes (checked to match).
                unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), attribute, bytes.len()) };
                ((), Status::Success)
            }
            Err(s) => ((), s),
        }
    })
}

/// # Safety
/// C caller.
#[no_mangle]
pub unsafe extern "C" fn mcapi_endpoint_set_attribute(endpoint: u32, num: u32, attribute: *const u8, size: usize, status: *mut McapiStatus) {
    call(status, (), || {
        if attribute.is_null() {
            return ((), Status::ErrParameter);
        }
        // SAFETY: at least 4 bytes when the size says so; other sizes are refused unread.
        let v = if size == 4 { unsafe { std::ptr::read_unaligned(attribute as *const u32) } } else { 0 };
        ((), with_node(|rt| rt.node.set_attr(ep(endpoint), num, size, v)).err().unwrap_or(Status::Success))
    })
}
