//! The asynchronous progress thread (`FERRY_ASYNC_PROGRESS=1`): moves messages while the
//! application computes outside MPI, so that rendezvous transfers and queued frames do not
//! wait for the next MPI call.
//!
//! It takes the runtime's lock only for one non-blocking pass of the engine (and of the
//! pending non-blocking collectives), then sleeps without the lock on the engine's `epoll`
//! descriptor, which becomes readable when a socket has news, a local peer kicks this rank
//! (the thread stays announced as a sleeper on the rank's doorbell, so every publication by
//! a local peer costs that peer a kick: the price of the option), or finalize wakes it. When the application itself is inside MPI it holds the lock and
//! drives the engine; the thread then stays out of its way, looking again shortly after.

use std::sync::atomic::{fence, AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use ferry_core::sync::futex::{futex_wait, futex_wake};

use crate::objects::records::ProgressThread;
use crate::objects::runtime::{self, Runtime};

/// Longest sleep between two passes (timers such as lost-peer checks need no more).
const IDLE: Duration = Duration::from_millis(100);
/// Longest pause while the application is inside MPI (it drives the engine itself, and
/// nudges us when it leaves).
const BACK_OFF: Duration = Duration::from_millis(100);

/// A progress thread runs (so MPI calls must nudge it on the way out).
static RUNNING: AtomicBool = AtomicBool::new(false);
/// The thread waits for the application to leave MPI.
static WAITING: AtomicU32 = AtomicU32::new(0);
/// Futex word the thread waits on; bumped by every nudge.
static NUDGE: AtomicU32 = AtomicU32::new(0);

/// Whether the progress thread runs: only then does a call ask the engine whether work is
/// pending for it.
#[inline]
pub fn running() -> bool {
    RUNNING.load(Ordering::Relaxed)
}

/// Called by every MPI call after it released the runtime, with whether requests remain
/// pending: wake the thread, if it waits for that, to move them while the application
/// computes. The fences pair like those of ferry-core's shared-memory doorbells: the
/// thread announces itself before trying the lock, we look for it after releasing it, so
/// either it gets the lock or we see it.
#[inline]
pub fn after_call(pending: bool) {
    if pending && RUNNING.load(Ordering::Relaxed) {
        fence(Ordering::SeqCst);
        if WAITING.load(Ordering::Relaxed) != 0 {
            NUDGE.fetch_add(1, Ordering::Release);
            futex_wake(&NUDGE);
        }
    }
}

/// Ask the scheduler (EEVDF, Linux 6.6 and later) for short time slices: a thread that
/// runs briefly after each wake-up then gets the core sooner when the application's threads
/// keep every core busy, which is when the progress thread matters. Unprivileged; older
/// kernels refuse it and nothing changes.
fn ask_for_short_slices() {
    #[repr(C)]
    struct SchedAttr {
        size: u32,
        policy: u32,
        flags: u64,
        nice: i32,
        priority: u32,
        runtime: u64,
        deadline: u64,
        period: u64,
        util_min: u32,
        util_max: u32,
    }
    // SAFETY: getpriority has no memory arguments.
    let nice = unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
    let attr = SchedAttr { size: std::mem::size_of::<SchedAttr>() as u32, policy: libc::SCHED_OTHER as u32, flags: 0, nice, priority: 0, runtime: 100_000, deadline: 0, period: 0, util_min: 0, util_max: 0 };
    // SAFETY: sched_setattr reads `size` bytes of a properly laid out sched_attr for this thread.
    let rc = unsafe { libc::syscall(libc::SYS_sched_setattr, 0, &attr as *const SchedAttr, 0) };
    if rc != 0 {
        ferry_core::debug!("progress", "short time slices refused: {}", std::io::Error::last_os_error());
    }
}

enum Pass {
    /// A ring still has something: go again.
    Busy,
    /// Nothing to do: sleep until an event.
    Idle,
    /// The application holds the runtime.
    AppInside,
}

/// Start the thread for `rt` (called at the end of MPI_Init, with the lock held); the
/// runtime keeps what stops it.
pub fn start(rt: &Runtime) -> std::io::Result<ProgressThread> {
    // The thread reaches the runtime beside the program's calls: they take its lock from now.
    crate::objects::elision::stop();
    let stop = Arc::new(AtomicBool::new(false));
    let fd = rt.engine.event_fd();
    let bell = rt.engine.doorbell();
    let flag = stop.clone();
    let handle = std::thread::Builder::new().name("ferry-progress".into()).spawn(move || {
        ask_for_short_slices();
        // The thread counts as asleep on the rank's doorbell for as long as it runs, so
        // that local peers kick the wake-up socket whenever they publish, without announcing
        // itself again before every sleep.
        if let Some(b) = &bell {
            b.begin_sleep();
        }
        while !flag.load(Ordering::Acquire) {
            // While the application is inside MPI it drives the engine itself: do not
            // queue for the lock, or every MPI call after a wake-up would wait for us.
            WAITING.fetch_add(1, Ordering::SeqCst);
            let key = NUDGE.load(Ordering::Acquire);
            let got = runtime::try_lock();
            if got.is_some() {
                WAITING.fetch_sub(1, Ordering::Relaxed);
            }
            let state = match got {
                None => Pass::AppInside,
                Some(mut guard) => match guard.as_mut() {
                    None => break,
                    Some(_) if flag.load(Ordering::Acquire) => Pass::Idle,
                    Some(rt) => {
                        // An engine failure stays in the engine: the application's next
                        // call reports it.
                        let _ = rt.engine.progress(Some(Duration::ZERO));
                        if rt.engine.rings_pending() {
                            Pass::Busy
                        } else {
                            Pass::Idle
                        }
                    }
                },
            };
            // What the pass moved may complete the request of an application thread
            // asleep in a blocking call (MPI_THREAD_MULTIPLE).
            if matches!(state, Pass::Busy | Pass::Idle) {
                crate::objects::threads::after_call();
            }
            match state {
                Pass::Busy => {}
                Pass::AppInside => {
                    futex_wait(&NUDGE, key, Some(BACK_OFF));
                    WAITING.fetch_sub(1, Ordering::Relaxed);
                }
                Pass::Idle if flag.load(Ordering::Acquire) => {}
                // `fd` stays open until the engine is dropped, which finalize does only
                // after joining us.
                Pass::Idle => ferry_core::sync::wait_readable(fd, IDLE),
            }
        }
        if let Some(b) = &bell {
            b.end_sleep();
        }
    })?;
    RUNNING.store(true, Ordering::Release);
    let waker = rt.engine.waker();
    // Stopping: raise the flag, interrupt the sleep, join. A failed wake leaves the
    // thread to notice the stop flag after its idle timeout.
    Ok(ProgressThread::new(Box::new(move || {
        stop.store(true, Ordering::Release);
        drop(waker.wake());
        NUDGE.fetch_add(1, Ordering::Release);
        futex_wake(&NUDGE);
        let _ = handle.join();
    })))
}
