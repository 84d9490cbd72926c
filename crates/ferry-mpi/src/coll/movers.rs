//! The collectives that move data without combining it: Bcast, Gather(v), Allgather(v),
//! Scatter(v), Alltoall(v) and Barrier, blocking and non-blocking.

use std::os::raw::{c_int, c_void};

use ferry_coll::{Collective, Params};

use super::inter::{self, Layout};
use super::{begin, check_buf, check_count, check_root, in_place, no_alias, no_in_place, pick, product, submit, uniform, Call, Counts, Displs, Prepared, Region};
use crate::consts::*;
use crate::error::MpiResult;
use crate::objects::threads::Locked;

pub(crate) fn bcast(rt: &mut Locked, buf: *mut c_void, count: c_int, dt: MPI_Datatype, root: c_int, comm: MPI_Comm, req: *mut MPI_Request) -> MpiResult<()> {
    let call = begin(rt, comm, req)?;
    if call.remote.is_some() {
        return inter::bcast(rt, call, buf, count, dt, root, req);
    }
    let root = check_root(&call, root)?;
    let count = check_count(count)?;
    check_buf(buf, count, dt)?;
    no_in_place(buf, "buffer of a broadcast")?;
    let t = rt.datatype(dt)?;
    let bytes = count * t.size();
    let info = pick(rt, &call, Collective::Bcast, false, true, true, bytes);
    let shape = uniform(info, bytes, root, false, None);
    let params = if shape.is_some() { None } else { Some(Params::uniform(call.rank, call.size, root, bytes)) };
    let blocks = [(0, count)];
    let recv = Region::new(buf, &t, bytes, &blocks, call.rank == root);
    let finish = recv.unpacker(buf, t, blocks.to_vec());
    submit(rt, Prepared { call, info, params, shape, send: Region::none(), recv, red: None, finish }, req)
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

/// (element offset, count) of each rank's block: at `displs`, or packed by `counts[0]`.
fn element_blocks(n: usize, counts: &[usize], displs: &Option<Vec<usize>>) -> Vec<(usize, usize)> {
    match displs {
        Some(d) => d.iter().zip(counts).map(|(d, c)| (*d, *c)).collect(),
        None => (0..n).map(|i| (i * counts[0], counts[0])).collect(),
    }
}

/// Byte sizes and offsets of element blocks of a type of `size` bytes; MPI_ERR_COUNT where a
/// block would end beyond the address space (large counts and displacements can say so).
fn byte_layout(blocks: &[(usize, usize)], size: usize) -> MpiResult<(Vec<usize>, Vec<usize>)> {
    for b in blocks {
        product(b.0.saturating_add(b.1), size, "a block's end times the type's size")?;
    }
    Ok((blocks.iter().map(|b| b.1 * size).collect(), blocks.iter().map(|b| b.0 * size).collect()))
}

fn extent(blocks: &[usize], displs: &[usize]) -> usize {
    blocks.iter().zip(displs).map(|(b, d)| b + d).max().unwrap_or(0)
}

/// Gather(v) and, with `all`, Allgather(v).
#[allow(clippy::too_many_arguments)]
fn gather(
    rt: &mut Locked, sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void, rcounts: Vec<usize>,
    rdispls: Option<Vec<usize>>, rtype: MPI_Datatype, root: c_int, call: Call, all: bool, req: *mut MPI_Request,
) -> MpiResult<()> {
    let root = if all { 0 } else { check_root(&call, root)? };
    let is_root = all || call.rank == root;
    let in_place = is_root && in_place(sbuf);
    if is_root {
        no_in_place(rbuf, "receive buffer")?;
    } else {
        no_in_place(sbuf, "send buffer of a rank other than the root")?;
    }
    let n = call.size;
    let rt_ = if is_root { Some(rt.datatype(rtype)?) } else { None };
    let (st, scount) = if in_place { (None, 0) } else { (Some(rt.datatype(stype)?), check_count(scount)?) };
    if !in_place {
        check_buf(sbuf, scount, stype)?;
    }
    if let Some(r) = rt_.as_ref() {
        // The rank's own block of the receive buffer, as MPICH compares too.
        let own = rdispls.as_ref().map_or(call.rank.saturating_mul(rcounts[call.rank]), |d| d[call.rank]);
        let own = (rbuf as *const u8).wrapping_offset((own as isize).wrapping_mul(r.extent())) as *const c_void;
        no_alias(rt, &call, sbuf, &[rbuf, own], scount > 0)?;
    }
    let my_bytes = match (&st, &rt_) {
        (Some(s), _) => product(scount, s.size(), "sendcount")?,
        (None, Some(r)) => product(rcounts[call.rank], r.size(), "recvcount")?,
        _ => 0,
    };
    let varying = rdispls.is_some();
    let rblocks = if is_root { element_blocks(n, &rcounts, &rdispls) } else { Vec::new() };
    let (blocks, displs) = match &rt_ {
        Some(r) => byte_layout(&rblocks, r.size())?,
        None => non_root_view(n, call.rank, my_bytes, varying),
    };
    let total = extent(&blocks, &displs);
    let coll = if all { Collective::Allgather } else { Collective::Gather };
    // Allgatherv: every rank knows every block, the metric is their mean.
    let metric = if all && varying { blocks.iter().fold(0, |t: usize, b| t.saturating_add(*b)) / n } else { my_bytes };
    let info = pick(rt, &call, coll, varying, true, true, metric);
    let shape = if varying { None } else { uniform(info, blocks[0], root, in_place, None) };
    let params = Params::varying(call.rank, n, root, blocks, displs).in_place(in_place).vcall(varying && !all);
    let send = match (&st, in_place) {
        (Some(s), false) => Region::new(sbuf, s, my_bytes, &[(0, scount)], true),
        _ => Region::none(),
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
    submit(rt, Prepared { call, info, params: Some(params), shape, send, recv, red: None, finish }, req)
}

/// Scatter(v).
#[allow(clippy::too_many_arguments)]
fn scatter(
    rt: &mut Locked, sbuf: *const c_void, scounts: Vec<usize>, sdispls: Option<Vec<usize>>, stype: MPI_Datatype,
    rbuf: *mut c_void, rcount: c_int, rtype: MPI_Datatype, root: c_int, call: Call, req: *mut MPI_Request,
) -> MpiResult<()> {
    let root = check_root(&call, root)?;
    let is_root = call.rank == root;
    let in_place = is_root && in_place(rbuf);
    if is_root {
        no_in_place(sbuf, "send buffer")?;
    } else {
        no_in_place(rbuf, "receive buffer of a rank other than the root")?;
    }
    let n = call.size;
    let st = if is_root { Some(rt.datatype(stype)?) } else { None };
    let (rt_, rcount) = if in_place { (None, 0) } else { (Some(rt.datatype(rtype)?), check_count(rcount)?) };
    if !in_place {
        check_buf(rbuf, rcount, rtype)?;
    }
    if let Some(s) = st.as_ref() {
        let own = sdispls.as_ref().map_or(call.rank.saturating_mul(scounts[call.rank]), |d| d[call.rank]);
        let own = (sbuf as *const u8).wrapping_offset((own as isize).wrapping_mul(s.extent())) as *const c_void;
        no_alias(rt, &call, rbuf, &[sbuf, own], rcount > 0)?;
    }
    let my_bytes = match (&rt_, &st) {
        (Some(r), _) => product(rcount, r.size(), "recvcount")?,
        (None, Some(s)) => product(scounts[call.rank], s.size(), "sendcount")?,
        _ => 0,
    };
    let varying = sdispls.is_some();
    let sblocks = if is_root { element_blocks(n, &scounts, &sdispls) } else { Vec::new() };
    let (blocks, displs) = match &st {
        Some(s) => byte_layout(&sblocks, s.size())?,
        None => non_root_view(n, call.rank, my_bytes, varying),
    };
    let total = extent(&blocks, &displs);
    let info = pick(rt, &call, Collective::Scatter, varying, true, true, my_bytes);
    let shape = if varying { None } else { uniform(info, blocks[0], root, in_place, None) };
    let params = Params::varying(call.rank, n, root, blocks, displs).in_place(in_place).vcall(varying);
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
    submit(rt, Prepared { call, info, params: Some(params), shape, send, recv, red: None, finish }, req)
}

/// One side of an alltoall(v): counts, and displacements for the v-variant.
struct Side {
    counts: Vec<usize>,
    displs: Option<Vec<usize>>,
}

/// Alltoall(v). In place (`sbuf` is MPI_IN_PLACE) the send side is ignored and the receive
/// buffer holds the outgoing blocks at the receive layout.
#[allow(clippy::too_many_arguments)]
fn alltoall(rt: &mut Locked, sbuf: *const c_void, send: Side, stype: MPI_Datatype, rbuf: *mut c_void, recv: Side, rtype: MPI_Datatype, call: Call, req: *mut MPI_Request) -> MpiResult<()> {
    let n = call.size;
    let in_place = in_place(sbuf);
    no_in_place(rbuf, "receive buffer")?;
    no_alias(rt, &call, sbuf, &[rbuf], recv.counts.iter().any(|&c| c > 0))?;
    let varying = recv.displs.is_some();
    let r = rt.datatype(rtype)?;
    let rblocks = element_blocks(n, &recv.counts, &recv.displs);
    check_buf(rbuf, rblocks.iter().fold(0, |t: usize, b| t.saturating_add(b.1)), rtype)?;
    let (rb, rd) = byte_layout(&rblocks, r.size())?;
    let mut params = if varying { Params::varying(call.rank, n, 0, rb.clone(), rd.clone()) } else { Params::alltoall(call.rank, n, rb[0]) };
    let mut send_region = Region::none();
    let metric = if in_place {
        params = params.in_place(true);
        rb[0]
    } else {
        let s = rt.datatype(stype)?;
        let sblocks = element_blocks(n, &send.counts, &send.displs);
        check_buf(sbuf, sblocks.iter().fold(0, |t: usize, b| t.saturating_add(b.1)), stype)?;
        let (sb, sd) = byte_layout(&sblocks, s.size())?;
        send_region = Region::new(sbuf, &s, extent(&sb, &sd), &sblocks, true);
        if varying {
            params.send_blocks = Some(sb.clone());
            params.send_displs = Some(sd);
        }
        sb[0]
    };
    let info = pick(rt, &call, Collective::Alltoall, varying, true, true, metric);
    let recv_region = Region::new(rbuf, &r, extent(&rb, &rd), &rblocks, in_place);
    let finish = recv_region.unpacker(rbuf, r, rblocks);
    let shape = if varying { None } else { uniform(info, rb[0], 0, in_place, None) };
    submit(rt, Prepared { call, info, params: Some(params), shape, send: send_region, recv: recv_region, red: None, finish }, req)
}

pub(crate) fn barrier(rt: &mut Locked, comm: MPI_Comm, req: *mut MPI_Request) -> MpiResult<()> {
    let call = begin(rt, comm, req)?;
    if call.remote.is_some() {
        return inter::barrier(rt, call, req);
    }
    let info = pick(rt, &call, Collective::Barrier, false, true, true, 0);
    let shape = uniform(info, 0, 0, false, None);
    let params = if shape.is_some() { None } else { Some(Params::uniform(call.rank, call.size, 0, 0)) };
    submit(rt, Prepared { call, info, params, shape, send: Region::none(), recv: Region::none(), red: None, finish: None }, req)
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn gather_args(
    rt: &mut Locked, sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void, rcount: c_int, rtype: MPI_Datatype,
    root: c_int, comm: MPI_Comm, req: *mut MPI_Request,
) -> MpiResult<()> {
    let call = begin(rt, comm, req)?;
    if call.remote.is_some() {
        return inter::gather(rt, call, sbuf, scount, stype, rbuf, Layout::Uniform(rcount.into()), rtype, Some(root), req);
    }
    let rc = if call.rank as c_int == root { check_count(rcount)? } else { 0 };
    let n = call.size;
    gather(rt, sbuf, scount, stype, rbuf, vec![rc; n], None, rtype, root, call, false, req)
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn gatherv_args(
    rt: &mut Locked, sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void, rcounts: Counts,
    rdispls: Displs, rtype: MPI_Datatype, root: c_int, comm: MPI_Comm, req: *mut MPI_Request,
) -> MpiResult<()> {
    let call = begin(rt, comm, req)?;
    if call.remote.is_some() {
        return inter::gather(rt, call, sbuf, scount, stype, rbuf, Layout::Varying(rcounts, rdispls), rtype, Some(root), req);
    }
    let n = call.size;
    let (c, d) = if call.rank as c_int == root { (rcounts.read(call.size, "recvcounts")?, rdispls.read(call.size, "displs")?) } else { (vec![0; n], vec![0; n]) };
    gather(rt, sbuf, scount, stype, rbuf, c, Some(d), rtype, root, call, false, req)
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn allgather_args(
    rt: &mut Locked, sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void, rcount: c_int, rtype: MPI_Datatype,
    comm: MPI_Comm, req: *mut MPI_Request,
) -> MpiResult<()> {
    let call = begin(rt, comm, req)?;
    if call.remote.is_some() {
        return inter::gather(rt, call, sbuf, scount, stype, rbuf, Layout::Uniform(rcount.into()), rtype, None, req);
    }
    let n = call.size;
    let rc = check_count(rcount)?;
    check_buf(rbuf, rc * n, rtype)?;
    gather(rt, sbuf, scount, stype, rbuf, vec![rc; n], None, rtype, 0, call, true, req)
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn allgatherv_args(
    rt: &mut Locked, sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void, rcounts: Counts,
    rdispls: Displs, rtype: MPI_Datatype, comm: MPI_Comm, req: *mut MPI_Request,
) -> MpiResult<()> {
    let call = begin(rt, comm, req)?;
    if call.remote.is_some() {
        return inter::gather(rt, call, sbuf, scount, stype, rbuf, Layout::Varying(rcounts, rdispls), rtype, None, req);
    }
    let c = rcounts.read(call.size, "recvcounts")?;
    let d = rdispls.read(call.size, "displs")?;
    gather(rt, sbuf, scount, stype, rbuf, c, Some(d), rtype, 0, call, true, req)
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn scatter_args(
    rt: &mut Locked, sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void, rcount: c_int, rtype: MPI_Datatype,
    root: c_int, comm: MPI_Comm, req: *mut MPI_Request,
) -> MpiResult<()> {
    let call = begin(rt, comm, req)?;
    if call.remote.is_some() {
        return inter::scatter(rt, call, sbuf, Layout::Uniform(scount.into()), stype, rbuf, rcount, rtype, root, req);
    }
    let n = call.size;
    let sc = if call.rank as c_int == root { check_count(scount)? } else { 0 };
    if call.rank as c_int == root {
        check_buf(sbuf, sc * n, stype)?;
    }
    scatter(rt, sbuf, vec![sc; n], None, stype, rbuf, rcount, rtype, root, call, req)
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn scatterv_args(
    rt: &mut Locked, sbuf: *const c_void, scounts: Counts, sdispls: Displs, stype: MPI_Datatype, rbuf: *mut c_void,
    rcount: c_int, rtype: MPI_Datatype, root: c_int, comm: MPI_Comm, req: *mut MPI_Request,
) -> MpiResult<()> {
    let call = begin(rt, comm, req)?;
    if call.remote.is_some() {
        return inter::scatter(rt, call, sbuf, Layout::Varying(scounts, sdispls), stype, rbuf, rcount, rtype, root, req);
    }
    let n = call.size;
    let (c, d) = if call.rank as c_int == root { (scounts.read(call.size, "sendcounts")?, sdispls.read(call.size, "displs")?) } else { (vec![0; n], vec![0; n]) };
    scatter(rt, sbuf, c, Some(d), stype, rbuf, rcount, rtype, root, call, req)
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn alltoall_args(
    rt: &mut Locked, sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void, rcount: c_int, rtype: MPI_Datatype,
    comm: MPI_Comm, req: *mut MPI_Request,
) -> MpiResult<()> {
    let call = begin(rt, comm, req)?;
    if call.remote.is_some() {
        return inter::alltoall(rt, call, sbuf, Layout::Uniform(scount.into()), stype, rbuf, Layout::Uniform(rcount.into()), rtype, req);
    }
    let n = call.size;
    let sc = if in_place(sbuf) { 0 } else { check_count(scount)? };
    let rc = check_count(rcount)?;
    let send = Side { counts: vec![sc; n], displs: None };
    let recv = Side { counts: vec![rc; n], displs: None };
    alltoall(rt, sbuf, send, stype, rbuf, recv, rtype, call, req)
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn alltoallv_args(
    rt: &mut Locked, sbuf: *const c_void, scounts: Counts, sdispls: Displs, stype: MPI_Datatype, rbuf: *mut c_void,
    rcounts: Counts, rdispls: Displs, rtype: MPI_Datatype, comm: MPI_Comm, req: *mut MPI_Request,
) -> MpiResult<()> {
    let call = begin(rt, comm, req)?;
    if call.remote.is_some() {
        return inter::alltoall(rt, call, sbuf, Layout::Varying(scounts, sdispls), stype, rbuf, Layout::Varying(rcounts, rdispls), rtype, req);
    }
    let n = call.size;
    let send = if in_place(sbuf) {
        Side { counts: vec![0; n], displs: Some(vec![0; n]) }
    } else {
        Side { counts: scounts.read(call.size, "sendcounts")?, displs: Some(sdispls.read(call.size, "sdispls")?) }
    };
    let recv = Side { counts: rcounts.read(call.size, "recvcounts")?, displs: Some(rdispls.read(call.size, "rdispls")?) };
    alltoall(rt, sbuf, send, stype, rbuf, recv, rtype, call, req)
}
