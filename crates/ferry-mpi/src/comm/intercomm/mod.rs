//! Intercommunicators: two disjoint groups joined by one context id pair, made by
//! `MPI_Intercomm_create` (and from groups, in `from_groups`), turned into one
//! intracommunicator by `MPI_Intercomm_merge`, and asked after by `MPI_Comm_remote_size` /
//! `MPI_Comm_remote_group`. `derive` holds the communicator constructors (dup, split, create,
//! compare) as they apply to them.

pub(crate) mod derive;
pub(crate) mod from_groups;

use std::os::raw::c_int;
use std::sync::Arc;

use ferry_core::engine::matching::Pattern;

use crate::objects::comm::intra;
use crate::objects::{Comm, CONTEXT_BLOCK};
use crate::consts::*;
use crate::error::{err, MpiResult};
use crate::internal;
use crate::objects::Runtime;

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
    let (ctx, local, remote) = (c.ctx + 1, c.group.clone(), c.remote().cloned().expect("an intercommunicator"));
    // Both sides must list the members in the same order: by world rank.
    let mut all: Vec<u32> = local.iter().chain(remote.iter()).copied().collect();
    all.sort_unstable();
    let me = all.binary_search(&rt.world_rank).expect("a member of its own communicator");
    let mut mine = rt.next_context.to_le_bytes().to_vec();
    mine.extend_from_slice(extra);
    let got = internal::allgather_among(rt, ctx, &all, me, internal::TAG_ALLGATHER, &mine)?;
    let new_ctx = got.iter().map(|b| le_u32(b, 0)).max().unwrap_or(rt.next_context);
    // The pair, then the block of its idups (see `Comm::new`).
    rt.next_context = new_ctx + CONTEXT_BLOCK;
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

/// The local side of an intercommunicator creation: the members (world ranks, in rank
/// order; this process is `members[me]`, the leader `members[leader]`) and the internal
/// context and tag of their traffic.
pub(crate) struct LocalSide<'a> {
    pub members: &'a [u32],
    pub me: usize,
    pub leader: usize,
    pub ctx: u32,
    pub tag: i32,
}

/// Where the two leaders meet, known at the local leader only: the internal context and
/// tag of their exchange, the remote leader's world rank and, when the caller named it,
/// the remote group this side expects.
pub(crate) struct Bridge {
    pub ctx: u32,
    pub tag: i32,
    pub leader: u32,
    pub expected: Option<Vec<u32>>,
}

/// What a leader says of a group it expects: a hash of its world ranks, never 0, which
/// stands for no expectation.
fn claim(group: Option<&[u32]>) -> u32 {
    group.map_or(0, |g| internal::fnv1a(&g.iter().flat_map(|w| w.to_le_bytes()).collect::<Vec<u8>>()) | 1)
}

/// What the leaders tell their groups of the creation: the same at both leaders, as both
/// see the same two messages.
const GO_ON: u32 = 0;
const OVERLAP: u32 = 1;
const MISMATCH: u32 = 2;

fn verdict(local: &[u32], local_claim: u32, remote: &[u32], remote_claim: u32) -> u32 {
    if remote.iter().any(|w| local.contains(w)) {
        OVERLAP
    } else if (local_claim != 0 && local_claim != claim(Some(remote))) || (remote_claim != 0 && remote_claim != claim(Some(local))) {
        MISMATCH
    } else {
        GO_ON
    }
}

/// What both intercommunicator creations do once the sides are known: the local group
/// agrees on its highest next context id; the leaders trade that and their groups over
/// `bridge`; each leader then tells its group the context id (the higher of the two, so
/// unused on both sides) and the remote group, or that the creation failed: error class
/// `overlap_class` when the groups share a member, `MPI_ERR_GROUP` when a leader's group is
/// not the one the other leader expected.
/// Every message of the local group goes on `local.ctx` with `local.tag`: those between two
/// members keep their order, so the id exchange and the leader's word cannot be mixed up.
pub(crate) fn join(rt: &mut Runtime, local: LocalSide, bridge: Option<Bridge>, overlap_class: c_int) -> MpiResult<(u32, Vec<u32>)> {
    let LocalSide { members, me, leader, ctx: lctx, tag } = local;
    let contexts = internal::allgather_among(rt, lctx, members, me, tag, &rt.next_context.to_le_bytes())?;
    let highest = contexts.iter().map(|b| le_u32(b, 0)).max().unwrap_or(rt.next_context);
    let cap = 12 + 4 * rt.comm(MPI_COMM_WORLD)?.size() as usize;
    let (ctx, refused, remote) = match bridge {
        Some(b) => {
            let mine = claim(b.expected.as_deref());
            let theirs = send_recv(rt, Some(b.leader), b.leader, b.ctx, b.tag, &encode(highest, mine, members), cap)?;
            let (their_ctx, their_claim, remote) = decode(&theirs)?;
            let ctx = highest.max(their_ctx);
            let refused = verdict(members, mine, &remote, their_claim);
            let word = encode(ctx, refused, &remote);
            let mut reqs = Vec::new();
            for (r, &to) in members.iter().enumerate() {
                if r != me {
                    // SAFETY: `word` outlives the wait below.
                    reqs.extend(unsafe { rt.engine.isend(to, lctx, tag, word.as_ptr(), word.len(), false) });
                }
            }
            internal::wait_all(rt, &reqs)?;
            (ctx, refused, remote)
        }
        None => decode(&send_recv(rt, None, members[leader], lctx, tag, &[], cap)?)?,
    };
    rt.next_context = rt.next_context.max(ctx + CONTEXT_BLOCK);
    match refused {
        GO_ON => Ok((ctx, remote)),
        OVERLAP => err(overlap_class, "the two groups of an intercommunicator must be disjoint"),
        _ => err(MPI_ERR_GROUP, "a leader's remote group is not the group the other leader leads"),
    }
}

/// `MPI_Intercomm_create`: `join` with the local communicator's internal context and the
/// leaders meeting on `peer_comm`'s, with the negative tag of `MPI_Comm_create_group`.
pub(crate) fn create(rt: &mut Runtime, local_comm: i32, local_leader: c_int, peer_comm: i32, remote_leader: c_int, tag: c_int) -> MpiResult<i32> {
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
    let bridge = if me == leader {
        let p = rt.comm(peer_comm)?;
        if remote_leader < 0 || remote_leader >= p.peer_size() {
            return err(MPI_ERR_RANK, format!("invalid remote leader {remote_leader} (peer communicator size {})", p.peer_size()));
        }
        let w = p.world(remote_leader);
        if local.contains(&w) {
            return err(MPI_ERR_RANK, format!("remote leader {remote_leader} is a member of the local group"));
        }
        Some(Bridge { ctx: p.ctx + 1, tag: internal::create_group_tag(tag), leader: w, expected: None })
    } else {
        None
    };
    let side = LocalSide { members: &local, me, leader, ctx: lctx, tag: internal::TAG_INTERCOMM };
    let (ctx, remote) = join(rt, side, bridge, MPI_ERR_ARG)?;
    let mut new = Comm::new(ctx, local.to_vec(), rt.world_rank);
    new.set_remote(Some(Arc::new(remote)));
    new.errhandler = errhandler;
    Ok(rt.add_comm(new))
}

/// `MPI_Intercomm_merge`: the group whose members passed `high = false` comes first; when
/// both sides passed the same, the side whose first member has the lower world rank does,
/// or, between two jobs (accept/connect), the side that accepted.
pub(crate) fn merge(rt: &mut Runtime, comm: i32, high: bool) -> MpiResult<i32> {
    let Exchanged { ctx, local: local_items, remote: remote_items } = exchange(rt, comm, &[high as u8])?;
    let c = rt.comm(comm)?;
    let remote = c.remote().expect("exchange checked it");
    let (mine_high, theirs_high) = (local_items[0][0] != 0, remote_items[0][0] != 0);
    let local_first = if mine_high != theirs_high {
        !mine_high
    } else {
        match (rt.engine.bridge_accepted(remote[0]), rt.engine.bridge_accepted(c.group[0])) {
            (Some(accepted), _) => accepted,
            (None, Some(accepted)) => !accepted,
            (None, None) => c.group[0] < remote[0],
        }
    };
    let (a, b) = if local_first { (&c.group, remote) } else { (remote, &c.group) };
    let group: Vec<u32> = a.iter().chain(b.iter()).copied().collect();
    let mut new = Comm::new(ctx, group, rt.world_rank);
    new.errhandler = c.errhandler;
    Ok(rt.add_comm(new))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_leaders_reach_one_verdict() {
        let (a, b) = ([0, 3], [1, 2]);
        let (ca, cb) = (claim(Some(&b)), claim(Some(&a)));
        // Each leader passes its own group and claim first: the verdicts agree.
        assert_eq!(verdict(&a, ca, &b, cb), GO_ON);
        assert_eq!(verdict(&b, cb, &a, ca), GO_ON);
        // MPI_Intercomm_create claims nothing.
        assert_eq!(verdict(&a, 0, &b, 0), GO_ON);
        // One leader expects another group: both see it.
        let wrong = claim(Some(&[1]));
        assert_eq!(verdict(&a, wrong, &b, cb), MISMATCH);
        assert_eq!(verdict(&b, cb, &a, wrong), MISMATCH);
        assert_eq!(verdict(&a, 0, &[3, 4], 0), OVERLAP);
        assert_eq!(verdict(&[3, 4], 0, &a, 0), OVERLAP);
        assert_ne!(claim(Some(&[])), 0);
    }
}
