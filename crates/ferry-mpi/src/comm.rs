//! Communicators: a context id pair, a group of world ranks, an error handler; and the
//! functions that make, compare and free them.

use std::sync::Arc;

use crate::consts::*;
use crate::error::{err, MpiResult};
use crate::internal;
use crate::runtime::Runtime;

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
    pub hints: crate::info::Hints,
    /// The virtual topology, shared by duplicates.
    pub topo: Option<Arc<crate::topo::Topology>>,
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

/// `comm`, which must be an intracommunicator (MPI_ERR_COMM for an intercommunicator).
pub fn intra(rt: &Runtime, comm: i32) -> MpiResult<&Comm> {
    let c = rt.comm(comm)?;
    if c.is_inter() {
        return err(MPI_ERR_COMM, "this call needs an intracommunicator, not an intercommunicator");
    }
    Ok(c)
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

/// Agree with every member of `comm` on a context id none of them has used.
pub(crate) fn agree_context(rt: &mut Runtime, comm: i32, extra: &[u8]) -> MpiResult<(u32, Vec<Vec<u8>>)> {
    let c = rt.comm(comm)?;
    let (ctx, group, me) = (c.ctx + 1, c.group.clone(), c.rank as usize);
    agree_context_among(rt, ctx, &group, me, internal::TAG_ALLGATHER, extra)
}

/// Agree with the world ranks `group` (this process is `group[me]`) on a context id none of
/// them has used, talking on internal context `ctx` with `tag`; also returns each one's
/// `extra`, in group order.
pub(crate) fn agree_context_among(rt: &mut Runtime, ctx: u32, group: &[u32], me: usize, tag: i32, extra: &[u8]) -> MpiResult<(u32, Vec<Vec<u8>>)> {
    let mut mine = rt.next_context.to_le_bytes().to_vec();
    mine.extend_from_slice(extra);
    let all = internal::allgather_among(rt, ctx, group, me, tag, &mine)?;
    let ctx = all.iter().map(|b| u32::from_le_bytes(b[0..4].try_into().expect("4-byte prefix"))).max().unwrap_or(rt.next_context);
    // The pair itself, then the block of its idups (see `Comm::new`).
    rt.next_context = ctx + 2 + 2 * IDUP_PAIRS;
    Ok((ctx, all.into_iter().map(|b| b[4..].to_vec()).collect()))
}

/// `MPI_Comm_dup`, and with `hints` `MPI_Comm_dup_with_info` (those hints instead of comm's);
/// the topology goes along.
pub(crate) fn dup(rt: &mut Runtime, comm: i32, hints: Option<crate::info::Hints>) -> MpiResult<i32> {
    if rt.comm(comm)?.is_inter() {
        return crate::intercomm::derive::dup(rt, comm, hints);
    }
    let (ctx, _) = agree_context(rt, comm, &[])?;
    let c = rt.comm(comm)?;
    let hints = hints.unwrap_or_else(|| c.hints.clone());
    let new = Comm { group: c.group.clone(), rank: c.rank, hints, topo: c.topo.clone(), errhandler: c.errhandler, ..Comm::new(ctx, Vec::new(), rt.world_rank) };
    Ok(rt.add_comm(new))
}

/// `MPI_Comm_idup`: a duplicate whose context pair comes from `comm`'s idup block, so it
/// needs no message and is complete at once (the standard allows a non-blocking call to
/// complete at the call). The duplicate gets no idup block of its own. Once the block is
/// spent (after `IDUP_PAIRS` idups of one communicator, or for an idup of an idup) the
/// context is agreed as `MPI_Comm_dup` agrees it, which waits for every member to call.
pub(crate) fn idup(rt: &mut Runtime, comm: i32, hints: Option<crate::info::Hints>) -> MpiResult<i32> {
    let world_rank = rt.world_rank;
    rt.comm(comm)?;
    let c = rt.comms.get_mut(&comm).expect("checked above");
    if c.idup_next + 2 > c.idup_end {
        return dup(rt, comm, hints);
    }
    let ctx = c.idup_next;
    c.idup_next += 2;
    let hints = hints.unwrap_or_else(|| c.hints.clone());
    let new = Comm {
        group: c.group.clone(),
        rank: c.rank,
        hints,
        topo: c.topo.clone(),
        errhandler: c.errhandler,
        remote: c.remote.clone(),
        idup_next: 0,
        idup_end: 0,
        ..Comm::new(ctx, Vec::new(), world_rank)
    };
    Ok(rt.add_comm(new))
}

pub(crate) fn split(rt: &mut Runtime, comm: i32, color: i32, key: i32) -> MpiResult<i32> {
    if color < 0 && color != MPI_UNDEFINED {
        return err(MPI_ERR_ARG, format!("color {color} is negative (only MPI_UNDEFINED may be)"));
    }
    if rt.comm(comm)?.is_inter() {
        return crate::intercomm::derive::split(rt, comm, color, key);
    }
    let mut extra = color.to_le_bytes().to_vec();
    extra.extend_from_slice(&key.to_le_bytes());
    let (ctx, all) = agree_context(rt, comm, &extra)?;
    if color == MPI_UNDEFINED {
        return Ok(MPI_COMM_NULL);
    }
    let c = rt.comm(comm)?;
    let mut members: Vec<(i32, usize, u32)> = all
        .iter()
        .enumerate()
        .filter_map(|(r, b)| {
            let col = i32::from_le_bytes(b[0..4].try_into().expect("color"));
            let k = i32::from_le_bytes(b[4..8].try_into().expect("key"));
            (col == color).then_some((k, r, c.group[r]))
        })
        .collect();
    members.sort();
    let group: Vec<u32> = members.iter().map(|m| m.2).collect();
    let mut new = Comm::new(ctx, group, rt.world_rank);
    new.errhandler = c.errhandler;
    Ok(rt.add_comm(new))
}

/// The members of group `group`, checked to be members of `comm` too.
fn subgroup(rt: &Runtime, comm: i32, group: i32) -> MpiResult<crate::group::Members> {
    let c = rt.comm(comm)?;
    let g = rt.group(group)?;
    match g.iter().find(|w| !c.group.contains(w)) {
        Some(w) => err(MPI_ERR_GROUP, format!("the group holds world rank {w}, which is not in the communicator")),
        None => Ok(g),
    }
}

/// `MPI_Comm_create`: collective over `comm`; members of `group` get the new communicator.
/// Members that pass disjoint groups share one context id, as the parts of a split do.
pub(crate) fn create(rt: &mut Runtime, comm: i32, group: i32) -> MpiResult<i32> {
    if rt.comm(comm)?.is_inter() {
        return crate::intercomm::derive::create(rt, comm, group);
    }
    let g = subgroup(rt, comm, group)?;
    let (ctx, _) = agree_context(rt, comm, &[])?;
    if !g.contains(&rt.world_rank) {
        return Ok(MPI_COMM_NULL);
    }
    let mut new = Comm::new(ctx, g.to_vec(), rt.world_rank);
    new.errhandler = rt.comm(comm)?.errhandler;
    Ok(rt.add_comm(new))
}

/// `MPI_Comm_create_group`: collective over `group` only, its exchange told apart from other
/// creations on `comm` by `tag`. A process outside `group` gets `MPI_COMM_NULL` at once.
pub(crate) fn create_group(rt: &mut Runtime, comm: i32, group: i32, tag: i32) -> MpiResult<i32> {
    intra(rt, comm)?;
    let g = subgroup(rt, comm, group)?;
    if tag < 0 {
        return err(MPI_ERR_TAG, format!("invalid tag {tag} (tags are 0 ..= {})", i32::MAX));
    }
    let Some(me) = g.iter().position(|&w| w == rt.world_rank) else { return Ok(MPI_COMM_NULL) };
    let c = rt.comm(comm)?;
    let (parent_ctx, errhandler) = (c.ctx + 1, c.errhandler);
    let (ctx, _) = agree_context_among(rt, parent_ctx, &g, me, internal::create_group_tag(tag), &[])?;
    let mut new = Comm::new(ctx, g.to_vec(), rt.world_rank);
    new.errhandler = errhandler;
    Ok(rt.add_comm(new))
}

/// The one hardware resource Ferry tells apart: the host, whose processes share memory.
const HW_SHARED_MEMORY: &str = "mpi_shared_memory";
const HW_RESOURCE_KEY: &str = "mpi_hw_resource_type";

/// `MPI_Comm_split_type`: `MPI_COMM_TYPE_SHARED` splits by host (a host's colour is its
/// lowest world rank), `MPI_UNDEFINED` gives `MPI_COMM_NULL`. Of MPI-4's hardware types,
/// `MPI_COMM_TYPE_HW_GUIDED` knows the resource `mpi_shared_memory` (the host; any other
/// gives `MPI_COMM_NULL`, as the standard has it for a resource the implementation does not
/// know), and `MPI_COMM_TYPE_HW_UNGUIDED` splits a communicator that spans several hosts by
/// host and gives `MPI_COMM_NULL` on one host (Ferry knows no smaller resource). The new
/// communicators carry the resource under `mpi_hw_resource_type` in their info; an unguided
/// split that found one also sets it in the caller's info object, as MPI-4 says.
pub(crate) fn split_type(rt: &mut Runtime, comm: i32, split_type: i32, key: i32, info: i32) -> MpiResult<i32> {
    let members = rt.comm(comm)?.group.clone();
    let hints = crate::info::optional(rt, info)?;
    let host = rt.host_ranks().first().map_or(rt.world_rank, |&w| w.min(rt.world_rank)) as i32;
    let (color, resource) = match split_type {
        MPI_UNDEFINED => (MPI_UNDEFINED, false),
        MPI_COMM_TYPE_SHARED => (host, false),
        MPI_COMM_TYPE_HW_GUIDED => {
            let asked = hints.iter().find(|(k, _)| k == HW_RESOURCE_KEY).map(|(_, v)| v.as_str());
            if asked == Some(HW_SHARED_MEMORY) { (host, true) } else { (MPI_UNDEFINED, false) }
        }
        MPI_COMM_TYPE_HW_UNGUIDED => {
            // Every member sees the same answer: the communicator spans several hosts.
            let here = rt.host_ranks();
            let several = members.iter().any(|w| !here.contains(w));
            if several { (host, true) } else { (MPI_UNDEFINED, false) }
        }
        t => return err(MPI_ERR_ARG, format!("split type {t} is not MPI_COMM_TYPE_SHARED, MPI_COMM_TYPE_HW_GUIDED, MPI_COMM_TYPE_HW_UNGUIDED or MPI_UNDEFINED")),
    };
    let new = split(rt, comm, color, key)?;
    if resource {
        if let Some(c) = rt.comms.get_mut(&new) {
            crate::info::set(&mut c.hints, HW_RESOURCE_KEY, HW_SHARED_MEMORY);
        }
        if split_type == MPI_COMM_TYPE_HW_UNGUIDED && info != MPI_INFO_NULL {
            crate::info::set_in(rt, info, HW_RESOURCE_KEY, HW_SHARED_MEMORY)?;
        }
    }
    Ok(new)
}

pub(crate) fn compare(rt: &Runtime, a: i32, b: i32) -> MpiResult<i32> {
    let (ca, cb) = (rt.comm(a)?, rt.comm(b)?);
    if a == b {
        return Ok(MPI_IDENT);
    }
    if ca.is_inter() || cb.is_inter() {
        return Ok(crate::intercomm::derive::compare(ca, cb));
    }
    if ca.group == cb.group {
        return Ok(MPI_CONGRUENT);
    }
    let (mut x, mut y) = (ca.group.to_vec(), cb.group.to_vec());
    x.sort_unstable();
    y.sort_unstable();
    Ok(if x == y { MPI_SIMILAR } else { MPI_UNEQUAL })
}

pub(crate) fn freeable(rt: &Runtime, h: MPI_Comm) -> MpiResult<()> {
    if h == MPI_COMM_WORLD || h == MPI_COMM_SELF {
        return err(MPI_ERR_COMM, "predefined communicators cannot be freed");
    }
    rt.comm(h).map(|_| ())
}
