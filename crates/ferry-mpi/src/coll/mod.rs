//! The MPI collectives at the C boundary: argument checks, packing of user buffers into the
//! byte layout a schedule expects (see the table in `ferry_coll`'s crate doc), the choice of
//! algorithm (the decision table of `ferry_coll::select`, the `FERRY_<COLL>_ALGORITHM`
//! overrides, see [`crate::objects::coll_selection`]), the status source of status-based algorithms, and the run
//! of the schedule over the engine: to completion for the blocking functions, on progress
//! for the non-blocking ones (the same schedules).
//!
//! `movers` holds the calls that move data (bcast, scatter, gather, allgather, alltoall,
//! barrier), `reductions` those that combine it.

pub(crate) mod alltoallw;
pub(crate) mod inter;
pub(crate) mod movers;
pub(crate) mod neighbor;
pub(crate) mod neighbor_w;
pub(crate) mod onhost;
pub(crate) mod onhost_movers;
pub(crate) mod persistent;
pub(crate) mod persistent_v;
pub(crate) mod reductions;
pub(crate) mod region;
mod status;

use std::os::raw::{c_int, c_void};

use ferry_coll::select::CallKind;
use ferry_coll::{AlgorithmInfo, Collective, Params};
use ferry_core::engine::collective::{CollError, CollRun};
use ferry_core::engine::{CollJob, CollShape, Reduce};

use crate::objects::comm::Ranks;
use crate::objects::request::{ApiReq, Body};
use crate::consts::*;
use crate::error::{err, MpiError, MpiResult};
use crate::op::Reduction;
use crate::objects::Runtime;
use crate::objects::threads::Locked;
use region::Region;

// The large-count functions (`crate::large_count`) call these with their `MPI_Count` counts.
pub(crate) use persistent::reduce_init;
pub(crate) use persistent_v::{
    allgatherv_init, alltoallv_init, alltoallw_init, gatherv_init, neighbor_allgatherv_init, neighbor_alltoallv_init, neighbor_alltoallw_init,
    reduce_scatter_init, scatterv_init,
};
pub(crate) use alltoallw::alltoallw;
pub(crate) use movers::{allgatherv_args, alltoallv_args, gatherv_args, scatterv_args};
pub(crate) use neighbor::{allgatherv as neighbor_allgatherv, alltoallv as neighbor_alltoallv};
pub(crate) use neighbor_w::alltoallw as neighbor_alltoallw;
pub(crate) use reductions::{reduce, reduce_scatter};

/// Collective tags live above the small internal ones of `internal.rs`: blocking call k of a
/// communicator sends its data with tag `COLL_TAG_BASE + k` and status tokens with
/// `TOKEN_TAG_BASE + k` (k modulo `SEQ_SPAN`); non-blocking call k with those plus
/// `NONBLOCKING_TAGS` (k modulo half the span), and every start of persistent collective p
/// (numbered at its init) in the other half (see `crate::objects::comm::CollSeq`).
const COLL_TAG_BASE: i32 = 1 << 20;
const TOKEN_TAG_BASE: i32 = 2 << 20;
const NONBLOCKING_TAGS: i32 = 2 << 20;
const SEQ_SPAN: u32 = 1 << 20;
/// The collectives' tags end here; the partitioned messages' tags, on the same internal
/// context, begin at or above it.
const COLL_TAGS_END: i32 = NONBLOCKING_TAGS + TOKEN_TAG_BASE + SEQ_SPAN as i32;
const _: () = assert!(COLL_TAGS_END <= crate::internal::PARTITIONED_BASE);

pub(crate) fn in_place(p: *const c_void) -> bool {
    p as isize == -1
}

/// The communicator's facts one collective call needs.
pub(crate) struct Call {
    comm: MPI_Comm,
    rank: usize,
    size: usize,
    group: std::sync::Arc<Vec<u32>>,
    ctx: u32,
    /// The call's number in its sequence, and the tag offset of that sequence.
    seq: u32,
    tags: i32,
    /// A persistent collective's start: `seq` is the number its init took.
    persistent: bool,
    /// An intercommunicator's remote group (`group` is then the local one).
    remote: Option<std::sync::Arc<Vec<u32>>>,
}

impl Call {
    fn tag(&self) -> i32 {
        self.tags + COLL_TAG_BASE + self.slot()
    }
    fn token_tag(&self) -> i32 {
        self.tags + TOKEN_TAG_BASE + self.slot()
    }
    /// The call's place in its sequence's tags.
    fn slot(&self) -> i32 {
        let half = SEQ_SPAN / 2;
        (match (self.tags, self.persistent) {
            (0, _) => self.seq % SEQ_SPAN,
            (_, false) => self.seq % half,
            (_, true) => half + self.seq % half,
        }) as i32
    }
}

/// Count the call on `comm`, in the blocking sequence when `req` is null (`BLOCKING`), else
/// in the non-blocking one. Every member counts it before any other check, so an error
/// found on some ranks only cannot shift the next collective's tag. The tools interface's
/// event `ferry_coll_begin` is raised here.
pub(crate) fn begin(rt: &mut Runtime, comm: MPI_Comm, req: *mut MPI_Request) -> MpiResult<Call> {
    rt.comm(comm)?;
    let c = rt.comms.get_mut(&comm).expect("validated");
    let blocking = req.is_null();
    let persistent = !blocking && c.coll_seq.is_pinned();
    let seq = c.coll_seq.next(blocking);
    let tags = if blocking { 0 } else { NONBLOCKING_TAGS };
    let call = Call { comm, rank: c.rank as usize, size: c.group.len(), group: c.group.clone(), ctx: c.ctx + 1, seq, tags, persistent, remote: c.remote().cloned() };
    // One atomic load unless a tool asked for this event (MPI_T_event_handle_alloc).
    crate::tools::collective_begun(rt, comm, seq, blocking, call.size, call.rank as i32);
    Ok(call)
}

/// MPI_IN_PLACE where this rank may not use it: it is no buffer.
pub(crate) fn no_in_place(buf: *const c_void, what: &str) -> MpiResult<()> {
    if in_place(buf) {
        return err(MPI_ERR_BUFFER, format!("MPI_IN_PLACE cannot be the {what} here"));
    }
    Ok(())
}

/// The same memory as send and receive buffer is allowed only as MPI_IN_PLACE: a rank that
/// both sends and receives data may not pass one pointer twice (`rbufs`: the receive buffer,
/// and where there is one the rank's own block in it, as MPICH compares). Such a call takes
/// its number in the communicator's sequence back: the error is found on this rank alone
/// (often the root only, whose buffers alone matter), and as in MPICH the rank may make the
/// call again, correctly, to meet the others' (MPICH's errors/coll/noalias does so).
pub(crate) fn no_alias(rt: &mut Runtime, call: &Call, sbuf: *const c_void, rbufs: &[*const c_void], moves_data: bool) -> MpiResult<()> {
    if moves_data && !sbuf.is_null() && !in_place(sbuf) && rbufs.iter().any(|&r| std::ptr::eq(sbuf, r)) {
        if let (false, Some(c)) = (call.persistent, rt.comms.get_mut(&call.comm)) {
            c.coll_seq.give_back(call.tags == 0, call.seq);
        }
        return err(MPI_ERR_BUFFER, "the send and receive buffers are the same memory (MPI_IN_PLACE says that)".to_string());
    }
    Ok(())
}

pub(crate) fn check_root(call: &Call, root: c_int) -> MpiResult<usize> {
    if root < 0 || root as usize >= call.size {
        return err(MPI_ERR_ROOT, format!("invalid root {root} (communicator size {})", call.size));
    }
    Ok(root as usize)
}

/// A count as the int-count and the large-count (`MPI_Count`) functions pass it.
pub(crate) fn check_count(count: impl Into<MPI_Count>) -> MpiResult<usize> {
    let count = count.into();
    usize::try_from(count).or_else(|_| err(MPI_ERR_COUNT, format!("count {count} is negative")))
}

/// `a * b` (elements, bytes), or MPI_ERR_COUNT where no memory could hold that many: a large
/// count times a size or a number of ranks may overflow what an int count never could.
pub(crate) fn product(a: usize, b: usize, what: &str) -> MpiResult<usize> {
    match a.checked_mul(b) {
        Some(p) if p <= isize::MAX as usize => Ok(p),
        _ => err(MPI_ERR_COUNT, format!("{what}: {a} times {b} exceeds the address space")),
    }
}

/// The sum of `counts`, checked as [`product`] is.
pub(crate) fn sum_counts(counts: &[usize], what: &str) -> MpiResult<usize> {
    counts.iter().try_fold(0usize, |t, c| t.checked_add(*c).filter(|t| *t <= isize::MAX as usize)).ok_or_else(|| MpiError::new(MPI_ERR_COUNT, format!("{what} add up beyond the address space")))
}

pub(crate) fn check_buf(buf: *const c_void, count: usize, dt: MPI_Datatype) -> MpiResult<()> {
    if buf.is_null() && count > 0 && Runtime::is_predefined_type(dt) {
        return err(MPI_ERR_BUFFER, format!("buffer is NULL with count {count}"));
    }
    Ok(())
}

/// A C array of counts, one per rank, as the int-count or the large-count functions pass it.
#[derive(Clone, Copy)]
pub(crate) enum Counts {
    Int(*const c_int),
    Big(*const MPI_Count),
}

impl Counts {
    fn is_null(self) -> bool {
        match self {
            Counts::Int(p) => p.is_null(),
            Counts::Big(p) => p.is_null(),
        }
    }

    /// A copy of its `n` entries as `MPI_Count`s (`None` for a NULL array), unchecked.
    fn widened(self, n: usize) -> Option<Vec<MPI_Count>> {
        if self.is_null() {
            return None;
        }
        // SAFETY: MPI's contract: a non-NULL count array holds one entry per rank (`n`).
        Some(match self {
            Counts::Int(p) => unsafe { std::slice::from_raw_parts(p, n) }.iter().map(|&c| c.into()).collect(),
            Counts::Big(p) => unsafe { std::slice::from_raw_parts(p, n) }.to_vec(),
        })
    }

    /// Its `n` counts, none negative; a NULL array is one only where `n > 0`.
    fn read(self, n: usize, what: &str) -> MpiResult<Vec<usize>> {
        if n == 0 {
            return Ok(Vec::new());
        }
        let Some(wide) = self.widened(n) else { return err(MPI_ERR_ARG, format!("{what} is NULL")) };
        wide.iter().map(|&c| usize::try_from(c).or_else(|_| err(MPI_ERR_COUNT, format!("{what} holds the negative count {c}")))).collect()
    }
}

/// A C array of displacements, one per rank, as the int-count or the large-count functions
/// pass it.
#[derive(Clone, Copy)]
pub(crate) enum Displs {
    Int(*const c_int),
    Big(*const MPI_Aint),
}

impl Displs {
    /// A copy of its `n` entries as `MPI_Aint`s (`None` for a NULL array), unchecked.
    fn widened(self, n: usize) -> Option<Vec<MPI_Aint>> {
        // SAFETY: MPI's contract: a non-NULL displacement array holds one entry per rank (`n`).
        match self {
            Displs::Int(p) if !p.is_null() => Some(unsafe { std::slice::from_raw_parts(p, n) }.iter().map(|&d| d as MPI_Aint).collect()),
            Displs::Big(p) if !p.is_null() => Some(unsafe { std::slice::from_raw_parts(p, n) }.to_vec()),
            _ => None,
        }
    }

    /// Its `n` displacements, none negative; a NULL array is one only where `n > 0`.
    fn read(self, n: usize, what: &str) -> MpiResult<Vec<usize>> {
        if n == 0 {
            return Ok(Vec::new());
        }
        let Some(wide) = self.widened(n) else { return err(MPI_ERR_ARG, format!("{what} is NULL")) };
        wide.iter().map(|&d| usize::try_from(d).or_else(|_| err(MPI_ERR_ARG, format!("{what} holds the negative displacement {d}")))).collect()
    }
}

/// The request argument of a non-blocking collective. A NULL one is refused, and the call
/// still counts in the communicator's non-blocking sequence, as every call that fails on some
/// ranks only must (see `begin`).
pub(crate) fn req_out(rt: &mut Runtime, comm: MPI_Comm, req: *mut MPI_Request) -> MpiResult<*mut MPI_Request> {
    if req.is_null() {
        if let Some(c) = rt.comms.get_mut(&comm) {
            c.coll_seq.next(false);
        }
        return err(MPI_ERR_ARG, "request is NULL");
    }
    Ok(req)
}

pub(crate) const BLOCKING: *mut MPI_Request = std::ptr::null_mut();

/// The algorithm for a call: the decision table or the override, counted for statistics.
/// `shared`: what the call does would suit the shared-memory algorithms (for a reduction, a
/// predefined operation); they run where the call is also blocking and its communicator's
/// ranks all share this host's memory.
pub(crate) fn pick(rt: &mut Runtime, call: &Call, coll: Collective, varying: bool, commutative: bool, shared: bool, bytes: usize) -> &'static AlgorithmInfo {
    let one_host = shared && call.tags == 0 && call.remote.is_none() && onhost::eligible(rt, call.comm);
    let several_hosts = !one_host && call.remote.is_none() && onhost::several_hosts(rt, call.comm);
    rt.coll.pick(CallKind { collective: coll, varying }, commutative, one_host, several_hosts, call.size, bytes)
}

/// A collective call in flight, run by the engine: its id there, the staging buffers the
/// schedule reads and writes, and the unpacking to do once it is complete.
pub struct CollCall {
    pub id: u64,
    algorithm: &'static str,
    _regions: [Region; 2],
    finish: Option<Box<dyn FnOnce()>>,
}

impl crate::objects::request::CollRequest for CollCall {
    fn id(&self) -> u64 {
        self.id
    }

    fn complete(self: Box<Self>, engine: &mut ferry_core::engine::Engine) -> MpiResult<()> {
        CollCall::complete(*self, engine)
    }
}

impl CollCall {
    /// Collect a completed call from the engine: unpack its result, or say why it failed.
    pub fn complete(mut self, engine: &mut ferry_core::engine::Engine) -> MpiResult<()> {
        match engine.take_collective(self.id) {
            Some(Ok(())) => {
                if let Some(f) = self.finish.take() {
                    f();
                }
                Ok(())
            }
            Some(Err(e)) => {
                // Ranks that disagree on the arguments: the error class the standard has for it.
                let class = match &e {
                    CollError::Truncated { .. } => MPI_ERR_TRUNCATE,
                    // A failure or a revocation: its own class, which the program may handle.
                    CollError::Engine(ee) if crate::objects::fault::recovery() => crate::error::MpiError::from(ee.clone()).class,
                    _ => MPI_ERR_OTHER,
                };
                ferry_core::debug!("mpi", "{}: {e}", self.algorithm);
                err(class, format!("{}: {e}", self.algorithm))
            }
            None => err(MPI_ERR_INTERN, format!("{}: collected before it completed", self.algorithm)),
        }
    }
}

/// What the API functions build: a call ready to run.
pub(crate) struct Prepared {
    call: Call,
    info: &'static AlgorithmInfo,
    /// The schedule's parameters; `None` where `shape` says them all (see [`uniform`]).
    params: Option<Params>,
    /// The call's shape where a finished call of the same shape may run it again
    /// (`objects::coll_cache`); `None` where it may not.
    shape: Option<CollShape>,
    send: Region,
    recv: Region,
    red: Option<Reduction>,
    finish: Option<Box<dyn FnOnce()>>,
}

/// The shape of a call whose ranks all have blocks of `block` bytes, packed in rank order
/// (`Params::uniform`), reducing with `red` in elements of `elem_size` bytes; `None` where
/// the call's schedule depends on more than that: a status-based algorithm (the order it
/// serves ranks in is read when the call starts) or a user's operation (its function and
/// datatype are not the shape's).
pub(crate) fn uniform(info: &'static AlgorithmInfo, block: usize, root: usize, in_place: bool, red: Option<&Reduction>) -> Option<CollShape> {
    if status::is_status_based(info.id) {
        return None;
    }
    let (elem_size, reduction) = match red {
        None => (1, 0),
        Some(r) => (r.elem_size(), r.code()?),
    };
    Some(CollShape { algorithm: info.id, block, root, in_place, elem_size, reduction, radix: 0 })
}

/// The parameters a shape stands for on this rank.
fn shape_params(call: &Call, s: &CollShape) -> Params {
    Params::uniform(call.rank, call.size, s.root, s.block).elem_size(s.elem_size).in_place(s.in_place)
}

/// Finished calls go back to their communicators' keeping. A communicator freed meanwhile
/// is not found, and its calls go; so do they where its handle came back (the generations
/// of a slot wrap) on another communicator, which has its own context and group.
fn take_back(rt: &mut Runtime) {
    while let Some(job) = rt.engine.unpark_collective() {
        let Some((owner, _)) = job.home else { continue };
        if let Some(c) = rt.comms.get_mut(&(owner as u32 as MPI_Comm)) {
            if job.run.runs_on(c.ctx + 1, &c.group) {
                c.coll_cache.put(job);
            }
        }
    }
}

fn start(rt: &mut Runtime, mut p: Prepared) -> CollCall {
    let radix = rt.coll.radix;
    let shape = p.shape.map(|s| CollShape { radix, ..s });
    if let Some(s) = &shape {
        take_back(rt);
        if let Some(mut job) = rt.comms.get_mut(&p.call.comm).and_then(|c| c.coll_cache.take(s)) {
            // SAFETY: as in `launch`: the regions cover the lengths of this shape's schedule.
            if unsafe { job.run.restart(p.call.tag(), p.send.ptr, p.recv.ptr) } {
                let id = rt.engine.start_job(job);
                return CollCall { id, algorithm: p.info.id, _regions: [p.send, p.recv], finish: p.finish };
            }
        }
    }
    let mut params = p.params.take().unwrap_or_else(|| shape_params(&p.call, shape.as_ref().expect("a call without parameters has a shape")));
    params.radix = radix;
    params.hosts = rt.hosts_of(&p.call.group);
    if status::is_status_based(p.info.id) && p.call.size > 1 {
        let (root, ctx, tag) = (params.root, p.call.ctx, p.call.token_tag());
        let source = rt.coll.status_source;
        if p.call.rank == root {
            params.free_first = Some(status::free_first(&mut rt.engine, source, &p.call.group, root, ctx, tag));
        } else {
            status::announce(&mut rt.engine, source, p.call.group[root], ctx, tag);
        }
    }
    let sched = (p.info.schedule)(&params);
    launch(rt, p.call, sched, p.info.id, [p.send, p.recv], p.red, p.finish, shape)
}

/// Hand a schedule to the engine over the user's (or staged) send and receive regions;
/// with a shape, the finished call comes back to the communicator to run again.
#[allow(clippy::too_many_arguments)]
fn launch(
    rt: &mut Runtime, call: Call, sched: ferry_coll::Schedule, algorithm: &'static str, [send, recv]: [Region; 2],
    red: Option<Reduction>, finish: Option<Box<dyn FnOnce()>>, shape: Option<CollShape>,
) -> CollCall {
    let tag = call.tag();
    // SAFETY: `send` and `recv` cover the schedule's declared lengths (built from the same
    // counts; a null `recv`, where the caller has none, gets the run's own space); the
    // regions and user buffers stay valid until the call completes (blocking calls wait;
    // non-blocking ones keep the regions in the request, MPI keeps the user's).
    let mut run = unsafe { CollRun::new(sched, call.group, call.ctx, tag, send.ptr, recv.ptr) };
    run.set_commutative(red.as_ref().is_some_and(|r| r.commutative()));
    let reduce: Reduce = Box::new(move |s: &[u8], d: &mut [u8]| match &red {
        Some(r) => r.apply(s, d),
        None => Err("this collective does not reduce".into()),
    });
    let home = shape.map(|s| (call.comm as u32 as u64, s));
    let id = rt.engine.start_job(Box::new(CollJob { run, reduce, home }));
    CollCall { id, algorithm, _regions: [send, recv], finish }
}

/// Run a call to completion, or hand back a request: for schedules built outside the
/// decision table (the neighbourhood and intercommunicator collectives).
#[allow(clippy::too_many_arguments)]
pub(crate) fn submit_schedule(
    rt: &mut Locked, call: Call, sched: ferry_coll::Schedule, algorithm: &'static str, regions: [Region; 2], red: Option<Reduction>,
    finish: Option<Box<dyn FnOnce()>>, req: *mut MPI_Request,
) -> MpiResult<()> {
    let comm = call.comm;
    let c = launch(rt, call, sched, algorithm, regions, red, finish, None);
    if req.is_null() {
        let id = c.id;
        rt.wait_until(|e| e.is_done(id))?;
        return c.complete(&mut rt.engine);
    }
    let h = rt.add_req(ApiReq { body: Body::Coll(Box::new(c)), comm, group: Ranks::None, unpack: None, keep: None });
    // SAFETY: checked non-null by the caller (`req_out`).
    unsafe { *req = h };
    Ok(())
}

/// Run a prepared call to completion (the blocking MPI functions). Non-blocking calls in
/// flight move on meanwhile, inside the engine: a peer may need them to reach this call.
fn run_now(rt: &mut Locked, p: Prepared) -> MpiResult<()> {
    if p.info.shared.is_some() {
        return onhost::run(rt, p);
    }
    let call = start(rt, p);
    let id = call.id;
    rt.wait_until(|e| e.is_done(id))?;
    call.complete(&mut rt.engine)
}

/// Blocking or not: run now, or hand back a request.
pub(crate) fn submit(rt: &mut Locked, p: Prepared, req: *mut MPI_Request) -> MpiResult<()> {
    if req.is_null() {
        return run_now(rt, p);
    }
    let comm = p.call.comm;
    let call = start(rt, p);
    let h = rt.add_req(ApiReq { body: Body::Coll(Box::new(call)), comm, group: Ranks::None, unpack: None, keep: None });
    // SAFETY: checked non-null above.
    unsafe { *req = h };
    Ok(())
}
