//! Communicators as data: a context id pair, a group of world ranks, an error handler, and
//! what else a communicator carries. `comm` (with `comm/intercomm/` and `comm/topo/`) makes them.

use std::sync::Arc;

use super::records::Hints;
use super::topology::Topology;
use super::runtime::Runtime;
use crate::consts::*;
use crate::error::{err, MpiResult};

pub struct Comm {
    /// Context id of point-to-point traffic; `ctx + 1` carries this communicator's internal
    /// (collective) traffic so the two never match each other.
    pub ctx: u32,
    /// World rank of each member, in communicator rank order.
    pub group: Arc<Vec<u32>>,
    pub rank: i32,
    pub errhandler: i32,
    /// Collective calls made on this communicator so far; every member counts the same, so
    /// the count tells one call's messages from the next one's.
    pub coll_seq: CollSeq,
    /// The hints given by MPI_Comm_set_info and kin; Ferry uses none yet, but returns them.
    pub hints: Hints,
    /// The virtual topology, shared by duplicates.
    pub topo: Option<Arc<Topology>>,
    /// An intercommunicator's remote group (world ranks, in remote rank order); `group` is
    /// then the local group. Point-to-point ranks name members of this group.
    pub remote: Option<Arc<Vec<u32>>>,
    /// Context ids set aside for this communicator's `MPI_Comm_idup`s, `[next, end)` in
    /// pairs: every member holds the same block and takes from it in the same (collective)
    /// order, so an idup needs no message and cannot be caught between two agreements.
    pub idup_next: u32,
    pub idup_end: u32,
    /// Set by `MPI_Comm_set_name`; duplicates and other new communicators start unnamed.
    pub name: Option<String>,
}

/// A communicator's collective calls, counted in two sequences: the blocking calls in one,
/// the non-blocking calls and persistent starts in the other. Each sequence has its own
/// tags, so a blocking call never matches a non-blocking one. Correct programs call the
/// collectives in one order everywhere, so each sequence is in one order too; and, as MPICH
/// and Open MPI (whose non-blocking collectives have their own tag space) allow, a program
/// that starts a non-blocking collective on one rank and a blocking one on another before
/// they meet still works, as mpi4py's fallback `MPI_Comm_iagree` needs.
#[derive(Clone, Copy, Default, Debug)]
pub struct CollSeq {
    blocking: u32,
    nonblocking: u32,
}

impl CollSeq {
    /// The next call's number in its sequence.
    pub fn next(&mut self, blocking: bool) -> u32 {
        let n = if blocking { &mut self.blocking } else { &mut self.nonblocking };
        let seq = *n;
        *n = n.wrapping_add(1);
        seq
    }

    /// Calls begun in both sequences (modulo 2^32).
    pub fn total(&self) -> u32 {
        self.blocking.wrapping_add(self.nonblocking)
    }
}

/// Context-id pairs set aside for the idups of each communicator whose context was agreed.
pub const IDUP_PAIRS: u32 = 32;

impl Comm {
    pub fn new(ctx: u32, group: Vec<u32>, world_rank: u32) -> Comm {
        let rank = group.iter().position(|&w| w == world_rank).map_or(-1, |r| r as i32);
        let (idup_next, idup_end) = (ctx + 2, ctx + 2 + 2 * IDUP_PAIRS);
        Comm { ctx, group: Arc::new(group), rank, errhandler: MPI_ERRORS_ARE_FATAL, coll_seq: CollSeq::default(), hints: Vec::new(), topo: None, idup_next, idup_end, remote: None, name: None }
    }

    pub fn size(&self) -> i32 {
        self.group.len() as i32
    }

    pub fn is_inter(&self) -> bool {
        self.remote.is_some()
    }

    /// The group that point-to-point ranks name: the remote group of an intercommunicator,
    /// else the communicator's own.
    pub fn peers(&self) -> &Arc<Vec<u32>> {
        self.remote.as_ref().unwrap_or(&self.group)
    }

    pub fn peer_size(&self) -> i32 {
        self.peers().len() as i32
    }

    /// World rank of peer rank `r` (validated by the caller).
    pub fn world(&self, r: i32) -> u32 {
        self.peers()[r as usize]
    }
}

/// Communicator rank of world rank `w` in `group` (a linear search: it runs only when a
/// status is filled in).
pub fn rank_in(group: &[u32], w: u32) -> i32 {
    // Most groups keep the world's order at the front (the world, its duplicates, a split
    // that keeps low ranks): then the world rank is the rank, found without a search.
    if group.get(w as usize) == Some(&w) {
        return w as i32;
    }
    group.iter().position(|&g| g == w).map_or(MPI_UNDEFINED, |r| r as i32)
}

/// The topology of `comm`, or MPI_ERR_TOPOLOGY (the neighbourhood collectives run over it).
pub fn topology(rt: &Runtime, comm: i32) -> MpiResult<Arc<Topology>> {
    match &intra(rt, comm)?.topo {
        Some(t) => Ok(t.clone()),
        None => err(MPI_ERR_TOPOLOGY, "the communicator has no topology"),
    }
}

/// `comm`, which must be an intracommunicator (MPI_ERR_COMM for an intercommunicator).
pub fn intra(rt: &Runtime, comm: i32) -> MpiResult<&Comm> {
    let c = rt.comm(comm)?;
    if c.is_inter() {
        return err(MPI_ERR_COMM, "this call needs an intracommunicator, not an intercommunicator");
    }
    Ok(c)
}
