//! A kernel pipe that carries one direction of a relayed pair with splice(2): bytes move
//! socket -> pipe -> socket as page references and never through the proxy's memory, which
//! saves both copies of the plain read/write path. The pipe's capacity is raised to the
//! pair's buffer bound; the caller never lets more than that many bytes into it.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

pub(super) struct KernelPipe {
    read: OwnedFd,
    write: OwnedFd,
}

/// What one splice into the pipe did.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum SpliceIn {
    /// Bytes moved from the socket (0: its end of stream).
    Moved(usize),
    /// Nothing moved: the socket has nothing now, or the pipe's slots are taken (small
    /// segments use a slot each, so a pipe may fill before its byte capacity). The two
    /// look alike to splice; `held` (bytes in the pipe) tells the caller which may be the case.
    Blocked,
}

fn cvt(r: libc::ssize_t) -> io::Result<usize> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r as usize)
    }
}

impl KernelPipe {
    /// A non-blocking pipe that holds at least `cap` bytes. Fails where the kernel refuses
    /// the size (above `/proc/sys/fs/pipe-max-size`, or past the user's pipe allowance) or
    /// has no descriptors left: the caller then relays by copying.
    pub(super) fn new(cap: usize) -> io::Result<KernelPipe> {
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: `fds` is a valid array of two ints for the kernel to fill.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_NONBLOCK | libc::O_CLOEXEC) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: pipe2 succeeded, so both descriptors are open and owned by nobody else;
        // from here they are closed when the OwnedFds drop, on every path.
        let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        let want = libc::c_int::try_from(cap.max(1)).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        // SAFETY: fcntl on a descriptor this function owns; F_SETPIPE_SZ takes an int.
        let got = unsafe { libc::fcntl(write.as_raw_fd(), libc::F_SETPIPE_SZ, want) };
        if got < 0 {
            return Err(io::Error::last_os_error());
        }
        if (got as usize) < cap {
            return Err(io::Error::other(format!("pipe of {got} bytes for a bound of {cap}")));
        }
        Ok(KernelPipe { read, write })
    }

    /// Move at most `max` bytes (> 0) from the socket `src` into the pipe.
    pub(super) fn splice_in(&self, src: RawFd, max: usize) -> io::Result<SpliceIn> {
        debug_assert!(max > 0, "a splice of 0 bytes would read as an end of stream");
        // SAFETY: both descriptors are open (the socket is borrowed from its owner for the
        // call, the pipe is owned here); null offsets are what splice takes for a socket and
        // a pipe.
        let r = unsafe { libc::splice(src, std::ptr::null_mut(), self.write.as_raw_fd(), std::ptr::null_mut(), max, libc::SPLICE_F_MOVE | libc::SPLICE_F_NONBLOCK) };
        match cvt(r) {
            Ok(n) => Ok(SpliceIn::Moved(n)),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(SpliceIn::Blocked),
            Err(e) => Err(e),
        }
    }

    /// Move at most `max` bytes (> 0) from the pipe to the socket `dst`; WouldBlock when the
    /// socket takes nothing now.
    pub(super) fn splice_out(&self, dst: RawFd, max: usize) -> io::Result<usize> {
        // SAFETY: as in `splice_in`, with the directions swapped.
        let r = unsafe { libc::splice(self.read.as_raw_fd(), std::ptr::null_mut(), dst, std::ptr::null_mut(), max, libc::SPLICE_F_MOVE | libc::SPLICE_F_NONBLOCK) };
        cvt(r)
    }
}

#[cfg(test)]
impl KernelPipe {
    /// Bytes in the pipe, as the kernel counts them.
    pub(super) fn queued(&self) -> usize {
        let mut n: libc::c_int = 0;
        // SAFETY: FIONREAD on an open pipe writes one int through the valid pointer.
        let r = unsafe { libc::ioctl(self.read.as_raw_fd(), libc::FIONREAD, &mut n) };
        assert_eq!(r, 0, "FIONREAD on a pipe");
        n as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pipe_is_refused_past_what_the_kernel_can_give() {
        // Above 2 GiB no pipe can be made, privileged or not: the caller copies instead.
        assert!(KernelPipe::new(3 << 30).is_err());
        assert!(KernelPipe::new(usize::MAX).is_err());
        assert!(KernelPipe::new(64 << 10).is_ok());
    }
}
