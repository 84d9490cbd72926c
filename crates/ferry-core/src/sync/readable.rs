//! Sleeping until a descriptor (an engine's event descriptor) is readable: how the faces'
//! own threads wait between passes of the engine without holding it.

use std::os::fd::RawFd;
use std::time::Duration;

/// Sleep until `fd` is readable or `timeout` (at least a millisecond) passes. An
/// interruption or an error ends the sleep early; the caller looks again either way.
///
/// The caller keeps `fd` open for the duration of the call.
pub fn wait_readable(fd: RawFd, timeout: Duration) {
    let mut p = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
    let ms = timeout.as_millis().clamp(1, i32::MAX as u128) as libc::c_int;
    // SAFETY: one valid pollfd on this stack frame; `fd` is open (the caller's contract).
    unsafe { libc::poll(&mut p, 1, ms) };
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn returns_when_readable_or_after_the_timeout() {
        let mut fds = [0; 2];
        // SAFETY: pipe writes two descriptors into the array.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        let start = Instant::now();
        wait_readable(fds[0], Duration::from_millis(30));
        assert!(start.elapsed() >= Duration::from_millis(25), "returned before the timeout");
        // SAFETY: writing one byte from a valid buffer to our pipe.
        assert_eq!(unsafe { libc::write(fds[1], b"x".as_ptr().cast(), 1) }, 1);
        let start = Instant::now();
        wait_readable(fds[0], Duration::from_secs(10));
        assert!(start.elapsed() < Duration::from_secs(5), "did not see the byte");
        // SAFETY: closing our own descriptors.
        unsafe {
            libc::close(fds[0]);
            libc::close(fds[1]);
        }
    }
}
