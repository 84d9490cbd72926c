//! The shared-memory collectives of a communicator whose ranks all run on one host
//! (`ferry_coll`'s `<collective>/shm.rs`, over the communicator's host area): making the area
//! at the first call that runs one, running a prepared call through it (any datatype, packed
//! by the call's regions), the direct paths that the exports take for the common case, and
//! the wait for a flag.
//!
//! The direct paths (`try_*`) serve a blocking call on a communicator whose area is made,
//! with a contiguous predefined datatype, a predefined operation and arguments that need no
//! second look, when the decision table (or the override) picks the shared-memory algorithm.
//! They do what the general path does for such a call (count it, raise the tools event, pick
//! and count the algorithm) and no more; anything else returns `None`, and the general path,
//! which checks every argument and reports errors, runs the call.
//!
//! A wait follows the engine's: spin for a few microseconds, then yield (with more ranks than
//! cores, yield from the start) until `FERRY_SPIN_US` have passed, then sleep on the area's
//! futex, woken by the flag's writer. It drives the engine between sleeps (non-blocking calls in flight still move, and a lost peer still ends
//! the job), and with MPI_THREAD_MULTIPLE it lets the runtime go while it sleeps.

use std::os::raw::{c_int, c_void};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ferry_coll::select::CallKind;
use ferry_coll::slots::{steps, Run, Step, SLOT_BYTES};
use ferry_coll::Collective;
use ferry_core::engine::matching::Pattern;
use ferry_core::engine::HostArea;
use ferry_data::reduce_op::{self, ElemType, PredefinedOp};

use super::{in_place, shape_params, uniform, Prepared};
use crate::consts::*;
use crate::error::{err, MpiResult};
use crate::objects::host_coll::{CommArea, HostColl};
use crate::objects::threads::Locked;
use crate::objects::Runtime;
use crate::op::Reduction;

/// The internal tag of the exchanges that make a communicator's area.
const TAG_HOST_AREA: i32 = crate::internal::TAG_HOST_AREA;
/// Longest sleep of a wait with nothing else in flight (a lost peer still ends the job: the
/// engine looks between two sleeps), and with calls in flight that the engine moves.
const NAP: Duration = Duration::from_millis(50);
const SHORT_NAP: Duration = Duration::from_millis(1);
/// How long a wait spins on the processor before it gives the core away between looks, as
/// the engine's wait does (`TIGHT_SPIN` there): with other processes on the cores, a rank
/// that spun all of `FERRY_SPIN_US` would keep the one that publishes the flag from running.
const TIGHT_SPIN: Duration = Duration::from_micros(3);

/// Whether the ranks of `comm` all share this host's memory (so that its blocking calls may
/// run the shared-memory algorithms); looked at once per communicator.
pub(super) fn eligible(rt: &mut Runtime, comm: MPI_Comm) -> bool {
    // A dead writer's flag never comes: with recovery enabled, collectives go as messages,
    // whose failures the engine reports.
    if crate::objects::fault::recovery() {
        return false;
    }
    let Some(c) = rt.comms.get(&comm) else { return false };
    match c.host {
        HostColl::Eligible | HostColl::Ready(_) => return true,
        HostColl::Off | HostColl::Hosts => return false,
        HostColl::Unknown => {}
    }
    let host = rt.host_ranks();
    let yes = !c.is_inter() && (c.group.len() == 1 || (rt.engine.host_area_name("").is_some() && c.group.iter().all(|w| host.binary_search(w).is_ok())));
    let state = if yes {
        HostColl::Eligible
    } else if !c.is_inter() && spread(rt, &c.group) {
        HostColl::Hosts
    } else {
        HostColl::Off
    };
    rt.comms.get_mut(&comm).expect("looked up above").host = state;
    yes
}

/// Whether the ranks of `comm` span several hosts with more than one on some (the
/// hierarchical collectives' case).
pub(super) fn several_hosts(rt: &mut Runtime, comm: MPI_Comm) -> bool {
    eligible(rt, comm);
    rt.comms.get(&comm).is_some_and(|c| matches!(c.host, HostColl::Hosts))
}

/// Whether the world ranks `group` run on several hosts, more than one on some.
fn spread(rt: &Runtime, group: &[u32]) -> bool {
    let Some(hosts) = rt.hosts_of(group) else { return false };
    let mut distinct: Vec<u32> = hosts.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    distinct.len() > 1 && distinct.len() < group.len()
}

/// Make the area of `comm` if it has none yet: rank 0 creates it, the others open it once
/// they know it exists, and its name goes once all have it. Every rank learns whether all
/// succeeded; if not, the communicator's collectives run as schedules from now on. Whether
/// the area is there.
fn ensure_area(rt: &mut Locked, comm: MPI_Comm) -> MpiResult<bool> {
    let c = rt.comm(comm)?;
    match c.host {
        HostColl::Ready(_) => return Ok(true),
        HostColl::Eligible => {}
        _ => return Ok(false),
    }
    let (ctx, group, me) = (c.ctx, c.group.clone(), c.rank as usize);
    let n = group.len();
    let made = if n == 1 {
        HostArea::private(SLOT_BYTES).map_err(|e| e.to_string())
    } else {
        let lowest = group.iter().min().copied().unwrap_or(0);
        let name = rt.engine.host_area_name(&format!("c{ctx}-{lowest}")).expect("eligible communicators share the host's memory");
        let created = if me == 0 { Some(HostArea::create(&name, n, 0, SLOT_BYTES)) } else { None };
        let made = if !all_ok(rt, ctx, &group, me, created.as_ref().is_none_or(|a| a.is_ok()))? {
            Err(format!("rank 0 could not make {name}"))
        } else {
            let mapped = match created {
                Some(a) => a,
                None => HostArea::open(&name, n, me, SLOT_BYTES),
            };
            let all = all_ok(rt, ctx, &group, me, mapped.is_ok())?;
            if me == 0 {
                let _ = HostArea::unlink(&name);
            }
            match mapped {
                Ok(_) if !all => Err(format!("another rank could not map {name}")),
                m => m.map_err(|e| e.to_string()),
            }
        };
        made
    };
    let c = rt.comms.get_mut(&comm).expect("looked up above");
    match made {
        Ok(area) => {
            c.host = HostColl::Ready(Box::new(CommArea::new(area)));
            Ok(true)
        }
        Err(why) => {
            ferry_core::warn!("coll", "communicator of context {ctx}: no shared-memory collectives ({why})");
            c.host = HostColl::Off;
            Ok(false)
        }
    }
}

/// Whether every rank of `group` (this one is `group[me]`) says `ok`: one byte from each to
/// each on the communicator's internal context. The wait lets the runtime go under
/// MPI_THREAD_MULTIPLE, as a collective's does: another thread of this rank may be making
/// another communicator's area, which a peer needs before it can come to this one.
fn all_ok(rt: &mut Locked, ctx: u32, group: &[u32], me: usize, ok: bool) -> MpiResult<bool> {
    let mine = [ok as u8];
    let mut theirs = vec![0u8; group.len()];
    let (mut recvs, mut sends) = (Vec::with_capacity(group.len()), Vec::with_capacity(group.len()));
    for (r, &w) in group.iter().enumerate().filter(|&(r, _)| r != me) {
        let pat = Pattern { ctx: ctx + 1, src: Some(w), tag: Some(TAG_HOST_AREA) };
        // SAFETY: `theirs` and `mine` outlive the wait below and are not touched until then.
        unsafe {
            recvs.push((r, rt.engine.irecv(pat, theirs.as_mut_ptr().add(r), 1)));
            sends.extend(rt.engine.isend(w, ctx + 1, TAG_HOST_AREA, mine.as_ptr(), 1, false));
        }
    }
    rt.wait_until(|e| recvs.iter().all(|&(_, q)| e.is_done(q)) && sends.iter().all(|&q| e.is_done(q)))?;
    let mut all = ok;
    for q in sends {
        rt.engine.take(q).expect("completed above")?;
    }
    for (r, q) in recvs {
        let got = rt.engine.take(q).expect("completed above")?;
        all &= got.bytes == 1 && theirs[r] == 1;
    }
    Ok(all)
}

/// Run a prepared blocking call of a shared-memory algorithm; where its area cannot be made,
/// the schedule the table picks for a communicator off one host runs instead.
pub(super) fn run(rt: &mut Locked, mut p: Prepared) -> MpiResult<()> {
    let comm = p.call.comm;
    if !ensure_area(rt, comm)? {
        let kind = CallKind { collective: p.info.collective, varying: false };
        let commutative = p.red.as_ref().is_none_or(|r| r.commutative());
        let block = p.shape.map_or_else(|| p.params.as_ref().map_or(0, |q| q.blocks[0]), |s| s.block);
        p.info = rt.coll.pick(kind, commutative, false, false, p.call.size, block);
        if let Some(s) = p.shape.take() {
            p.shape = uniform(p.info, s.block, s.root, s.in_place, p.red.as_ref());
            if p.shape.is_none() && p.params.is_none() {
                p.params = Some(shape_params(&p.call, &s));
            }
        }
        return super::run_now(rt, p);
    }
    let (root, block, in_place) = match (&p.shape, &p.params) {
        (Some(s), _) => (s.root, s.block, s.in_place),
        (None, Some(q)) => (q.root, q.blocks[0], q.in_place),
        (None, None) => unreachable!("a prepared call has a shape or parameters"),
    };
    let (send, recv) = (p.send.ptr, p.recv.ptr);
    let result = match p.info.collective {
        Collective::Barrier => drive(rt, comm, |run, s| steps::barrier(run, s)),
        // SAFETY (all four): the regions hold the call's packed data, `block` bytes (all
        // blocks for the allgather's receive side), valid until the call returns; `block`
        // fits the slots (the algorithm applied).
        Collective::Bcast => drive(rt, comm, |run, s| unsafe { steps::bcast(run, s, root, recv, block) }),
        Collective::Allgather => {
            // The table chose from the send side; a receive block beyond the slots (the
            // rank's two sides disagree: an erroneous program) moves what the slots hold, in
            // step with the others, and then reports the truncation.
            let len = block.min(SLOT_BYTES);
            let input = if in_place { recv.wrapping_add(p.call.rank * block) as *const u8 } else { send as *const u8 };
            drive(rt, comm, |run, s| unsafe { steps::allgather(run, s, input, recv, len) }).and_then(|()| {
                if len < block {
                    return err(MPI_ERR_TRUNCATE, format!("allgather: receive blocks of {block} bytes, more than the send side that chose the shared-memory algorithm"));
                }
                Ok(())
            })
        }
        Collective::Reduce | Collective::Allreduce => {
            let red = p.red.as_ref().expect("a reduction has its operation");
            let mut combine = |src: *const u8, dst: *mut u8, len: usize| combine_with(red, src, dst, len);
            let input = if in_place { recv as *const u8 } else { send as *const u8 };
            if p.info.collective == Collective::Reduce {
                drive(rt, comm, |run, s| unsafe { steps::reduce(run, s, root, input, recv, block, &mut combine) })
            } else {
                drive(rt, comm, |run, s| unsafe { steps::allreduce(run, s, input, recv, block, &mut combine) })
            }
        }
        Collective::Gather | Collective::Scatter | Collective::Alltoall => super::onhost_movers::run_blocks(rt, &p, root, block, in_place),
        c => err(MPI_ERR_INTERN, format!("no shared-memory algorithm for {}", c.name())),
    };
    result?;
    if let Some(f) = p.finish.take() {
        f();
    }
    Ok(())
}

/// `dst = src op dst` over `len` bytes of packed elements (a predefined operation: the
/// shared-memory algorithms apply to no other).
fn combine_with(red: &Reduction, src: *const u8, dst: *mut u8, len: usize) {
    // SAFETY: the algorithms pass distinct ranges valid for `len` bytes.
    let (s, d) = unsafe { (std::slice::from_raw_parts(src, len), std::slice::from_raw_parts_mut(dst, len)) };
    red.apply(s, d).expect("a predefined operation on a type it was checked for");
}

/// Run one call on `comm`'s area: begin it, step it until done, waiting for flags between.
#[inline]
pub(super) fn drive(rt: &mut Locked, comm: MPI_Comm, mut step: impl FnMut(&mut Run, &mut &HostArea) -> Step) -> MpiResult<()> {
    let Some(HostColl::Ready(ca)) = rt.comms.get_mut(&comm).map(|c| &mut c.host) else {
        return err(MPI_ERR_INTERN, "the communicator's host area is gone");
    };
    let mut run = ca.cursor.begin();
    match step(&mut run, &mut &*ca.area) {
        Step::Wait { rank, seq } => {
            let area = ca.area.clone();
            drive_waiting(rt, comm, area, run, (rank, seq), step)
        }
        end => {
            ca.cursor.end(&run);
            outcome(end)
        }
    }
}

/// What a call that ended tells its caller.
#[inline]
fn outcome(end: Step) -> MpiResult<()> {
    match end {
        Step::Truncated { rank, sent } => err(MPI_ERR_TRUNCATE, format!("rank {rank} sent {sent} bytes through the slots, more than this rank's buffer takes (the ranks disagree on the counts)")),
        _ => Ok(()),
    }
}

/// The rest of [`drive`] once a call has to wait.
#[cold]
#[inline(never)]
fn drive_waiting(rt: &mut Locked, comm: MPI_Comm, area: Arc<HostArea>, mut run: Run, mut wait: (usize, u64), mut step: impl FnMut(&mut Run, &mut &HostArea) -> Step) -> MpiResult<()> {
    let end = loop {
        wait_flag(rt, &area, wait.0, wait.1)?;
        match step(&mut run, &mut &*area) {
            Step::Wait { rank, seq } => wait = (rank, seq),
            end => break end,
        }
    };
    if let Some(HostColl::Ready(ca)) = rt.comms.get_mut(&comm).map(|c| &mut c.host) {
        ca.cursor.end(&run);
    }
    outcome(end)
}

/// Wait until rank `rank`'s flag in `area` is at `seq`: spin, then sleep, driving the engine
/// between sleeps (see the module doc).
fn wait_flag(rt: &mut Locked, area: &HostArea, rank: usize, seq: u64) -> MpiResult<()> {
    let ready = || area.flag(rank) >= seq;
    let (spin, yielding) = (rt.engine.spin(), rt.engine.is_oversubscribed());
    let start = Instant::now();
    // Spin (or yield) for a while, then sleep until the flag's writer wakes us or the nap
    // ends; whether the flag is there.
    let wait = |spin: Duration, nap: Duration| {
        loop {
            let yielding = yielding || start.elapsed() >= TIGHT_SPIN;
            for _ in 0..64 {
                if ready() {
                    return true;
                }
                if yielding {
                    std::thread::yield_now();
                } else {
                    std::hint::spin_loop();
                }
            }
            if start.elapsed() >= spin {
                break;
            }
        }
        area.sleep_until(Instant::now() + nap, ready)
    };
    if rt.others_may_call() {
        // MPI_THREAD_MULTIPLE: the other threads of this rank may call MPI meanwhile; one of
        // them may be the one a peer needs before it can publish what we wait for.
        loop {
            let nap = if rt.engine.has_requests() { SHORT_NAP } else { NAP };
            if rt.unlocked(|| wait(spin, nap)) {
                return Ok(());
            }
            rt.engine.progress(Some(Duration::ZERO))?;
        }
    }
    loop {
        let yielding = yielding || start.elapsed() >= TIGHT_SPIN;
        for _ in 0..64 {
            if ready() {
                return Ok(());
            }
            if yielding {
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
        if rt.engine.has_requests() {
            rt.engine.progress(Some(Duration::ZERO))?;
        }
        if start.elapsed() >= spin {
            break;
        }
    }
    loop {
        rt.engine.progress(Some(Duration::ZERO))?;
        let nap = if rt.engine.has_requests() { SHORT_NAP } else { NAP };
        if wait(Duration::ZERO, nap) {
            return Ok(());
        }
    }
}

// ---- the direct paths ---------------------------------------------------------------------

/// The communicator's area, when the direct path may run a call of `size` ranks there.
#[inline]
pub(super) fn ready_area(rt: &mut Runtime, comm: MPI_Comm) -> Option<&mut CommArea> {
    match &mut rt.comms.get_mut(&comm)?.host {
        HostColl::Ready(ca) => Some(ca),
        _ => None,
    }
}

/// Count the call as the general path does (`coll::begin`), raise the tools event, and say
/// whether the table picks the shared-memory algorithm for it.
#[inline]
pub(super) fn take_call(rt: &mut Runtime, comm: MPI_Comm, coll: Collective, bytes: usize) -> bool {
    let Some(c) = rt.comms.get_mut(&comm) else { return false };
    let (size, rank) = (c.group.len(), c.rank);
    let info = rt.coll.pick(CallKind { collective: coll, varying: false }, true, true, false, size, bytes);
    if info.shared.is_none() {
        return false;
    }
    let c = rt.comms.get_mut(&comm).expect("looked up above");
    let seq = c.coll_seq.next(true);
    crate::tools::collective_begun(rt, comm, seq, true, size, rank);
    true
}

/// Size of a contiguous datatype's data, if `dt` is one (the type's shape is cached).
#[inline]
pub(super) fn contiguous(rt: &mut Runtime, dt: MPI_Datatype) -> Option<usize> {
    match rt.type_shape(dt) {
        Ok((size, true)) => Some(size),
        _ => None,
    }
}

/// `count` elements of `size` bytes that fit a slot, with a buffer where there is data.
#[inline]
pub(super) fn fits(buf: *const c_void, count: c_int, size: usize) -> Option<usize> {
    let bytes = (count as usize).checked_mul(size)?;
    (count >= 0 && bytes <= SLOT_BYTES && (!buf.is_null() || bytes == 0)).then_some(bytes)
}

/// `MPI_Barrier`.
#[inline]
pub(crate) fn try_barrier(rt: &mut Locked, comm: MPI_Comm) -> Option<MpiResult<()>> {
    ready_area(rt, comm)?;
    if !take_call(rt, comm, Collective::Barrier, 0) {
        return None;
    }
    Some(drive(rt, comm, |run, s| steps::barrier(run, s)))
}

/// `MPI_Bcast`.
#[inline]
pub(crate) fn try_bcast(rt: &mut Locked, buf: *mut c_void, count: c_int, dt: MPI_Datatype, root: c_int, comm: MPI_Comm) -> Option<MpiResult<()>> {
    let size = contiguous(rt, dt)?;
    let bytes = fits(buf, count, size)?;
    let ranks = ready_area(rt, comm)?.area.ranks();
    if root < 0 || root as usize >= ranks || !take_call(rt, comm, Collective::Bcast, bytes) {
        return None;
    }
    let (root, buf) = (root as usize, buf as *mut u8);
    // SAFETY: MPI's contract: `buf` holds `count` elements of a contiguous type, `bytes`
    // bytes, which fit the slots.
    Some(drive(rt, comm, |run, s| unsafe { steps::bcast(run, s, root, buf, bytes) }))
}

/// `MPI_Allgather` with the same contiguous datatype on both sides.
#[inline]
#[allow(clippy::too_many_arguments)]
pub(crate) fn try_allgather(rt: &mut Locked, sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void, rcount: c_int, rtype: MPI_Datatype, comm: MPI_Comm) -> Option<MpiResult<()>> {
    if stype != rtype || scount != rcount || in_place(sbuf) || rbuf.is_null() || std::ptr::eq(sbuf, rbuf) {
        return None;
    }
    let size = contiguous(rt, stype)?;
    let bytes = fits(sbuf, scount, size)?;
    let me = ready_area(rt, comm)?.area.me();
    // The send buffer as the rank's own block of the receive buffer: the general path refuses it.
    if bytes > 0 && std::ptr::eq(sbuf as *const u8, (rbuf as *const u8).wrapping_add(me.wrapping_mul(bytes))) {
        return None;
    }
    if !take_call(rt, comm, Collective::Allgather, bytes) {
        return None;
    }
    let (input, output) = (sbuf as *const u8, rbuf as *mut u8);
    // SAFETY: MPI's contract: `sbuf` holds one block of `bytes`, `rbuf` one per rank.
    Some(drive(rt, comm, |run, s| unsafe { steps::allgather(run, s, input, output, bytes) }))
}

/// What a reduction on a predefined datatype with a predefined operation reduces as, checked
/// once per (datatype, operation) on this communicator.
#[inline]
fn predefined_reduction(rt: &mut Runtime, comm: MPI_Comm, dt: MPI_Datatype, op: MPI_Op) -> Option<(PredefinedOp, ElemType)> {
    if let Some((d, o, pop, elem)) = ready_area(rt, comm)?.reduction {
        if d == dt && o == op {
            return Some((pop, elem));
        }
    }
    // The predefined datatypes' handles (MPICH's builtin kind): a handle that always means
    // the same type, unlike a derived type's, whose handle may come back for another.
    if (dt as u32) & 0xfc00_0000 != 0x4c00_0000 {
        return None;
    }
    let (pop, elem) = match crate::op::reduction(rt, op, dt) {
        Ok(Reduction::Predefined { op, elem }) => (op, elem),
        _ => return None,
    };
    ready_area(rt, comm)?.reduction = Some((dt, op, pop, elem));
    Some((pop, elem))
}

/// `MPI_Reduce` (`root` Some) and `MPI_Allreduce` (`root` None).
#[inline]
#[allow(clippy::too_many_arguments)]
pub(crate) fn try_reduce(rt: &mut Locked, sbuf: *const c_void, rbuf: *mut c_void, count: c_int, dt: MPI_Datatype, op: MPI_Op, root: Option<c_int>, comm: MPI_Comm) -> Option<MpiResult<()>> {
    let size = contiguous(rt, dt)?;
    let ranks = ready_area(rt, comm)?.area.ranks();
    let me = ready_area(rt, comm)?.area.me();
    let (coll, root) = match root {
        None => (Collective::Allreduce, None),
        Some(r) if r >= 0 && (r as usize) < ranks => (Collective::Reduce, Some(r as usize)),
        Some(_) => return None,
    };
    let gets_result = root.is_none_or(|r| r == me);
    let in_place = in_place(sbuf);
    if in_place && !gets_result || (!in_place && std::ptr::eq(sbuf, rbuf)) {
        return None;
    }
    let bytes = fits(if in_place { rbuf } else { sbuf }, count, size)?;
    if gets_result && rbuf.is_null() && bytes > 0 {
        return None;
    }
    let (pop, elem) = predefined_reduction(rt, comm, dt, op)?;
    if !take_call(rt, comm, coll, bytes) {
        return None;
    }
    let output = rbuf as *mut u8;
    let input = if in_place { output as *const u8 } else { sbuf as *const u8 };
    let mut combine = |src: *const u8, dst: *mut u8, len: usize| {
        // SAFETY: the algorithms pass distinct ranges valid for `len` bytes.
        let (s, d) = unsafe { (std::slice::from_raw_parts(src, len), std::slice::from_raw_parts_mut(dst, len)) };
        reduce_op::apply(pop, elem, s, d).expect("a predefined operation on a type it was checked for");
    };
    // SAFETY: MPI's contract: the buffers hold `count` elements of a contiguous type, `bytes`
    // bytes, which fit the slots; a rank without a result never touches `output`.
    Some(match root {
        Some(root) => drive(rt, comm, |run, s| unsafe { steps::reduce(run, s, root, input, output, bytes, &mut combine) }),
        None => drive(rt, comm, |run, s| unsafe { steps::allreduce(run, s, input, output, bytes, &mut combine) }),
    })
}
