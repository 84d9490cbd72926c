//! Signals as bytes on a self-pipe: the handler only writes the signal number, and the event
//! loop reads it like any other input, so no signal is lost between two `poll` calls.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicI32, Ordering};

use libc::c_int;

/// Write end of the pipe, for the handler; -1 when no pipe is installed.
static WRITE_FD: AtomicI32 = AtomicI32::new(-1);

extern "C" fn on_signal(sig: c_int) {
    let fd = WRITE_FD.load(Ordering::Relaxed);
    if fd < 0 {
        return;
    }
    // SAFETY: write(2) and errno access are async-signal-safe; the byte lives on our stack.
    // A full pipe drops the byte, which is harmless: the reader already has one to wake on.
    unsafe {
        let errno = *libc::__errno_location();
        let byte = sig as u8;
        libc::write(fd, (&byte as *const u8).cast(), 1);
        *libc::__errno_location() = errno;
    }
}

/// The installed handlers and their pipe.
pub struct SignalPipe {
    read: OwnedFd,
    _write: OwnedFd,
}

impl SignalPipe {
    /// Route `signals` to the pipe. SIGCHLD is taken with SA_NOCLDSTOP: only deaths matter.
    pub fn install(signals: &[c_int]) -> io::Result<SignalPipe> {
        let mut fds = [0 as c_int; 2];
        // SAFETY: pipe2 fills the two-element array we pass.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: pipe2 just returned these two descriptors, owned by nobody else.
        let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        WRITE_FD.store(write.as_raw_fd(), Ordering::Relaxed);
        for &sig in signals {
            // SAFETY: a zeroed sigaction with a valid handler and an emptied mask is well
            // formed; on_signal only does async-signal-safe work.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_signal as extern "C" fn(c_int) as libc::sighandler_t;
                action.sa_flags = libc::SA_RESTART | if sig == libc::SIGCHLD { libc::SA_NOCLDSTOP } else { 0 };
                libc::sigemptyset(&mut action.sa_mask);
                if libc::sigaction(sig, &action, std::ptr::null_mut()) != 0 {
                    return Err(io::Error::last_os_error());
                }
            }
        }
        Ok(SignalPipe { read, _write: write })
    }

    /// The descriptor to poll for input.
    pub fn fd(&self) -> RawFd {
        self.read.as_raw_fd()
    }

    /// The signals that arrived since the last call, in order (one entry per delivery the
    /// kernel did not coalesce).
    pub fn drain(&self) -> Vec<c_int> {
        let mut got = Vec::new();
        let mut buf = [0u8; 64];
        loop {
            // SAFETY: reading into our own buffer of the given length.
            let n = unsafe { libc::read(self.read.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            if n <= 0 {
                break;
            }
            got.extend(buf[..n as usize].iter().map(|&b| b as c_int));
        }
        got
    }
}

impl Drop for SignalPipe {
    fn drop(&mut self) {
        WRITE_FD.store(-1, Ordering::Relaxed);
    }
}
