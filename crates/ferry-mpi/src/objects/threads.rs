//! MPI_THREAD_MULTIPLE: every MPI call holds the runtime's one mutex, and a blocking call
//! gives it up while it waits, so that another thread can make the call that completes it (a
//! receive waiting for the answer to a send that a second thread of the rank has still to make).
//!
//! (Below MPI_THREAD_MULTIPLE the calls may skip the mutex altogether: see `elision`.)
//!
//! The calls hold the runtime through [`Locked`], which owns the mutex's guard. Only a
//! `&mut Locked` can let the guard go ([`Locked::wait_until`], [`Locked::unlocked`]), so the
//! borrow checker sees to it that no reference into the runtime (a communicator, a request)
//! lives across the release: everything is looked up again by handle once the wait returns.
//!
//! A blocked call spins in short bursts of the engine's own wait, letting the lock go between
//! two bursts; once `FERRY_SPIN_US` has passed it sleeps. One sleeper at a time, the poller,
//! sleeps on the engine's descriptor (announced to local peers, as the progress thread does);
//! the others sleep on a futex bumped whenever their request may have completed: at the end of
//! every MPI call and after every pass of the poller. Every sleep is also bounded ([`NAP`]).

use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU8, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use ferry_core::engine::{Engine, EngineError};
use ferry_core::sync::futex::{futex_wait, futex_wake};

use super::elision;
use super::runtime::{self, Runtime};

/// Longest burst of spinning under the lock before other threads get a turn.
const BURST: Duration = Duration::from_micros(20);
/// Longest sleep of one round (a safety net: every wake-up is also signalled).
const NAP: Duration = Duration::from_millis(50);

/// MPI_THREAD_MULTIPLE was provided: blocking calls give up the lock while they wait.
static MULTIPLE: AtomicBool = AtomicBool::new(false);
/// Threads asleep in a blocking call.
static PARKED: AtomicU32 = AtomicU32::new(0);
/// Futex word of the sleepers that are not the poller; bumped when they should look again.
static GENERATION: AtomicU32 = AtomicU32::new(0);
/// The poller's state: none, about to sleep or asleep, or already kicked.
static POLLER: AtomicU8 = AtomicU8::new(NO_POLLER);
const NO_POLLER: u8 = 0;
const ASLEEP: u8 = 1;
const KICKED: u8 = 2;
/// Wakes the poller from its sleep on the engine's descriptor.
type Wake = Box<dyn Fn() + Send + Sync>;
static WAKE_POLLER: Mutex<Option<Wake>> = Mutex::new(None);

/// Set the thread level of a runtime coming up (with its lock held): MPI_THREAD_MULTIPLE
/// or not. The runtime may come up again after it went down (sessions), with its own engine.
pub fn configure(rt: &Runtime, multiple: bool) {
    let waker = rt.engine.waker();
    // A failed wake leaves the poller to look again after its nap.
    *WAKE_POLLER.lock().unwrap_or_else(|p| p.into_inner()) = Some(Box::new(move || drop(waker.wake())));
    MULTIPLE.store(multiple, Ordering::Release);
}

/// Whether threads sleep in blocking calls now.
pub fn parked() -> bool {
    PARKED.load(Ordering::SeqCst) != 0
}

/// Called by every MPI call once it released the runtime, and by the progress thread after a
/// pass: what it did may have completed a sleeper's request, so wake the sleepers to look.
#[inline]
pub fn after_call() {
    if MULTIPLE.load(Ordering::Relaxed) && parked() {
        wake_sleepers();
    }
}

fn wake_sleepers() {
    GENERATION.fetch_add(1, Ordering::Release);
    futex_wake(&GENERATION);
    // Kicked again even when kicked already: another thread's pass of the engine may have
    // taken the first kick's event before the poller saw it.
    let state = POLLER.load(Ordering::Acquire);
    if state != NO_POLLER && POLLER.compare_exchange(state, KICKED, Ordering::AcqRel, Ordering::Relaxed).is_ok() {
        if let Some(wake) = WAKE_POLLER.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            wake();
        }
    }
}

type Guard = MutexGuard<'static, Option<Runtime>>;

/// The runtime, held by one MPI call: the mutex's guard; or nothing, the call having entered
/// without the mutex (see `elision`); or the runtime an outer call on this thread lent to a
/// program's callback (see `generalized::reentered`), which is never let go.
pub struct Locked {
    guard: Option<Guard>,
    /// The call entered without the mutex: it leaves when dropped.
    elided: bool,
    rt: NonNull<Runtime>,
}

impl Drop for Locked {
    #[inline]
    fn drop(&mut self) {
        if self.elided {
            elision::leave();
        }
    }
}

impl Locked {
    /// Take the runtime (the mutex, unless calls skip it); `None` before MPI_Init or after
    /// MPI_Finalize.
    #[inline]
    pub fn lock() -> Option<Locked> {
        if let Some(rt) = elision::enter() {
            return Some(Locked { guard: None, elided: true, rt });
        }
        let mut guard = runtime::lock();
        let rt = NonNull::from(guard.as_mut()?);
        Some(Locked { guard: Some(guard), elided: false, rt })
    }

    /// The runtime, unless another call holds it now (another thread's, or an outer call on
    /// this one: a program's function called from inside MPI).
    pub fn try_lock() -> Option<Locked> {
        if !elision::inside() {
            if let Some(rt) = elision::enter() {
                return Some(Locked { guard: None, elided: true, rt });
            }
        }
        let mut guard = runtime::try_lock()?;
        let rt = NonNull::from(guard.as_mut()?);
        Some(Locked { guard: Some(guard), elided: false, rt })
    }

    /// The runtime an outer MPI call on this thread lent to a callback.
    ///
    /// # Safety
    /// `rt` is valid, and nothing else touches it until this `Locked` is dropped.
    pub unsafe fn lent(rt: *mut Runtime) -> Locked {
        Locked { guard: None, elided: false, rt: NonNull::new(rt).expect("a lent runtime is never null") }
    }

    /// Whether this call may let the lock go while it waits: MPI_THREAD_MULTIPLE was
    /// provided and this call owns the lock.
    #[inline]
    fn may_release(&self) -> bool {
        self.guard.is_some() && MULTIPLE.load(Ordering::Relaxed)
    }

    /// Run `f` without the runtime's lock (when this call owns it), then take it again.
    /// Other threads may change anything meanwhile: the caller looks again by handle.
    pub fn unlocked<R>(&mut self, f: impl FnOnce() -> R) -> R {
        if self.guard.is_none() && !self.elided {
            return f();
        }
        self.guard = None;
        if self.elided {
            self.elided = false;
            elision::leave();
        }
        let r = f();
        match Locked::lock() {
            Some(again) => *self = again,
            None => crate::error::die("MPI_Finalize was called while another thread was inside MPI", 1),
        }
        r
    }

    /// Block until `done` holds, like [`Engine::wait_until`]; with MPI_THREAD_MULTIPLE other
    /// threads may call MPI meanwhile.
    #[inline]
    pub fn wait_until(&mut self, done: impl FnMut(&Engine) -> bool) -> Result<(), EngineError> {
        if super::fault::recovery() {
            return self.wait_noting_failures(done);
        }
        if !self.may_release() {
            return self.engine.wait_until(done);
        }
        self.wait_releasing(done)
    }

    /// [`wait_until`](Self::wait_until) with recovery enabled: a failure or a peer's
    /// revocation also ends the engine's wait, so that the runtime notes it (and fails the
    /// receives from any source it concerns) before waiting on.
    #[inline(never)]
    pub fn wait_noting_failures(&mut self, mut done: impl FnMut(&Engine) -> bool) -> Result<(), EngineError> {
        loop {
            let mut until = |e: &Engine| done(e) || e.has_lost_peers() || e.has_revoked_by_peers();
            if self.may_release() {
                self.wait_releasing(&mut until)?;
            } else {
                self.engine.wait_until(&mut until)?;
            }
            self.note_failures();
            if done(&self.engine) {
                return Ok(());
            }
        }
    }

    /// [`wait_until`](Self::wait_until) with MPI_THREAD_MULTIPLE: bursts, then sleeps.
    #[inline(never)]
    fn wait_releasing(&mut self, mut done: impl FnMut(&Engine) -> bool) -> Result<(), EngineError> {
        let start = Instant::now();
        loop {
            self.engine.wait_until_deadline(Some(Instant::now() + BURST), &mut done)?;
            // What this burst moved may complete a sleeper's request.
            if parked() {
                wake_sleepers();
            }
            if done(&self.engine) {
                return Ok(());
            }
            if start.elapsed() >= self.engine.spin() {
                break;
            }
            self.unlocked(std::thread::yield_now);
        }
        loop {
            if self.sleep_once(&mut done)? {
                return Ok(());
            }
        }
    }

    /// One round of sleep for [`wait_until`](Self::wait_until); whether `done` holds after it.
    fn sleep_once(&mut self, done: &mut impl FnMut(&Engine) -> bool) -> Result<bool, EngineError> {
        let poller = POLLER.compare_exchange(NO_POLLER, ASLEEP, Ordering::AcqRel, Ordering::Relaxed).is_ok();
        if poller {
            let pass = self.engine.progress(Some(Duration::ZERO));
            let stay_awake = pass.is_err() || done(&self.engine) || {
                // An announced sleep ends with `end_sleep`, also when there is work already.
                let quiet = self.engine.prepare_sleep();
                if !quiet {
                    self.engine.end_sleep();
                }
                !quiet
            };
            if stay_awake {
                POLLER.store(NO_POLLER, Ordering::Release);
                pass?;
                return Ok(done(&self.engine));
            }
        }
        let seen = GENERATION.load(Ordering::Acquire);
        PARKED.fetch_add(1, Ordering::SeqCst);
        let fd = self.engine.event_fd();
        self.unlocked(|| {
            if poller {
                // `fd` stays open: the engine lives until finalize, which no thread may call
                // while others are inside MPI.
                ferry_core::sync::wait_readable(fd, NAP)
            } else {
                futex_wait(&GENERATION, seen, Some(NAP))
            }
        });
        PARKED.fetch_sub(1, Ordering::SeqCst);
        if poller {
            self.engine.end_sleep();
            POLLER.store(NO_POLLER, Ordering::Release);
            let pass = self.engine.progress(Some(Duration::ZERO));
            if parked() {
                wake_sleepers();
            }
            pass?;
        }
        Ok(done(&self.engine))
    }

    /// Block until `done` holds of the whole runtime (a condition the engine alone cannot
    /// tell, such as a generalized request completed by another thread's call): one progress
    /// pass, then a short sleep without the lock, until it does. Only with the lock to give.
    pub fn wait_for(&mut self, mut done: impl FnMut(&mut Runtime) -> bool) -> Result<(), EngineError> {
        loop {
            self.engine.progress(Some(Duration::ZERO))?;
            if done(self) {
                return Ok(());
            }
            let seen = GENERATION.load(Ordering::Acquire);
            PARKED.fetch_add(1, Ordering::SeqCst);
            self.unlocked(|| futex_wait(&GENERATION, seen, Some(Duration::from_millis(1))));
            PARKED.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Whether this call holds the runtime itself (it was not lent the runtime), with the
    /// mutex or without.
    pub fn owns_lock(&self) -> bool {
        self.guard.is_some() || self.elided
    }

    /// Whether another thread may complete what this call waits for (generalized requests).
    pub fn others_may_call(&self) -> bool {
        self.may_release()
    }
}

impl Deref for Locked {
    type Target = Runtime;
    #[inline]
    fn deref(&self) -> &Runtime {
        // SAFETY: `rt` points into the runtime held by `guard` (the static mutex's payload,
        // which never moves), or to that payload entered without the mutex while nothing
        // else can reach it (see `elision`), or to the runtime lent by the outer call (see
        // `lent`). The
        // guard is given up only inside `&mut self` methods, which take it again and refresh
        // `rt` before they return, so no reference handed out here outlives a release.
        unsafe { self.rt.as_ref() }
    }
}

impl DerefMut for Locked {
    #[inline]
    fn deref_mut(&mut self) -> &mut Runtime {
        // SAFETY: as in `deref`; `&mut self` makes this the only reference.
        unsafe { self.rt.as_mut() }
    }
}
