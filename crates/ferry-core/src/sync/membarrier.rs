//! The asymmetric fence: `membarrier(2)`'s private expedited command runs a full memory
//! barrier on every thread of this process that is running now, so that a hot path may order
//! its store before its load with a compiler fence alone, and the rare other side pays for both
//! (the pattern of an elided lock: see `ferry-mpi`'s `objects::elision`).

/// Commands of `membarrier(2)` (`linux/membarrier.h`).
const CMD_PRIVATE_EXPEDITED: libc::c_int = 1 << 3;
const CMD_REGISTER_PRIVATE_EXPEDITED: libc::c_int = 1 << 4;

/// Ask the kernel for the private expedited barrier; whether [`barrier`] may be used from now
/// on in this process (false on kernels before 4.14, or where a sandbox refuses the call).
pub fn register() -> bool {
    // SAFETY: membarrier takes two integers and touches no user memory.
    let r = unsafe { libc::syscall(libc::SYS_membarrier, CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) };
    r == 0 && barrier().is_ok()
}

/// A full memory barrier on every running thread of this process, this one included; only
/// after [`register`] returned true.
pub fn barrier() -> std::io::Result<()> {
    // SAFETY: as in `register`.
    let r = unsafe { libc::syscall(libc::SYS_membarrier, CMD_PRIVATE_EXPEDITED, 0, 0) };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_registered_process_may_use_the_barrier() {
        // Every kernel this project supports has it; a sandbox that refuses it makes
        // `register` false, and then the barrier must not be relied on.
        if register() {
            barrier().expect("the barrier works once registered");
        }
    }
}
