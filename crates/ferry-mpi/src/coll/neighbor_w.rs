//! MPI_(I)neighbor_alltoallw: a count, a byte displacement and a datatype per neighbour on
//! both sides. Each side is packed into one staging region, neighbour after neighbour, so the
//! byte-level schedule of the other neighbourhood collectives (`neighbor.linear`) carries it;
//! what arrives is unpacked neighbour by neighbour with its own datatype. MPI_PROC_NULL
//! neighbours get empty blocks: nothing is sent to them and their receive slots stay as
//! they were.

use std::os::raw::c_void;

use ferry_coll::neighbor::{linear, NeighborParams};

use super::region::TypedBlock;
use super::{begin, no_in_place, product, submit_schedule, sum_counts, Counts, Region};
use crate::consts::*;
use crate::error::{err, MpiResult};
use crate::objects::Runtime;
use crate::objects::threads::Locked;

/// One side's blocks, one per neighbour in `peers` (empty towards MPI_PROC_NULL).
fn side(
    rt: &mut Runtime, peers: &[Option<usize>], counts: Counts, displs: *const MPI_Aint, types: *const MPI_Datatype,
    what: &str,
) -> MpiResult<Vec<TypedBlock>> {
    let n = peers.len();
    let counts = counts.read(n, &format!("{what}counts"))?;
    if n > 0 && (displs.is_null() || types.is_null()) {
        return err(MPI_ERR_ARG, format!("{what} displacements or datatypes are NULL"));
    }
    let mut blocks = Vec::with_capacity(n);
    for (i, peer) in peers.iter().enumerate() {
        // SAFETY: MPI passes one entry per neighbour (checked non-NULL above).
        let (c, d, t) = unsafe { (counts[i], *displs.add(i), *types.add(i)) };
        if d < 0 {
            return err(MPI_ERR_ARG, format!("{what} displacement {d} for neighbour {i} is negative"));
        }
        // No NULL check on `buf`: with byte displacements it may be MPI_BOTTOM (absolute
        // addresses).
        let ty = rt.datatype(t)?;
        product(c, ty.size(), &format!("{what}counts[{i}] times its type's size"))?;
        let count = if peer.is_some() { c } else { 0 };
        blocks.push(TypedBlock { disp: d as usize, count, t: ty });
    }
    sum_counts(&blocks.iter().map(|b| b.count * b.t.size()).collect::<Vec<_>>(), &format!("the {what} blocks' bytes"))?;
    Ok(blocks)
}

/// Packed sizes and offsets of the blocks (their layout in a typed region).
fn packed(blocks: &[TypedBlock]) -> (Vec<usize>, Vec<usize>) {
    let sizes: Vec<usize> = blocks.iter().map(|b| b.count * b.t.size()).collect();
    let offsets = sizes.iter().scan(0, |at, s| { let o = *at; *at += s; Some(o) }).collect();
    (sizes, offsets)
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn alltoallw(
    rt: &mut Locked, sbuf: *const c_void, scounts: Counts, sdispls: *const MPI_Aint, stypes: *const MPI_Datatype, rbuf: *mut c_void,
    rcounts: Counts, rdispls: *const MPI_Aint, rtypes: *const MPI_Datatype, comm: MPI_Comm, req: *mut MPI_Request,
) -> MpiResult<()> {
    let call = begin(rt, comm, req)?;
    let topo = crate::objects::comm::topology(rt, comm)?;
    let (srcs, dsts) = topo.neighbors(call.rank as i32);
    let peer = |r: &i32| (*r != MPI_PROC_NULL).then_some(*r as usize);
    let (mut sources, dests): (Vec<_>, Vec<_>) = (srcs.iter().map(peer).collect(), dsts.iter().map(peer).collect());
    no_in_place(sbuf, "send buffer of a neighbourhood collective")?;
    no_in_place(rbuf, "receive buffer of a neighbourhood collective")?;
    let send = side(rt, &dests, scounts, sdispls, stypes, "send")?;
    let mut recv = side(rt, &sources, rcounts, rdispls, rtypes, "recv")?;
    super::neighbor::cart_receive_order(&topo, &mut sources);
    super::neighbor::cart_receive_order(&topo, &mut recv);
    let ((send_blocks, send_displs), (recv_blocks, recv_displs)) = (packed(&send), packed(&recv));
    let q = NeighborParams { rank: call.rank, size: call.size, sources, recv_blocks, recv_displs, dests, send_blocks, send_displs };
    let sregion = Region::typed(sbuf, &send, true);
    let rregion = Region::typed(rbuf, &recv, false);
    let finish = rregion.typed_unpacker(rbuf, recv);
    let sched = linear::schedule(&q);
    submit_schedule(rt, call, sched, linear::ID, [sregion, rregion], None, finish, req)
}
