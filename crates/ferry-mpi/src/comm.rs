//! Communicators: a context id pair, a group of world ranks, an error handler; and the
//! functions that make, compare and free them. In `comm/`, the communicators made otherwise:
//! intercommunicators, communicators with a virtual topology, and communicators made from a
//! group without a parent (the Sessions Model).

pub(crate) mod from_group;
pub(crate) mod intercomm;
pub(crate) mod topo;

use crate::consts::*;
use crate::error::{err, MpiResult};
use crate::internal;
pub(crate) use crate::objects::comm::intra;
use crate::objects::{Comm, Runtime};
use crate::internal::{agree_context, agree_context_among};

/// `MPI_Comm_dup`, and with `hints` `MPI_Comm_dup_with_info` (those hints instead of comm's);
/// the topology goes along.
pub(crate) fn dup(rt: &mut Runtime, comm: i32, hints: Option<crate::objects::records::Hints>) -> MpiResult<i32> {
    if rt.comm(comm)?.is_inter() {
        return intercomm::derive::dup(rt, comm, hints);
    }
    let (ctx, _) = agree_context(rt, comm, &[])?;
    let c = rt.comm(comm)?;
    let hints = hints.unwrap_or_else(|| c.hints.clone());
    let mut new = c.duplicate(ctx, rt.world_rank);
    new.hints = hints;
    Ok(rt.add_comm(new))
}

/// `MPI_Comm_idup`: a duplicate whose context pair comes from `comm`'s idup block, so it
/// needs no message and is complete at once (the standard allows a non-blocking call to
/// complete at the call). The duplicate of an agreed communicator gets a smaller block of its
/// own (`IDUP_CHILD_PAIRS` pairs), so the idups of idups, started in different orders on
/// different communicators, need no message either; the duplicate of such a duplicate gets
/// none. Once a block is spent (after `IDUP_PAIRS` idups of one communicator, and so on) the
/// context is agreed as `MPI_Comm_dup` agrees it, which waits for every member to call.
pub(crate) fn idup(rt: &mut Runtime, comm: i32, hints: Option<crate::objects::records::Hints>) -> MpiResult<i32> {
    let world_rank = rt.world_rank;
    rt.comm(comm)?;
    let c = rt.comms.get_mut(&comm).expect("checked above");
    let step = c.idup_step;
    if step == 0 || c.idup_next + step > c.idup_end {
        return dup(rt, comm, hints);
    }
    let ctx = c.idup_next;
    c.idup_next += step;
    let hints = hints.unwrap_or_else(|| c.hints.clone());
    let mut new = c.duplicate(ctx, world_rank);
    new.hints = hints;
    // The slot after the pair holds this duplicate's own idups, a pair each (none if the
    // slot is a pair alone).
    (new.idup_next, new.idup_end, new.idup_step) = if step > 2 { (ctx + 2, ctx + step, 2) } else { (0, 0, 0) };
    Ok(rt.add_comm(new))
}

pub(crate) fn split(rt: &mut Runtime, comm: i32, color: i32, key: i32) -> MpiResult<i32> {
    if color < 0 && color != MPI_UNDEFINED {
        return err(MPI_ERR_ARG, format!("color {color} is negative (only MPI_UNDEFINED may be)"));
    }
    if rt.comm(comm)?.is_inter() {
        return intercomm::derive::split(rt, comm, color, key);
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
fn subgroup(rt: &Runtime, comm: i32, group: i32) -> MpiResult<crate::objects::records::Members> {
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
        return intercomm::derive::create(rt, comm, group);
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
/// split that found one also sets it in the caller's info object, as MPI-4 says. MPICH's
/// `MPIX_COMM_TYPE_NEIGHBORHOOD` gives `MPI_COMM_NULL`.
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
        // MPICH's neighbourhoods (a directory's file system, a network level, named by info
        // hints): Ferry knows none, and gives MPI_COMM_NULL as for an unknown resource.
        MPIX_COMM_TYPE_NEIGHBORHOOD => (MPI_UNDEFINED, false),
        t => return err(MPI_ERR_ARG, format!("split type {t} is not MPI_COMM_TYPE_SHARED, MPI_COMM_TYPE_HW_GUIDED, MPI_COMM_TYPE_HW_UNGUIDED, MPIX_COMM_TYPE_NEIGHBORHOOD or MPI_UNDEFINED")),
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
        return Ok(intercomm::derive::compare(ca, cb));
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
