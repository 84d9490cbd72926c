//! The collectives on intercommunicators (MPI-3.1 5.2.2): argument checks as each group
//! sees them (MPI_ROOT / MPI_PROC_NULL / a remote rank for the root; counts and
//! displacements per remote rank, or per local rank for reduce_scatter), the packing of
//! user buffers, and the schedules of `ferry_coll::inter`, run over both groups (local
//! group first). Blocking and non-blocking share everything. No MPI_IN_PLACE: MPI has
//! none for intercommunicators.

use std::os::raw::{c_int, c_void};

use ferry_coll::inter::movers::{self, Blocks};
use ferry_coll::inter::{reductions, Root, Sides};
use ferry_coll::Schedule;

use super::{check_buf, check_count, in_place, product, submit_schedule, sum_counts, Call, Counts, Displs, Region};
use crate::consts::*;
use crate::error::{err, MpiResult};
use crate::op::{reduction, Reduction};
use crate::objects::Runtime;
use crate::objects::threads::Locked;

/// Counts (and displacements) of a buffer's blocks, one per rank of a group, from the C
/// arguments: one count for all, or arrays.
#[derive(Clone, Copy)]
pub(crate) enum Layout {
    Uniform(MPI_Count),
    Varying(Counts, Displs),
    /// Counts only, the blocks back to back (reduce_scatter's recvcounts).
    Packed(Counts),
}

/// The call spread over both groups, and this process's place in them.
fn widen(mut call: Call) -> (Call, Sides) {
    let remote = call.remote.take().expect("an intercommunicator call");
    let s = Sides::local_first(call.rank, call.size, remote.len());
    std::sync::Arc::make_mut(&mut call.group).extend(remote.iter());
    call.size += remote.len();
    (call, s)
}

fn root_of(s: &Sides, root: c_int) -> MpiResult<Root> {
    match root {
        MPI_ROOT => Ok(Root::Here),
        MPI_PROC_NULL => Ok(Root::Bystander),
        r if r >= 0 && (r as usize) < s.remote => Ok(Root::Remote(r as usize)),
        r => err(MPI_ERR_ROOT, format!("invalid root {r} on an intercommunicator (MPI_ROOT, MPI_PROC_NULL or a remote rank below {})", s.remote)),
    }
}

fn not_in_place(buf: *const c_void, what: &str) -> MpiResult<()> {
    if in_place(buf) {
        return err(MPI_ERR_BUFFER, format!("MPI_IN_PLACE cannot be the {what} on an intercommunicator"));
    }
    Ok(())
}

/// (element offset, count) of `n` blocks.
fn element_blocks(n: usize, layout: Layout, what: &str) -> MpiResult<Vec<(usize, usize)>> {
    match layout {
        Layout::Uniform(c) => {
            let c = check_count(c)?;
            product(c, n, &format!("{what}count times the ranks"))?;
            Ok((0..n).map(|i| (i * c, c)).collect())
        }
        Layout::Varying(counts, displs) => {
            let c = counts.read(n, &format!("{what}counts"))?;
            let d = displs.read(n, &format!("{what} displacements"))?;
            Ok(d.into_iter().zip(c).collect())
        }
        Layout::Packed(counts) => {
            let c = counts.read(n, &format!("{what}counts"))?;
            sum_counts(&c, &format!("{what}counts"))?;
            Ok(c.iter().scan(0, |at, c| Some((std::mem::replace(at, *at + *c), *c))).collect())
        }
    }
}

/// A user buffer of blocks: its region (packed for the schedule), the byte layout, and
/// what unpacks a result into it.
pub(crate) struct Side {
    pub(super) region: Region,
    pub(super) blocks: Blocks,
    pub(super) finish: Option<Box<dyn FnOnce()>>,
}

/// `buf` holding `n` blocks of `dt` as `layout` says; `input`: its data goes out, else the
/// result comes in.
fn side(rt: &mut Runtime, buf: *const c_void, n: usize, layout: Layout, dt: MPI_Datatype, input: bool, what: &str) -> MpiResult<Side> {
    not_in_place(buf, &format!("{what} buffer"))?;
    let t = rt.datatype(dt)?;
    let bl = element_blocks(n, layout, what)?;
    check_buf(buf, bl.iter().fold(0, |t: usize, b| t.saturating_add(b.1)), dt)?;
    let size = t.size();
    for b in &bl {
        product(b.0.saturating_add(b.1), size, &format!("the {what} blocks' elements times their size"))?;
    }
    let blocks = Blocks { sizes: bl.iter().map(|b| b.1 * size).collect(), displs: bl.iter().map(|b| b.0 * size).collect() };
    let region = Region::new(buf, &t, ferry_coll::inter::extent(&blocks.sizes, &blocks.displs), &bl, input);
    let finish = if input { None } else { region.unpacker(buf as *mut c_void, t, bl) };
    Ok(Side { region, blocks, finish })
}

fn none() -> Side {
    Side { region: Region::none(), blocks: Blocks { sizes: Vec::new(), displs: Vec::new() }, finish: None }
}

fn bytes(s: &Side) -> usize {
    s.blocks.sizes.iter().fold(0, |t, b| t.saturating_add(*b))
}

#[allow(clippy::too_many_arguments)]
fn run(rt: &mut Locked, call: Call, sched: Schedule, name: &'static str, send: Side, recv: Side, red: Option<Reduction>, req: *mut MPI_Request) -> MpiResult<()> {
    submit_schedule(rt, call, sched, name, [send.region, recv.region], red, recv.finish, req)
}

pub(crate) fn barrier(rt: &mut Locked, call: Call, req: *mut MPI_Request) -> MpiResult<()> {
    let (call, s) = widen(call);
    run(rt, call, movers::barrier(&s), "barrier.inter", none(), none(), None, req)
}

pub(crate) fn bcast(rt: &mut Locked, call: Call, buf: *mut c_void, count: c_int, dt: MPI_Datatype, root: c_int, req: *mut MPI_Request) -> MpiResult<()> {
    let (call, s) = widen(call);
    let root = root_of(&s, root)?;
    let buffer = match root {
        Root::Here => side(rt, buf, 1, Layout::Uniform(count.into()), dt, true, "broadcast")?,
        Root::Remote(_) => side(rt, buf, 1, Layout::Uniform(count.into()), dt, false, "broadcast")?,
        Root::Bystander => none(),
    };
    // The broadcast buffer is `Recv` on every process: an input at the root.
    let sched = movers::bcast(&s, root, bytes(&buffer));
    run(rt, call, sched, "bcast.inter", none(), buffer, None, req)
}

/// Gather(v) and, with `all`, Allgather(v): `rlayout` per remote rank.
#[allow(clippy::too_many_arguments)]
pub(super) fn gather(
    rt: &mut Locked, call: Call, sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void, rlayout: Layout, rtype: MPI_Datatype,
    root: Option<c_int>, req: *mut MPI_Request,
) -> MpiResult<()> {
    let (call, s) = widen(call);
    let Some(root) = root else {
        let send = side(rt, sbuf, 1, Layout::Uniform(scount.into()), stype, true, "send")?;
        let recv = side(rt, rbuf, s.remote, rlayout, rtype, false, "recv")?;
        let sched = movers::allgather(&s, bytes(&send), &recv.blocks.sizes, &recv.blocks.displs);
        return run(rt, call, sched, "allgather.inter", send, recv, None, req);
    };
    let root = root_of(&s, root)?;
    let (send, recv) = match root {
        Root::Here => (none(), side(rt, rbuf, s.remote, rlayout, rtype, false, "recv")?),
        Root::Remote(_) => (side(rt, sbuf, 1, Layout::Uniform(scount.into()), stype, true, "send")?, none()),
        Root::Bystander => (none(), none()),
    };
    let sched = movers::gather(&s, root, bytes(&send), &recv.blocks.sizes, &recv.blocks.displs);
    run(rt, call, sched, "gather.inter", send, recv, None, req)
}

/// Scatter(v): `slayout` per remote rank.
#[allow(clippy::too_many_arguments)]
pub(super) fn scatter(
    rt: &mut Locked, call: Call, sbuf: *const c_void, slayout: Layout, stype: MPI_Datatype, rbuf: *mut c_void, rcount: c_int, rtype: MPI_Datatype,
    root: c_int, req: *mut MPI_Request,
) -> MpiResult<()> {
    let (call, s) = widen(call);
    let root = root_of(&s, root)?;
    let (send, recv) = match root {
        Root::Here => (side(rt, sbuf, s.remote, slayout, stype, true, "send")?, none()),
        Root::Remote(_) => (none(), side(rt, rbuf, 1, Layout::Uniform(rcount.into()), rtype, false, "recv")?),
        Root::Bystander => (none(), none()),
    };
    let sched = movers::scatter(&s, root, &send.blocks.sizes, &send.blocks.displs, bytes(&recv));
    run(rt, call, sched, "scatter.inter", send, recv, None, req)
}

/// Alltoall(v): both layouts per remote rank.
#[allow(clippy::too_many_arguments)]
pub(super) fn alltoall(
    rt: &mut Locked, call: Call, sbuf: *const c_void, slayout: Layout, stype: MPI_Datatype, rbuf: *mut c_void, rlayout: Layout, rtype: MPI_Datatype,
    req: *mut MPI_Request,
) -> MpiResult<()> {
    let (call, s) = widen(call);
    let send = side(rt, sbuf, s.remote, slayout, stype, true, "send")?;
    let recv = side(rt, rbuf, s.remote, rlayout, rtype, false, "recv")?;
    let sched = movers::alltoall(&s, &send.blocks, &recv.blocks);
    run(rt, call, sched, "alltoall.inter", send, recv, None, req)
}

/// Alltoallw: the typed regions are packed peer after peer by the caller.
pub(crate) fn alltoallw(rt: &mut Locked, call: Call, send: Side, recv: Side, req: *mut MPI_Request) -> MpiResult<()> {
    let (call, s) = widen(call);
    let sched = movers::alltoall(&s, &send.blocks, &recv.blocks);
    run(rt, call, sched, "alltoallw.inter", send, recv, None, req)
}

/// Which combining collective.
#[derive(Clone, Copy)]
pub(crate) enum Combine {
    Reduce(c_int),
    Allreduce,
    /// Reduce_scatter(_block): the result blocks per local rank.
    Scatter(Layout),
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn reduce(rt: &mut Locked, call: Call, kind: Combine, sbuf: *const c_void, rbuf: *mut c_void, count: MPI_Count, dt: MPI_Datatype, op: MPI_Op, req: *mut MPI_Request) -> MpiResult<()> {
    let (call, s) = widen(call);
    // A bystander of a reduce (MPI_PROC_NULL) passes no meaningful buffer, type or operation.
    let bystander = matches!(kind, Combine::Reduce(MPI_PROC_NULL));
    let red = if bystander { None } else { Some(reduction(rt, op, dt)?) };
    let (sched, send, recv) = match kind {
        Combine::Reduce(root) => {
            let root = root_of(&s, root)?;
            let (send, recv) = match root {
                Root::Here => (none(), side(rt, rbuf, 1, Layout::Uniform(count), dt, false, "recv")?),
                Root::Remote(_) => (side(rt, sbuf, 1, Layout::Uniform(count), dt, true, "send")?, none()),
                Root::Bystander => (none(), none()),
            };
            (reductions::reduce(&s, root, bytes(&send).max(bytes(&recv))), send, recv)
        }
        Combine::Allreduce => {
            let send = side(rt, sbuf, 1, Layout::Uniform(count), dt, true, "send")?;
            let recv = side(rt, rbuf, 1, Layout::Uniform(count), dt, false, "recv")?;
            (reductions::allreduce(&s, bytes(&send)), send, recv)
        }
        Combine::Scatter(layout) => {
            // The input: every local rank's block, back to back.
            let size = rt.datatype(dt)?.size();
            let per_rank: Vec<usize> = element_blocks(s.local, layout, "recv")?.iter().map(|b| b.1).collect();
            let total: usize = per_rank.iter().sum();
            let send = side(rt, sbuf, 1, Layout::Uniform(total as MPI_Count), dt, true, "send")?;
            let recv = side(rt, rbuf, 1, Layout::Uniform(per_rank[s.rank] as MPI_Count), dt, false, "recv")?;
            let blocks: Vec<usize> = per_rank.iter().map(|c| c * size).collect();
            let displs: Vec<usize> = blocks.iter().scan(0, |at, b| Some(std::mem::replace(at, *at + b))).collect();
            (reductions::reduce_scatter(&s, &blocks, &displs), send, recv)
        }
    };
    run(rt, call, sched, "reduce.inter", send, recv, red, req)
}

/// Scan and Exscan: MPI defines them on intracommunicators only.
pub(super) fn refuse(what: &str) -> MpiResult<()> {
    err(MPI_ERR_COMM, format!("{what} needs an intracommunicator, not an intercommunicator"))
}
