//! A communicator's collective calls kept to run again: a call whose shape (algorithm, block,
//! root, in place, reduction) was seen before takes the finished call of that shape, with its
//! schedule, its checks and its buffers, instead of building them. Small and bounded; it
//! goes with its communicator. Calls come back here from the engine, where a finished call
//! with a home waits (`Engine::unpark_collective`), at the start of the next collective.

use ferry_core::engine::{CollJob, CollShape};

/// Calls kept per communicator, at most: a loop of collectives uses a few shapes.
pub const KEEP: usize = 8;

/// The calls one communicator keeps, the one used last at the end.
#[derive(Default)]
pub struct CollCache {
    jobs: Vec<Box<CollJob>>,
}

impl CollCache {
    /// The kept call of this shape, taken out (it runs; it comes back when taken from the
    /// engine).
    #[inline]
    pub fn take(&mut self, shape: &CollShape) -> Option<Box<CollJob>> {
        let at = self.jobs.iter().rposition(|j| j.home.as_ref().is_some_and(|(_, s)| s == shape))?;
        Some(self.jobs.remove(at))
    }

    /// Keep a finished call; the one used longest ago goes when there are too many.
    pub fn put(&mut self, job: Box<CollJob>) {
        if self.jobs.len() == KEEP {
            self.jobs.remove(0);
        }
        if self.jobs.capacity() == 0 {
            self.jobs.reserve_exact(KEEP);
        }
        self.jobs.push(job);
    }

    /// Calls kept now.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.jobs.len()
    }

    #[cfg(test)]
    fn is_empty(&self) -> bool {
        self.jobs.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferry_core::engine::collective::CollRun;

    fn shape(block: usize) -> CollShape {
        CollShape { algorithm: "allreduce.recursive_doubling", block, root: 0, in_place: false, elem_size: 8, reduction: 3, radix: 4 }
    }

    fn job(s: CollShape) -> Box<CollJob> {
        // SAFETY: the run never runs: its empty schedule touches no buffer.
        let run = unsafe { CollRun::new(ferry_coll::Schedule::new(0, 1, 0, 0), vec![0], 1, 0, std::ptr::null(), std::ptr::null_mut()) };
        Box::new(CollJob { run, reduce: Box::new(|_, _| Ok(())), home: Some((0x4400_0000, s)) })
    }

    #[test]
    fn a_call_is_found_by_its_whole_shape_only() {
        let mut c = CollCache::default();
        c.put(job(shape(8)));
        for other in [
            shape(16),
            CollShape { root: 1, ..shape(8) },
            CollShape { in_place: true, ..shape(8) },
            CollShape { reduction: 4, ..shape(8) },
            CollShape { elem_size: 4, ..shape(8) },
            CollShape { algorithm: "allreduce.ring", ..shape(8) },
            CollShape { radix: 2, ..shape(8) },
        ] {
            assert!(c.take(&other).is_none(), "{other:?} is another shape");
        }
        let j = c.take(&shape(8)).expect("the same shape");
        assert!(c.is_empty(), "a call taken is out while it runs");
        c.put(j);
        assert_eq!(c.len(), 1);
    }

    #[test]
    fn the_call_used_longest_ago_goes_first() {
        let mut c = CollCache::default();
        for b in 0..KEEP {
            c.put(job(shape(b)));
        }
        // Use the first one again: it is now the one used last.
        let first = c.take(&shape(0)).unwrap();
        c.put(first);
        c.put(job(shape(100)));
        assert_eq!(c.len(), KEEP, "bounded");
        assert!(c.take(&shape(1)).is_none(), "the one used longest ago went");
        for b in [0, 2, KEEP - 1, 100] {
            assert!(c.take(&shape(b)).is_some(), "shape {b} kept");
        }
    }
}
