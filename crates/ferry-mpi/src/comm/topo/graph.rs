//! Graph topologies: `MPI_Graph_*` and `MPI_Graphdims_get`. Every rank passes the whole
//! graph, so nothing is exchanged beyond the communicator's creation.

use std::os::raw::c_int;

use super::{ints, of, Topology};
use crate::consts::*;
use crate::error::{err, MpiResult};
use crate::objects::Runtime;

/// The checked graph of `nnodes` nodes as MPI lays it out.
pub(crate) fn read(nnodes: c_int, index: *const c_int, edges: *const c_int) -> MpiResult<(Vec<i32>, Vec<i32>)> {
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

pub(crate) fn graph(rt: &Runtime, comm: MPI_Comm) -> MpiResult<(Vec<i32>, Vec<i32>)> {
    match &*of(rt, comm)? {
        Topology::Graph { index, edges } => Ok((index.clone(), edges.clone())),
        _ => err(MPI_ERR_TOPOLOGY, "the communicator's topology is not a graph"),
    }
}

pub(crate) fn node(rt: &Runtime, comm: MPI_Comm, rank: c_int) -> MpiResult<()> {
    let size = rt.comm(comm)?.size();
    if rank < 0 || rank >= size {
        return err(MPI_ERR_RANK, format!("invalid rank {rank} (communicator size {size})"));
    }
    Ok(())
}
