//! Distributed graph topologies: each rank knows its own edges only. The adjacent form is
//! given them directly; the general form gives each rank some edges of the graph, which one
//! exchange delivers to both of their ends.

use std::os::raw::c_int;

use super::{attach, ints, of, Topology};
use crate::abi_objects::{is_unweighted, is_weights_empty};
use crate::consts::*;
use crate::error::{err, MpiResult};
use crate::internal;
use crate::objects::Runtime;

/// `n` weights, or `None` for `MPI_UNWEIGHTED`.
pub(crate) fn weights(p: *const c_int, n: usize, what: &str) -> MpiResult<Option<Vec<i32>>> {
    if is_unweighted(p) {
        return Ok(None);
    }
    if is_weights_empty(p) || n == 0 {
        if n > 0 {
            return err(MPI_ERR_ARG, format!("{what} is MPI_WEIGHTS_EMPTY for {n} edges"));
        }
        return Ok(Some(Vec::new()));
    }
    let w = ints(p, n, what)?.to_vec();
    if let Some(x) = w.iter().find(|x| **x < 0) {
        return err(MPI_ERR_ARG, format!("{what} holds the negative weight {x}"));
    }
    Ok(Some(w))
}

pub(crate) fn ranks(p: *const c_int, n: c_int, size: i32, what: &str) -> MpiResult<Vec<i32>> {
    if n < 0 {
        return err(MPI_ERR_ARG, format!("the degree of {what} is negative ({n})"));
    }
    let v = ints(p, n as usize, what)?.to_vec();
    if let Some(r) = v.iter().find(|r| **r < 0 || **r >= size) {
        return err(MPI_ERR_RANK, format!("{what} holds rank {r} (communicator size {size})"));
    }
    Ok(v)
}

pub(crate) fn check_info(info: MPI_Info) -> MpiResult<()> {
    if info != MPI_INFO_NULL && info != MPI_INFO_ENV {
        return err(MPI_ERR_INFO, format!("invalid info handle {info:#x} (Ferry has no info objects)"));
    }
    Ok(())
}

/// The general form: this rank's edges `(source, destination, weight)` reach both ends.
pub(crate) fn create(rt: &mut Runtime, comm: MPI_Comm, edges: Vec<(i32, i32, i32)>, weighted: bool) -> MpiResult<MPI_Comm> {
    let c = crate::objects::comm::intra(rt, comm)?;
    let (ctx, group, me) = (c.ctx + 1, c.group.to_vec(), c.rank as usize);
    let mut items = vec![Vec::new(); group.len()];
    // Each record: kind (0: an edge into the receiver, 1: an edge out of it), the rank at the
    // other end, the weight.
    for (s, d, w) in edges {
        for (to, kind, other) in [(d, 0, s), (s, 1, d)] {
            for x in [kind, other, w] {
                items[to as usize].extend_from_slice(&x.to_le_bytes());
            }
        }
    }
    let got = internal::alltoall_among(rt, ctx, &group, me, internal::TAG_ALLTOALL, items)?;
    let (mut sources, mut sw, mut dests, mut dw) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for rec in got.iter().flat_map(|b| b.chunks_exact(12)) {
        let x = |i: usize| i32::from_le_bytes(rec[i * 4..i * 4 + 4].try_into().expect("4 bytes"));
        if x(0) == 0 {
            sources.push(x(1));
            sw.push(x(2));
        } else {
            dests.push(x(1));
            dw.push(x(2));
        }
    }
    let topo = if weighted {
        Topology::DistGraph { sources, sweights: Some(sw), dests, dweights: Some(dw) }
    } else {
        Topology::DistGraph { sources, sweights: None, dests, dweights: None }
    };
    attach(rt, comm, topo)
}

pub(crate) fn dist(rt: &Runtime, comm: MPI_Comm) -> MpiResult<Topology> {
    let t = of(rt, comm)?;
    match &*t {
        Topology::DistGraph { .. } => Ok((*t).clone()),
        _ => err(MPI_ERR_TOPOLOGY, "the communicator's topology is not a distributed graph"),
    }
}
