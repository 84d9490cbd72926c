//! Single-copy transfers between processes of one host ("cross-memory attach"): the receiver
//! copies straight out of the sender's buffer with `process_vm_readv`, given the sender's pid
//! and buffer address from a rendezvous frame.
//!
//! The kernel allows it when the reader may ptrace the target (same credentials, target
//! dumpable) and no seccomp filter forbids the call. Yama's `ptrace_scope` = 1 (the Ubuntu
//! default) further limits this to descendants, and ranks are siblings: each rank therefore
//! calls [`permit_peer_reads`] at start-up. Scope 2 or 3 rules it out without privileges.
//! [`cma_support`] finds out once, by trying between two sibling child processes, what the
//! engine can rely on.

use std::io;
use std::sync::OnceLock;

/// Copy `len` bytes at `remote_addr` in process `pid` into the start of `local` with one
/// `process_vm_readv` call. Returns the bytes copied, which may be fewer than `len` when the
/// remote range crosses into an unmapped page.
pub fn read_remote(pid: libc::pid_t, remote_addr: usize, len: usize, local: &mut [u8]) -> io::Result<usize> {
    if len > local.len() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "local buffer shorter than the remote range"));
    }
    if len == 0 {
        return Ok(0);
    }
    let liov = libc::iovec { iov_base: local.as_mut_ptr() as *mut libc::c_void, iov_len: len };
    let riov = libc::iovec { iov_base: remote_addr as *mut libc::c_void, iov_len: len };
    // SAFETY: the local iovec covers `len` bytes of `local`, which we borrow mutably; the
    // remote iovec is only interpreted by the kernel in the other process's address space.
    let n = unsafe { libc::process_vm_readv(pid, &liov, 1, &riov, 1, 0) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// Copy exactly `local.len()` bytes at `remote_addr` in process `pid`, retrying after partial
/// copies and interrupts.
pub fn read_remote_exact(pid: libc::pid_t, remote_addr: usize, local: &mut [u8]) -> io::Result<()> {
    let mut done = 0;
    while done < local.len() {
        match read_remote(pid, remote_addr + done, local.len() - done, &mut local[done..]) {
            Ok(0) => return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "remote range ends early")),
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Let any process with our credentials read our memory despite Yama's `ptrace_scope` = 1
/// (without Yama this changes nothing). Every rank calls it before it publishes buffer
/// addresses.
pub fn permit_peer_reads() -> io::Result<()> {
    // SAFETY: PR_SET_PTRACER takes plain integer arguments.
    let r = unsafe { libc::prctl(libc::PR_SET_PTRACER, libc::PR_SET_PTRACER_ANY, 0, 0, 0) };
    if r == 0 {
        return Ok(());
    }
    let e = io::Error::last_os_error();
    // EINVAL: no Yama in this kernel, so nothing to permit.
    if e.raw_os_error() == Some(libc::EINVAL) {
        Ok(())
    } else {
        Err(e)
    }
}

/// Yama's `ptrace_scope` (0 classic, 1 restricted to descendants, 2 admin only, 3 none), or
/// `None` when the kernel has no Yama.
pub fn ptrace_scope() -> Option<u32> {
    std::fs::read_to_string("/proc/sys/kernel/yama/ptrace_scope").ok()?.trim().parse().ok()
}

/// What the start-up probe found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CmaSupport {
    /// Single-copy reads between sibling ranks work.
    pub available: bool,
    /// One line for `ferry info`: why, or why not.
    pub detail: String,
}

/// Whether single-copy reads between ranks of one host work here (probed once, then cached).
pub fn cma_available() -> bool {
    cma_support().available
}

/// The cached result of the probe, with its reason.
pub fn cma_support() -> &'static CmaSupport {
    static SUPPORT: OnceLock<CmaSupport> = OnceLock::new();
    SUPPORT.get_or_init(probe)
}

const PROBE_LEN: usize = 4096;

/// Fork a target child (which permits reads as a rank does) and a sibling reader child that
/// copies a known pattern out of it; the reader's exit status is the verdict. The children run
/// only raw system calls and plain loops, as a fork of a threaded process must.
fn probe() -> CmaSupport {
    let scope = ptrace_scope();
    let scope_note = match scope {
        None => "no Yama".to_string(),
        Some(s) => format!("ptrace_scope={s}"),
    };
    let pattern: Vec<u8> = (0..PROBE_LEN).map(|i| (i * 7 + 3) as u8).collect();
    let mut scratch = vec![0u8; PROBE_LEN];
    let mut ready = [0 as libc::c_int; 2];
    let mut release = [0 as libc::c_int; 2];
    // SAFETY: pipe2 fills two-element arrays; results checked.
    if unsafe { libc::pipe2(ready.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return CmaSupport { available: false, detail: format!("probe failed: pipe: {}", io::Error::last_os_error()) };
    }
    // SAFETY: as above.
    if unsafe { libc::pipe2(release.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        let e = io::Error::last_os_error();
        // SAFETY: closing the fds we just made.
        unsafe { libc::close(ready[0]); libc::close(ready[1]) };
        return CmaSupport { available: false, detail: format!("probe failed: pipe: {e}") };
    }
    let close_all = |fds: &[libc::c_int]| {
        for &fd in fds {
            // SAFETY: closing descriptors this function created.
            unsafe { libc::close(fd) };
        }
    };

    // SAFETY: the child only calls async-signal-safe functions (prctl, write, read, close,
    // _exit) on memory that existed before the fork.
    let target = unsafe { libc::fork() };
    if target == 0 {
        // SAFETY: see above; the child never returns into Rust code that could allocate.
        unsafe {
            libc::prctl(libc::PR_SET_PTRACER, libc::PR_SET_PTRACER_ANY, 0, 0, 0);
            libc::close(release[1]);
            libc::close(ready[0]);
            let one = 1u8;
            libc::write(ready[1], &one as *const u8 as *const libc::c_void, 1);
            let mut b = 0u8;
            // Block until the parent closes the release pipe (or dies).
            while libc::read(release[0], &mut b as *mut u8 as *mut libc::c_void, 1) > 0 {}
            libc::_exit(0);
        }
    }
    if target < 0 {
        let e = io::Error::last_os_error();
        close_all(&[ready[0], ready[1], release[0], release[1]]);
        return CmaSupport { available: false, detail: format!("probe failed: fork: {e}") };
    }
    close_all(&[ready[1], release[0]]);
    let mut b = 0u8;
    // SAFETY: reading one byte into a local.
    let got = unsafe { libc::read(ready[0], &mut b as *mut u8 as *mut libc::c_void, 1) };
    let verdict = if got != 1 {
        Err("target child did not start".to_string())
    } else {
        probe_reader(target, &pattern, &mut scratch)
    };
    close_all(&[ready[0], release[1]]);
    let mut status = 0;
    // SAFETY: reaping our own child.
    unsafe { libc::waitpid(target, &mut status, 0) };
    match verdict {
        Ok(()) => CmaSupport { available: true, detail: format!("process_vm_readv between sibling ranks works ({scope_note})") },
        Err(why) => CmaSupport { available: false, detail: format!("{why} ({scope_note})") },
    }
}

/// Fork the reader child; map its exit status to a verdict.
fn probe_reader(target: libc::pid_t, pattern: &[u8], scratch: &mut [u8]) -> Result<(), String> {
    let addr = pattern.as_ptr() as usize;
    // SAFETY: the child only issues process_vm_readv into `scratch` (allocated before the
    // fork), compares two byte slices and calls _exit.
    let reader = unsafe { libc::fork() };
    if reader == 0 {
        let liov = libc::iovec { iov_base: scratch.as_mut_ptr() as *mut libc::c_void, iov_len: scratch.len() };
        let riov = libc::iovec { iov_base: addr as *mut libc::c_void, iov_len: pattern.len() };
        // SAFETY: see above.
        unsafe {
            let n = libc::process_vm_readv(target, &liov, 1, &riov, 1, 0);
            let code = if n < 0 {
                match *libc::__errno_location() {
                    libc::EPERM => 2,
                    libc::ENOSYS => 3,
                    _ => 4,
                }
            } else if n as usize == pattern.len() && scratch.iter().zip(pattern).all(|(a, b)| a == b) {
                0
            } else {
                1
            };
            libc::_exit(code);
        }
    }
    if reader < 0 {
        return Err(format!("probe failed: fork: {}", io::Error::last_os_error()));
    }
    let mut status = 0;
    // SAFETY: reaping our own child.
    unsafe { libc::waitpid(reader, &mut status, 0) };
    if !libc::WIFEXITED(status) {
        return Err("probe reader died".into());
    }
    match libc::WEXITSTATUS(status) {
        0 => Ok(()),
        1 => Err("process_vm_readv returned wrong data".into()),
        2 => Err("process_vm_readv not permitted (EPERM)".into()),
        3 => Err("process_vm_readv not available (ENOSYS or seccomp)".into()),
        _ => Err("process_vm_readv failed".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shm_cma_reads_own_memory() {
        let src: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
        let mut dst = vec![0u8; src.len()];
        let pid = std::process::id() as libc::pid_t;
        match read_remote_exact(pid, src.as_ptr() as usize, &mut dst) {
            Ok(()) => assert_eq!(dst, src),
            // A seccomp filter may forbid the call outright; the probe must then agree.
            Err(e) => assert!(!cma_available(), "self read failed ({e}) but the probe says available"),
        }
        assert_eq!(read_remote(pid, 0, 0, &mut []).expect("empty read"), 0);
        assert!(read_remote(pid, src.as_ptr() as usize, 10, &mut [0u8; 4]).is_err());
    }

    #[test]
    fn shm_cma_probe_is_cached_and_explained() {
        let a = cma_support();
        let b = cma_support();
        assert!(std::ptr::eq(a, b));
        assert!(!a.detail.is_empty());
        assert!(permit_peer_reads().is_ok());
    }
}
