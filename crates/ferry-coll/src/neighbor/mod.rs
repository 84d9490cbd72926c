//! Neighbourhood collectives (`MPI_Neighbor_allgather(v)`, `MPI_Neighbor_alltoall(v)`):
//! each rank exchanges blocks with the neighbours its communicator's topology names, not
//! with every rank. [`NeighborParams`] is one rank's view: its sources (one receive block
//! each, in `Recv`) and its destinations (one send block each, in `Send`). Allgather is the
//! case where every destination gets the same block (every send slot at offset 0).
//!
//! A `None` neighbour (MPI_PROC_NULL) keeps its buffer slot and moves nothing. Several
//! edges between the same two ranks are told apart by order: the k-th block sent to a
//! rank is the k-th block it receives from this one. Edges from a rank to itself become
//! local copies, paired the same way.

pub mod linear;

/// One rank's view of a neighbourhood collective (byte sizes and offsets).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NeighborParams {
    pub rank: usize,
    pub size: usize,
    /// The rank each receive block comes from, in the topology's order.
    pub sources: Vec<Option<usize>>,
    pub recv_blocks: Vec<usize>,
    pub recv_displs: Vec<usize>,
    /// The rank each send block goes to, in the topology's order.
    pub dests: Vec<Option<usize>>,
    pub send_blocks: Vec<usize>,
    pub send_displs: Vec<usize>,
}

impl NeighborParams {
    /// Bytes of `Recv` the blocks span.
    pub fn recv_extent(&self) -> usize {
        self.recv_blocks.iter().zip(&self.recv_displs).map(|(b, d)| b + d).max().unwrap_or(0)
    }
    /// Bytes of `Send` the blocks span.
    pub fn send_extent(&self) -> usize {
        self.send_blocks.iter().zip(&self.send_displs).map(|(b, d)| b + d).max().unwrap_or(0)
    }
}

#[cfg(test)]
pub(crate) mod conformance;
