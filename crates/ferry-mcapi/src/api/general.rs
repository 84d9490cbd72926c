//! Initialisation, finalisation, node ids and node attributes.

use std::panic::catch_unwind;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::{call, put, McapiStatus, INVALID, MAX_DOMAIN, MAX_ENDPOINTS, MAX_NODE};
use crate::core::Status;
use crate::driver::{self, block_until, CommThread, Runtime};

static COMM: Mutex<Option<CommThread>> = Mutex::new(None);

/// How long finalize waits for receivers to take what this node sent.
const LINGER: Duration = Duration::from_secs(60);

#[repr(C)]
pub struct ImplInfo {
    library: *const libc::c_char,
    launch: u32,
}

// SAFETY: only ever read; the pointer is to a static string.
unsafe impl Sync for ImplInfo {}

static mut IMPL_INFO: ImplInfo = ImplInfo { library: c"Ferry 0.1".as_ptr(), launch: 0 };

#[repr(C)]
pub struct Info {
    mcapi_version: u32,
    organization_id: u32,
    implementation_version: u32,
    number_of_domains: u32,
    number_of_nodes: u32,
    number_of_ports: u32,
    impl_info: *mut ImplInfo,
}

#[repr(C)]
pub struct NodeAttributes {
    kind: u32,
    reserved: [u32; 3],
}

/// # Safety
/// C caller: pointers as `mcapi.h` describes.
#[no_mangle]
pub unsafe extern "C" fn mcapi_initialize(domain_id: u32, node_id: u32, attrs: *const NodeAttributes, _params: *const u32, info: *mut Info, status: *mut McapiStatus) {
    call(status, (), || {
        if info.is_null() {
            return ((), Status::ErrParameter);
        }
        if domain_id > MAX_DOMAIN {
            return ((), Status::ErrDomainInvalid);
        }
        if node_id > MAX_NODE {
            return ((), Status::ErrNodeInvalid);
        }
        // SAFETY: non-null attributes are the caller's.
        if !attrs.is_null() && unsafe { (*attrs).kind } != 0 {
            return ((), Status::ErrAttrValue);
        }
        let mut g = driver::lock();
        if let Some(rt) = g.as_mut() {
            if !rt.finalized {
                return ((), Status::ErrNodeInitialized);
            }
            // A process is one node: it may come back as that node after finalizing.
            let cfg = rt.node.config();
            if (cfg.domain, cfg.node) != (domain_id, node_id) {
                ferry_core::error!("mcapi", "this process was node {} of domain {}; it cannot initialise again as node {node_id} of domain {domain_id}", cfg.node, cfg.domain);
                return ((), Status::ErrNodeInitFailed);
            }
            rt.finalized = false;
            // SAFETY: the caller's info, checked non-null.
            unsafe { fill_info(info, rt) };
            return ((), Status::Success);
        }
        let rt = match Runtime::start(domain_id, node_id) {
            Ok(rt) => rt,
            Err(e) => {
                ferry_core::error!("mcapi", "node {node_id} of domain {domain_id} cannot start: {e}");
                return ((), Status::ErrNodeInitFailed);
            }
        };
        // SAFETY: the caller's info, checked non-null.
        unsafe { fill_info(info, &rt) };
        match CommThread::start(&rt) {
            Ok(t) => *COMM.lock().unwrap_or_else(|p| p.into_inner()) = Some(t),
            Err(e) => {
                ferry_core::error!("mcapi", "cannot start the communication thread: {e}");
                return ((), Status::ErrNodeInitFailed);
            }
        }
        // The process leaves its job when it exits, whether it finalized or not.
        // SAFETY: registering a plain extern "C" function.
        unsafe { libc::atexit(leave_job) };
        *g = Some(rt);
        ((), Status::Success)
    })
}

/// The number of nodes for `mcapi_info_t`: those of the job (under a launcher or a hosts
/// file), or, for nodes that meet in a rendezvous, `FERRY_SIZE` when it is set.
unsafe fn fill_info(info: *mut Info, rt: &Runtime) {
    let nodes = match rt.job.mode() {
        ferry_core::NodeMode::Rendezvous => std::env::var("FERRY_SIZE").ok().and_then(|v| v.parse().ok()).unwrap_or(rt.job.size()),
        _ => rt.job.size(),
    };
    let launch = match rt.job.mode() {
        ferry_core::NodeMode::Launcher => 1,
        ferry_core::NodeMode::Rendezvous => 2,
        ferry_core::NodeMode::HostsFile => 3,
    };
    // SAFETY: written under the node's lock, before the pointer is handed out; the caller's
    // info is valid.
    unsafe {
        IMPL_INFO.launch = launch;
        *info = Info { mcapi_version: 2000, organization_id: 3, implementation_version: 1, number_of_domains: 1, number_of_nodes: nodes, number_of_ports: MAX_ENDPOINTS, impl_info: std::ptr::addr_of_mut!(IMPL_INFO) };
    }
}

/// Delete the node's endpoints and wait (at most `LINGER`) until what it sent reached its
/// receivers' queues. False when the node is not initialised.
fn settle() -> bool {
    {
        let mut g = driver::lock();
        let Some(rt) = driver::active(&mut g) else { return false };
        rt.node.delete_all();
        rt.pump();
    }
    let deadline = Instant::now() + LINGER;
    if block_until(|rt| rt.node.unsettled() == 0, Some(deadline)).is_err() {
        ferry_core::warn!("mcapi", "finalize: messages not taken by their receivers within {LINGER:?} are dropped");
    }
    true
}

/// # Safety
/// C caller.
#[no_mangle]
pub unsafe extern "C" fn mcapi_finalize(status: *mut McapiStatus) {
    call(status, (), || {
        if !settle() {
            return ((), Status::ErrNodeNotInit);
        }
        let mut g = driver::lock();
        match g.as_mut() {
            Some(rt) => {
                rt.flush();
                rt.finalized = true;
                ((), Status::Success)
            }
            None => ((), Status::ErrNodeNotInit),
        }
    })
}

/// At exit: a node that did not finalize settles first; then the communication thread
/// stops, the engine says goodbye to its peers and the process leaves its launcher.
extern "C" fn leave_job() {
    let _ = catch_unwind(|| {
        settle();
        if let Some(t) = COMM.lock().unwrap_or_else(|p| p.into_inner()).take() {
            t.stop();
        }
        let Some(mut rt) = driver::lock().take() else { return };
        rt.flush();
        if let Err(e) = rt.engine.finalize() {
            ferry_core::warn!("mcapi", "leaving: {e}");
        }
        if let Err(e) = rt.job.finalize() {
            ferry_core::warn!("mcapi", "leaving the launcher: {e}");
        }
    });
}

/// # Safety
/// C caller.
#[no_mangle]
pub unsafe extern "C" fn mcapi_domain_id_get(status: *mut McapiStatus) -> u32 {
    call(status, INVALID, || match driver::active(&mut driver::lock()) {
        Some(rt) => (rt.node.config().domain, Status::Success),
        None => (INVALID, Status::ErrNodeNotInit),
    })
}

/// # Safety
/// C caller.
#[no_mangle]
pub unsafe extern "C" fn mcapi_node_id_get(status: *mut McapiStatus) -> u32 {
    call(status, INVALID, || match driver::active(&mut driver::lock()) {
        Some(rt) => (rt.node.config().node, Status::Success),
        None => (INVALID, Status::ErrNodeNotInit),
    })
}

/// # Safety
/// C caller.
#[no_mangle]
pub unsafe extern "C" fn mcapi_node_init_attributes(attrs: *mut NodeAttributes, status: *mut McapiStatus) {
    call(status, (), || {
        if attrs.is_null() {
            return ((), Status::ErrParameter);
        }
        // SAFETY: the caller's attributes.
        unsafe { *attrs = NodeAttributes { kind: 0, reserved: [0; 3] } };
        ((), Status::Success)
    })
}

/// Check one node attribute argument: number 0 (type), 4 bytes.
fn node_attr_args(num: u32, attr: *const u8, size: usize) -> Result<(), Status> {
    if attr.is_null() {
        return Err(Status::ErrParameter);
    }
    if num != 0 {
        return Err(Status::ErrAttrNum);
    }
    if size != 4 {
        return Err(Status::ErrAttrSize);
    }
    Ok(())
}

/// # Safety
/// C caller.
#[no_mangle]
pub unsafe extern "C" fn mcapi_node_set_attribute(attrs: *mut NodeAttributes, num: u32, attr: *const u8, size: usize, status: *mut McapiStatus) {
    call(status, (), || {
        if attrs.is_null() {
            return ((), Status::ErrParameter);
        }
        if let Err(s) = node_attr_args(num, attr, size) {
            return ((), s);
        }
        // SAFETY: checked: 4 readable bytes.
        let v = unsafe { std::ptr::read_unaligned(attr as *const u32) };
        if v != 0 {
            return ((), Status::ErrAttrValue);
        }
        // SAFETY: the caller's attributes.
        unsafe { (*attrs).kind = v };
        ((), Status::Success)
    })
}

/// # Safety
/// C caller.
#[no_mangle]
pub unsafe extern "C" fn mcapi_node_get_attribute(domain_id: u32, node_id: u32, num: u32, attr: *mut u8, size: usize, status: *mut McapiStatus) {
    call(status, (), || {
        let known = {
            let mut g = driver::lock();
            let Some(rt) = driver::active(&mut g) else { return ((), Status::ErrNodeNotInit) };
            node_id == rt.node.config().node || matches!(rt.job.locate(&mut rt.engine, node_id), ferry_core::Locate::At(_))
        };
        if domain_id > MAX_DOMAIN {
            return ((), Status::ErrDomainInvalid);
        }
        if node_id > MAX_NODE || !known {
            return ((), Status::ErrNodeInvalid);
        }
        if let Err(s) = node_attr_args(num, attr, size) {
            return ((), s);
        }
        // Every Ferry node is a regular node.
        // SAFETY: checked: 4 writable bytes.
        unsafe { std::ptr::write_unaligned(attr as *mut u32, 0) };
        let _ = put;
        ((), Status::Success)
    })
}
