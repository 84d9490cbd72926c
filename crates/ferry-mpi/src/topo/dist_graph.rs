//! Distributed graph topologies: each rank knows its own edges only. The adjacent form is
//! given them directly; the general form gives each rank some edges of the graph, which one
//! exchange delivers to both of their ends.

use std::os::raw::c_int;

use super::{attach, ints, of, put, Topology};
use crate::abi_objects::{is_unweighted, is_weights_empty};
use crate::boundary::call;
use crate::comm::out;
use crate::consts::*;
use crate::error::{err, MpiResult};
use crate::internal;
use crate::runtime::Runtime;

/// `n` weights, or `None` for `MPI_UNWEIGHTED`.
fn weights(p: *const c_int, n: usize, what: &str) -> MpiResult<Option<Vec<i32>>> {
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

fn ranks(p: *const c_int, n: c_int, size: i32, what: &str) -> MpiResult<Vec<i32>> {
    if n < 0 {
        return err(MPI_ERR_ARG, format!("the degree of {what} is negative ({n})"));
    }
    let v = ints(p, n as usize, what)?.to_vec();
    if let Some(r) = v.iter().find(|r| **r < 0 || **r >= size) {
        return err(MPI_ERR_RANK, format!("{what} holds rank {r} (communicator size {size})"));
    }
    Ok(v)
}

fn check_info(info: MPI_Info) -> MpiResult<()> {
    if info != MPI_INFO_NULL && info != MPI_INFO_ENV {
        return err(MPI_ERR_INFO, format!("invalid info handle {info:#x} (Ferry has no info objects)"));
    }
    Ok(())
}

/// The general form: this rank's edges `(source, destination, weight)` reach both ends.
fn create(rt: &mut Runtime, comm: MPI_Comm, edges: Vec<(i32, i32, i32)>, weighted: bool) -> MpiResult<MPI_Comm> {
    let c = crate::comm::intra(rt, comm)?;
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

fn dist(rt: &Runtime, comm: MPI_Comm) -> MpiResult<Topology> {
    let t = of(rt, comm)?;
    match &*t {
        Topology::DistGraph { .. } => Ok((*t).clone()),
        _ => err(MPI_ERR_TOPOLOGY, "the communicator's topology is not a distributed graph"),
    }
}

crate::mpi_export! { MPI_Dist_graph_create_adjacent, PMPI_Dist_graph_create_adjacent, (comm: MPI_Comm, indegree: c_int,
        sources: *const c_int, sourceweights: *const c_int, outdegree: c_int, destinations: *const c_int,
        destweights: *const c_int, info: MPI_Info, _reorder: c_int, comm_dist_graph: *mut MPI_Comm) {
    call("MPI_Dist_graph_create_adjacent", comm, |rt| {
        let o = out(comm_dist_graph, "comm_dist_graph")?;
        let size = crate::comm::intra(rt, comm)?.size();
        check_info(info)?;
        let sources = ranks(sources, indegree, size, "sources")?;
        let dests = ranks(destinations, outdegree, size, "destinations")?;
        let sweights = weights(sourceweights, sources.len(), "sourceweights")?;
        let dweights = weights(destweights, dests.len(), "destweights")?;
        *o = attach(rt, comm, Topology::DistGraph { sources, sweights, dests, dweights })?;
        Ok(())
    })
}}

crate::mpi_export! { MPI_Dist_graph_create, PMPI_Dist_graph_create, (comm: MPI_Comm, n: c_int, sources: *const c_int,
        degrees: *const c_int, destinations: *const c_int, weights_: *const c_int, info: MPI_Info, _reorder: c_int,
        comm_dist_graph: *mut MPI_Comm) {
    call("MPI_Dist_graph_create", comm, |rt| {
        let o = out(comm_dist_graph, "comm_dist_graph")?;
        let size = crate::comm::intra(rt, comm)?.size();
        check_info(info)?;
        let srcs = ranks(sources, n, size, "sources")?;
        let degs = ints(degrees, srcs.len(), "degrees")?;
        if let Some(d) = degs.iter().find(|d| **d < 0) {
            return err(MPI_ERR_ARG, format!("degrees holds the negative degree {d}"));
        }
        let total: i64 = degs.iter().map(|d| *d as i64).sum();
        let dsts = ranks(destinations, total as c_int, size, "destinations")?;
        let w = weights(weights_, dsts.len(), "weights")?;
        let mut edges = Vec::with_capacity(dsts.len());
        let mut k = 0;
        for (s, d) in srcs.iter().zip(degs) {
            for _ in 0..*d {
                edges.push((*s, dsts[k], w.as_ref().map_or(1, |w| w[k])));
                k += 1;
            }
        }
        *o = create(rt, comm, edges, w.is_some())?;
        Ok(())
    })
}}

crate::mpi_export! { MPI_Dist_graph_neighbors_count, PMPI_Dist_graph_neighbors_count, (comm: MPI_Comm, indegree: *mut c_int,
        outdegree: *mut c_int, weighted: *mut c_int) {
    call("MPI_Dist_graph_neighbors_count", comm, |rt| {
        let (i, o, w) = (out(indegree, "indegree")?, out(outdegree, "outdegree")?, out(weighted, "weighted")?);
        let Topology::DistGraph { sources, sweights, dests, .. } = dist(rt, comm)? else { unreachable!("checked by dist") };
        (*i, *o, *w) = (sources.len() as c_int, dests.len() as c_int, sweights.is_some() as c_int);
        Ok(())
    })
}}

crate::mpi_export! { MPI_Dist_graph_neighbors, PMPI_Dist_graph_neighbors, (comm: MPI_Comm, maxindegree: c_int, sources: *mut c_int,
        sourceweights: *mut c_int, maxoutdegree: c_int, destinations: *mut c_int, destweights: *mut c_int) {
    call("MPI_Dist_graph_neighbors", comm, |rt| {
        let Topology::DistGraph { sources: s, sweights, dests, dweights } = dist(rt, comm)? else { unreachable!("checked by dist") };
        if maxindegree < s.len() as c_int || maxoutdegree < dests.len() as c_int {
            return err(MPI_ERR_ARG, format!("room for {maxindegree} sources and {maxoutdegree} destinations; the rank has {} and {}", s.len(), dests.len()));
        }
        put(sources, &s, maxindegree, "sources")?;
        put(destinations, &dests, maxoutdegree, "destinations")?;
        if let Some(w) = sweights.filter(|_| !is_unweighted(sourceweights)) {
            put(sourceweights, &w, maxindegree, "sourceweights")?;
        }
        if let Some(w) = dweights.filter(|_| !is_unweighted(destweights)) {
            put(destweights, &w, maxoutdegree, "destweights")?;
        }
        Ok(())
    })
}}
