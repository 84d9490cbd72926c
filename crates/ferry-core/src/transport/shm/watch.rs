//! A local peer's process, watched through a pidfd (`pidfd_open(2)`, Linux 5.3): the
//! descriptor turns readable when the process ends, however it ends (SIGKILL included), so an
//! `epoll` sleep wakes at a peer's death with no polling and no help from the launcher.
//!
//! A pid names a process only within one pid namespace: the engine watches only the peers it
//! shares memory with, which the bootstrap found on its own host (same front node and host
//! name), started by one launcher and so in one namespace.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// A watch on one process, open until dropped.
#[derive(Debug)]
pub struct ProcessWatch {
    fd: OwnedFd,
    pid: u32,
}

impl ProcessWatch {
    /// Watch process `pid`. Fails where the kernel has no pidfds (before 5.3: ENOSYS), where
    /// the process is already gone (ESRCH) or is not ours to see.
    pub fn open(pid: u32) -> io::Result<ProcessWatch> {
        let pid_t = libc::pid_t::try_from(pid).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
        if pid_t <= 0 {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1; it
        // touches no memory of ours.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid_t, 0 as libc::c_uint) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let fd = fd as RawFd;
        // SAFETY: the kernel just returned `fd` as a new descriptor owned by nobody else;
        // pidfds are close-on-exec from birth.
        Ok(ProcessWatch { fd: unsafe { OwnedFd::from_raw_fd(fd) }, pid })
    }

    /// The process watched.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Whether the process has ended (its pidfd is readable), without waiting.
    pub fn has_ended(&self) -> bool {
        let mut p = libc::pollfd { fd: self.fd.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd, a zero timeout.
        let n = unsafe { libc::poll(&mut p, 1, 0) };
        n > 0 && p.revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0
    }
}

impl AsRawFd for ProcessWatch {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Command, Stdio};

    #[test]
    fn shm_watch_sees_a_sigkilled_process_end() {
        let mut child = Command::new("sleep").arg("30").stdin(Stdio::null()).spawn().expect("sleep runs");
        let w = ProcessWatch::open(child.id()).expect("pidfd_open on a live child");
        assert_eq!(w.pid(), child.id());
        assert!(!w.has_ended(), "a sleeping child has not ended");
        child.kill().expect("SIGKILL the child");
        let mut p = libc::pollfd { fd: w.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd; the child's end makes it readable (10 s is a generous bound).
        let n = unsafe { libc::poll(&mut p, 1, 10_000) };
        assert_eq!(n, 1, "the pidfd turns readable when the process dies");
        assert!(w.has_ended());
        child.wait().expect("reap the child");
    }

    #[test]
    fn shm_watch_refuses_impossible_pids() {
        assert!(ProcessWatch::open(0).is_err());
        assert!(ProcessWatch::open(u32::MAX).is_err());
    }
}
