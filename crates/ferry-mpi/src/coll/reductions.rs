//! The collectives that combine data: Reduce, Allreduce, Reduce_scatter(_block), Scan and
//! Exscan, blocking and non-blocking, with predefined and user-defined operations. A
//! non-commutative operation runs only algorithms that keep operand order
//! (`ferry_coll::select::applies`).

use std::os::raw::{c_int, c_void};

use ferry_coll::{Collective, Params};

use super::inter::{self, Combine, Layout};
use super::{begin, check_buf, check_count, check_root, in_place, no_alias, no_in_place, pick, product, submit, sum_counts, uniform, Counts, Prepared, Region};
use crate::consts::*;
use crate::error::MpiResult;
use crate::op::reduction;
use crate::objects::threads::Locked;

/// Reduce, Allreduce, Scan, Exscan, Reduce_scatter_block. The count is an `MPI_Count` for
/// the large-count functions' sake: nothing below this narrows it to an int.
#[allow(clippy::too_many_arguments)]
pub(crate) fn reduce(rt: &mut Locked, coll: Collective, sbuf: *const c_void, rbuf: *mut c_void, count: MPI_Count, dt: MPI_Datatype, op: MPI_Op, root: c_int, comm: MPI_Comm, req: *mut MPI_Request) -> MpiResult<()> {
    let call = begin(rt, comm, req)?;
    if call.remote.is_some() {
        let kind = match coll {
            Collective::Reduce => Combine::Reduce(root),
            Collective::Allreduce => Combine::Allreduce,
            Collective::ReduceScatter => Combine::Scatter(Layout::Uniform(count)),
            _ => return inter::refuse(coll.name()),
        };
        let count = if coll == Collective::ReduceScatter { 0 } else { count };
        return inter::reduce(rt, call, kind, sbuf, rbuf, count, dt, op, req);
    }
    let root = if coll == Collective::Reduce { check_root(&call, root)? } else { 0 };
    let count = check_count(count)?;
    let t = rt.datatype(dt)?;
    let red = reduction(rt, op, dt)?;
    let n = call.size;
    let gets_result = coll != Collective::Reduce || call.rank == root;
    let in_place = in_place(sbuf) && gets_result;
    if gets_result {
        no_in_place(rbuf, "receive buffer")?;
    } else {
        no_in_place(sbuf, "send buffer of a rank other than the root")?;
    }
    if gets_result {
        no_alias(rt, &call, sbuf, &[rbuf], count > 0)?;
    }
    // Reduce_scatter_block: `count` is each rank's share; the input holds n of them.
    let in_elems = if coll == Collective::ReduceScatter { product(count, n, "count times the ranks")? } else { count };
    let in_bytes = product(in_elems, t.size(), "elements times their size")?;
    if !in_place {
        check_buf(sbuf, in_elems, dt)?;
    }
    if gets_result {
        check_buf(rbuf, count, dt)?;
    }
    let bytes = count * t.size();
    let info = pick(rt, &call, coll, false, red.commutative(), red.code().is_some(), bytes);
    let shape = uniform(info, bytes, root, in_place, Some(&red));
    let params = if shape.is_some() { None } else { Some(Params::uniform(call.rank, n, root, bytes).elem_size(red.elem_size()).in_place(in_place)) };
    let send = if in_place { Region::none() } else { Region::new(sbuf, &t, in_bytes, &[(0, in_elems)], true) };
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
    submit(rt, Prepared { call, info, params, shape, send, recv, red: Some(red), finish }, req)
}

/// Reduce_scatter: rank i gets `rcounts[i]` elements of the reduced vector, which is the
/// concatenation of every rank's share in rank order. In place the input is the whole
/// vector in `rbuf` and the result replaces its first `rcounts[rank]` elements.
#[allow(clippy::too_many_arguments)]
pub(crate) fn reduce_scatter(rt: &mut Locked, sbuf: *const c_void, rbuf: *mut c_void, rcounts: Counts, dt: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, req: *mut MPI_Request) -> MpiResult<()> {
    let call = begin(rt, comm, req)?;
    if call.remote.is_some() {
        return inter::reduce(rt, call, Combine::Scatter(Layout::Packed(rcounts)), sbuf, rbuf, 0, dt, op, req);
    }
    let counts = rcounts.read(call.size, "recvcounts")?;
    let t = rt.datatype(dt)?;
    let red = reduction(rt, op, dt)?;
    let (n, mine) = (call.size, counts[call.rank]);
    let total = sum_counts(&counts, "recvcounts")?;
    product(total, t.size(), "elements times their size")?;
    let in_place = in_place(sbuf);
    no_in_place(rbuf, "receive buffer")?;
    no_alias(rt, &call, sbuf, &[rbuf], total > 0)?;
    if !in_place {
        check_buf(sbuf, total, dt)?;
    }
    check_buf(rbuf, if in_place { total } else { mine }, dt)?;
    let size = t.size();
    let blocks: Vec<usize> = counts.iter().map(|c| c * size).collect();
    let displs: Vec<usize> = blocks.iter().scan(0, |at, b| Some(std::mem::replace(at, *at + b))).collect();
    let info = pick(rt, &call, Collective::ReduceScatter, true, red.commutative(), red.code().is_some(), total * size / n);
    let params = Params::varying(call.rank, n, 0, blocks, displs).elem_size(red.elem_size()).in_place(in_place);
    let send = if in_place { Region::none() } else { Region::new(sbuf, &t, total * size, &[(0, total)], true) };
    let recv_elems = if in_place { total } else { mine };
    let recv = Region::new(rbuf, &t, recv_elems * size, &[(0, recv_elems)], in_place);
    let finish = recv.unpacker(rbuf, t, vec![(0, mine)]);
    submit(rt, Prepared { call, info, params: Some(params), shape: None, send, recv, red: Some(red), finish }, req)
}
