//! Alltoallw: a datatype and a byte displacement per peer on both sides. Each side is packed
//! into one staging region, peer after peer, so the byte-level alltoallv schedules
//! (`Collective::Alltoall`, varying) carry it unchanged; the staged result is unpacked
//! peer by peer with its own datatype.

use std::os::raw::c_void;

use ferry_coll::{Collective, Params};

use super::inter::Side;
use super::region::TypedBlock;
use ferry_coll::inter::movers::Blocks;

use super::{begin, check_buf, in_place, no_alias, no_in_place, pick, product, submit, sum_counts, Counts, Displs, Prepared, Region};
use crate::consts::*;
use crate::error::{err, MpiResult};
use crate::objects::Runtime;
use crate::objects::threads::Locked;

/// One side's per-peer blocks, read from the C arrays and checked.
fn side(rt: &mut Runtime, n: usize, buf: *const c_void, counts: Counts, displs: Displs, types: *const MPI_Datatype, what: &str) -> MpiResult<Vec<TypedBlock>> {
    let counts = counts.read(n, &format!("{what}counts"))?;
    let d = displs.read(n, &format!("{what} displacements"))?;
    if n > 0 && types.is_null() {
        return err(MPI_ERR_ARG, format!("{what}types is NULL"));
    }
    let mut blocks = Vec::with_capacity(n);
    for i in 0..n {
        // SAFETY: MPI passes one entry per peer (rank, or remote rank of an intercommunicator).
        let t = unsafe { *types.add(i) };
        let ty = rt.datatype(t)?;
        check_buf(buf, counts[i], t)?;
        product(counts[i], ty.size(), &format!("{what}counts[{i}] times its type's size"))?;
        blocks.push(TypedBlock { disp: d[i], count: counts[i], t: ty });
    }
    sum_counts(&blocks.iter().map(|b| b.count * b.t.size()).collect::<Vec<_>>(), &format!("the {what} blocks' bytes"))?;
    Ok(blocks)
}

/// Packed sizes and offsets of the blocks (the layout inside a typed region).
fn packed_layout(blocks: &[TypedBlock]) -> (Vec<usize>, Vec<usize>) {
    let sizes: Vec<usize> = blocks.iter().map(|b| b.count * b.t.size()).collect();
    let offsets = sizes.iter().scan(0, |at, s| { let o = *at; *at += s; Some(o) }).collect();
    (sizes, offsets)
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn alltoallw(
    rt: &mut Locked, sbuf: *const c_void, scounts: Counts, sdispls: Displs, stypes: *const MPI_Datatype, rbuf: *mut c_void,
    rcounts: Counts, rdispls: Displs, rtypes: *const MPI_Datatype, comm: MPI_Comm, req: *mut MPI_Request,
) -> MpiResult<()> {
    let call = begin(rt, comm, req)?;
    if let Some(remote) = &call.remote {
        // Both sides name remote ranks; nothing in place on an intercommunicator.
        let n = remote.len();
        no_in_place(sbuf, "send buffer on an intercommunicator")?;
        no_in_place(rbuf, "receive buffer")?;
        let send = side(rt, n, sbuf, scounts, sdispls, stypes, "send")?;
        let recv = side(rt, n, rbuf, rcounts, rdispls, rtypes, "recv")?;
        let blocks = |(sizes, displs)| Blocks { sizes, displs };
        let (sb, rb) = (blocks(packed_layout(&send)), blocks(packed_layout(&recv)));
        let send = Side { region: Region::typed(sbuf, &send, true), blocks: sb, finish: None };
        let region = Region::typed(rbuf, &recv, false);
        let recv = Side { finish: region.typed_unpacker(rbuf, recv), region, blocks: rb };
        return super::inter::alltoallw(rt, call, send, recv, req);
    }
    let n = call.size;
    let in_place = in_place(sbuf);
    no_in_place(rbuf, "receive buffer")?;
    let recv = side(rt, n, rbuf, rcounts, rdispls, rtypes, "recv")?;
    no_alias(rt, &call, sbuf, &[rbuf], recv.iter().any(|b| b.count > 0))?;
    let (rb, rd) = packed_layout(&recv);
    let mut params = Params::varying(call.rank, n, 0, rb.clone(), rd);
    let send_region = if in_place {
        params = params.in_place(true);
        Region::none()
    } else {
        let send = side(rt, n, sbuf, scounts, sdispls, stypes, "send")?;
        let (sb, sd) = packed_layout(&send);
        params.send_blocks = Some(sb);
        params.send_displs = Some(sd);
        Region::typed(sbuf, &send, true)
    };
    let metric = rb.iter().fold(0, |t: usize, b| t.saturating_add(*b)) / n.max(1);
    let info = pick(rt, &call, Collective::Alltoall, true, true, true, metric);
    // In place, the outgoing blocks sit in the receive buffer at the receive layout.
    let recv_region = Region::typed(rbuf, &recv, in_place);
    let finish = recv_region.typed_unpacker(rbuf, recv);
    submit(rt, Prepared { call, info, params: Some(params), shape: None, send: send_region, recv: recv_region, red: None, finish }, req)
}
