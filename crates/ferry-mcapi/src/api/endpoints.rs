//! Endpoints: create, get (blocking with a timeout, or a request), delete, attributes.

use super::{call, ep, put_request, wait_blocking, with_node, write_out, McapiStatus, Request, INVALID, MAX_DOMAIN, MAX_NODE, MAX_PORT, OUT_HANDLE, PORT_ANY};
use crate::core::{EpAttrs, EpInfo, Outcome, Status};

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
        match with_node(|rt| rt.node.get_endpoint(domain_id, node_id, port_id, [OUT_HANDLE, endpoint as usize, 0])) {
            Ok(rid) => {
                ((), put_request(request, rid))
            }
            Err(s) => ((), s),
        }
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

const ATTR_TYPE: u32 = 0;
const ATTR_GET_COUNT: u32 = 1;
const ATTR_GET_SOURCE: u32 = 2;
const ATTR_MAX_PAYLOAD_SIZE: u32 = 3;
const ATTR_BUFFER_TYPE: u32 = 4;
const ATTR_MEMORY_TYPE: u32 = 5;
const ATTR_NUM_PRIORITIES: u32 = 6;
const ATTR_PRIORITY: u32 = 7;
const ATTR_NUM_SEND_BUFFERS: u32 = 8;
const ATTR_NUM_RECV_BUFFERS: u32 = 9;
const ATTR_ENDP_STATUS: u32 = 10;
const ATTR_TIMEOUT: u32 = 11;
const ATTR_END: u32 = 12;

/// # Safety
/// C caller.
#[no_mangle]
pub unsafe extern "C" fn mcapi_endpoint_get_attribute(endpoint: u32, num: u32, attribute: *mut u8, size: usize, status: *mut McapiStatus) {
    call(status, (), || {
        let r = with_node(|rt| {
            if attribute.is_null() {
                return Err(Status::ErrParameter);
            }
            let info = rt.node.endpoint_info(ep(endpoint)).ok_or(Status::ErrEndpInvalid)?;
            let EpInfo::Local { attrs, connected, open, .. } = info else { return Err(Status::ErrEndpRemote) };
            if num >= ATTR_END {
                return Err(Status::ErrAttrNum);
            }
            let kind = rt.node.channel_kind(ep(endpoint));
            let v: Vec<u8> = match num {
                ATTR_TYPE => (match kind {
                    None => attrs.kind,
                    Some(false) => 2,
                    Some(true) => 4,
                })
                .to_ne_bytes()
                .to_vec(),
                ATTR_MAX_PAYLOAD_SIZE => (rt.node.config().max_payload as i32).to_ne_bytes().to_vec(),
                ATTR_BUFFER_TYPE | ATTR_MEMORY_TYPE | ATTR_PRIORITY => 0u32.to_ne_bytes().to_vec(),
                ATTR_NUM_PRIORITIES => (rt.node.config().max_priority as i32 + 1).to_ne_bytes().to_vec(),
                ATTR_NUM_RECV_BUFFERS => attrs.recv_buffers.to_ne_bytes().to_vec(),
                ATTR_ENDP_STATUS => ((connected as u32) | (open as u32) << 1 | kind.map_or(0, |s| if s { 0x40 } else { 0x20 })).to_ne_bytes().to_vec(),
                ATTR_TIMEOUT => attrs.timeout.to_ne_bytes().to_vec(),
                ATTR_GET_COUNT | ATTR_GET_SOURCE | ATTR_NUM_SEND_BUFFERS => return Err(Status::ErrAttrNotSupported),
                _ => return Err(Status::ErrAttrNum),
            };
            if size != v.len() {
                return Err(Status::ErrAttrSize);
            }
            // SAFETY: the caller's attribute storage of `size` bytes.
            unsafe { std::ptr::copy_nonoverlapping(v.as_ptr(), attribute, v.len()) };
            Ok(())
        });
        ((), r.err().unwrap_or(Status::Success))
    })
}

/// # Safety
/// C caller.
#[no_mangle]
pub unsafe extern "C" fn mcapi_endpoint_set_attribute(endpoint: u32, num: u32, attribute: *const u8, size: usize, status: *mut McapiStatus) {
    call(status, (), || {
        let r = with_node(|rt| {
            if attribute.is_null() {
                return Err(Status::ErrParameter);
            }
            let info = rt.node.endpoint_info(ep(endpoint)).ok_or(Status::ErrEndpInvalid)?;
            let EpInfo::Local { attrs, connected, .. } = info else { return Err(Status::ErrEndpRemote) };
            if num >= ATTR_END {
                return Err(Status::ErrAttrNum);
            }
            if num != ATTR_TIMEOUT && num != ATTR_TYPE {
                return Err(Status::ErrAttrReadOnly);
            }
            if connected {
                return Err(Status::ErrChanConnected);
            }
            if size != 4 {
                return Err(Status::ErrAttrSize);
            }
            // SAFETY: checked: 4 readable bytes.
            let v = unsafe { std::ptr::read_unaligned(attribute as *const u32) };
            let attrs = match num {
                ATTR_TYPE if ![1, 2, 4].contains(&v) => return Err(Status::ErrAttrValue),
                ATTR_TYPE => EpAttrs { kind: v, ..attrs },
                _ => EpAttrs { timeout: v, ..attrs },
            };
            rt.node.set_attrs(ep(endpoint), attrs)
        });
        ((), r.err().unwrap_or(Status::Success))
    })
}

#[allow(dead_code)]
fn unused() {
    let _ = write_out;
}
