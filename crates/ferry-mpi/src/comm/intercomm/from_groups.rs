//! `MPI_Intercomm_create_from_groups` (MPI-4 7.6.2): an intercommunicator from two disjoint
//! groups, with no parent communicator. The creation is `MPI_Intercomm_create`'s (`join`)
//! over `MPI_COMM_WORLD`'s internal context, which every process has in the world and the
//! sessions model alike, with a tag made from the string tag, as for
//! `MPI_Comm_create_from_group`; its arguments and errors are those of the latter.

use std::os::raw::c_int;
use std::sync::Arc;

use super::{join, Bridge, LocalSide};
use crate::objects::Comm;
use crate::consts::*;
use crate::error::{err, MpiResult};
use crate::internal;
use crate::objects::Runtime;
use crate::comm::from_group::FromGroups;

/// Position of `leader` in a group of `size`, or MPI_ERR_RANK.
fn leader_in(leader: c_int, size: usize, what: &str) -> MpiResult<usize> {
    match usize::try_from(leader) {
        Ok(l) if l < size => Ok(l),
        _ => err(MPI_ERR_RANK, format!("invalid {what} {leader} (its group has {size} members)")),
    }
}

/// Collective over both groups; `remote_group` is read at every process (to refuse one that
/// is in both groups), `remote_leader` at the local leader only, as the standard says.
pub(crate) fn create(rt: &mut Runtime, local_group: MPI_Group, local_leader: c_int, remote_group: MPI_Group, remote_leader: c_int, args: FromGroups) -> MpiResult<MPI_Comm> {
    let local = rt.group(local_group)?;
    let remote = rt.group(remote_group)?;
    // MPI-4: with an empty group the call is local and makes no communicator.
    if local.is_empty() || remote.is_empty() {
        return Ok(MPI_COMM_NULL);
    }
    let leader = leader_in(local_leader, local.len(), "local leader")?;
    let world_rank = rt.world_rank;
    let Some(me) = local.iter().position(|&w| w == world_rank) else {
        return err(MPI_ERR_GROUP, "this process is not a member of the local group");
    };
    if remote.contains(&world_rank) {
        return err(MPI_ERR_GROUP, "this process is a member of both the local and the remote group");
    }
    let ctx = FromGroups::context(rt)?;
    let tag = internal::inter_stringtag_tag(args.stringtag.as_bytes());
    let bridge = if me == leader {
        let r = leader_in(remote_leader, remote.len(), "remote leader")?;
        Some(Bridge { ctx, tag, leader: remote[r], expected: Some(remote.to_vec()) })
    } else {
        None
    };
    let (ctx, remote) = join(rt, LocalSide { members: &local, me, leader, ctx, tag }, bridge, MPI_ERR_GROUP)?;
    let mut c = Comm::new(ctx, local.to_vec(), world_rank);
    c.set_remote(Some(Arc::new(remote)));
    Ok(args.finish(rt, c))
}
