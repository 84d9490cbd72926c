//! The neighbourhood collectives: Neighbor_allgather(v) and Neighbor_alltoall(v), blocking
//! and non-blocking, over the neighbours the communicator's topology names (see
//! `ferry_coll::neighbor`). MPI_PROC_NULL neighbours keep their buffer slots untouched.

use std::os::raw::{c_int, c_void};

use ferry_coll::neighbor::{linear, NeighborParams};

use super::{begin, check_buf, no_in_place, product, submit_schedule, Counts, Displs, Region};
use crate::consts::*;
use crate::error::{err, MpiResult};
use crate::objects::threads::Locked;
use crate::objects::topology::Topology;

/// MPI-4.1 Example 8.10: on a Cartesian grid the block a rank sends in direction s (2d the
/// negative one along dimension d, 2d + 1 the positive) arrives in its neighbour's block s ^ 1,
/// which decides where blocks go when one process is the neighbour in several directions (a
/// periodic dimension of size 1 or 2). The schedule matches the k-th send to a process with
/// the k-th receive listed from it, so the receive side is listed in the order s ^ 1: then a
/// receive's place in the list is the direction its partner sent in. Graph topologies keep
/// their order (the k-th edge to a process matches the k-th edge from it).
pub(super) fn cart_receive_order<T>(topo: &Topology, items: &mut [T]) {
    if matches!(topo, Topology::Cart { .. }) {
        for pair in items.chunks_exact_mut(2) {
            pair.swap(0, 1);
        }
    }
}

/// One side of a call: (element offset, count) of each neighbour's block.
type Blocks = Vec<(usize, usize)>;

fn count(c: c_int) -> MpiResult<usize> {
    if c < 0 {
        return err(MPI_ERR_COUNT, format!("count {c} is negative"));
    }
    Ok(c as usize)
}

/// What the API functions pass in: each side as blocks per neighbour, or (send side of
/// allgather) one block for every destination.
enum Send {
    Same(usize),
    Each(Blocks),
}

enum Recv {
    Uniform(usize),
    Each(Blocks),
}

#[allow(clippy::too_many_arguments)]
fn neighbor(rt: &mut Locked, comm: MPI_Comm, sbuf: *const c_void, send: impl FnOnce(usize) -> MpiResult<Send>, stype: MPI_Datatype,
            rbuf: *mut c_void, recv: impl FnOnce(usize) -> MpiResult<Recv>, rtype: MPI_Datatype, req: *mut MPI_Request) -> MpiResult<()> {
    let call = begin(rt, comm, req)?;
    let topo = crate::objects::comm::topology(rt, comm)?;
    let (srcs, dsts) = topo.neighbors(call.rank as i32);
    let peer = |r: &i32| (*r != MPI_PROC_NULL).then_some(*r as usize);
    let (mut sources, dests): (Vec<_>, Vec<_>) = (srcs.iter().map(peer).collect(), dsts.iter().map(peer).collect());
    no_in_place(sbuf, "send buffer of a neighbourhood collective")?;
    no_in_place(rbuf, "receive buffer of a neighbourhood collective")?;
    let (st, rtt) = (rt.datatype(stype)?, rt.datatype(rtype)?);
    let mut rblocks: Blocks = match recv(sources.len())? {
        Recv::Uniform(c) => (0..sources.len()).map(|i| (i * c, c)).collect(),
        Recv::Each(b) => b,
    };
    cart_receive_order(&topo, &mut sources);
    cart_receive_order(&topo, &mut rblocks);
    let (sblocks, same) = match send(dests.len())? {
        Send::Same(c) => (vec![(0, c)], true),
        Send::Each(b) => (b, false),
    };
    check_buf(sbuf, sblocks.iter().fold(0, |t: usize, b| t.saturating_add(b.1)), stype)?;
    check_buf(rbuf, rblocks.iter().fold(0, |t: usize, b| t.saturating_add(b.1)), rtype)?;
    let (ss, rs) = (st.size(), rtt.size());
    for (blocks, size) in [(&sblocks, ss), (&rblocks, rs)] {
        for b in blocks.iter() {
            product(b.0.saturating_add(b.1), size, "a block's end times the type's size")?;
        }
    }
    let (send_blocks, send_displs) = if same { (vec![sblocks[0].1 * ss; dests.len()], vec![0; dests.len()]) } else { (sblocks.iter().map(|b| b.1 * ss).collect(), sblocks.iter().map(|b| b.0 * ss).collect()) };
    let q = NeighborParams {
        rank: call.rank,
        size: call.size,
        recv_blocks: rblocks.iter().map(|b| b.1 * rs).collect(),
        recv_displs: rblocks.iter().map(|b| b.0 * rs).collect(),
        sources,
        dests,
        send_blocks,
        send_displs,
    };
    let sregion = Region::new(sbuf, &st, q.send_extent(), &sblocks, true);
    let rregion = Region::new(rbuf, &rtt, q.recv_extent(), &rblocks, false);
    // Only blocks that something arrives in go back to the user: MPI_PROC_NULL slots keep
    // what they held.
    let arriving = rblocks.iter().zip(&q.sources).filter(|(_, s)| s.is_some()).map(|(b, _)| *b).collect();
    let finish = rregion.unpacker(rbuf, rtt, arriving);
    let sched = linear::schedule(&q);
    submit_schedule(rt, call, sched, linear::ID, [sregion, rregion], None, finish, req)
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn allgather(rt: &mut Locked, sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void, rcount: c_int, rtype: MPI_Datatype,
             comm: MPI_Comm, req: *mut MPI_Request) -> MpiResult<()> {
    neighbor(rt, comm, sbuf, |_| Ok(Send::Same(count(scount)?)), stype, rbuf, |_| Ok(Recv::Uniform(count(rcount)?)), rtype, req)
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn allgatherv(rt: &mut Locked, sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void, rcounts: Counts,
              displs: Displs, rtype: MPI_Datatype, comm: MPI_Comm, req: *mut MPI_Request) -> MpiResult<()> {
    let recv = |n| {
        let c = rcounts.read(n, "recvcounts")?;
        let d = displs.read(n, "displs")?;
        Ok(Recv::Each(d.into_iter().zip(c).collect()))
    };
    neighbor(rt, comm, sbuf, |_| Ok(Send::Same(count(scount)?)), stype, rbuf, recv, rtype, req)
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn alltoall(rt: &mut Locked, sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void, rcount: c_int, rtype: MPI_Datatype,
            comm: MPI_Comm, req: *mut MPI_Request) -> MpiResult<()> {
    let send = |n| {
        let c = count(scount)?;
        Ok(Send::Each((0..n).map(|j| (j * c, c)).collect()))
    };
    neighbor(rt, comm, sbuf, send, stype, rbuf, |_| Ok(Recv::Uniform(count(rcount)?)), rtype, req)
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn alltoallv(rt: &mut Locked, sbuf: *const c_void, scounts: Counts, sdispls: Displs, stype: MPI_Datatype, rbuf: *mut c_void,
             rcounts: Counts, rdispls: Displs, rtype: MPI_Datatype, comm: MPI_Comm, req: *mut MPI_Request) -> MpiResult<()> {
    let send = |n| {
        let c = scounts.read(n, "sendcounts")?;
        let d = sdispls.read(n, "sdispls")?;
        Ok(Send::Each(d.into_iter().zip(c).collect()))
    };
    let recv = |n| {
        let c = rcounts.read(n, "recvcounts")?;
        let d = rdispls.read(n, "rdispls")?;
        Ok(Recv::Each(d.into_iter().zip(c).collect()))
    };
    neighbor(rt, comm, sbuf, send, stype, rbuf, recv, rtype, req)
}
