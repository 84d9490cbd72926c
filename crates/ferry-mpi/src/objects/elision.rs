//! The runtime's lock, elided while no two threads can be inside MPI at once.
//!
//! Below MPI_THREAD_MULTIPLE the program promises one MPI call at a time, so the mutex that
//! guards the runtime ([`runtime::lock`](super::runtime::lock)) only costs: two atomic
//! read-modify-writes a call, about an eighth of a small message's time. While the process
//! is in [`ELIDING`] mode a call enters by marking itself [`INSIDE`] and reading the mode
//! again, with nothing stronger than a compiler fence between the two; it leaves by clearing
//! the mark. The mode ends for good (it becomes [`LOCKING`]) the first time something could
//! reach the runtime from another thread: a session, the tool interface, a progress thread,
//! or the end of the World Model. The thread that ends it pays for both sides: it announces
//! [`SWITCHING`], makes every running thread of the process execute a full memory barrier
//! (`membarrier(2)`), and only then says [`LOCKING`]. After that barrier, a call that entered
//! before the switch has its mark visible to everyone, and a call that enters later sees the
//! switch and takes the mutex. Whoever takes the mutex waits, holding it, until no call that
//! entered before the switch is still inside ([`wait_out`]); the switch itself never waits, so
//! a call inside may end the mode (when it starts a progress thread) and go on.
//!
//! Where the kernel has no private expedited barrier, or `FERRY_LOCK_ELISION=0`, the mode
//! never starts and every call takes the mutex.

use std::ptr::{null_mut, NonNull};
use std::sync::atomic::{compiler_fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU8, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use ferry_core::sync::futex::{futex_wait, futex_wake};
use ferry_core::sync::membarrier;

use super::runtime::Runtime;

/// Every call takes the mutex (the mode at start, and for good once left).
const LOCKING: u8 = 0;
/// Calls skip the mutex.
const ELIDING: u8 = 1;
/// The mode is ending: calls take the mutex, and wait for the switch to finish.
const SWITCHING: u8 = 2;

static MODE: AtomicU8 = AtomicU8::new(LOCKING);
/// 1 while a call that skipped the mutex runs (at most one: the program's promise).
static INSIDE: AtomicU32 = AtomicU32::new(0);
/// The runtime the eliding calls use: the mutex's payload, which never moves.
static RT: AtomicPtr<Runtime> = AtomicPtr::new(null_mut());
/// The mode may not start again (the tool interface was initialised).
static FORBIDDEN: AtomicBool = AtomicBool::new(false);
/// Serialises the mode's changes.
static SWITCH: Mutex<()> = Mutex::new(());

/// Enter a call without the mutex, if the mode allows: the runtime, marked inside.
#[inline]
pub fn enter() -> Option<NonNull<Runtime>> {
    if MODE.load(Ordering::Relaxed) != ELIDING {
        return None;
    }
    INSIDE.store(1, Ordering::Relaxed);
    // The store must not move below the load that follows; the switch's barrier orders them
    // for the processor (see the module's doc).
    compiler_fence(Ordering::SeqCst);
    if MODE.load(Ordering::Acquire) == ELIDING {
        if let Some(rt) = NonNull::new(RT.load(Ordering::Relaxed)) {
            return Some(rt);
        }
    }
    leave();
    None
}

/// Whether a call that skipped the mutex is inside now (in [`ELIDING`] mode, by the
/// program's promise, a call on this very thread).
#[inline]
pub fn inside() -> bool {
    INSIDE.load(Ordering::Relaxed) != 0
}

/// Leave a call entered by [`enter`].
#[inline]
pub fn leave() {
    INSIDE.store(0, Ordering::Release);
    if MODE.load(Ordering::Relaxed) != ELIDING {
        // Someone may be waiting in `wait_out` (a missed wake-up costs it one nap).
        futex_wake(&INSIDE);
    }
}

/// Start the mode for runtime `rt` (MPI_Init, with the mutex held), unless it is forbidden,
/// turned off by `FERRY_LOCK_ELISION=0`, or the kernel cannot serve the switch.
pub fn start(rt: &mut Runtime, wanted: bool) {
    let _s = SWITCH.lock().unwrap_or_else(|p| p.into_inner());
    if !wanted || FORBIDDEN.load(Ordering::Acquire) || !membarrier::register() {
        return;
    }
    RT.store(rt, Ordering::Relaxed);
    MODE.store(ELIDING, Ordering::Release);
}

/// End the mode for good, from any thread (also from inside a call that skipped the mutex:
/// this never waits for it). Cheap when the mode is over.
#[inline]
pub fn stop() {
    if MODE.load(Ordering::Acquire) != LOCKING {
        stop_slow();
    }
}

#[cold]
fn stop_slow() {
    let _s = SWITCH.lock().unwrap_or_else(|p| p.into_inner());
    if MODE.load(Ordering::Acquire) != ELIDING {
        return;
    }
    MODE.store(SWITCHING, Ordering::SeqCst);
    if let Err(e) = membarrier::barrier() {
        // Registered at the start, so it cannot fail; if it did, a call could be inside
        // unseen, and going on would risk the runtime's state.
        crate::error::die(&format!("the runtime's lock cannot be taken safely: membarrier failed: {e}"), 1);
    }
    MODE.store(LOCKING, Ordering::Release);
}

/// The tool interface is in use: end the mode, and never start it again.
pub fn forbid() {
    FORBIDDEN.store(true, Ordering::Release);
    stop();
}

/// The runtime goes down (with the mutex held, the mode over): forget it.
pub fn forget() {
    RT.store(null_mut(), Ordering::Relaxed);
}

/// Whether the mutex, once taken, is the runtime's alone: the mode is over. (A taker that
/// finds it is not drops the mutex, ends the mode and takes it again.)
#[inline]
pub fn locking() -> bool {
    MODE.load(Ordering::Acquire) == LOCKING
}

/// With the mutex held and the mode over: wait until no call that skipped the mutex before
/// the switch is still inside. Short spins, then naps (the leaving call wakes the sleeper).
#[inline]
pub fn wait_out() {
    if INSIDE.load(Ordering::Acquire) != 0 {
        wait_out_slow();
    }
}

#[cold]
fn wait_out_slow() {
    let mut round = 0u32;
    while INSIDE.load(Ordering::Acquire) != 0 {
        if round < 64 {
            std::hint::spin_loop();
        } else if round < 80 {
            std::thread::yield_now();
        } else {
            futex_wait(&INSIDE, 1, Some(Duration::from_millis(1)));
        }
        round = round.saturating_add(1);
    }
}
