//! The protocol of the shared-memory algorithms (`<collective>/shm.rs`): the ranks of a
//! communicator that all run on one host share a segment holding, per rank, one flag and two
//! slot buffers of [`SLOT_BYTES`]. The algorithms here are pure: they read and write through
//! a [`Slots`] (ferry-core's `HostArea` over a real segment, an in-memory one in the tests)
//! and, where a flag they need has not come yet, return [`Step::Wait`]; the caller waits
//! however it likes (spin, sleep, drive its engine) and calls again.
//!
//! # Flags are sequence numbers
//! Every call on the slots has a number, 1, 2, 3, ..., the same on every rank (the ranks make
//! the same calls in the same order, and each counts its own). In call `s` every rank
//! publishes `s` in its flag exactly once: after writing what others read from its slot, or,
//! where it writes nothing, on entry. Flags only grow, so nothing is ever reset, and a flag at
//! `s` or above means "has entered call `s`, and finished every call before it".
//!
//! # Two buffers, and when a slot may be written again
//! Call `s` uses buffer `s mod 2` of each slot. A rank writes its buffer for call `s` only once
//! every flag is at `s - 1` or above: every rank has finished call `s - 2`, the last call that
//! read that buffer. So a rank may run one call ahead of the slowest (a root that broadcasts
//! twice in a row does not wait), never two. [`Cursor`] remembers the lowest flag known, so
//! after a call that waited for everybody the check costs nothing.
//!
//! # Reductions
//! A reduction folds in rank order, `x_0 op (x_1 op (... op x_{p-1}))`, on every rank the
//! same way: the result does not depend on who arrived first, and every rank of an allreduce
//! gets the same bits.

/// Bytes of one slot buffer: the largest block a shared-memory algorithm moves.
pub const SLOT_BYTES: usize = 4096;

/// The flags and slot buffers of the ranks of one communicator, seen from one of them.
pub trait Slots {
    /// Ranks sharing the slots.
    fn ranks(&self) -> usize;
    /// This rank's index.
    fn me(&self) -> usize;
    /// The last call number rank `r` published (read with acquire ordering: what `r` wrote
    /// before publishing it is visible).
    fn flag(&self, r: usize) -> u64;
    /// Publish call number `seq` in this rank's flag (release ordering) and wake whoever
    /// sleeps waiting for a flag.
    fn publish(&mut self, seq: u64);
    /// The first byte of rank `r`'s slot buffer for call `seq` (`SLOT_BYTES` bytes).
    fn slot(&self, r: usize, seq: u64) -> *mut u8;
    /// The word beside that buffer where its writer says how many bytes it put there
    /// (written before the flag is published, read after it is seen, like the buffer).
    fn size_word(&self, r: usize, seq: u64) -> *mut u64;
}

/// What a step of an algorithm came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// The call is complete on this rank.
    Done,
    /// Call again once rank `rank`'s flag is at `seq` or above.
    Wait { rank: usize, seq: u64 },
    /// The call is complete on this rank, but rank `rank` put `sent` bytes in its slot, more
    /// than this rank's buffer takes (an erroneous program: the ranks disagree on the counts);
    /// this rank kept what fits.
    Truncated { rank: usize, sent: usize },
}

/// A communicator's count of calls on its slots, kept by each rank between calls.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cursor {
    /// The number of the last call begun.
    last: u64,
    /// Every flag is known to be at this number or above.
    low: u64,
}

impl Cursor {
    /// Begin the next call.
    #[inline]
    pub fn begin(&mut self) -> Run {
        self.last += 1;
        Run { seq: self.last, low: self.low, phase: 0, at: 0 }
    }

    /// A call ended: keep what it learnt of the flags.
    #[inline]
    pub fn end(&mut self, run: &Run) {
        self.low = self.low.max(run.low);
    }

    /// The number of the last call begun.
    pub fn last(&self) -> u64 {
        self.last
    }
}

/// One call in progress on one rank: its number and how far it got.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    pub seq: u64,
    low: u64,
    pub(crate) phase: u8,
    /// The next rank to look at in a wait for all.
    at: usize,
}

impl Run {
    /// `None` once every flag is at `seq` or above, else the first that is not.
    #[inline]
    pub(crate) fn all_at<S: Slots>(&mut self, s: &S, seq: u64) -> Option<Step> {
        if self.low >= seq {
            return None;
        }
        while self.at < s.ranks() {
            if s.flag(self.at) < seq {
                return Some(Step::Wait { rank: self.at, seq });
            }
            self.at += 1;
        }
        self.at = 0;
        self.low = seq;
        None
    }

    /// `None` once this rank may write its slot buffer for this call (see the module doc).
    #[inline]
    pub(crate) fn free<S: Slots>(&mut self, s: &S) -> Option<Step> {
        self.all_at(s, self.seq - 1)
    }

    /// [`offer`](Self::offer) this rank's `len` bytes from `src` (once), then wait until every
    /// rank has published the call: `None` once all have, else what to wait for first.
    ///
    /// # Safety
    /// As [`offer`](Self::offer)'s.
    #[inline]
    pub(crate) unsafe fn exchange<S: Slots>(&mut self, s: &mut S, src: *const u8, len: usize) -> Option<Step> {
        if self.phase == 0 {
            // SAFETY: the caller's contract.
            if let Some(w) = unsafe { self.offer(s, src, len) } {
                return Some(w);
            }
            self.phase = 1;
        }
        self.all_at(s, self.seq)
    }

    /// Put `len` bytes from `src` in this rank's slot buffer for this call once it may, and
    /// publish the call: `None` once done, else what to wait for first.
    ///
    /// # Safety
    /// As [`put`]'s: `src` is valid for `len` bytes and `len <= SLOT_BYTES`.
    #[inline]
    pub(crate) unsafe fn offer<S: Slots>(&mut self, s: &mut S, src: *const u8, len: usize) -> Option<Step> {
        if let Some(w) = self.free(s) {
            return Some(w);
        }
        // SAFETY: the caller's contract; `free` said the buffer is this rank's to write.
        unsafe { put(s, self.seq, src, len) };
        s.publish(self.seq);
        None
    }

}

/// Put `len` bytes from `src` in this rank's slot buffer for call `seq`, and say how many.
///
/// # Safety
/// `src` is valid for `len` bytes, `len <= SLOT_BYTES`, and this rank may write the buffer
/// (see the module doc).
#[inline]
pub(crate) unsafe fn put<S: Slots>(s: &S, seq: u64, src: *const u8, len: usize) {
    let me = s.me();
    // SAFETY: the caller's contract; the word is this rank's own.
    unsafe {
        copy(src, s.slot(me, seq), len);
        *s.size_word(me, seq) = len as u64;
    }
}

/// How rank `r`'s slot for call `seq` compares with a buffer of `len` bytes: `Some` where it
/// holds more (see [`Step::Truncated`]).
///
/// # Safety
/// Rank `r` has published `seq`.
#[inline]
pub(crate) unsafe fn longer<S: Slots>(s: &S, r: usize, seq: u64, len: usize) -> Option<Step> {
    // SAFETY: written before the flag that the caller saw.
    let sent = unsafe { *s.size_word(r, seq) } as usize;
    (sent > len).then_some(Step::Truncated { rank: r, sent })
}

/// `len` bytes from `src` to `dst`.
///
/// # Safety
/// Both ranges are valid for `len` bytes and do not overlap.
#[inline]
pub(crate) unsafe fn copy(src: *const u8, dst: *mut u8, len: usize) {
    if len > 0 {
        // SAFETY: the caller's contract.
        unsafe { std::ptr::copy_nonoverlapping(src, dst, len) };
    }
}

/// `out = x_0 op (x_1 op (... op x_{p-1}))`, where `x(j)` is rank `j`'s operand and
/// `combine(src, dst, len)` is `dst = src op dst`.
///
/// # Safety
/// Every `x(j)` and `out` are valid for `len` bytes; `out` overlaps none of them.
#[inline]
pub(crate) unsafe fn fold(p: usize, x: impl Fn(usize) -> *const u8, out: *mut u8, len: usize, combine: &mut impl FnMut(*const u8, *mut u8, usize)) {
    // SAFETY: the caller's contract.
    unsafe { copy(x(p - 1), out, len) };
    for j in (0..p - 1).rev() {
        combine(x(j), out, len);
    }
}

/// The first of `ranks`' slots for call `seq` that holds more than `len` bytes, as the step
/// that ends the call; else `Step::Done`.
///
/// # Safety
/// Every rank of `ranks` has published `seq`.
#[inline]
pub(crate) unsafe fn outcome<S: Slots>(s: &S, ranks: impl Iterator<Item = usize>, seq: u64, len: usize) -> Step {
    for r in ranks {
        // SAFETY: the caller's contract.
        if let Some(t) = unsafe { longer(s, r, seq, len) } {
            return t;
        }
    }
    Step::Done
}

/// The step functions of the shared-memory algorithms (`<collective>::shm::step`), by
/// collective, for an executor that runs them all.
pub mod steps {
    pub use crate::allgather::shm::step as allgather;
    pub use crate::allreduce::shm::step as allreduce;
    pub use crate::alltoall::shm::step as alltoall;
    pub use crate::barrier::shm::step as barrier;
    pub use crate::bcast::shm::step as bcast;
    pub use crate::gather::shm::step as gather;
    pub use crate::reduce::shm::step as reduce;
    pub use crate::scatter::shm::step as scatter;
}

#[cfg(test)]
pub(crate) mod memory;

#[cfg(test)]
mod tests {
    use super::memory::{Board, Order};
    use crate::allreduce::shm::tests::{expected, skew};

    /// The five algorithms one after another on the same slots, in an order where a rank
    /// that publishes early (a broadcast's root, a reduce's non-roots) runs into the next
    /// call while others still read: every result must still be right.
    #[test]
    fn mixed_calls_share_the_slots_safely() {
        const KINDS: usize = 5;
        let calls = 40;
        let kind = |k: usize| (k * 7 + k / 3) % KINDS;
        let len = |k: usize| [8, 1, 64, 4096][k % 4];
        let x = |k: usize, r: usize, i: usize| (k * 3 + r * 29 + i * 5) as u8;
        for p in 1..=7 {
            let root = |k: usize| (k * 5 + 1) % p;
            for order in Order::ALL {
                let mut ins: Vec<Vec<Vec<u8>>> = (0..calls).map(|k| (0..p).map(|r| (0..len(k)).map(|i| x(k, r, i)).collect()).collect()).collect();
                let mut outs: Vec<Vec<Vec<u8>>> = (0..calls).map(|k| vec![vec![0xee; p * len(k)]; p]).collect();
                Board::new(p, order).play(calls, |r, k, run, s| {
                    let (input, output, n) = (ins[k][r].as_mut_ptr(), outs[k][r].as_mut_ptr(), len(k));
                    // SAFETY: every buffer is this rank's own and long enough for its call.
                    unsafe {
                        match kind(k) {
                            0 => crate::bcast::shm::step(run, s, root(k), input, n),
                            1 => crate::reduce::shm::step(run, s, root(k), input, output, n, &mut skew),
                            2 => crate::allreduce::shm::step(run, s, input, output, n, &mut skew),
                            3 => crate::allgather::shm::step(run, s, input, output, n),
                            _ => crate::barrier::shm::step(run, s),
                        }
                    }
                });
                for k in 0..calls {
                    let n = len(k);
                    let fold = expected(p, n, |j, i| x(k, j, i));
                    let all: Vec<u8> = (0..p * n).map(|i| x(k, i / n, i % n)).collect();
                    for r in 0..p {
                        let ctx = format!("p={p} {order:?} call {k} kind {} rank {r}", kind(k));
                        match kind(k) {
                            0 => assert!(ins[k][r].iter().enumerate().all(|(i, &b)| b == x(k, root(k), i)), "{ctx}"),
                            1 if r == root(k) => assert_eq!(outs[k][r][..n], fold[..], "{ctx}"),
                            2 => assert_eq!(outs[k][r][..n], fold[..], "{ctx}"),
                            3 => assert_eq!(outs[k][r], all, "{ctx}"),
                            _ => {}
                        }
                    }
                }
            }
        }
    }
}

/// The cost of a call through the slots, modelled as messages: one round in which
/// `messages` slots are read, each rank moving `(p - 1) n` bytes; nothing with no bytes or
/// one rank.
pub(crate) fn one_round(q: &crate::Params, messages: usize) -> crate::Cost {
    let (p, n) = (q.size, q.blocks[0]);
    if n == 0 || p == 1 {
        return crate::Cost::ZERO;
    }
    crate::Cost { rounds: 1, messages, bytes: n, rank_bytes: (p - 1) * n }
}
