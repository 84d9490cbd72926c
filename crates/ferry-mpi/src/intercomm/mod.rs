//! Intercommunicators: two disjoint groups joined by one context id pair, made by
//! `MPI_Intercomm_create`, turned into one intracommunicator by `MPI_Intercomm_merge`, and
//! asked after by `MPI_Comm_remote_size` / `MPI_Comm_remote_group`. `derive` holds the
//! communicator constructors (dup, split, create, compare) as they apply to them.

pub(crate) mod derive;

use std::os::raw::c_int;
use std::sync::Arc;

use ferry_core::engine::matching::Pattern;

use crate::boundary::call;
use crate::comm::{intra, out_arg, Comm, IDUP_PAIRS};
use crate::consts::*;
use crate::error::{err, MpiResult};
use crate::internal;
use crate::runtime::Runtime;

/// `comm`, which must be an intercommunicator (MPI_ERR_COMM for an intracommunicator).
pub(crate) fn inter(rt: &Runtime, comm: i32) -> MpiResult<&Comm> {
    let c = rt.comm(comm)?;
    if !c.is_inter() {
        return err(MPI_ERR_COMM, "this call needs an intercommunicator, not an intracommunicator");
    }
    Ok(c)
}

fn le_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

/// What [`exchange`] learnt: a context id none of the members has used (now used here too),
/// and the `extra` of the local and of the remote members, each in rank order.
pub(crate) struct Exchanged {
    pub ctx: u32,
    pub local: Vec<Vec<u8>>,
    pub remote: Vec<Vec<u8>>,
}

/// Every member of both groups of intercommunicator `comm` tells every other its next
/// free context id and `extra`.
pub(crate) fn exchange(rt: &mut Runtime, comm: i32, extra: &[u8]) -> MpiResult<Exchanged> {
    let c = inter(rt, comm)?;
    let (ctx, local, remote) = (c.ctx + 1, c.group.clone(), c.remote.clone().expect("an intercommunicator"));
    // Both sides must list the members in the same order: by world rank.
    let mut all: Vec<u32> = local.iter().chain(remote.iter()).copied().collect();
    all.sort_unstable();
    let me = all.binary_search(&rt.world_rank).expect("a member of its own communicator");
    let mut mine = rt.next_context.to_le_bytes().to_vec();
    mine.extend_from_slice(extra);
    let got = internal::allgather_among(rt, ctx, &all, me, internal::TAG_ALLGATHER, &mine)?;
    let new_ctx = got.iter().map(|b| le_u32(b, 0)).max().unwrap_or(rt.next_context);
    // The pair, then the block of its idups (see `Comm::new`).
    rt.next_context = new_ctx + 2 + 2 * IDUP_PAIRS;
    let of = |members: &[u32]| members.iter().map(|w| got[all.binary_search(w).expect("listed")][4..].to_vec()).collect();
    Ok(Exchanged { ctx: new_ctx, local: of(&local), remote: of(&remote) })
}

/// A context id and a group as bytes: the leaders' messages of `MPI_Intercomm_create`.
fn encode(ctx: u32, flag: u32, group: &[u32]) -> Vec<u8> {
    let mut v = Vec::with_capacity(12 + 4 * group.len());
    for x in [ctx, flag, group.len() as u32].into_iter().chain(group.iter().copied()) {
        v.extend_from_slice(&x.to_le_bytes());
    }
    v
}

fn decode(b: &[u8]) -> MpiResult<(u32, u32, Vec<u32>)> {
    if b.len() < 12 || b.len() != 12 + 4 * le_u32(b, 8) as usize {
        return err(MPI_ERR_INTERN, "malformed intercommunicator creation message");
    }
    Ok((le_u32(b, 0), le_u32(b, 4), (0..le_u32(b, 8) as usize).map(|i| le_u32(b, 12 + 4 * i)).collect()))
}

/// Send `msg` to world rank `to` and receive one message of at most `cap` bytes from `from`
/// (None: receive only), on internal context `ctx` with `tag`.
fn send_recv(rt: &mut Runtime, to: Option<u32>, from: u32, ctx: u32, tag: i32, msg: &[u8], cap: usize) -> MpiResult<Vec<u8>> {
    let mut buf = vec![0u8; cap];
    // SAFETY: `buf` and `msg` outlive the wait below and are not touched until then.
    let mut reqs = vec![unsafe { rt.engine.irecv(Pattern { ctx, src: Some(from), tag: Some(tag) }, buf.as_mut_ptr(), cap) }];
    if let Some(to) = to {
        // SAFETY: as above.
        reqs.extend(unsafe { rt.engine.isend(to, ctx, tag, msg.as_ptr(), msg.len(), false) });
    }
    let sts = internal::wait_all(rt, &reqs)?;
    buf.truncate(sts[0].bytes);
    Ok(buf)
}

/// `MPI_Intercomm_create`: the local group agrees on its highest next context id; the
/// leaders trade that and their groups over `peer_comm`; the local leader then tells its
/// group the context id (the higher of the two, so unused on both sides) and the remote group.
fn create(rt: &mut Runtime, local_comm: i32, local_leader: c_int, peer_comm: i32, remote_leader: c_int, tag: c_int) -> MpiResult<i32> {
    let c = intra(rt, local_comm)?;
    if local_leader < 0 || local_leader >= c.size() {
        return err(MPI_ERR_RANK, format!("invalid local leader {local_leader} (communicator size {})", c.size()));
    }
    if tag < 0 {
        return err(MPI_ERR_TAG, format!("invalid tag {tag} (tags are 0 ..= {})", i32::MAX));
    }
    let (lctx, local, me, errhandler) = (c.ctx + 1, c.group.clone(), c.rank as usize, c.errhandler);
    let leader = local_leader as usize;
    // The peer communicator and the remote leader matter at the local leader only.
    let peer = if me == leader {
        let p = rt.comm(peer_comm)?;
        if remote_leader < 0 || remote_leader >= p.peer_size() {
            return err(MPI_ERR_RANK, format!("invalid remote leader {remote_leader} (peer communicator size {})", p.peer_size()));
        }
        let w = p.world(remote_leader);
        if local.contains(&w) {
            return err(MPI_ERR_RANK, format!("remote leader {remote_leader} is a member of the local group"));
        }
        Some((p.ctx + 1, w))
    } else {
        None
    };
    let contexts = internal::allgather_among(rt, lctx, &local, me, internal::TAG_ALLGATHER, &rt.next_context.to_le_bytes())?;
    let highest = contexts.iter().map(|b| le_u32(b, 0)).max().unwrap_or(rt.next_context);
    let cap = 12 + 4 * rt.comm(MPI_COMM_WORLD)?.size() as usize;
    let (ctx, overlap, remote) = match peer {
        Some((pctx, w)) => {
            let theirs = send_recv(rt, Some(w), w, pctx, internal::create_group_tag(tag), &encode(highest, 0, &local), cap)?;
            let (their_ctx, _, remote) = decode(&theirs)?;
            let ctx = highest.max(their_ctx);
            let overlap = remote.iter().any(|w| local.contains(w)) as u32;
            let word = encode(ctx, overlap, &remote);
            let mut reqs = Vec::new();
            for (r, &to) in local.iter().enumerate() {
                if r != me {
                    // SAFETY: `word` outlives the wait below.
                    reqs.extend(unsafe { rt.engine.isend(to, lctx, internal::TAG_INTERCOMM, word.as_ptr(), word.len(), false) });
                }
            }
            internal::wait_all(rt, &reqs)?;
            (ctx, overlap, remote)
        }
        None => decode(&send_recv(rt, None, local[leader], lctx, internal::TAG_INTERCOMM, &[], cap)?)?,
    };
    rt.next_context = rt.next_context.max(ctx + 2 + 2 * IDUP_PAIRS);
    if overlap != 0 {
        return err(MPI_ERR_ARG, "the two groups of an intercommunicator must be disjoint");
    }
    let mut new = Comm::new(ctx, local.to_vec(), rt.world_rank);
    new.remote = Some(Arc::new(remote));
    new.errhandler = errhandler;
    Ok(rt.add_comm(new))
}

/// `MPI_Intercomm_merge`: the group whose members passed `high = false` comes first; when
/// both sides passed the same, the side whose first member has the lower world rank does.
fn merge(rt: &mut Runtime, comm: i32, high: bool) -> MpiResult<i32> {
    let Exchanged { ctx, local: local_items, remote: remote_items } = exchange(rt, comm, &[high as u8])?;
    let c = rt.comm(comm)?;
    let remote = c.remote.as_ref().expect("exchange checked it");
    let (mine_high, theirs_high) = (local_items[0][0] != 0, remote_items[0][0] != 0);
    let local_first = if mine_high != theirs_high { !mine_high } else { c.group[0] < remote[0] };
    let (a, b) = if local_first { (&c.group, remote) } else { (remote, &c.group) };
    let group: Vec<u32> = a.iter().chain(b.iter()).copied().collect();
    let mut new = Comm::new(ctx, group, rt.world_rank);
    new.errhandler = c.errhandler;
    Ok(rt.add_comm(new))
}

crate::mpi_export! { MPI_Intercomm_create, PMPI_Intercomm_create, (local_comm: MPI_Comm, local_leader: c_int, peer_comm: MPI_Comm,
        remote_leader: c_int, tag: c_int, newcomm: *mut MPI_Comm) {
    call("MPI_Intercomm_create", local_comm, |rt| {
        let o = out_arg(newcomm, "newintercomm")?;
        *o = create(rt, local_comm, local_leader, peer_comm, remote_leader, tag)?;
        Ok(())
    })
}}

crate::mpi_export! { MPI_Intercomm_merge, PMPI_Intercomm_merge, (comm: MPI_Comm, high: c_int, newcomm: *mut MPI_Comm) {
    call("MPI_Intercomm_merge", comm, |rt| { let o = out_arg(newcomm, "newintracomm")?; *o = merge(rt, comm, high != 0)?; Ok(()) })
}}

crate::mpi_export! { MPI_Comm_remote_size, PMPI_Comm_remote_size, (comm: MPI_Comm, size: *mut c_int) {
    call("MPI_Comm_remote_size", comm, |rt| { let o = out_arg(size, "size")?; *o = inter(rt, comm)?.peer_size(); Ok(()) })
}}

crate::mpi_export! { MPI_Comm_remote_group, PMPI_Comm_remote_group, (comm: MPI_Comm, group: *mut MPI_Group) {
    call("MPI_Comm_remote_group", comm, |rt| {
        let o = out_arg(group, "group")?;
        let g = inter(rt, comm)?.peers().clone();
        *o = rt.add_group(g);
        Ok(())
    })
}}
