//! Collectives on intercommunicators (MPI-3.1 5.2.2): two disjoint groups, where data moves
//! from one group to the other. One process's schedule runs over both groups: its peers
//! are numbered `local_base + i` for local rank i and `remote_base + j` for remote rank j
//! (the engine maps those numbers to processes through a table, so each side may put its
//! own group first).
//!
//! The algorithms are the plain ones: rooted calls talk straight to the root; combining
//! calls reduce within each group at its rank 0 (the leader), in rank order, so
//! non-commutative operations are safe; the leaders trade their results and pass on what
//! came from the other side. Fine for the group sizes intercommunicators see; no
//! selection table.
//!
//! Buffers follow the crate's conventions (`Send`: this process's input, `Recv`: its
//! output; bcast: the one buffer in `Recv`). Sizes and offsets are in bytes. Nothing is in
//! place: MPI has no MPI_IN_PLACE for intercommunicators.

pub mod movers;
pub mod reductions;

#[cfg(test)]
mod tests;

use crate::{Schedule};

/// One process's place in an intercommunicator, and the numbering of its peers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sides {
    /// Rank in the local group.
    pub rank: usize,
    pub local: usize,
    pub remote: usize,
    pub local_base: usize,
    pub remote_base: usize,
}

impl Sides {
    /// The numbering with the local group first (`local_base` 0, `remote_base` `local`).
    pub fn local_first(rank: usize, local: usize, remote: usize) -> Sides {
        Sides { rank, local, remote, local_base: 0, remote_base: local }
    }

    pub fn local_peer(&self, i: usize) -> usize {
        self.local_base + i
    }

    pub fn remote_peer(&self, j: usize) -> usize {
        self.remote_base + j
    }

    pub fn is_leader(&self) -> bool {
        self.rank == 0
    }

    fn schedule(&self, send_len: usize, recv_len: usize) -> Schedule {
        Schedule::new(self.local_base + self.rank, self.local + self.remote, send_len, recv_len)
    }
}

/// Where the root of a rooted call is, as one process sees it (MPI_ROOT, MPI_PROC_NULL, or
/// a rank of the remote group).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Root {
    /// This process is the root.
    Here,
    /// The root is another member of this process's group: nothing to do.
    Bystander,
    /// The root is remote rank j.
    Remote(usize),
}

/// Bytes spanned by blocks at displacements.
pub fn extent(blocks: &[usize], displs: &[usize]) -> usize {
    blocks.iter().zip(displs).map(|(b, d)| b + d).max().unwrap_or(0)
}
