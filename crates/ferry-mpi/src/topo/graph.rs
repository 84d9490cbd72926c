//! Graph topologies: `MPI_Graph_*` and `MPI_Graphdims_get`. Every rank passes the whole
//! graph, so nothing is exchanged beyond the communicator's creation.

use std::os::raw::c_int;

use super::{attach_first, graph_neighbors, ints, of, put, Topology};
use crate::boundary::call;
use crate::comm::out;
use crate::consts::*;
use crate::error::{err, MpiResult};
use crate::runtime::Runtime;

/// The checked graph of `nnodes` nodes as MPI lays it out.
fn read(nnodes: c_int, index: *const c_int, edges: *const c_int) -> MpiResult<(Vec<i32>, Vec<i32>)> {
    if nnodes < 0 {
        return err(MPI_ERR_ARG, format!("nnodes {nnodes} is negative"));
    }
    let index = ints(index, nnodes as usize, "index")?.to_vec();
    if index.first().is_some_and(|x| *x < 0) || index.windows(2).any(|w| w[1] < w[0]) {
        return err(MPI_ERR_ARG, "index is not a non-decreasing list of edge counts");
    }
    let edges = ints(edges, index.last().copied().unwrap_or(0) as usize, "edges")?.to_vec();
    if let Some(e) = edges.iter().find(|e| **e < 0 || **e >= nnodes) {
        return err(MPI_ERR_ARG, format!("edge to node {e}, outside the {nnodes} nodes"));
    }
    Ok((index, edges))
}

fn graph(rt: &Runtime, comm: MPI_Comm) -> MpiResult<(Vec<i32>, Vec<i32>)> {
    match &*of(rt, comm)? {
        Topology::Graph { index, edges } => Ok((index.clone(), edges.clone())),
        _ => err(MPI_ERR_TOPOLOGY, "the communicator's topology is not a graph"),
    }
}

fn node(rt: &Runtime, comm: MPI_Comm, rank: c_int) -> MpiResult<()> {
    let size = rt.comm(comm)?.size();
    if rank < 0 || rank >= size {
        return err(MPI_ERR_RANK, format!("invalid rank {rank} (communicator size {size})"));
    }
    Ok(())
}

crate::mpi_export! { MPI_Graph_create, PMPI_Graph_create, (comm: MPI_Comm, nnodes: c_int, index: *const c_int, edges: *const c_int,
        _reorder: c_int, comm_graph: *mut MPI_Comm) {
    call("MPI_Graph_create", comm, |rt| {
        let o = out(comm_graph, "comm_graph")?;
        crate::comm::intra(rt, comm)?;
        let (index, edges) = read(nnodes, index, edges)?;
        *o = attach_first(rt, comm, nnodes as i64, Topology::Graph { index, edges })?;
        Ok(())
    })
}}

crate::mpi_export! { MPI_Graph_map, PMPI_Graph_map, (comm: MPI_Comm, nnodes: c_int, index: *const c_int, edges: *const c_int, newrank: *mut c_int) {
    call("MPI_Graph_map", comm, |rt| {
        let o = out(newrank, "newrank")?;
        let c = crate::comm::intra(rt, comm)?;
        let (size, rank) = (c.size(), c.rank);
        read(nnodes, index, edges)?;
        if nnodes > size {
            return err(MPI_ERR_TOPOLOGY, format!("the graph has {nnodes} nodes, the communicator only {size} ranks"));
        }
        *o = if rank < nnodes { rank } else { MPI_UNDEFINED };
        Ok(())
    })
}}

crate::mpi_export! { MPI_Graphdims_get, PMPI_Graphdims_get, (comm: MPI_Comm, nnodes: *mut c_int, nedges: *mut c_int) {
    call("MPI_Graphdims_get", comm, |rt| {
        let (n, e) = (out(nnodes, "nnodes")?, out(nedges, "nedges")?);
        let (index, edges) = graph(rt, comm)?;
        (*n, *e) = (index.len() as c_int, edges.len() as c_int);
        Ok(())
    })
}}

crate::mpi_export! { MPI_Graph_get, PMPI_Graph_get, (comm: MPI_Comm, maxindex: c_int, maxedges: c_int, index: *mut c_int, edges: *mut c_int) {
    call("MPI_Graph_get", comm, |rt| {
        let (i, e) = graph(rt, comm)?;
        if maxindex < 0 || maxedges < 0 {
            return err(MPI_ERR_ARG, "maxindex and maxedges must not be negative");
        }
        put(index, &i, maxindex, "index")?;
        put(edges, &e, maxedges, "edges")
    })
}}

crate::mpi_export! { MPI_Graph_neighbors_count, PMPI_Graph_neighbors_count, (comm: MPI_Comm, rank: c_int, nneighbors: *mut c_int) {
    call("MPI_Graph_neighbors_count", comm, |rt| {
        let o = out(nneighbors, "nneighbors")?;
        let (i, e) = graph(rt, comm)?;
        node(rt, comm, rank)?;
        *o = graph_neighbors(&i, &e, rank).len() as c_int;
        Ok(())
    })
}}

crate::mpi_export! { MPI_Graph_neighbors, PMPI_Graph_neighbors, (comm: MPI_Comm, rank: c_int, maxneighbors: c_int, neighbors: *mut c_int) {
    call("MPI_Graph_neighbors", comm, |rt| {
        let (i, e) = graph(rt, comm)?;
        node(rt, comm, rank)?;
        if maxneighbors < 0 {
            return err(MPI_ERR_ARG, format!("maxneighbors {maxneighbors} is negative"));
        }
        put(neighbors, graph_neighbors(&i, &e, rank), maxneighbors, "neighbors")
    })
}}
