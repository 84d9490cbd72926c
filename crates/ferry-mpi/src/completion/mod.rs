//! Requests as the API sees them, and the Wait/Test families that complete them.

use std::sync::Arc;

use ferry_core::engine::Status;
use ferry_data::datatype::Datatype;

use crate::consts::*;
use crate::error::{err, MpiError, MpiResult};
use crate::runtime::Runtime;
use crate::threads::Locked;

/// Where a non-contiguous receive is unpacked once its bytes have arrived.
pub struct Unpack {
    pub tmp: Vec<u8>,
    pub dt: Datatype,
    pub base: *mut u8,
    pub count: usize,
}

pub enum Body {
    /// An engine request.
    Engine(u64),
    /// Complete from the start (MPI_PROC_NULL, buffered sends): the status to report.
    Done { source: i32, tag: i32 },
    /// A non-blocking collective, run by the engine.
    Coll(Box<crate::coll::CollCall>),
    /// Complete, its outcome already collected (MPI_Request_get_status looked at it).
    Finished(Outcome),
    /// A persistent request (MPI_Send_init, ...): inactive, or started and in flight.
    Persistent(Box<crate::persistent::Persistent>),
    /// A generalized request (MPI_Grequest_start), completed by the program.
    Generalized(Box<crate::generalized::Grequest>),
    /// Operations that complete as one (MPI_Isendrecv): complete when every part is; it
    /// reports the outcome of `parts[report]`, or else the first error of another part.
    Multi(Vec<ApiReq>, usize),
    /// A partitioned send or receive (MPI_Psend_init, MPI_Precv_init).
    Partitioned(Box<crate::partitioned::Partitioned>),
}

/// The handle every send complete from the start shares (its status is MPI's empty one), and
/// the one every operation with `MPI_PROC_NULL` shares (its status names `MPI_PROC_NULL`):
/// such a request costs no table slot, and completing it costs a compare.
pub const DONE_SEND: MPI_Request = 0x6c00_0001;
pub const DONE_PROC_NULL: MPI_Request = 0x6c00_0002;

/// Whether `h` is one of the shared handles of requests complete from the start.
#[inline]
pub fn is_shared_done(h: MPI_Request) -> bool {
    h == DONE_SEND || h == DONE_PROC_NULL
}

/// The outcome of a shared complete request.
#[inline]
pub fn shared_outcome(h: MPI_Request) -> Outcome {
    match h {
        DONE_PROC_NULL => Outcome { source: MPI_PROC_NULL, ..Outcome::empty() },
        _ => Outcome::empty(),
    }
}

/// The runtime's request table, with the two shared complete requests in their slots.
pub fn request_table() -> crate::objects::Table<ApiReq> {
    let mut t = crate::objects::table(crate::objects::kinds::REQUEST);
    t.insert(DONE_SEND, ApiReq::done(MPI_COMM_WORLD, MPI_ANY_SOURCE));
    t.insert(DONE_PROC_NULL, ApiReq::done(MPI_COMM_WORLD, MPI_PROC_NULL));
    t
}

impl ApiReq {
    /// The shared handle of this request when it is complete from the start and holds
    /// nothing of its own.
    pub fn shared_handle(&self) -> Option<MPI_Request> {
        match self.body {
            Body::Done { source: MPI_ANY_SOURCE, tag: MPI_ANY_TAG } if self.keep.is_none() && self.unpack.is_none() => Some(DONE_SEND),
            Body::Done { source: MPI_PROC_NULL, tag: MPI_ANY_TAG } if self.keep.is_none() && self.unpack.is_none() => Some(DONE_PROC_NULL),
            _ => None,
        }
    }

    /// A request complete from the start, whose status names `source` (`MPI_ANY_SOURCE` for
    /// a send, `MPI_PROC_NULL` for an operation with the null process).
    pub fn done(comm: i32, source: i32) -> ApiReq {
        ApiReq { body: Body::Done { source, tag: MPI_ANY_TAG }, comm, group: None, unpack: None, keep: None }
    }

    /// The engine's id of what this request waits for; `None` when complete from the start.
    pub fn engine_id(&self) -> Option<u64> {
        match &self.body {
            Body::Engine(id) => Some(*id),
            Body::Coll(c) => Some(c.id),
            Body::Persistent(p) => p.active.as_ref().and_then(|a| a.engine_id()),
            Body::Partitioned(p) => p.in_flight().and_then(|a| a.engine_id()),
            Body::Done { .. } | Body::Finished(_) | Body::Generalized(_) | Body::Multi(..) => None,
        }
    }

    pub fn is_done(&self, engine: &ferry_core::engine::Engine) -> bool {
        match &self.body {
            Body::Generalized(g) => g.complete,
            Body::Persistent(p) => p.active.as_ref().is_none_or(|a| a.is_done(engine)),
            Body::Partitioned(p) => p.is_done(engine),
            Body::Multi(parts, _) => parts.iter().all(|p| p.is_done(engine)),
            _ => self.engine_id().is_none_or(|id| engine.is_done(id)),
        }
    }

    /// A persistent request not started: the Wait/Test family treats it as a null handle.
    pub fn inactive(&self) -> bool {
        match &self.body {
            Body::Persistent(p) => p.active.is_none(),
            Body::Partitioned(p) => p.is_inactive(),
            _ => false,
        }
    }

    /// The request whose operation is in flight: a started persistent request's current one.
    pub fn operation_mut(&mut self) -> &mut ApiReq {
        let inner = match &self.body {
            Body::Persistent(p) => p.active.is_some(),
            Body::Partitioned(p) => p.in_flight().is_some(),
            _ => false,
        };
        if !inner {
            return self;
        }
        match &mut self.body {
            Body::Persistent(p) => p.active.as_mut().expect("checked above"),
            Body::Partitioned(p) => p.in_flight_mut().expect("checked above"),
            _ => unreachable!("checked above"),
        }
    }
}

pub struct ApiReq {
    pub body: Body,
    pub comm: i32,
    /// World ranks of the communicator, to report the source as a communicator rank.
    pub group: Option<Arc<Vec<u32>>>,
    pub unpack: Option<Box<Unpack>>,
    /// Packed send data the engine reads from until completion.
    pub keep: Option<Vec<u8>>,
}

/// The outcome of one completed request, ready to write into an `MPI_Status`.
#[derive(Clone, Copy)]
pub struct Outcome {
    pub source: i32,
    pub tag: i32,
    pub bytes: usize,
    pub cancelled: bool,
    pub error: i32,
    /// The world rank whose loss failed this request, when that is the error.
    pub lost: Option<u32>,
}

impl Outcome {
    /// The status of a completed send or of a null request (MPI's "empty" status).
    pub fn empty() -> Outcome {
        Outcome { source: MPI_ANY_SOURCE, tag: MPI_ANY_TAG, bytes: 0, cancelled: false, error: MPI_SUCCESS, lost: None }
    }
}

pub fn status_ignored(st: *const MPI_Status) -> bool {
    st.is_null() || st as usize == 1
}

/// Write an outcome into a caller's status (unless it is `MPI_STATUS_IGNORE`).
pub fn write_status(st: *mut MPI_Status, o: &Outcome, with_error: bool) {
    if status_ignored(st) {
        return;
    }
    // SAFETY: a status pointer other than MPI_STATUS_IGNORE points to caller storage.
    let s = unsafe { &mut *st };
    s.count_lo = o.bytes as u32 as i32;
    s.count_hi_and_cancelled = (((o.bytes as u64) >> 32) << 1) as i32 | o.cancelled as i32;
    s.MPI_SOURCE = o.source;
    s.MPI_TAG = o.tag;
    if with_error {
        s.MPI_ERROR = o.error;
    }
}

pub fn status_bytes(st: &MPI_Status) -> usize {
    (st.count_lo as u32 as u64 | (((st.count_hi_and_cancelled as u32 as u64) >> 1) << 32)) as usize
}

impl Runtime {
    pub(crate) fn req(&self, h: i32) -> MpiResult<&ApiReq> {
        self.reqs.get(&h).ok_or_else(|| MpiError::new(MPI_ERR_REQUEST, format!("invalid request handle {h:#x}")))
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
        match self.reqs.get_mut(&h).map(|r| &mut r.body) {
            None => Outcome::empty(),
            Some(Body::Persistent(p)) => match p.active.take() {
                Some(a) => self.finish_api_req(*a),
                None => Outcome::empty(),
            },
            Some(Body::Generalized(_)) => crate::generalized::finish(self, h),
            Some(Body::Partitioned(_)) => crate::partitioned::finish(self, h),
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
        self.req(h)?;
        if is_shared_done(h) {
            return Ok(Some(self.finish_req(h)));
        }
        self.progress_once()?;
        if !self.req_done(h) {
            return Ok(None);
        }
        if matches!(self.reqs[&h].body, Body::Generalized(_)) {
            return Ok(Some(crate::generalized::query(self, h)));
        }
        // Collect the outcome now (the engine hands it out once) and keep it for the Wait.
        let r = self.reqs.get_mut(&h).expect("checked above").operation_mut();
        let comm = r.comm;
        let taken = std::mem::replace(r, ApiReq { body: Body::Finished(Outcome::empty()), comm, group: None, unpack: None, keep: None });
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
                    ferry_core::error!("mpi", "{e}");
                    Outcome { error: e.class, ..Outcome::empty() }
                }
            },
            Body::Engine(id) => {
                let group = r.group.take();
                engine_outcome(&mut self.engine, id, r.unpack.take(), group.as_deref().map(Vec::as_slice))
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
        let comm = self.req(h)?.comm;
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
pub fn engine_outcome(engine: &mut ferry_core::engine::Engine, id: u64, unpack: Option<Box<Unpack>>, group: Option<&[u32]>) -> Outcome {
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
                Outcome { error: MPI_ERR_OTHER, lost, ..Outcome::empty() }
            }
            None => Outcome::empty(),
        }
}

pub(crate) fn outcome_of(group: Option<&[u32]>, st: &Status) -> Outcome {
    let source = match group {
        Some(g) => crate::comm::rank_in(g, st.source),
        None => MPI_ANY_SOURCE,
    };
    if st.cancelled {
        return Outcome { source, tag: MPI_ANY_TAG, bytes: 0, cancelled: true, error: MPI_SUCCESS, lost: None };
    }
    let (source, tag) = if group.is_some() { (source, st.tag) } else { (MPI_ANY_SOURCE, MPI_ANY_TAG) };
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
