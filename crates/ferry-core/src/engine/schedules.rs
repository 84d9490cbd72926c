//! The collective calls in flight, owned by the engine: every pass of the progress loop moves
//! them on, so that the API layer has one wait (for a request id, point-to-point or
//! collective alike) and the asynchronous progress thread drives collectives too.
//!
//! A collective's id is a slab id with the top bit set, in the same space as the requests of
//! the protocol core, so [`Engine::is_done`] answers for both. A finished call that its
//! caller wants to run again ([`CollJob::home`]) waits, parked, until the caller takes it back
//! ([`Engine::unpark_collective`]): the caller keeps such calls by shape, so that a call seen
//! before builds nothing.

use super::collective::{CollError, CollRun};
use super::slab::Slab;
use super::{Engine, ReqId};

/// Marks an id as a collective's.
const COLL_BIT: u64 = 1 << 63;

/// The reduction a collective applies: `dst = src (op) dst` on packed bytes.
pub type Reduce = Box<dyn FnMut(&[u8], &mut [u8]) -> Result<(), String>>;

/// One collective call: its run, its reduction and where it goes once taken.
pub struct CollJob {
    pub run: CollRun,
    pub reduce: Reduce,
    /// Whom the finished call goes back to, and under which shape: an owner's id and a
    /// shape the engine does not read (the MPI face's communicator handle and the call's
    /// key). `None`: the call is dropped when taken.
    pub home: Option<(u64, CollShape)>,
}

/// What makes two collective calls of one communicator the same call, as the caller sees
/// it; opaque to the engine. Every call of one shape runs the same schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CollShape {
    /// The algorithm's id (`allreduce.recursive_doubling`), which names the collective.
    pub algorithm: &'static str,
    /// The per-rank block in bytes (every rank's the same).
    pub block: usize,
    pub root: usize,
    pub in_place: bool,
    /// Reductions: the bytes of one element, and the reduction's own code.
    pub elem_size: usize,
    pub reduction: u64,
    /// The radix of k-ary algorithms when the call was made.
    pub radix: usize,
}

struct Slot {
    /// Taken out (`None`) while it runs: it drives this very engine.
    job: Option<Box<CollJob>>,
    result: Option<Result<(), CollError>>,
}

/// The collectives of one engine.
#[derive(Default)]
pub(super) struct Schedules {
    calls: Slab<Slot>,
    /// Calls not yet complete, so that a pass with none costs nothing.
    pub(super) running: usize,
    /// The ids of one pass, kept to be reused.
    ids: Vec<u64>,
    /// Finished calls that go back to their owners.
    parked: Vec<Box<CollJob>>,
}

pub(super) fn is_collective(id: ReqId) -> bool {
    id & COLL_BIT != 0
}

impl Schedules {
    pub(super) fn is_done(&self, id: ReqId) -> bool {
        self.calls.get(id & !COLL_BIT).map_or(true, |c| c.result.is_some())
    }
}

impl Engine {
    /// Start a collective call; it moves on inside every progress pass from now on. Wait
    /// for it with [`is_done`](Engine::is_done) and collect it with
    /// [`take_collective`](Engine::take_collective).
    pub fn start_collective(&mut self, run: CollRun, reduce: Reduce) -> ReqId {
        self.start_job(Box::new(CollJob { run, reduce, home: None }))
    }

    /// [`start_collective`](Engine::start_collective) for a call made (or made again) by
    /// the caller.
    pub fn start_job(&mut self, job: Box<CollJob>) -> ReqId {
        let id = self.schedules.calls.insert(Slot { job: Some(job), result: None });
        self.schedules.running += 1;
        self.advance_one(id);
        id | COLL_BIT
    }

    /// The result of a completed collective, which is then forgotten (or parked, if it has
    /// a home and may run again); `None` while it runs (or for an unknown id).
    pub fn take_collective(&mut self, id: ReqId) -> Option<Result<(), CollError>> {
        let key = id & !COLL_BIT;
        self.schedules.calls.get(key)?.result.as_ref()?;
        let slot = self.schedules.calls.remove(key)?;
        if let Some(job) = slot.job {
            if job.home.is_some() && job.run.reusable() && matches!(slot.result, Some(Ok(()))) {
                self.schedules.parked.push(job);
            }
        }
        slot.result
    }

    /// A finished call that goes back to its owner ([`CollJob::home`]), one at a time.
    pub fn unpark_collective(&mut self) -> Option<Box<CollJob>> {
        self.schedules.parked.pop()
    }

    /// Move every running collective on as far as it goes now. Returns whether any did.
    pub(super) fn advance_collectives(&mut self) -> bool {
        if self.schedules.running == 0 {
            return false;
        }
        let mut ids = std::mem::take(&mut self.schedules.ids);
        ids.clear();
        ids.extend(self.schedules.calls.iter().filter(|(_, c)| c.result.is_none()).map(|(id, _)| id));
        let mut any = false;
        for &id in &ids {
            any |= self.advance_one(id);
        }
        self.schedules.ids = ids;
        any
    }

    /// Returns whether the call moved.
    fn advance_one(&mut self, key: u64) -> bool {
        let Some(mut c) = self.schedules.calls.get_mut(key).and_then(|s| s.job.take()) else { return false };
        let before = c.run.progress_mark();
        let CollJob { run, reduce, .. } = &mut *c;
        let mut result = None;
        match run.advance(self, &mut |s: &[u8], d: &mut [u8]| reduce(s, d)) {
            Ok(true) => result = Some(Ok(())),
            Ok(false) => {}
            Err(e) => {
                run.cancel(self);
                result = Some(Err(e));
            }
        }
        let finished = result.is_some();
        if finished {
            self.schedules.running -= 1;
        }
        let moved = finished || c.run.progress_mark() != before;
        if let Some(slot) = self.schedules.calls.get_mut(key) {
            slot.job = Some(c);
            if finished {
                slot.result = result;
            }
        }
        moved
    }
}
