//! The blocking MPI collectives at the C boundary: argument checks, packing of user
//! buffers into the byte layout a schedule expects (see the table in `ferry_coll`'s crate
//! doc), algorithm choice, and the run of the schedule over the engine.
//!
//! Selection today is a fixed default per collective and size, overridable with
//! `FERRY_<COLL>_ALGORITHM=a,b` (the first name that exists for the collective runs); the
//! decision table as a data file, the non-blocking forms and user-defined operations are
//! not there yet.

use std::os::raw::{c_int, c_void};

use ferry_coll::{algorithm, AlgorithmInfo, Collective, Params};
use ferry_core::datatype::Datatype;
use ferry_core::engine::collective::CollRun;
use ferry_core::reduce_op::{self, ElemType, PredefinedOp};

use crate::boundary::call;
use crate::completion::{ApiReq, Body};
use crate::consts::*;
use crate::error::{err, MpiError, MpiResult};
use crate::runtime::Runtime;

/// Collective tags live above the small internal ones of `internal.rs`.
const COLL_TAG_BASE: i32 = 1 << 20;

fn in_place(p: *const c_void) -> bool {
    p as isize == -1
}

/// The communicator's facts one collective call needs.
struct Call {
    comm: MPI_Comm,
    rank: usize,
    size: usize,
    group: Vec<u32>,
    ctx: u32,
    tag: i32,
}

fn begin(rt: &mut Runtime, comm: MPI_Comm) -> MpiResult<Call> {
    rt.comm(comm)?;
    let c = rt.comms.get_mut(&comm).expect("validated");
    let seq = c.coll_seq;
    c.coll_seq = c.coll_seq.wrapping_add(1);
    Ok(Call { comm, rank: c.rank as usize, size: c.group.len(), group: c.group.to_vec(), ctx: c.ctx + 1, tag: COLL_TAG_BASE + (seq % (1 << 20)) as i32 })
}

fn check_root(call: &Call, root: c_int) -> MpiResult<usize> {
    if root < 0 || root as usize >= call.size {
        return err(MPI_ERR_ROOT, format!("invalid root {root} (communicator size {})", call.size));
    }
    Ok(root as usize)
}

fn check_count(count: c_int) -> MpiResult<usize> {
    if count < 0 {
        return err(MPI_ERR_COUNT, format!("count {count} is negative"));
    }
    Ok(count as usize)
}

fn check_buf(buf: *const c_void, count: usize, dt: MPI_Datatype) -> MpiResult<()> {
    if buf.is_null() && count > 0 && Runtime::is_predefined_type(dt) {
        return err(MPI_ERR_BUFFER, format!("buffer is NULL with count {count}"));
    }
    Ok(())
}

fn counts<'a>(p: *const c_int, n: usize, what: &str) -> MpiResult<&'a [c_int]> {
    if p.is_null() {
        return err(MPI_ERR_ARG, format!("{what} is NULL"));
    }
    // SAFETY: MPI passes one entry per rank of the communicator.
    let s = unsafe { std::slice::from_raw_parts(p, n) };
    if let Some(c) = s.iter().find(|c| **c < 0) {
        return err(MPI_ERR_COUNT, format!("{what} holds the negative count {c}"));
    }
    Ok(s)
}

fn displs<'a>(p: *const c_int, n: usize) -> MpiResult<&'a [c_int]> {
    if p.is_null() {
        return err(MPI_ERR_ARG, "displs is NULL");
    }
    // SAFETY: as in `counts`.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

/// The algorithm to run: the environment's choice, else the built-in default.
fn choose(coll: Collective, default: &'static str) -> MpiResult<&'static AlgorithmInfo> {
    let var = format!("FERRY_{}_ALGORITHM", coll.name().to_ascii_uppercase());
    if let Ok(list) = std::env::var(&var) {
        let mut valid = Vec::new();
        for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let id = if name.contains('.') { name.to_string() } else { format!("{}.{name}", coll.name()) };
            match algorithm(&id) {
                Some(a) if a.collective == coll => return Ok(a),
                _ => valid.push(name.to_string()),
            }
        }
        let names: Vec<&str> = ferry_coll::algorithms_for(coll).map(|a| a.id).collect();
        return err(MPI_ERR_ARG, format!("{var}={list:?} names no algorithm of {}; valid: {}", coll.name(), names.join(", ")));
    }
    Ok(algorithm(default).expect("default algorithms are registered"))
}

/// Blocks and displacements as a non-root of gather(v)/scatter(v) sees them: its own block
/// (for the v-variants the others are unknown here and left 0; `Params::vcall` keeps the
/// algorithm from concluding that nothing moves).
fn non_root_view(n: usize, rank: usize, my_bytes: usize, varying: bool) -> (Vec<usize>, Vec<usize>) {
    if varying {
        let mut b = vec![0; n];
        b[rank] = my_bytes;
        (b, vec![0; n])
    } else {
        (vec![my_bytes; n], (0..n).map(|i| i * my_bytes).collect())
    }
}

/// A user buffer as a schedule sees it: a packed byte region, straight in user memory when
/// the datatype is contiguous, else in a staging vector packed or unpacked around the run.
struct Region {
    ptr: *mut u8,
    staging: Option<Vec<u8>>,
}

impl Region {
    fn none() -> Region {
        Region { ptr: std::ptr::null_mut(), staging: None }
    }

    fn staged(len: usize) -> Region {
        let mut v = vec![0u8; len];
        Region { ptr: v.as_mut_ptr(), staging: Some(v) }
    }

    /// `blocks` of (element offset, count) of type `t` at user `base`, laid out packed at
    /// `offset * size`. `fill` packs the user data in (for inputs).
    fn new(base: *const c_void, t: &Datatype, len: usize, blocks: &[(usize, usize)], fill: bool) -> Region {
        if t.is_contiguous() {
            return Region { ptr: base as *mut u8, staging: None };
        }
        let mut r = Region::staged(len);
        if fill {
            let v = r.staging.as_mut().expect("staged");
            for &(off, n) in blocks {
                let at = off * t.size();
                // SAFETY: the user buffer holds these elements (MPI's contract for the call).
                unsafe { t.pack((base as *const u8).wrapping_offset(off as isize * t.extent()), n, &mut v[at..at + n * t.size()]) };
            }
        }
        r
    }

    /// What copies the staged blocks back into user memory once the call is complete
    /// (nothing to do when the data went straight to user memory).
    fn unpacker(&self, base: *mut c_void, t: Datatype, blocks: Vec<(usize, usize)>) -> Option<Box<dyn FnOnce()>> {
        self.staging.as_ref()?;
        let staged = self.ptr as *const u8;
        Some(Box::new(move || {
            for &(off, n) in &blocks {
                let at = off * t.size();
                // SAFETY: `staged` is this region's vector, which the call keeps alive until
                // after this runs; the user buffer holds these elements (MPI's contract).
                unsafe {
                    let src = std::slice::from_raw_parts(staged.add(at), n * t.size());
                    t.unpack(src, (base as *mut u8).wrapping_offset(off as isize * t.extent()), n);
                }
            }
        }))
    }
}

/// How to reduce: the predefined operation and what an element is.
struct Reduction {
    op: PredefinedOp,
    elem: ElemType,
}

fn reduction(rt: &mut Runtime, op: MPI_Op, dt: MPI_Datatype) -> MpiResult<Reduction> {
    let Some(pop) = PredefinedOp::from_handle(op) else {
        return err(MPI_ERR_OP, if op == MPI_OP_NULL { "MPI_OP_NULL is not an operation".to_string() } else { format!("invalid operation {op:#x}") });
    };
    let t = rt.datatype(dt)?;
    let elem = match crate::predefined::pair_type(dt) {
        Some((v, i)) => Some(ElemType::Pair(v, i)),
        None => reduce_op::elem_type(&t),
    };
    let Some(elem) = elem else { return err(MPI_ERR_OP, format!("{} cannot reduce datatype {dt:#x}", pop.name())) };
    reduce_op::check(pop, elem).map_err(|e| MpiError::new(MPI_ERR_OP, e.to_string()))?;
    Ok(Reduction { op: pop, elem })
}

/// A collective call in flight: the schedule's run, what it reduces with, the staging
/// buffers it reads and writes, and the unpacking to do once it is complete.
pub struct CollOp {
    run: CollRun,
    red: Option<Reduction>,
    id: &'static str,
    _regions: Vec<Region>,
    finish: Option<Box<dyn FnOnce()>>,
    pub done: bool,
    pub failed: Option<MpiError>,
}

impl CollOp {
    /// Issue and complete what can be; true once the whole call is done.
    pub fn advance(&mut self, engine: &mut ferry_core::engine::Engine) -> bool {
        if self.done || self.failed.is_some() {
            return true;
        }
        let red = &self.red;
        let mut reduce = |s: &[u8], d: &mut [u8]| -> Result<(), String> {
            match red {
                Some(r) => reduce_op::apply(r.op, r.elem, s, d).map_err(|e| e.to_string()),
                None => Err("this collective does not reduce".into()),
            }
        };
        match self.run.advance(engine, &mut reduce) {
            Ok(true) => {
                self.done = true;
                if let Some(f) = self.finish.take() {
                    f();
                }
            }
            Ok(false) => {}
            Err(e) => {
                self.run.cancel(engine);
                self.failed = Some(MpiError::new(MPI_ERR_OTHER, format!("{}: {e}", self.id)));
            }
        }
        self.done || self.failed.is_some()
    }

    /// Engine requests the call now waits for.
    pub fn waiting_on(&self) -> Vec<u64> {
        self.run.requests().collect()
    }
}

/// What the API functions build: a call ready to run.
struct Prepared {
    call: Call,
    info: &'static AlgorithmInfo,
    params: Params,
    send: Region,
    recv: Region,
    red: Option<Reduction>,
    finish: Option<Box<dyn FnOnce()>>,
}

fn start(rt: &mut Runtime, p: Prepared) -> CollOp {
    let sched = (p.info.schedule)(&p.params);
    // A schedule may want a receive region where the caller has none (a non-root's result
    // space in reduce): give it scratch.
    let scratch = if p.recv.ptr.is_null() && sched.recv_len() > 0 { Region::staged(sched.recv_len()) } else { Region::none() };
    let recv = if p.recv.ptr.is_null() { scratch.ptr } else { p.recv.ptr };
    // SAFETY: `send` and `recv` cover the schedule's declared lengths (built from the same
    // counts); the regions and user buffers stay valid until the call completes (blocking
    // calls wait; non-blocking ones keep the regions in the request, MPI keeps the user's).
    let run = unsafe { CollRun::new(sched, p.call.group, p.call.ctx, p.call.tag, p.send.ptr, recv) };
    let _ = rt;
    CollOp { run, red: p.red, id: p.info.id, _regions: vec![p.send, p.recv, scratch], finish: p.finish, done: false, failed: None }
}

/// Run a prepared call to completion (the blocking MPI functions).
fn run_now(rt: &mut Runtime, p: Prepared) -> MpiResult<()> {
    let mut op = start(rt, p);
    loop {
        if op.advance(&mut rt.engine) {
            return match op.failed.take() {
                Some(e) => Err(e),
                None => Ok(()),
            };
        }
        let reqs = op.waiting_on();
        rt.engine.wait_until(|e| reqs.iter().any(|r| e.is_done(*r)))?;
    }
}

/// Blocking or not: run now, or hand back a request.
fn submit(rt: &mut Runtime, p: Prepared, req: *mut MPI_Request) -> MpiResult<()> {
    if req.is_null() {
        return run_now(rt, p);
    }
    let comm = p.call.comm;
    let mut op = start(rt, p);
    op.advance(&mut rt.engine);
    let h = rt.add_req(ApiReq { body: Body::Coll(Box::new(op)), comm, group: None, unpack: None, keep: None });
    rt.colls_active += 1;
    // SAFETY: checked non-null above.
    unsafe { *req = h };
    Ok(())
}

fn bcast(rt: &mut Runtime, buf: *mut c_void, count: c_int, dt: MPI_Datatype, root: c_int, comm: MPI_Comm, req: *mut MPI_Request) -> MpiResult<()> {
    let call = begin(rt, comm)?;
    let root = check_root(&call, root)?;
    let count = check_count(count)?;
    check_buf(buf, count, dt)?;
    let t = rt.datatype(dt)?;
    let bytes = count * t.size();
    let info = choose(Collective::Bcast, if bytes < 12 << 10 || call.size < 4 { "bcast.binomial" } else { "bcast.scatter_allgather" })?;
    let params = Params::uniform(call.rank, call.size, root, bytes);
    let blocks = [(0, count)];
    let recv = Region::new(buf, &t, bytes, &blocks, call.rank == root);
    let finish = recv.unpacker(buf, t, blocks.to_vec());
    submit(rt, Prepared { call, info, params, send: Region::none(), recv, red: None, finish }, req)
}

#[allow(clippy::too_many_arguments)]
fn gather(
    rt: &mut Runtime, sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void, rcounts: Vec<usize>,
    rdispls: Option<Vec<usize>>, rtype: MPI_Datatype, root: c_int, call: Call, all: bool, req: *mut MPI_Request,
) -> MpiResult<()> {
    let root = if all { 0 } else { check_root(&call, root)? };
    let is_root = all || call.rank == root;
    let in_place = is_root && in_place(sbuf);
    let n = call.size;
    let rt_ = if is_root { Some(rt.datatype(rtype)?) } else { None };
    let (st, scount) = if in_place { (None, 0) } else { (Some(rt.datatype(stype)?), check_count(scount)?) };
    if !in_place {
        check_buf(sbuf, scount, stype)?;
    }
    let my_bytes = match (&st, &rt_) {
        (Some(s), _) => scount * s.size(),
        (None, Some(r)) => rcounts[call.rank] * r.size(),
        _ => 0,
    };
    let varying = rdispls.is_some();
    let (blocks, displs): (Vec<usize>, Vec<usize>) = match &rt_ {
        Some(r) => {
            let d: Vec<usize> = match &rdispls { Some(d) => d.clone(), None => (0..n).map(|i| i * rcounts[0]).collect() };
            (rcounts.iter().map(|c| c * r.size()).collect(), d.iter().map(|d| d * r.size()).collect())
        }
        None => non_root_view(n, call.rank, my_bytes, varying),
    };
    let total: usize = blocks.iter().zip(&displs).map(|(b, d)| b + d).max().unwrap_or(0);
    let coll = if all { Collective::Allgather } else { Collective::Gather };
    let default = match (all, varying) {
        (true, true) => "allgather.ring",
        (true, false) if total < 80 << 10 && n.is_power_of_two() => "allgather.recursive_doubling",
        (true, false) if total < 80 << 10 => "allgather.bruck",
        (true, false) => "allgather.ring",
        (false, true) => "gather.linear",
        (false, false) => "gather.binomial",
    };
    let mut info = choose(coll, default)?;
    if varying && !info.varying {
        info = algorithm(default).expect("registered");
    }
    let params = Params::varying(call.rank, n, root, blocks, displs).in_place(in_place).vcall(varying && !all);
    let send = match (&st, in_place) {
        (Some(s), false) => Region::new(sbuf, s, my_bytes, &[(0, scount)], true),
        _ => Region::none(),
    };
    let rblocks: Vec<(usize, usize)> = match (&rt_, &rdispls) {
        (Some(_), Some(d)) => d.iter().zip(&rcounts).map(|(d, c)| (*d, *c)).collect(),
        (Some(_), None) => (0..n).map(|i| (i * rcounts[0], rcounts[0])).collect(),
        _ => Vec::new(),
    };
    let recv = match &rt_ {
        // In place, the root's own block is already where the schedule expects it.
        Some(r) => Region::new(rbuf, r, total, &rblocks, in_place),
        None => Region::none(),
    };
    let finish = match rt_ {
        Some(r) => recv.unpacker(rbuf, r, rblocks),
        None => None,
    };
    submit(rt, Prepared { call, info, params, send, recv, red: None, finish }, req)
}

#[allow(clippy::too_many_arguments)]
fn scatter(
    rt: &mut Runtime, sbuf: *const c_void, scounts: Vec<usize>, sdispls: Option<Vec<usize>>, stype: MPI_Datatype,
    rbuf: *mut c_void, rcount: c_int, rtype: MPI_Datatype, root: c_int, call: Call, req: *mut MPI_Request,
) -> MpiResult<()> {
    let root = check_root(&call, root)?;
    let is_root = call.rank == root;
    let in_place = is_root && in_place(rbuf);
    let n = call.size;
    let st = if is_root { Some(rt.datatype(stype)?) } else { None };
    let (rt_, rcount) = if in_place { (None, 0) } else { (Some(rt.datatype(rtype)?), check_count(rcount)?) };
    if !in_place {
        check_buf(rbuf, rcount, rtype)?;
    }
    let my_bytes = match (&rt_, &st) {
        (Some(r), _) => rcount * r.size(),
        (None, Some(s)) => scounts[call.rank] * s.size(),
        _ => 0,
    };
    let varying = sdispls.is_some();
    let (blocks, displs): (Vec<usize>, Vec<usize>) = match &st {
        Some(s) => {
            let d: Vec<usize> = match &sdispls { Some(d) => d.clone(), None => (0..n).map(|i| i * scounts[0]).collect() };
            (scounts.iter().map(|c| c * s.size()).collect(), d.iter().map(|d| d * s.size()).collect())
        }
        None => non_root_view(n, call.rank, my_bytes, varying),
    };
    let total: usize = blocks.iter().zip(&displs).map(|(b, d)| b + d).max().unwrap_or(0);
    let default = if varying { "scatter.linear" } else { "scatter.binomial" };
    let mut info = choose(Collective::Scatter, default)?;
    if varying && !info.varying {
        info = algorithm(default).expect("registered");
    }
    let params = Params::varying(call.rank, n, root, blocks, displs).in_place(in_place).vcall(varying);
    let sblocks: Vec<(usize, usize)> = match (&st, &sdispls) {
        (Some(_), Some(d)) => d.iter().zip(&scounts).map(|(d, c)| (*d, *c)).collect(),
        (Some(_), None) => (0..n).map(|i| (i * scounts[0], scounts[0])).collect(),
        _ => Vec::new(),
    };
    let send = match &st {
        Some(s) => Region::new(sbuf, s, total, &sblocks, true),
        None => Region::none(),
    };
    let recv = match &rt_ {
        Some(r) => Region::new(rbuf, r, my_bytes, &[(0, rcount)], false),
        None => Region::none(),
    };
    let finish = match rt_ {
        Some(r) => recv.unpacker(rbuf, r, vec![(0, rcount)]),
        None => None,
    };
    submit(rt, Prepared { call, info, params, send, recv, red: None, finish }, req)
}

/// Reduce, Allreduce, Scan, Exscan, Reduce_scatter_block.
#[allow(clippy::too_many_arguments)]
fn reduce(rt: &mut Runtime, coll: Collective, sbuf: *const c_void, rbuf: *mut c_void, count: c_int, dt: MPI_Datatype, op: MPI_Op, root: c_int, comm: MPI_Comm, req: *mut MPI_Request) -> MpiResult<()> {
    let call = begin(rt, comm)?;
    let root = if coll == Collective::Reduce { check_root(&call, root)? } else { 0 };
    let count = check_count(count)?;
    let t = rt.datatype(dt)?;
    let red = reduction(rt, op, dt)?;
    let n = call.size;
    let gets_result = coll != Collective::Reduce || call.rank == root;
    let in_place = in_place(sbuf) && gets_result;
    if !in_place {
        check_buf(sbuf, count, dt)?;
    }
    if gets_result {
        check_buf(rbuf, count, dt)?;
    }
    // Reduce_scatter_block: `count` is each rank's share; the input holds n of them.
    let in_elems = if coll == Collective::ReduceScatter { count * n } else { count };
    let bytes = count * t.size();
    let default = match coll {
        Collective::Reduce => "reduce.binomial",
        Collective::Allreduce if bytes >= 64 << 10 && n > 2 => "allreduce.ring",
        Collective::Allreduce => "allreduce.recursive_doubling",
        Collective::ReduceScatter => "reduce_scatter.pairwise",
        Collective::Scan => "scan.recursive_doubling",
        _ => "exscan.recursive_doubling",
    };
    let info = choose(coll, default)?;
    let params = Params::uniform(call.rank, n, root, bytes).elem_size(red.elem.size()).in_place(in_place);
    let send = if in_place { Region::none() } else { Region::new(sbuf, &t, in_elems * t.size(), &[(0, in_elems)], true) };
    let recv_elems = if in_place { in_elems } else { count };
    let recv_blocks = [(0, recv_elems)];
    // In place the input lies in the receive buffer; exscan must leave rank 0's untouched,
    // so stage its current contents too.
    let recv = if gets_result {
        Region::new(rbuf, &t, recv_elems * t.size(), &recv_blocks, in_place || coll == Collective::Exscan)
    } else {
        Region::none()
    };
    let finish = if gets_result { recv.unpacker(rbuf, t, vec![(0, count)]) } else { None };
    submit(rt, Prepared { call, info, params, send, recv, red: Some(red), finish }, req)
}

fn vec_counts(rt: &Runtime, comm: MPI_Comm, p: *const c_int, what: &str) -> MpiResult<Vec<usize>> {
    let n = rt.comm(comm)?.group.len();
    Ok(counts(p, n, what)?.iter().map(|c| *c as usize).collect())
}

fn vec_displs(rt: &Runtime, comm: MPI_Comm, p: *const c_int) -> MpiResult<Vec<usize>> {
    let n = rt.comm(comm)?.group.len();
    let d = displs(p, n)?;
    if let Some(x) = d.iter().find(|x| **x < 0) {
        return err(MPI_ERR_ARG, format!("negative displacement {x}"));
    }
    Ok(d.iter().map(|x| *x as usize).collect())
}

fn is_root(rt: &Runtime, comm: MPI_Comm, root: c_int) -> MpiResult<bool> {
    Ok(rt.comm(comm)?.rank == root)
}

fn req_out(req: *mut MPI_Request) -> MpiResult<*mut MPI_Request> {
    if req.is_null() {
        return err(MPI_ERR_REQUEST, "request is NULL");
    }
    Ok(req)
}

const BLOCKING: *mut MPI_Request = std::ptr::null_mut();

#[allow(clippy::too_many_arguments)]
fn gather_args(
    rt: &mut Runtime, sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void, rcount: c_int, rtype: MPI_Datatype,
    root: c_int, comm: MPI_Comm, req: *mut MPI_Request,
) -> MpiResult<()> {
    // Every member counts the call before any check, so an error (found on some ranks
    // only) cannot shift the next collective's tag.
    let call = begin(rt, comm)?;
    let n = rt.comm(comm)?.group.len();
    let rc = if is_root(rt, comm, root)? { check_count(rcount)? } else { 0 };
    gather(rt, sbuf, scount, stype, rbuf, vec![rc; n], None, rtype, root, call, false, req)
}

#[allow(clippy::too_many_arguments)]
fn gatherv_args(
    rt: &mut Runtime, sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void, rcounts: *const c_int,
    rdispls: *const c_int, rtype: MPI_Datatype, root: c_int, comm: MPI_Comm, req: *mut MPI_Request,
) -> MpiResult<()> {
    // Every member counts the call before any check, so an error (found on some ranks
    // only) cannot shift the next collective's tag.
    let call = begin(rt, comm)?;
    let n = rt.comm(comm)?.group.len();
    let (c, d) = if is_root(rt, comm, root)? { (vec_counts(rt, comm, rcounts, "recvcounts")?, vec_displs(rt, comm, rdispls)?) } else { (vec![0; n], vec![0; n]) };
    gather(rt, sbuf, scount, stype, rbuf, c, Some(d), rtype, root, call, false, req)
}

#[allow(clippy::too_many_arguments)]
fn allgather_args(
    rt: &mut Runtime, sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void, rcount: c_int, rtype: MPI_Datatype,
    comm: MPI_Comm, req: *mut MPI_Request,
) -> MpiResult<()> {
    // Every member counts the call before any check, so an error (found on some ranks
    // only) cannot shift the next collective's tag.
    let call = begin(rt, comm)?;
    let n = rt.comm(comm)?.group.len();
    let rc = check_count(rcount)?;
    check_buf(rbuf, rc * n, rtype)?;
    gather(rt, sbuf, scount, stype, rbuf, vec![rc; n], None, rtype, 0, call, true, req)
}

#[allow(clippy::too_many_arguments)]
fn allgatherv_args(
    rt: &mut Runtime, sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void, rcounts: *const c_int,
    rdispls: *const c_int, rtype: MPI_Datatype, comm: MPI_Comm, req: *mut MPI_Request,
) -> MpiResult<()> {
    // Every member counts the call before any check, so an error (found on some ranks
    // only) cannot shift the next collective's tag.
    let call = begin(rt, comm)?;
    let c = vec_counts(rt, comm, rcounts, "recvcounts")?;
    let d = vec_displs(rt, comm, rdispls)?;
    gather(rt, sbuf, scount, stype, rbuf, c, Some(d), rtype, 0, call, true, req)
}

#[allow(clippy::too_many_arguments)]
fn scatter_args(
    rt: &mut Runtime, sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void, rcount: c_int, rtype: MPI_Datatype,
    root: c_int, comm: MPI_Comm, req: *mut MPI_Request,
) -> MpiResult<()> {
    // Every member counts the call before any check, so an error (found on some ranks
    // only) cannot shift the next collective's tag.
    let call = begin(rt, comm)?;
    let n = rt.comm(comm)?.group.len();
    let sc = if is_root(rt, comm, root)? { check_count(scount)? } else { 0 };
    if is_root(rt, comm, root)? {
        check_buf(sbuf, sc * n, stype)?;
    }
    scatter(rt, sbuf, vec![sc; n], None, stype, rbuf, rcount, rtype, root, call, req)
}

#[allow(clippy::too_many_arguments)]
fn scatterv_args(
    rt: &mut Runtime, sbuf: *const c_void, scounts: *const c_int, sdispls: *const c_int, stype: MPI_Datatype, rbuf: *mut c_void,
    rcount: c_int, rtype: MPI_Datatype, root: c_int, comm: MPI_Comm, req: *mut MPI_Request,
) -> MpiResult<()> {
    // Every member counts the call before any check, so an error (found on some ranks
    // only) cannot shift the next collective's tag.
    let call = begin(rt, comm)?;
    let n = rt.comm(comm)?.group.len();
    let (c, d) = if is_root(rt, comm, root)? { (vec_counts(rt, comm, scounts, "sendcounts")?, vec_displs(rt, comm, sdispls)?) } else { (vec![0; n], vec![0; n]) };
    scatter(rt, sbuf, c, Some(d), stype, rbuf, rcount, rtype, root, call, req)
}

crate::mpi_export! { MPI_Bcast, PMPI_Bcast, (buf: *mut c_void, count: c_int, dt: MPI_Datatype, root: c_int, comm: MPI_Comm) {
    call("MPI_Bcast", comm, |rt| bcast(rt, buf, count, dt, root, comm, BLOCKING))
}}
crate::mpi_export! { MPI_Ibcast, PMPI_Ibcast, (buf: *mut c_void, count: c_int, dt: MPI_Datatype, root: c_int, comm: MPI_Comm, req: *mut MPI_Request) {
    call("MPI_Ibcast", comm, |rt| bcast(rt, buf, count, dt, root, comm, req_out(req)?))
}}
crate::mpi_export! { MPI_Gather, PMPI_Gather, (sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void,
        rcount: c_int, rtype: MPI_Datatype, root: c_int, comm: MPI_Comm) {
    call("MPI_Gather", comm, |rt| gather_args(rt, sbuf, scount, stype, rbuf, rcount, rtype, root, comm, BLOCKING))
}}
crate::mpi_export! { MPI_Igather, PMPI_Igather, (sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void,
        rcount: c_int, rtype: MPI_Datatype, root: c_int, comm: MPI_Comm, req: *mut MPI_Request) {
    call("MPI_Igather", comm, |rt| gather_args(rt, sbuf, scount, stype, rbuf, rcount, rtype, root, comm, req_out(req)?))
}}
crate::mpi_export! { MPI_Gatherv, PMPI_Gatherv, (sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void,
        rcounts: *const c_int, rdispls: *const c_int, rtype: MPI_Datatype, root: c_int, comm: MPI_Comm) {
    call("MPI_Gatherv", comm, |rt| gatherv_args(rt, sbuf, scount, stype, rbuf, rcounts, rdispls, rtype, root, comm, BLOCKING))
}}
crate::mpi_export! { MPI_Igatherv, PMPI_Igatherv, (sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void,
        rcounts: *const c_int, rdispls: *const c_int, rtype: MPI_Datatype, root: c_int, comm: MPI_Comm, req: *mut MPI_Request) {
    call("MPI_Igatherv", comm, |rt| gatherv_args(rt, sbuf, scount, stype, rbuf, rcounts, rdispls, rtype, root, comm, req_out(req)?))
}}
crate::mpi_export! { MPI_Allgather, PMPI_Allgather, (sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void,
        rcount: c_int, rtype: MPI_Datatype, comm: MPI_Comm) {
    call("MPI_Allgather", comm, |rt| allgather_args(rt, sbuf, scount, stype, rbuf, rcount, rtype, comm, BLOCKING))
}}
crate::mpi_export! { MPI_Iallgather, PMPI_Iallgather, (sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void,
        rcount: c_int, rtype: MPI_Datatype, comm: MPI_Comm, req: *mut MPI_Request) {
    call("MPI_Iallgather", comm, |rt| allgather_args(rt, sbuf, scount, stype, rbuf, rcount, rtype, comm, req_out(req)?))
}}
crate::mpi_export! { MPI_Allgatherv, PMPI_Allgatherv, (sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void,
        rcounts: *const c_int, rdispls: *const c_int, rtype: MPI_Datatype, comm: MPI_Comm) {
    call("MPI_Allgatherv", comm, |rt| allgatherv_args(rt, sbuf, scount, stype, rbuf, rcounts, rdispls, rtype, comm, BLOCKING))
}}
crate::mpi_export! { MPI_Iallgatherv, PMPI_Iallgatherv, (sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void,
        rcounts: *const c_int, rdispls: *const c_int, rtype: MPI_Datatype, comm: MPI_Comm, req: *mut MPI_Request) {
    call("MPI_Iallgatherv", comm, |rt| allgatherv_args(rt, sbuf, scount, stype, rbuf, rcounts, rdispls, rtype, comm, req_out(req)?))
}}
crate::mpi_export! { MPI_Scatter, PMPI_Scatter, (sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void,
        rcount: c_int, rtype: MPI_Datatype, root: c_int, comm: MPI_Comm) {
    call("MPI_Scatter", comm, |rt| scatter_args(rt, sbuf, scount, stype, rbuf, rcount, rtype, root, comm, BLOCKING))
}}
crate::mpi_export! { MPI_Iscatter, PMPI_Iscatter, (sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void,
        rcount: c_int, rtype: MPI_Datatype, root: c_int, comm: MPI_Comm, req: *mut MPI_Request) {
    call("MPI_Iscatter", comm, |rt| scatter_args(rt, sbuf, scount, stype, rbuf, rcount, rtype, root, comm, req_out(req)?))
}}
crate::mpi_export! { MPI_Scatterv, PMPI_Scatterv, (sbuf: *const c_void, scounts: *const c_int, sdispls: *const c_int, stype: MPI_Datatype,
        rbuf: *mut c_void, rcount: c_int, rtype: MPI_Datatype, root: c_int, comm: MPI_Comm) {
    call("MPI_Scatterv", comm, |rt| scatterv_args(rt, sbuf, scounts, sdispls, stype, rbuf, rcount, rtype, root, comm, BLOCKING))
}}
crate::mpi_export! { MPI_Iscatterv, PMPI_Iscatterv, (sbuf: *const c_void, scounts: *const c_int, sdispls: *const c_int, stype: MPI_Datatype,
        rbuf: *mut c_void, rcount: c_int, rtype: MPI_Datatype, root: c_int, comm: MPI_Comm, req: *mut MPI_Request) {
    call("MPI_Iscatterv", comm, |rt| scatterv_args(rt, sbuf, scounts, sdispls, stype, rbuf, rcount, rtype, root, comm, req_out(req)?))
}}
crate::mpi_export! { MPI_Reduce, PMPI_Reduce, (sbuf: *const c_void, rbuf: *mut c_void, count: c_int, dt: MPI_Datatype, op: MPI_Op, root: c_int, comm: MPI_Comm) {
    call("MPI_Reduce", comm, |rt| reduce(rt, Collective::Reduce, sbuf, rbuf, count, dt, op, root, comm, BLOCKING))
}}
crate::mpi_export! { MPI_Ireduce, PMPI_Ireduce, (sbuf: *const c_void, rbuf: *mut c_void, count: c_int, dt: MPI_Datatype, op: MPI_Op, root: c_int, comm: MPI_Comm, req: *mut MPI_Request) {
    call("MPI_Ireduce", comm, |rt| reduce(rt, Collective::Reduce, sbuf, rbuf, count, dt, op, root, comm, req_out(req)?))
}}
crate::mpi_export! { MPI_Allreduce, PMPI_Allreduce, (sbuf: *const c_void, rbuf: *mut c_void, count: c_int, dt: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) {
    call("MPI_Allreduce", comm, |rt| reduce(rt, Collective::Allreduce, sbuf, rbuf, count, dt, op, 0, comm, BLOCKING))
}}
crate::mpi_export! { MPI_Iallreduce, PMPI_Iallreduce, (sbuf: *const c_void, rbuf: *mut c_void, count: c_int, dt: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, req: *mut MPI_Request) {
    call("MPI_Iallreduce", comm, |rt| reduce(rt, Collective::Allreduce, sbuf, rbuf, count, dt, op, 0, comm, req_out(req)?))
}}
crate::mpi_export! { MPI_Reduce_scatter_block, PMPI_Reduce_scatter_block, (sbuf: *const c_void, rbuf: *mut c_void, count: c_int, dt: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) {
    call("MPI_Reduce_scatter_block", comm, |rt| reduce(rt, Collective::ReduceScatter, sbuf, rbuf, count, dt, op, 0, comm, BLOCKING))
}}
crate::mpi_export! { MPI_Ireduce_scatter_block, PMPI_Ireduce_scatter_block, (sbuf: *const c_void, rbuf: *mut c_void, count: c_int, dt: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, req: *mut MPI_Request) {
    call("MPI_Ireduce_scatter_block", comm, |rt| reduce(rt, Collective::ReduceScatter, sbuf, rbuf, count, dt, op, 0, comm, req_out(req)?))
}}
crate::mpi_export! { MPI_Scan, PMPI_Scan, (sbuf: *const c_void, rbuf: *mut c_void, count: c_int, dt: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) {
    call("MPI_Scan", comm, |rt| reduce(rt, Collective::Scan, sbuf, rbuf, count, dt, op, 0, comm, BLOCKING))
}}
crate::mpi_export! { MPI_Iscan, PMPI_Iscan, (sbuf: *const c_void, rbuf: *mut c_void, count: c_int, dt: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, req: *mut MPI_Request) {
    call("MPI_Iscan", comm, |rt| reduce(rt, Collective::Scan, sbuf, rbuf, count, dt, op, 0, comm, req_out(req)?))
}}
crate::mpi_export! { MPI_Exscan, PMPI_Exscan, (sbuf: *const c_void, rbuf: *mut c_void, count: c_int, dt: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) {
    call("MPI_Exscan", comm, |rt| reduce(rt, Collective::Exscan, sbuf, rbuf, count, dt, op, 0, comm, BLOCKING))
}}
crate::mpi_export! { MPI_Iexscan, PMPI_Iexscan, (sbuf: *const c_void, rbuf: *mut c_void, count: c_int, dt: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, req: *mut MPI_Request) {
    call("MPI_Iexscan", comm, |rt| reduce(rt, Collective::Exscan, sbuf, rbuf, count, dt, op, 0, comm, req_out(req)?))
}}
