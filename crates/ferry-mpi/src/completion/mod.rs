//! Requests as the API sees them, and the Wait/Test families that complete them.

use ferry_core::engine::Status;

use crate::objects::comm::{Ranks, SourceRanks};
use crate::consts::*;
use crate::error::{err, MpiError, MpiResult};
pub use crate::objects::request::*;
use crate::objects::threads::Locked;
use crate::objects::Runtime;

fn bad_request(h: i32) -> MpiError {
    MpiError::new(MPI_ERR_REQUEST, format!("invalid request handle {h:#x}"))
}

impl Runtime {
    /// Check that `h` names a request this process holds (of either table).
    pub(crate) fn check_req(&self, h: i32) -> MpiResult<()> {
        let known = if is_done_recv(h) { self.done_recvs.contains_key(&h) } else { self.reqs.contains_key(&h) };
        if known { Ok(()) } else { Err(bad_request(h)) }
    }

    /// The communicator of request `h`, whose error handler reports its errors.
    pub(crate) fn req_comm(&self, h: i32) -> MpiResult<i32> {
        if is_done_recv(h) {
            return self.done_recvs.get(&h).map(|d| d.comm).ok_or_else(|| bad_request(h));
        }
        self.reqs.get(&h).map(|r| r.comm).ok_or_else(|| bad_request(h))
    }

    /// Register a receive complete from the start under a handle of its own class.
    #[inline]
    pub fn add_done_recv(&mut self, outcome: Outcome, comm: i32) -> i32 {
        self.done_recvs.add(DoneRecv { outcome, comm })
    }

    pub fn req_done(&self, h: i32) -> bool {
        self.reqs.get(&h).is_none_or(|r| r.is_done(&self.engine))
    }

    /// Whether the Wait/Test family has anything to complete for `h`: neither a null handle
    /// nor an inactive persistent request.
    pub fn live(&self, h: i32) -> bool {
        h != MPI_REQUEST_NULL && self.reqs.get(&h).is_none_or(|r| !r.inactive())
    }

    /// Finish a completed request: unpack, translate the source, forget the handle (a
    /// persistent request stays, inactive; a generalized one asks the program's callbacks).
    pub fn finish_req(&mut self, h: i32) -> Outcome {
        if is_shared_done(h) {
            return shared_outcome(h);
        }
        if is_done_recv(h) {
            return self.done_recvs.remove_made(h).map_or_else(Outcome::empty, |d| d.outcome);
        }
        match self.reqs.get_mut(&h).map(|r| &mut r.body) {
            None => Outcome::empty(),
            Some(Body::Persistent(p)) => match p.active.take() {
                Some(a) => self.finish_api_req(*a),
                None => Outcome::empty(),
            },
            Some(Body::Generalized(_)) => (self.hooks.finish_generalized)(self, h),
            Some(Body::Partitioned(_)) => (self.hooks.finish_partitioned)(self, h),
            Some(_) => {
                let r = self.reqs.remove(&h).expect("looked up above");
                self.finish_api_req(r)
            }
        }
    }

    /// Finish the completed request `*h` and reset the handle, unless it is persistent.
    pub fn complete_handle(&mut self, h: &mut MPI_Request) -> Outcome {
        let o = self.finish_req(*h);
        if is_shared_done(*h) || !self.reqs.contains_key(h) {
            *h = MPI_REQUEST_NULL;
        }
        o
    }

    /// MPI_Request_get_status: whether `h` is complete, and its outcome, leaving it in place.
    pub fn peek_req(&mut self, h: i32) -> MpiResult<Option<Outcome>> {
        if !self.live(h) {
            return Ok(Some(Outcome::empty()));
        }
        self.check_req(h)?;
        if is_shared_done(h) {
            return Ok(Some(self.finish_req(h)));
        }
        if is_done_recv(h) {
            // Complete, and stays so until the Wait/Test family takes it.
            return Ok(self.done_recvs.get(&h).map(|d| d.outcome));
        }
        self.progress_once()?;
        if !self.req_done(h) {
            return Ok(None);
        }
        if matches!(self.reqs[&h].body, Body::Generalized(_)) {
            return Ok(Some((self.hooks.query_generalized)(self, h)));
        }
        // Collect the outcome now (the engine hands it out once) and keep it for the Wait.
        let r = self.reqs.get_mut(&h).expect("checked above").operation_mut();
        let comm = r.comm;
        let taken = std::mem::replace(r, ApiReq { body: Body::Finished(Outcome::empty()), comm, group: Ranks::None, unpack: None, keep: None });
        let o = self.finish_api_req(taken);
        self.reqs.get_mut(&h).expect("checked above").operation_mut().body = Body::Finished(o);
        Ok(Some(o))
    }

    pub(crate) fn finish_api_req(&mut self, mut r: ApiReq) -> Outcome {
        match r.body {
            Body::Done { source, tag } => Outcome { source, tag, ..Outcome::empty() },
            Body::Finished(o) => o,
            Body::Persistent(mut p) => p.active.take().map_or_else(Outcome::empty, |a| self.finish_api_req(*a)),
            Body::Generalized(_) => Outcome::empty(),
            Body::Partitioned(mut p) => p.take_in_flight().map_or_else(Outcome::empty, |a| self.finish_api_req(*a)),
            Body::Multi(parts, report) => {
                let all: Vec<Outcome> = parts.into_iter().map(|p| self.finish_api_req(p)).collect();
                let o = all[report];
                match all.iter().find(|x| x.error != MPI_SUCCESS) {
                    Some(bad) if o.error == MPI_SUCCESS => Outcome { error: bad.error, lost: bad.lost, ..o },
                    _ => o,
                }
            }
            Body::Coll(call) => match call.complete(&mut self.engine) {
                Ok(()) => Outcome::empty(),
                Err(e) => {
                    // The class reaches the program through its error handler (which may
                    // return it: nothing else is written then); the detail, at debug level.
                    ferry_core::debug!("mpi", "{e}");
                    Outcome { error: e.class, ..Outcome::empty() }
                }
            },
            Body::Engine(id) => {
                let group = std::mem::replace(&mut r.group, Ranks::None);
                engine_outcome(&mut self.engine, id, r.unpack.take(), group.view())
            }
        }
    }

    pub fn progress_once(&mut self) -> MpiResult<()> {
        self.engine.progress(Some(std::time::Duration::ZERO))?;
        self.reap_orphans();
        Ok(())
    }

    /// Finish freed requests that have completed: unpack what they received, forget them.
    pub fn reap_orphans(&mut self) {
        let engine = &mut self.engine;
        self.orphans.retain_mut(|(id, r)| {
            if !engine.is_done(*id) {
                return true;
            }
            if let (Some(Ok(st)), Some(u)) = (engine.take(*id), r.unpack.take()) {
                // SAFETY: as in `finish_req`: the user's receive buffer outlives the request.
                unsafe { u.dt.unpack(&u.tmp[..st.bytes.min(u.tmp.len())], u.base, u.count) };
            }
            false
        });
    }
}

impl Locked {
    /// Generalized requests among `hs` that only the program can complete: unless another
    /// thread may call MPI_Grequest_complete while this call waits (MPI_THREAD_MULTIPLE),
    /// waiting for them would never end.
    fn stuck_generalized(&self, hs: &[MPI_Request]) -> usize {
        hs.iter().filter(|h| matches!(self.reqs.get(h).map(|r| &r.body), Some(Body::Generalized(g)) if !g.complete)).count()
    }

    /// Partitioned sends among `hs` with partitions not marked ready: for the same reason,
    /// only the program's MPI_Pready calls would complete them.
    fn stuck_partitioned(&self, hs: &[MPI_Request]) -> usize {
        hs.iter().filter(|h| matches!(self.reqs.get(h).map(|r| &r.body), Some(Body::Partitioned(p)) if p.awaits_ready())).count()
    }

    /// Block until all (`all`) or at least one of the non-null requests `hs` is complete.
    /// Collectives in flight move on inside the engine meanwhile.
    pub fn block_until(&mut self, hs: &[MPI_Request], all: bool) -> MpiResult<()> {
        let live = hs.iter().filter(|&&h| self.live(h)).count();
        let stuck = self.stuck_generalized(hs);
        let unready = self.stuck_partitioned(hs);
        let multi = hs.iter().any(|h| matches!(self.reqs.get(h).map(|r| &r.body), Some(Body::Multi(..))));
        if (stuck > 0 || unready > 0 || multi) && self.others_may_call() {
            // Another thread's MPI_Grequest_complete or MPI_Pready may end the wait, or the
            // requests wait for several engine requests each: look at the whole runtime after
            // every call. Handles are looked up afresh each time.
            let done = |rt: &mut Runtime| {
                let mut states = hs.iter().filter(|&&h| rt.live(h)).map(|&h| rt.req_done(h));
                if all { states.all(|d| d) } else { states.any(|d| d) }
            };
            return Ok(self.wait_for(done)?);
        }
        if stuck > 0 && (all || stuck == live) {
            return err(MPI_ERR_REQUEST, "waiting for a generalized request that is not complete: only MPI_Grequest_complete completes it, and no other thread may call MPI meanwhile");
        }
        if unready > 0 && (all || unready + stuck == live) {
            return err(MPI_ERR_REQUEST, "waiting for a partitioned send whose partitions are not all marked ready: only MPI_Pready and its kin complete it, and no other thread may call MPI meanwhile");
        }
        if multi {
            return self.block_on_parts(hs, all);
        }
        // One request (MPI_Wait): no list to build.
        if let [h] = hs {
            if let Some(id) = self.reqs.get(h).and_then(ApiReq::engine_id) {
                return Ok(self.wait_until(|e| e.is_done(id))?);
            }
            return Ok(());
        }
        let ids: Vec<u64> = hs.iter().filter(|&&h| self.live(h)).filter_map(|h| self.reqs.get(h)).filter_map(ApiReq::engine_id).collect();
        if live == 0 || (!all && ids.len() + stuck + unready < live) {
            // Nothing to wait for, or one of them is complete from the start.
            return Ok(());
        }
        // A cursor over the set: what completed stays completed, so each pass looks only from
        // the first request not yet seen done (a window of n requests costs n lookups in all,
        // not n per pass).
        if all {
            let mut seen = 0;
            self.wait_until(|e| {
                while seen < ids.len() && e.is_done(ids[seen]) {
                    seen += 1;
                }
                seen == ids.len()
            })?;
        } else {
            self.wait_until(|e| ids.iter().any(|id| e.is_done(*id)))?;
        }
        Ok(())
    }

    /// [`block_until`](Self::block_until) when some of `hs` wait for several engine requests
    /// (only without MPI_THREAD_MULTIPLE: the lock stays held).
    fn block_on_parts(&mut self, hs: &[MPI_Request], all: bool) -> MpiResult<()> {
        let rt: &mut Runtime = self;
        let reqs = &rt.reqs;
        let live = |h: &&MPI_Request| **h != MPI_REQUEST_NULL && reqs.get(h).is_none_or(|r| !r.inactive());
        let done = |e: &ferry_core::engine::Engine, h: &MPI_Request| reqs.get(h).is_none_or(|r| r.is_done(e));
        Ok(rt.engine.wait_until(|e| if all { hs.iter().filter(live).all(|h| done(e, h)) } else { hs.iter().filter(live).any(|h| done(e, h)) })?)
    }

    /// Wait for a request of a blocking call, which never needs a handle, and finish it.
    /// The same as registering it and waiting for the handle, without the table.
    pub fn wait_unregistered(&mut self, r: ApiReq) -> MpiResult<Outcome> {
        if let Some(id) = r.engine_id() {
            let comm = r.comm;
            self.wait_until(|e| e.is_done(id)).map_err(|e| MpiError::from(e).on_comm(comm))?;
            self.reap_orphans();
        }
        Ok(self.finish_api_req(r))
    }

    /// Wait for one request and return its outcome, which may carry an error class
    /// (truncation); `Err` only when the engine itself failed.
    pub fn wait_raw(&mut self, h: i32) -> MpiResult<(Outcome, i32)> {
        let comm = self.req_comm(h)?;
        self.block_until(&[h], true).map_err(|e| e.on_comm(comm))?;
        self.reap_orphans();
        Ok((self.finish_req(h), comm))
    }

    /// Wait for one request; its error (truncation, lost peer) is reported on its communicator.
    pub fn wait_req(&mut self, h: i32) -> MpiResult<Outcome> {
        let (o, comm) = self.wait_raw(h)?;
        check(o, comm)
    }

}

/// Take a completed engine request: unpack what it received, and say how it ended.
/// `group`: the world ranks of a receive's communicator (`None` for a send).
pub fn engine_outcome(engine: &mut ferry_core::engine::Engine, id: u64, unpack: Option<Box<Unpack>>, group: SourceRanks<'_>) -> Outcome {
    match engine.take(id) {
            Some(Ok(st)) => {
                if let Some(u) = unpack {
                    // SAFETY: `base` is the user's receive buffer, valid for `count`
                    // elements of `dt` (MPI's contract for the receive).
                    unsafe { u.dt.unpack(&u.tmp[..st.bytes.min(u.tmp.len())], u.base, u.count) };
                }
                outcome_of(group, &st)
            }
            Some(Err(e)) => {
                let lost = match e {
                    ferry_core::engine::EngineError::PeerLost(r) => Some(r),
                    _ => None,
                };
                ferry_core::debug!("mpi", "request failed: {e}");
                let error = if crate::objects::fault::recovery() { MpiError::from(e).class } else { MPI_ERR_OTHER };
                Outcome { error, lost, ..Outcome::empty() }
            }
            None => Outcome::empty(),
        }
}

/// [`outcome_of`] for a receive from communicator rank `rank`, which the message came from.
#[inline]
pub(crate) fn outcome_of_rank(rank: i32, st: &Status) -> Outcome {
    if st.cancelled {
        return Outcome { source: rank, tag: MPI_ANY_TAG, bytes: 0, cancelled: true, error: MPI_SUCCESS, lost: None };
    }
    Outcome { source: rank, tag: st.tag, bytes: st.bytes, cancelled: false, error: if st.truncated { MPI_ERR_TRUNCATE } else { MPI_SUCCESS }, lost: None }
}

#[inline]
pub(crate) fn outcome_of(group: SourceRanks<'_>, st: &Status) -> Outcome {
    let rank = group.of(st.source);
    let source = rank.unwrap_or(MPI_ANY_SOURCE);
    if st.cancelled {
        return Outcome { source, tag: MPI_ANY_TAG, bytes: 0, cancelled: true, error: MPI_SUCCESS, lost: None };
    }
    let (source, tag) = if rank.is_some() { (source, st.tag) } else { (MPI_ANY_SOURCE, MPI_ANY_TAG) };
    Outcome { source, tag, bytes: st.bytes, cancelled: false, error: if st.truncated { MPI_ERR_TRUNCATE } else { MPI_SUCCESS }, lost: None }
}

pub fn check(o: Outcome, comm: i32) -> MpiResult<Outcome> {
    match o.error {
        MPI_SUCCESS => Ok(o),
        MPI_ERR_TRUNCATE => Err(MpiError::new(MPI_ERR_TRUNCATE, format!("message of more than {} bytes truncated to the receive buffer", o.bytes)).on_comm(comm)),
        class => match o.lost {
            Some(r) => Err(MpiError::from(ferry_core::engine::EngineError::PeerLost(r)).on_comm(comm)),
            None => Err(MpiError::new(class, "communication failed").on_comm(comm)),
        },
    }
}

mod family;
pub(crate) use family::*;
