//! Doorbells: one futex word per local rank, so a rank blocked on any of its rings (data to
//! read, or space to write) can sleep in the kernel and be woken by whichever peer changes one.
//!
//! # Protocol
//!
//! A doorbell is two 32-bit words in shared memory: `seq`, the futex word, bumped by every
//! wake-up, and `sleepers`, the number of threads that are, or are about to be, asleep on it.
//!
//! Waiter (the owning rank, after its spin budget ran out):
//! 1. `key = seq.load(Acquire)`
//! 2. `sleepers.fetch_add(1, SeqCst)`; `fence(SeqCst)`
//! 3. re-check its condition (ring heads/tails); if it holds: `sleepers -= 1`, done
//! 4. `futex_wait(&seq, key)`: the kernel sleeps only while `seq == key`
//! 5. `sleepers -= 1`, re-check, repeat
//!
//! Notifier (a peer, after it published a frame or freed ring space):
//! 1. the ring index store (`head` or `tail`, Release)
//! 2. `fence(SeqCst)`; `if sleepers.load(Relaxed) != 0 { seq.fetch_add(1, Release); futex_wake(&seq) }`
//!
//! The fast path of a notifier is a fence and one load of a line that is written only when
//! the owner goes to sleep: no system call while nobody sleeps.
//!
//! # Why no wake-up is lost
//!
//! The two SeqCst fences are ordered in the single total order of SeqCst operations. If the
//! waiter's fence comes first, the notifier's load of `sleepers` (after its fence) sees the
//! waiter's increment, so it wakes. If the notifier's fence comes first, the waiter's re-check
//! (after its fence) sees the notifier's index store, so it does not sleep. Either the waiter
//! sees the data or the notifier sees the waiter.
//!
//! In the first case, the wake may come before the waiter has entered the kernel. The notifier
//! bumps `seq` before `futex_wake`; the waiter read `key` before announcing itself, so `key`
//! is the value before that bump (the bump depends on seeing the announcement, which follows
//! the read of `key`). `futex_wait` compares `seq` with `key` atomically with respect to
//! `futex_wake` (both take the futex hash-bucket lock): either the waiter is already queued
//! and the wake dequeues it, or the kernel sees `seq != key` and returns `EAGAIN` at once.
//! A stale `sleepers` (a waiter that has just woken) only costs a spurious wake-up.
//!
//! # Why both sides fence
//!
//! A variant moved the notifier's fence to the waiter (`membarrier(GLOBAL_EXPEDITED)` after
//! announcing a sleep, a compiler fence for the notifier). On this project's virtual machines
//! it saved nothing measurable on a ping-pong (8-byte latency 0.34 us with it, 0.32 us
//! without, same run), and under load the ring stress test stalled with both ends asleep:
//! both sides now take the plain fence.

use std::ptr::NonNull;
use std::sync::atomic::{fence, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Instant;

pub use crate::sync::futex::{futex_wait, futex_wake};

/// The fence between announcing a sleep and re-checking the condition (waiter), and between
/// publishing and looking for sleepers (notifier): the pair the module doc relies on.
#[inline]
fn dekker_fence() {
    fence(Ordering::SeqCst);
}

/// The shared words of one doorbell; 128 bytes so neighbours never share a cache-line pair.
#[repr(C, align(128))]
pub(crate) struct DoorbellWord {
    seq: AtomicU32,
    sleepers: AtomicU32,
}

/// A second way to wake the owner, for an owner that sleeps in `epoll` (waiting for sockets
/// too) rather than on the futex: called by notifiers that find it asleep.
pub type Kick = Arc<dyn Fn() + Send + Sync>;

/// A handle on one rank's doorbell, in a segment or in private memory.
#[derive(Clone)]
pub struct Doorbell {
    word: NonNull<DoorbellWord>,
    _keep: Arc<dyn Send + Sync>,
    kick: Option<Kick>,
}

// SAFETY: the handle only touches the word through atomics, and `_keep` holds the memory.
unsafe impl Send for Doorbell {}
// SAFETY: as above; every operation is an atomic access or a futex call on that word.
unsafe impl Sync for Doorbell {}

/// How a [`Doorbell::wait_until`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WaitOutcome {
    /// The condition held when the wait returned (false: the deadline passed).
    pub ready: bool,
    /// How many times the caller went to sleep in the kernel.
    pub sleeps: u32,
}

impl Doorbell {
    /// # Safety
    /// `word` must point to a `DoorbellWord` (zeroed or in use) that stays mapped while
    /// `keep` lives.
    pub(crate) unsafe fn from_raw(word: *mut DoorbellWord, keep: Arc<dyn Send + Sync>) -> Doorbell {
        Doorbell { word: NonNull::new(word).expect("doorbell pointer is never null"), _keep: keep, kick: None }
    }

    /// The same doorbell, calling `kick` instead of waking the futex whenever a notifier
    /// finds the owner asleep: its owner sleeps in `epoll` (see
    /// [`begin_sleep`](Self::begin_sleep)), never in [`wait_until`](Self::wait_until).
    pub fn with_kick(mut self, kick: Kick) -> Doorbell {
        self.kick = Some(kick);
        self
    }

    fn w(&self) -> &DoorbellWord {
        // SAFETY: from_raw's contract keeps the word mapped while `self` exists.
        unsafe { self.word.as_ref() }
    }

    /// Wake the owner if it sleeps. Call after the ring index store that made its condition
    /// true; costs a fence and a load when nobody sleeps.
    #[inline]
    pub fn notify(&self) {
        dekker_fence();
        let w = self.w();
        if w.sleepers.load(Ordering::Relaxed) != 0 {
            w.seq.fetch_add(1, Ordering::Release);
            // An owner with a kick sleeps in epoll, never on the futex: one system call.
            match &self.kick {
                Some(k) => k(),
                None => futex_wake(&w.seq),
            }
        }
    }

    /// The owner is about to sleep somewhere else than on the futex (in `epoll`, woken by the
    /// kick): from now on notifiers wake it. The caller must then re-check its condition
    /// (ring heads and tails) before sleeping, and call [`end_sleep`](Self::end_sleep) after.
    /// The same fences as in [`wait_until`](Self::wait_until) make the pair race-free.
    pub fn begin_sleep(&self) {
        self.w().sleepers.fetch_add(1, Ordering::SeqCst);
        dekker_fence();
    }

    /// The owner woke up (see [`begin_sleep`](Self::begin_sleep)).
    pub fn end_sleep(&self) {
        self.w().sleepers.fetch_sub(1, Ordering::Relaxed);
    }

    /// Wait until `ready()` holds: check it `spins` times with a CPU pause in between, then
    /// sleep on the futex (re-checking after each wake-up) until it holds or `deadline`
    /// passes. `ready` must read the shared state whose writers call [`notify`](Self::notify).
    pub fn wait_until(&self, spins: u32, deadline: Option<Instant>, mut ready: impl FnMut() -> bool) -> WaitOutcome {
        for _ in 0..spins {
            if ready() {
                return WaitOutcome { ready: true, sleeps: 0 };
            }
            std::hint::spin_loop();
        }
        let w = self.w();
        let mut sleeps = 0;
        loop {
            let key = w.seq.load(Ordering::Acquire);
            w.sleepers.fetch_add(1, Ordering::SeqCst);
            dekker_fence();
            if ready() {
                w.sleepers.fetch_sub(1, Ordering::Relaxed);
                return WaitOutcome { ready: true, sleeps };
            }
            let timeout = match deadline {
                None => None,
                Some(d) => match d.checked_duration_since(Instant::now()) {
                    Some(left) if !left.is_zero() => Some(left),
                    _ => {
                        w.sleepers.fetch_sub(1, Ordering::Relaxed);
                        return WaitOutcome { ready: false, sleeps };
                    }
                },
            };
            futex_wait(&w.seq, key, timeout);
            sleeps += 1;
            w.sleepers.fetch_sub(1, Ordering::Relaxed);
            if ready() {
                return WaitOutcome { ready: true, sleeps };
            }
        }
    }
}
