//! The two futex calls, on a 32-bit word in private or shared memory: sleep while the word
//! holds a value, and wake whoever sleeps on it. Callers bring their own protocol (see the
//! doorbells in `transport::shm::doorbell`); these only keep the system calls in one place.

use std::sync::atomic::AtomicU32;
use std::time::Duration;

/// Sleep while `*word == expected`, at most `timeout`. Returns on wake-up, value mismatch,
/// signal or timeout alike; the caller re-checks its condition.
pub fn futex_wait(word: &AtomicU32, expected: u32, timeout: Option<Duration>) {
    let ts = timeout.map(|t| libc::timespec {
        tv_sec: t.as_secs().min(i64::MAX as u64) as libc::time_t,
        tv_nsec: t.subsec_nanos() as libc::c_long,
    });
    let ts_ptr = ts.as_ref().map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: `word` is a live, aligned u32; FUTEX_WAIT (shared, not PRIVATE, since the word
    // may live in memory mapped by several processes) only reads it; `ts_ptr` is null or
    // points to a timespec on this stack frame.
    unsafe {
        libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAIT, expected, ts_ptr, std::ptr::null::<u32>(), 0);
    }
}

/// Wake every thread sleeping on `word`, in any process that maps it.
pub fn futex_wake(word: &AtomicU32) {
    // SAFETY: `word` is a live, aligned u32; FUTEX_WAKE does not touch user memory.
    unsafe {
        libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE, i32::MAX, std::ptr::null::<libc::timespec>(), std::ptr::null::<u32>(), 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;
    use std::sync::Arc;

    #[test]
    fn a_changed_word_does_not_sleep() {
        let w = AtomicU32::new(1);
        // The kernel compares before sleeping: a stale expectation returns at once.
        futex_wait(&w, 0, None);
    }

    #[test]
    fn a_wake_ends_the_wait() {
        let w = Arc::new(AtomicU32::new(0));
        let sleeper = {
            let w = w.clone();
            std::thread::spawn(move || {
                while w.load(Ordering::Acquire) == 0 {
                    futex_wait(&w, 0, None);
                }
            })
        };
        w.store(1, Ordering::Release);
        futex_wake(&w);
        sleeper.join().expect("the sleeper returns once woken");
    }
}
