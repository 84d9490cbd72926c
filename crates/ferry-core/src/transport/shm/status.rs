//! The status board: per local rank, the number of transfers it has in flight, in shared
//! memory so that every rank of the host can see who is busy (the software analogue of a
//! network interface's status register). Status-based collectives serve idle ranks first.
//!
//! Counters are relaxed atomics, one per 128-byte line: a rank updates only its own line, so
//! the fast path is one uncontended atomic add; readers accept a slightly stale view.

use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

/// One rank's counter, alone on its line pair.
#[repr(C, align(128))]
pub(crate) struct StatusSlot {
    in_flight: AtomicU32,
}

/// A view of the board of one host (in a segment, or private for tests).
#[derive(Clone)]
pub struct StatusBoard {
    slots: NonNull<StatusSlot>,
    ranks: usize,
    _keep: Arc<dyn Send + Sync>,
}

// SAFETY: the board is only accessed through atomics; `_keep` holds the memory.
unsafe impl Send for StatusBoard {}
// SAFETY: as above.
unsafe impl Sync for StatusBoard {}

impl StatusBoard {
    /// # Safety
    /// `slots` must point to `ranks` (zeroed or in use) slots that stay mapped while `keep` lives.
    pub(crate) unsafe fn from_raw(slots: *mut StatusSlot, ranks: usize, keep: Arc<dyn Send + Sync>) -> StatusBoard {
        StatusBoard { slots: NonNull::new(slots).expect("board pointer is never null"), ranks, _keep: keep }
    }

    /// A board in private memory, for `ranks` ranks of one process (tests, single-process jobs).
    pub fn private(ranks: usize) -> StatusBoard {
        let slots: Arc<[StatusSlot]> = (0..ranks.max(1)).map(|_| StatusSlot { in_flight: AtomicU32::new(0) }).collect();
        let ptr = slots.as_ptr() as *mut StatusSlot;
        // SAFETY: the Arc'd slice holds `ranks` slots (at least one, so the pointer is non-null
        // and aligned) for as long as the board keeps it.
        unsafe { StatusBoard::from_raw(ptr, ranks, Arc::new(slots)) }
    }

    /// Number of local ranks on the board.
    pub fn ranks(&self) -> usize {
        self.ranks
    }

    fn slot(&self, rank: usize) -> &AtomicU32 {
        assert!(rank < self.ranks, "local rank {rank} not on a board of {}", self.ranks);
        // SAFETY: rank < ranks, and from_raw's contract keeps the slots mapped.
        unsafe { &(*self.slots.as_ptr().add(rank)).in_flight }
    }

    /// `rank` started a transfer (a send or receive it is now moving data for).
    #[inline]
    pub fn begin_transfer(&self, rank: usize) {
        self.slot(rank).fetch_add(1, Ordering::Relaxed);
    }

    /// `rank` finished a transfer it had begun.
    #[inline]
    pub fn end_transfer(&self, rank: usize) {
        let before = self.slot(rank).fetch_sub(1, Ordering::Relaxed);
        debug_assert!(before > 0, "end_transfer without begin_transfer for local rank {rank}");
    }

    /// `rank` began (`delta > 0`) or finished (`delta < 0`) several transfers at once.
    #[inline]
    pub fn add_transfers(&self, rank: usize, delta: i64) {
        if delta >= 0 {
            self.slot(rank).fetch_add(delta as u32, Ordering::Relaxed);
        } else {
            let before = self.slot(rank).fetch_sub(delta.unsigned_abs() as u32, Ordering::Relaxed);
            debug_assert!(u64::from(before) >= delta.unsigned_abs(), "more transfers ended than began for local rank {rank}");
        }
    }

    /// Begin a transfer for `rank` that ends when the guard drops.
    pub fn transfer(&self, rank: usize) -> TransferGuard<'_> {
        self.begin_transfer(rank);
        TransferGuard { board: self, rank }
    }

    /// Transfers `rank` has in flight now.
    #[inline]
    pub fn in_flight(&self, rank: usize) -> u32 {
        self.slot(rank).load(Ordering::Relaxed)
    }

    /// Every rank's count, read one after the other (not an atomic picture of the host).
    pub fn snapshot(&self) -> Vec<u32> {
        (0..self.ranks).map(|r| self.in_flight(r)).collect()
    }

    /// The ranks with at least one transfer in flight, ascending.
    pub fn busy(&self) -> Vec<usize> {
        (0..self.ranks).filter(|&r| self.in_flight(r) > 0).collect()
    }
}

/// Ends a transfer on the board when dropped.
pub struct TransferGuard<'a> {
    board: &'a StatusBoard,
    rank: usize,
}

impl Drop for TransferGuard<'_> {
    fn drop(&mut self) {
        self.board.end_transfer(self.rank);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shm_status_board_counts() {
        let board = StatusBoard::private(4);
        assert!(board.busy().is_empty());
        board.begin_transfer(1);
        board.begin_transfer(1);
        board.begin_transfer(3);
        assert_eq!(board.snapshot(), vec![0, 2, 0, 1]);
        assert_eq!(board.busy(), vec![1, 3]);
        board.end_transfer(1);
        {
            let _g = board.transfer(0);
            assert_eq!(board.busy(), vec![0, 1, 3]);
        }
        board.end_transfer(1);
        board.end_transfer(3);
        assert!(board.busy().is_empty());
    }

    #[test]
    fn shm_status_board_threads_balance() {
        let board = StatusBoard::private(2);
        std::thread::scope(|s| {
            for _ in 0..4 {
                let b = board.clone();
                s.spawn(move || {
                    for _ in 0..10_000 {
                        let _g = b.transfer(1);
                    }
                });
            }
        });
        assert_eq!(board.snapshot(), vec![0, 0]);
    }
}
