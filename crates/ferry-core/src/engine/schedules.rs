//! The collective calls in flight, owned by the engine: every pass of the progress loop moves
//! them on, so that the API layer has one wait (for a request id, point-to-point or
//! collective alike) and the asynchronous progress thread drives collectives too.
//!
//! A collective's id is a slab id with the top bit set, in the same space as the requests of
//! the protocol core, so [`Engine::is_done`] answers for both.

use super::collective::{CollError, CollRun};
use super::slab::Slab;
use super::{Engine, ReqId};

/// Marks an id as a collective's.
const COLL_BIT: u64 = 1 << 63;

/// The reduction a collective applies: `dst = src (op) dst` on packed bytes.
pub type Reduce = Box<dyn FnMut(&[u8], &mut [u8]) -> Result<(), String>>;

struct InFlight {
    run: CollRun,
    reduce: Reduce,
    result: Option<Result<(), CollError>>,
}

/// The collectives of one engine.
#[derive(Default)]
pub(super) struct Schedules {
    /// A call is taken out of its slot (`None`) while it runs: it drives this very engine.
    /// Boxed: a run is large, and it moves out and back on every pass.
    calls: Slab<Option<Box<InFlight>>>,
    /// Calls not yet complete, so that a pass with none costs nothing.
    pub(super) running: usize,
}

pub(super) fn is_collective(id: ReqId) -> bool {
    id & COLL_BIT != 0
}

impl Schedules {
    pub(super) fn is_done(&self, id: ReqId) -> bool {
        self.calls.get(id & !COLL_BIT).map_or(true, |c| c.as_ref().is_some_and(|c| c.result.is_some()))
    }
}

impl Engine {
    /// Start a collective call; it moves on inside every progress pass from now on. Wait
    /// for it with [`is_done`](Engine::is_done) and collect it with
    /// [`take_collective`](Engine::take_collective).
    pub fn start_collective(&mut self, run: CollRun, reduce: Reduce) -> ReqId {
        let id = self.schedules.calls.insert(Some(Box::new(InFlight { run, reduce, result: None })));
        self.schedules.running += 1;
        self.advance_one(id);
        id | COLL_BIT
    }

    /// The result of a completed collective, which is then forgotten; `None` while it runs
    /// (or for an unknown id).
    pub fn take_collective(&mut self, id: ReqId) -> Option<Result<(), CollError>> {
        let key = id & !COLL_BIT;
        self.schedules.calls.get(key)?.as_ref()?.result.as_ref()?;
        self.schedules.calls.remove(key).flatten().and_then(|c| c.result)
    }

    /// Move every running collective on as far as it goes now. Returns whether any did.
    pub(super) fn advance_collectives(&mut self) -> bool {
        if self.schedules.running == 0 {
            return false;
        }
        let ids: Vec<ReqId> = self.schedules.calls.iter().filter(|(_, c)| c.as_ref().is_some_and(|c| c.result.is_none())).map(|(id, _)| id).collect();
        let mut any = false;
        for id in ids {
            any |= self.advance_one(id);
        }
        any
    }

    /// Returns whether the call moved.
    fn advance_one(&mut self, key: u64) -> bool {
        let Some(mut c) = self.schedules.calls.get_mut(key).and_then(Option::take) else { return false };
        let before = c.run.progress_mark();
        let reduce = &mut c.reduce;
        match c.run.advance(self, &mut |s: &[u8], d: &mut [u8]| reduce(s, d)) {
            Ok(true) => c.result = Some(Ok(())),
            Ok(false) => {}
            Err(e) => {
                c.run.cancel(self);
                c.result = Some(Err(e));
            }
        }
        if c.result.is_some() {
            self.schedules.running -= 1;
        }
        let moved = c.result.is_some() || c.run.progress_mark() != before;
        if let Some(slot) = self.schedules.calls.get_mut(key) {
            *slot = Some(c);
        }
        moved
    }
}
