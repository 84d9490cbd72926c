//! The control block of a window whose memory every member maps: one cache line per member
//! at the end of the segment, holding that member's locks, so that origins take them without
//! the member's help. The accumulate lock makes the combinations that no atomic instruction
//! can do (floating point, long double, pairs, misaligned elements) atomic element by element;
//! the passive-target lock is what `MPI_Win_lock` takes. Both are words in shared memory: taken
//! with an atomic instruction, waited for by spinning briefly, then sleeping on a futex.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use ferry_core::sync::futex::{futex_wait, futex_wake};

/// Bytes of one member's line.
pub const LINE: usize = 64;

/// Spins before a waiter sleeps: a lock held for a few instructions is usually free by then.
const SPINS: u32 = 200;

/// Longest sleep on the accumulate lock (a holder wakes the sleepers when it lets go; the
/// limit only bounds what a missed wake-up could cost).
const ACC_NAP: Duration = Duration::from_millis(10);

/// The passive-target lock's bit for an exclusive holder; the bits below count shared ones.
const EXCLUSIVE: u32 = 1 << 31;

/// One member's line: zero bytes are free locks, as a fresh segment holds.
#[repr(C)]
struct Line {
    /// 0 free, 1 held, 2 held with sleepers.
    acc: AtomicU32,
    /// `EXCLUSIVE`, or the number of shared holders.
    passive: AtomicU32,
    /// Processes asleep on `passive`.
    passive_sleepers: AtomicU32,
}

/// The control block of one window as this process maps it.
#[derive(Clone, Copy)]
pub struct Control {
    lines: *const u8,
    members: usize,
}

impl Control {
    /// The block of `members` lines at `lines`.
    ///
    /// # Safety
    /// `lines` is aligned to [`LINE`] and the start of `members * LINE` bytes of memory,
    /// zeroed when the window was made, that stay mapped as long as this value is used; only
    /// this module touches them.
    pub unsafe fn new(lines: *const u8, members: usize) -> Control {
        Control { lines, members }
    }

    fn line(&self, member: usize) -> &Line {
        assert!(member < self.members, "window rank {member} of {}", self.members);
        // SAFETY: `new`'s contract: the line is mapped, aligned, and holds only atomics.
        unsafe { &*(self.lines.add(member * LINE) as *const Line) }
    }

    /// Take `member`'s accumulate lock; it is released when the guard goes.
    pub fn acc_lock(&self, member: usize) -> AccGuard<'_> {
        let w = &self.line(member).acc;
        if w.compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed).is_err() {
            let mut spins = 0;
            loop {
                if w.load(Ordering::Relaxed) == 0 && w.compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed).is_ok() {
                    break;
                }
                if spins < SPINS {
                    spins += 1;
                    std::hint::spin_loop();
                    continue;
                }
                // Announce a sleeper (2), so that the holder wakes us; if the lock was free
                // meanwhile, the swap took it.
                if w.swap(2, Ordering::Acquire) == 0 {
                    break;
                }
                futex_wait(w, 2, Some(ACC_NAP));
            }
        }
        AccGuard { word: w }
    }

    /// Take `member`'s passive-target lock if it is free enough (no holder for an exclusive
    /// lock, no exclusive holder for a shared one).
    pub fn try_passive(&self, member: usize, exclusive: bool) -> bool {
        let w = &self.line(member).passive;
        if exclusive {
            return w.compare_exchange(0, EXCLUSIVE, Ordering::Acquire, Ordering::Relaxed).is_ok();
        }
        let mut s = w.load(Ordering::Relaxed);
        while s & EXCLUSIVE == 0 {
            match w.compare_exchange_weak(s, s + 1, Ordering::Acquire, Ordering::Relaxed) {
                Ok(_) => return true,
                Err(now) => s = now,
            }
        }
        false
    }

    /// Wait, at most `nap`, for `member`'s passive-target lock to change, spinning briefly
    /// first. The caller tries again after it (and does its other duties between naps).
    pub fn wait_passive(&self, member: usize, exclusive: bool, nap: Duration) {
        let line = self.line(member);
        let free = |s: u32| if exclusive { s == 0 } else { s & EXCLUSIVE == 0 };
        let seen = line.passive.load(Ordering::Relaxed);
        for _ in 0..SPINS {
            if line.passive.load(Ordering::Relaxed) != seen {
                return;
            }
            std::hint::spin_loop();
        }
        // A releaser changes the word, then looks for sleepers; a sleeper counts itself, then
        // looks at the word: all four sequentially consistent, one of them sees the other.
        line.passive_sleepers.fetch_add(1, Ordering::SeqCst);
        let now = line.passive.load(Ordering::SeqCst);
        if now == seen && !free(now) {
            futex_wait(&line.passive, now, Some(nap));
        }
        line.passive_sleepers.fetch_sub(1, Ordering::SeqCst);
    }

    /// Release `member`'s passive-target lock, held exclusively or shared.
    pub fn release_passive(&self, member: usize, exclusive: bool) {
        let line = self.line(member);
        line.passive.fetch_sub(if exclusive { EXCLUSIVE } else { 1 }, Ordering::SeqCst);
        if line.passive_sleepers.load(Ordering::SeqCst) != 0 {
            futex_wake(&line.passive);
        }
    }
}

// SAFETY: the lines are shared memory touched only through atomics; the mapping outlives
// every user (see `new`).
unsafe impl Send for Control {}
unsafe impl Sync for Control {}

/// A member's accumulate lock, held.
pub struct AccGuard<'a> {
    word: &'a AtomicU32,
}

impl Drop for AccGuard<'_> {
    fn drop(&mut self) {
        if self.word.swap(0, Ordering::Release) == 2 {
            futex_wake(self.word);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A block in this process's memory, aligned like a segment's.
    #[repr(C, align(64))]
    struct Block([u8; 4 * LINE]);

    #[test]
    fn passive_locks_exclude_as_mpi_says() {
        let b = Box::new(Block([0; 4 * LINE]));
        // SAFETY: the box is aligned, zeroed, and outlives `c`.
        let c = unsafe { Control::new(b.0.as_ptr(), 4) };
        assert!(c.try_passive(1, false) && c.try_passive(1, false));
        assert!(!c.try_passive(1, true), "shared holders keep an exclusive one out");
        c.release_passive(1, false);
        c.release_passive(1, false);
        assert!(c.try_passive(1, true));
        assert!(!c.try_passive(1, false) && !c.try_passive(1, true));
        assert!(c.try_passive(2, true), "members' locks are independent");
        c.release_passive(1, true);
        assert!(c.try_passive(1, false));
    }

    #[test]
    fn the_accumulate_lock_serialises_threads() {
        let b = Box::new(Block([0; 4 * LINE]));
        // SAFETY: as above; the threads end before the box goes.
        let c = unsafe { Control::new(b.0.as_ptr(), 4) };
        let counter = std::sync::atomic::AtomicU64::new(0);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..20_000 {
                        let _g = c.acc_lock(3);
                        // A read and a write that would lose updates without the lock.
                        let v = counter.load(Ordering::Relaxed);
                        counter.store(v + 1, Ordering::Relaxed);
                    }
                });
            }
        });
        assert_eq!(counter.load(Ordering::Relaxed), 80_000);
    }

    #[test]
    fn a_sleeping_waiter_is_woken_by_the_release() {
        let b = Box::new(Block([0; 4 * LINE]));
        // SAFETY: as above.
        let c = unsafe { Control::new(b.0.as_ptr(), 4) };
        assert!(c.try_passive(0, true));
        std::thread::scope(|s| {
            let t = s.spawn(|| {
                // A long nap: only the release's wake-up ends it early.
                let t0 = std::time::Instant::now();
                while !c.try_passive(0, false) {
                    c.wait_passive(0, false, Duration::from_secs(20));
                }
                t0.elapsed()
            });
            // Release once the waiter sleeps (or is about to: it counted itself).
            // SAFETY: the line is mapped and holds atomics.
            let line = unsafe { &*(b.0.as_ptr() as *const Line) };
            while line.passive_sleepers.load(Ordering::SeqCst) == 0 {
                std::thread::yield_now();
            }
            c.release_passive(0, true);
            assert!(t.join().unwrap() < Duration::from_secs(10));
        });
    }
}
