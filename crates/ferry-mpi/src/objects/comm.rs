//! Communicators as data: a context id pair, a group of world ranks, an error handler, and
//! what else a communicator carries. `comm` (with `comm/intercomm/` and `comm/topo/`) makes them.

use std::sync::Arc;

use super::records::Hints;
use super::topology::Topology;
use super::coll_cache::CollCache;
use super::host_coll::HostColl;
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
    /// then the local group. Point-to-point ranks name members of this group. Set with
    /// [`set_remote`](Comm::set_remote).
    remote: Option<Arc<Vec<u32>>>,
    /// The peers' rank `r` is world rank `r` (the world and its duplicates): a receive names
    /// its source without a look-up and keeps no group.
    world_order: bool,
    /// Context ids set aside for this communicator's `MPI_Comm_idup`s, `[next, end)` in
    /// slots of `step` ids: every member holds the same block and takes from it in the same
    /// (collective) order, so an idup needs no message and cannot be caught between two
    /// agreements. A slot is the idup's pair and, one level down, the pairs of its own idups
    /// (see [`CONTEXT_BLOCK`]); `step` 0 is no block.
    pub idup_next: u32,
    pub idup_end: u32,
    pub idup_step: u32,
    /// Set by `MPI_Comm_set_name`; duplicates and other new communicators start unnamed.
    pub name: Option<String>,
    /// Finished collective calls kept to run again (`coll_cache.rs`); a duplicate starts
    /// with none.
    pub coll_cache: CollCache,
    /// The shared-memory collectives' state (`host_coll.rs`); a duplicate starts afresh.
    pub host: HostColl,
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
    /// Persistent collectives, numbered at their init calls.
    persistent: u32,
    /// The number of the persistent collective being started, which its non-blocking call
    /// takes in place of the next one (`coll/persistent.rs`).
    pinned: Option<u32>,
}

impl CollSeq {
    /// The next call's number in its sequence (a persistent start's own number, while one is
    /// pinned).
    pub fn next(&mut self, blocking: bool) -> u32 {
        if !blocking {
            if let Some(seq) = self.pinned.take() {
                return seq;
            }
        }
        let n = if blocking { &mut self.blocking } else { &mut self.nonblocking };
        let seq = *n;
        *n = n.wrapping_add(1);
        seq
    }

    /// The next persistent collective's number (its init call's; every start reuses it).
    pub fn next_persistent(&mut self) -> u32 {
        let seq = self.persistent;
        self.persistent = seq.wrapping_add(1);
        seq
    }

    /// Whether a persistent start's number is pinned for the next non-blocking call.
    pub fn is_pinned(&self) -> bool {
        self.pinned.is_some()
    }

    /// Take back `seq`, the number the last call of its sequence took, for a call refused on
    /// this rank alone before it sent anything (`coll::no_alias`).
    pub fn give_back(&mut self, blocking: bool, seq: u32) {
        let n = if blocking { &mut self.blocking } else { &mut self.nonblocking };
        if n.wrapping_sub(1) == seq {
            *n = seq;
        }
    }

    /// Let the next non-blocking call take `seq` (a persistent collective's number, taken at
    /// its init) instead of a new number; None takes back what no call took.
    pub fn pin(&mut self, seq: Option<u32>) {
        self.pinned = seq;
    }

    /// Calls begun in both sequences (modulo 2^32).
    pub fn total(&self) -> u32 {
        self.blocking.wrapping_add(self.nonblocking)
    }
}

/// Context-id pairs set aside for the idups of each communicator whose context was agreed.
pub const IDUP_PAIRS: u32 = 32;
/// Pairs set aside, in each of those, for the idups of that idup: so an idup of an idup needs
/// no message either (one level further down, an idup is agreed as a dup is).
pub const IDUP_CHILD_PAIRS: u32 = 8;
/// The context ids of one idup's slot: its pair, then its own idups' pairs.
const IDUP_SLOT: u32 = 2 + 2 * IDUP_CHILD_PAIRS;
/// The context ids one agreement takes: the communicator's pair, then its idups' slots.
pub const CONTEXT_BLOCK: u32 = 2 + IDUP_PAIRS * IDUP_SLOT;

impl Comm {
    pub fn new(ctx: u32, group: Vec<u32>, world_rank: u32) -> Comm {
        let rank = group.iter().position(|&w| w == world_rank).map_or(-1, |r| r as i32);
        let world_order = in_world_order(&group);
        let (idup_next, idup_end, idup_step) = (ctx + 2, ctx + CONTEXT_BLOCK, IDUP_SLOT);
        Comm { ctx, group: Arc::new(group), rank, errhandler: MPI_ERRORS_ARE_FATAL, coll_seq: CollSeq::default(), hints: Vec::new(), topo: None, idup_next, idup_end, idup_step, remote: None, world_order, name: None, coll_cache: CollCache::default(), host: HostColl::Unknown }
    }

    /// A duplicate on the context pair `ctx`: the same groups, rank, hints, topology and
    /// error handler, no attributes or name, and an idup block of its own.
    pub fn duplicate(&self, ctx: u32, world_rank: u32) -> Comm {
        let mut new = Comm::new(ctx, Vec::new(), world_rank);
        (new.group, new.rank, new.hints, new.topo, new.errhandler) = (self.group.clone(), self.rank, self.hints.clone(), self.topo.clone(), self.errhandler);
        (new.remote, new.world_order) = (self.remote.clone(), self.world_order);
        new
    }

    /// Make this an intercommunicator with the remote group `remote` (or again an
    /// intracommunicator with `None`).
    pub fn set_remote(&mut self, remote: Option<Arc<Vec<u32>>>) {
        self.remote = remote;
        self.coll_cache = CollCache::default();
        self.host = HostColl::Unknown;
        self.world_order = in_world_order(self.peers());
    }

    pub fn remote(&self) -> Option<&Arc<Vec<u32>>> {
        self.remote.as_ref()
    }

    /// How a receive on this communicator names its source, for a request that may outlive
    /// the communicator.
    #[inline]
    pub fn ranks(&self) -> Ranks {
        if self.world_order { Ranks::World } else { Ranks::Group(self.peers().clone()) }
    }

    /// How a receive on this communicator names its source, while the communicator lives.
    #[inline]
    pub fn sources(&self) -> SourceRanks<'_> {
        if self.world_order { SourceRanks::World } else { SourceRanks::Group(self.peers()) }
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

/// Whether rank `r` of `group` is world rank `r` for every `r`.
fn in_world_order(group: &[u32]) -> bool {
    group.iter().enumerate().all(|(r, &w)| w as usize == r)
}

/// How a request reports the source of what it received, owned by the request.
pub enum Ranks {
    /// It reports none (a send).
    None,
    /// The world rank is the rank (see [`Comm::sources`]).
    World,
    /// The rank in the peers' group, kept here: the communicator may be freed first.
    Group(Arc<Vec<u32>>),
}

impl Ranks {
    #[inline]
    pub fn view(&self) -> SourceRanks<'_> {
        match self {
            Ranks::None => SourceRanks::None,
            Ranks::World => SourceRanks::World,
            Ranks::Group(g) => SourceRanks::Group(g),
        }
    }
}

/// [`Ranks`] borrowed: how to turn the world rank of a message's sender into the rank a
/// status reports.
#[derive(Clone, Copy)]
pub enum SourceRanks<'a> {
    None,
    World,
    Group(&'a [u32]),
}

impl SourceRanks<'_> {
    /// The rank of world rank `w`; `None` when the request reports no source.
    #[inline]
    pub fn of(self, w: u32) -> Option<i32> {
        match self {
            SourceRanks::None => None,
            SourceRanks::World => Some(w as i32),
            SourceRanks::Group(g) => Some(rank_in(g, w)),
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn receives_name_their_source_without_a_group_only_in_world_order() {
        let world = Comm::new(4, vec![0, 1, 2, 3], 1);
        assert!(matches!(world.ranks(), Ranks::World));
        assert_eq!(world.sources().of(3), Some(3));
        let first = Comm::new(6, vec![0, 1], 1);
        assert!(matches!(first.ranks(), Ranks::World), "the world's first ranks in order");
        let reversed = Comm::new(8, vec![3, 2, 1, 0], 1);
        assert!(matches!(reversed.ranks(), Ranks::Group(_)));
        assert_eq!((reversed.sources().of(3), reversed.ranks().view().of(0)), (Some(0), Some(3)));
        assert!(matches!(reversed.duplicate(10, 1).ranks(), Ranks::Group(_)), "a duplicate keeps the group");
        assert!(matches!(world.duplicate(12, 1).ranks(), Ranks::World));
        // An intercommunicator names members of the remote group.
        let mut inter = Comm::new(14, vec![0, 1], 1);
        inter.set_remote(Some(Arc::new(vec![2, 3])));
        assert_eq!(inter.sources().of(3), Some(1));
        inter.set_remote(Some(Arc::new(vec![0, 1, 2])));
        assert!(matches!(inter.ranks(), Ranks::World));
        assert_eq!(Ranks::None.view().of(2), None, "a send reports no source");
    }
}
