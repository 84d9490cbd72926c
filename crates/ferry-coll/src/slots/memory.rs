//! Slots in ordinary memory for the tests: every rank of a communicator in one process, run
//! one step at a time in an order the test chooses (lowest rank first, highest first, or
//! seeded pseudo-random), each rank going on to its next call as soon as it finished one, so
//! that fast ranks run ahead of slow ones as far as the protocol lets them. A rank that must
//! wait is not stepped again until the flag it waits for is there; if every rank waits, the
//! test fails (a deadlock).

use super::{Cursor, Run, Slots, Step, SLOT_BYTES};

/// Which waiting rank steps next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Order {
    LowestFirst,
    HighestFirst,
    Random(u64),
}

impl Order {
    pub(crate) const ALL: [Order; 5] = [Order::LowestFirst, Order::HighestFirst, Order::Random(1), Order::Random(7), Order::Random(12345)];
}

/// The slots of `p` ranks.
pub(crate) struct Board {
    flags: Vec<u64>,
    /// Two buffers per rank, back to back, and their size words.
    slots: Vec<u8>,
    sizes: Vec<u64>,
    order: Order,
    rng: u64,
    /// The test makes the ranks disagree on sizes: a call may end truncated.
    pub(crate) mismatched: bool,
}

/// One rank's view of the board.
pub(crate) struct View<'a> {
    board: &'a mut Board,
    me: usize,
}

impl Slots for View<'_> {
    fn ranks(&self) -> usize {
        self.board.flags.len()
    }
    fn me(&self) -> usize {
        self.me
    }
    fn flag(&self, r: usize) -> u64 {
        self.board.flags[r]
    }
    fn publish(&mut self, seq: u64) {
        assert_eq!(self.board.flags[self.me], seq - 1, "rank {} publishes {seq} out of turn", self.me);
        self.board.flags[self.me] = seq;
    }
    fn slot(&self, r: usize, seq: u64) -> *mut u8 {
        let at = (2 * r + (seq & 1) as usize) * SLOT_BYTES;
        self.board.slots[at..].as_ptr() as *mut u8
    }
    fn size_word(&self, r: usize, seq: u64) -> *mut u64 {
        self.board.sizes[2 * r + (seq & 1) as usize..].as_ptr() as *mut u64
    }
}

impl Board {
    pub(crate) fn new(p: usize, order: Order) -> Board {
        let rng = match order {
            Order::Random(seed) => seed.max(1),
            _ => 1,
        };
        Board { flags: vec![0; p], slots: vec![0xa5; 2 * p * SLOT_BYTES], sizes: vec![u64::MAX; 2 * p], order, rng, mismatched: false }
    }

    fn pick(&mut self, ready: &[usize]) -> usize {
        match self.order {
            Order::LowestFirst => ready[0],
            Order::HighestFirst => ready[ready.len() - 1],
            Order::Random(_) => {
                self.rng ^= self.rng << 13;
                self.rng ^= self.rng >> 7;
                self.rng ^= self.rng << 17;
                ready[(self.rng % ready.len() as u64) as usize]
            }
        }
    }

    /// Make `calls` calls on every rank: `step(rank, call, run, slots)` advances call `call`
    /// of rank `rank`. Returns the number of waits.
    pub(crate) fn play(&mut self, calls: usize, mut step: impl FnMut(usize, usize, &mut Run, &mut View<'_>) -> Step) -> usize {
        let p = self.flags.len();
        let mut cursors = vec![Cursor::default(); p];
        // Per rank: the call it is in, its run, and the flag it waits for.
        let mut at = vec![0usize; p];
        let mut runs: Vec<Option<Run>> = vec![None; p];
        let mut waits: Vec<Option<(usize, u64)>> = vec![None; p];
        let mut waited = 0;
        loop {
            let ready: Vec<usize> = (0..p).filter(|&r| at[r] < calls && waits[r].is_none_or(|(w, s)| self.flags[w] >= s)).collect();
            if ready.is_empty() {
                assert!(at.iter().all(|&k| k == calls), "deadlock: calls {at:?}, waits {waits:?}, flags {:?}", self.flags);
                return waited;
            }
            let r = self.pick(&ready);
            waits[r] = None;
            let mut run = runs[r].take().unwrap_or_else(|| cursors[r].begin());
            let k = at[r];
            let step_done = step(r, k, &mut run, &mut View { board: self, me: r });
            match step_done {
                Step::Done | Step::Truncated { .. } => {
                    assert!(self.mismatched || matches!(step_done, Step::Done), "rank {r} call {k}: {step_done:?} with sizes that agree");
                    assert_eq!(self.flags[r], run.seq, "rank {r} ended call {k} without publishing it");
                    cursors[r].end(&run);
                    at[r] += 1;
                }
                Step::Wait { rank, seq } => {
                    assert!(self.flags[rank] < seq, "rank {r} waits for a flag that is there");
                    waits[r] = Some((rank, seq));
                    runs[r] = Some(run);
                    waited += 1;
                }
            }
            let slowest = self.flags.iter().min().copied().unwrap_or(0);
            assert!(self.flags.iter().all(|&f| f <= slowest + 2), "flags {:?} spread over more than two calls", self.flags);
        }
    }
}
