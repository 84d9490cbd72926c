//! Internal traffic of a communicator (its second context id): the small all-to-all
//! exchange that communicator creation needs, and the agreement on a new context id that
//! communicators, intercommunicators and windows are made with.

use ferry_core::engine::matching::Pattern;

use crate::error::{err, MpiResult};
use crate::consts::*;
use crate::objects::{Runtime, CONTEXT_BLOCK};

/// The tag of the exchanges over a whole communicator.
pub const TAG_ALLGATHER: i32 = 1;
/// The tag of [`alltoall_among`].
pub const TAG_ALLTOALL: i32 = 2;
/// The tag of `MPI_Intercomm_create`'s traffic within the local group (the context id
/// exchange, then the leader's word to its group).
pub const TAG_INTERCOMM: i32 = 3;
/// The tag of the exchanges that make a communicator's host area (`coll/onhost.rs`).
pub const TAG_HOST_AREA: i32 = 4;
/// Largest contribution [`allgather_among`] carries.
const MAX_ITEM: usize = 256;

pub fn wait_all(rt: &mut Runtime, reqs: &[u64]) -> MpiResult<Vec<ferry_core::engine::Status>> {
    // Non-blocking collectives in flight keep moving meanwhile, inside the engine: a peer
    // may need this rank's part of one before it can get here. The lock stays held even with
    // MPI_THREAD_MULTIPLE: a context id proposed here must not be proposed again by another
    // thread's creation before this one is agreed (the price: this process's other threads
    // wait for the creation to end).
    rt.engine.wait_until(|e| reqs.iter().all(|r| e.is_done(*r)))?;
    let mut out = Vec::with_capacity(reqs.len());
    for r in reqs {
        out.push(rt.engine.take(*r).expect("completed above")?);
    }
    Ok(out)
}

/// The internal tag of `MPI_Comm_create_group` with the user's `tag` (non-negative): the
/// negative tags, which no other internal exchange or collective uses, one per user tag so
/// that creations over overlapping groups never take each other's messages.
pub fn create_group_tag(tag: i32) -> i32 {
    -1 - tag
}

/// First internal tag of partitioned messages (`p2p/partitioned.rs`), above the collectives'
/// `[1 << 20, 5 << 20)` (blocking and non-blocking data and status tokens: `coll/mod.rs`,
/// which checks this at compile time); both travel on a communicator's internal context.
pub const PARTITIONED_BASE: i32 = 5 << 20;
/// First internal tag of `MPI_Comm_create_from_group` (on `MPI_COMM_WORLD`'s internal
/// context), above the partitioned messages' `[3 << 20, 1 << 30)`.
const STRINGTAG_BASE: i32 = 1 << 30;

/// The internal tag of a partitioned message with the user's `tag` (non-negative). Tags
/// that differ by a multiple of `(1 << 30) - PARTITIONED_BASE` share one internal tag.
pub fn partitioned_tag(tag: i32) -> i32 {
    PARTITIONED_BASE + tag % (STRINGTAG_BASE - PARTITIONED_BASE)
}

/// The internal tag of `MPI_Comm_create_from_group` with string tag `s`: a 30-bit hash
/// (FNV-1a), so two string tags in use at once over overlapping groups could, rarely,
/// share one.
pub fn stringtag_tag(s: &[u8]) -> i32 {
    STRINGTAG_BASE | (fnv1a(s) & 0x3fff_ffff) as i32
}

/// The internal tag of `MPI_Intercomm_create_from_groups` with string tag `s`, in the same
/// range: the hash of `s` after a NUL, which no C string holds, so that it differs from
/// `MPI_Comm_create_from_group`'s with the same string tag.
pub fn inter_stringtag_tag(s: &[u8]) -> i32 {
    let h = s.iter().fold(fnv1a(&[0]), |h, &b| fnv1a_step(h, b));
    STRINGTAG_BASE | (h & 0x3fff_ffff) as i32
}

fn fnv1a_step(h: u32, b: u8) -> u32 {
    (h ^ b as u32).wrapping_mul(0x0100_0193)
}

/// FNV-1a, 32 bits.
pub fn fnv1a(s: &[u8]) -> u32 {
    s.iter().fold(0x811c_9dc5u32, |h, &b| fnv1a_step(h, b))
}

/// Every `mine` of the world ranks `group` (this process is `group[me]`), exchanged on
/// internal context `ctx` with `tag`, in group order.
pub fn allgather_among(rt: &mut Runtime, ctx: u32, group: &[u32], me: usize, tag: i32, mine: &[u8]) -> MpiResult<Vec<Vec<u8>>> {
    if mine.len() > MAX_ITEM {
        return err(MPI_ERR_INTERN, "internal exchange item too large");
    }
    let n = group.len();
    let mut bufs = vec![vec![0u8; MAX_ITEM]; n];
    let mut reqs = Vec::with_capacity(2 * n);
    for (r, b) in bufs.iter_mut().enumerate() {
        if r != me {
            // SAFETY: `bufs` outlives the wait below and is not touched until then.
            reqs.push(unsafe { rt.engine.irecv(Pattern { ctx, src: Some(group[r]), tag: Some(tag) }, b.as_mut_ptr(), MAX_ITEM) });
        }
    }
    for (r, &w) in group.iter().enumerate() {
        if r != me {
            // SAFETY: `mine` outlives the wait below.
            reqs.extend(unsafe { rt.engine.isend(w, ctx, tag, mine.as_ptr(), mine.len(), false) });
        }
    }
    let sts = wait_all(rt, &reqs)?;
    let mut k = 0;
    for (r, b) in bufs.iter_mut().enumerate() {
        if r == me {
            *b = mine.to_vec();
        } else {
            b.truncate(sts[k].bytes);
            k += 1;
        }
    }
    Ok(bufs)
}

/// `items[r]` to `group[r]`, for every r, and what each sent this process, in group order
/// (this process's own item is kept). Items of any size: their lengths go first.
pub fn alltoall_among(rt: &mut Runtime, ctx: u32, group: &[u32], me: usize, tag: i32, items: Vec<Vec<u8>>) -> MpiResult<Vec<Vec<u8>>> {
    let n = group.len();
    let lens: Vec<[u8; 4]> = items.iter().map(|i| (i.len() as u32).to_le_bytes()).collect();
    let mut got = vec![[0u8; 4]; n];
    let mut reqs = Vec::with_capacity(2 * n);
    for (r, b) in got.iter_mut().enumerate() {
        if r != me {
            // SAFETY: `got` outlives the wait below and is not touched until then.
            reqs.push(unsafe { rt.engine.irecv(Pattern { ctx, src: Some(group[r]), tag: Some(tag) }, b.as_mut_ptr(), 4) });
        }
    }
    for (r, &w) in group.iter().enumerate() {
        if r != me {
            // SAFETY: `lens` outlives the wait below.
            reqs.extend(unsafe { rt.engine.isend(w, ctx, tag, lens[r].as_ptr(), 4, false) });
        }
    }
    wait_all(rt, &reqs)?;
    let mut bufs: Vec<Vec<u8>> = got.iter().map(|l| vec![0u8; u32::from_le_bytes(*l) as usize]).collect();
    reqs.clear();
    for (r, b) in bufs.iter_mut().enumerate() {
        if r != me {
            // SAFETY: as above, for `bufs`.
            reqs.push(unsafe { rt.engine.irecv(Pattern { ctx, src: Some(group[r]), tag: Some(tag) }, b.as_mut_ptr(), b.len()) });
        }
    }
    for (r, &w) in group.iter().enumerate() {
        if r != me {
            // SAFETY: `items` outlives the wait below.
            reqs.extend(unsafe { rt.engine.isend(w, ctx, tag, items[r].as_ptr(), items[r].len(), false) });
        }
    }
    wait_all(rt, &reqs)?;
    bufs[me] = items[me].clone();
    Ok(bufs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partitioned_tags_stay_between_the_collectives_and_the_string_tags() {
        for tag in [0, 1, 12345, (1 << 30) - PARTITIONED_BASE - 1, 1 << 30, i32::MAX] {
            let t = partitioned_tag(tag);
            assert!((PARTITIONED_BASE..STRINGTAG_BASE).contains(&t), "tag {tag} -> {t}");
        }
        assert_ne!(partitioned_tag(0), partitioned_tag(1));
    }

    #[test]
    fn string_tags_stay_above_every_other_internal_tag() {
        for s in ["", "a", "org.example.solver", &"x".repeat(255)] {
            assert!(stringtag_tag(s.as_bytes()) >= STRINGTAG_BASE);
        }
        assert_ne!(stringtag_tag(b"solver"), stringtag_tag(b"solver2"));
        assert_eq!(stringtag_tag(b"solver"), stringtag_tag(b"solver"));
        for s in ["", "a", "org.example.coupler"] {
            let t = inter_stringtag_tag(s.as_bytes());
            assert!(t >= STRINGTAG_BASE);
            assert_ne!(t, stringtag_tag(s.as_bytes()), "{s:?}");
        }
    }
}

/// Agree with every member of `comm` on a context id none of them has used.
pub(crate) fn agree_context(rt: &mut Runtime, comm: i32, extra: &[u8]) -> MpiResult<(u32, Vec<Vec<u8>>)> {
    let c = rt.comm(comm)?;
    let (ctx, group, me) = (c.ctx + 1, c.group.clone(), c.rank as usize);
    agree_context_among(rt, ctx, &group, me, TAG_ALLGATHER, extra)
}

/// Agree with the world ranks `group` (this process is `group[me]`) on a context id none of
/// them has used, talking on internal context `ctx` with `tag`; also returns each one's
/// `extra`, in group order.
pub(crate) fn agree_context_among(rt: &mut Runtime, ctx: u32, group: &[u32], me: usize, tag: i32, extra: &[u8]) -> MpiResult<(u32, Vec<Vec<u8>>)> {
    let mut mine = rt.next_context.to_le_bytes().to_vec();
    mine.extend_from_slice(extra);
    let all = allgather_among(rt, ctx, group, me, tag, &mine)?;
    let ctx = all.iter().map(|b| u32::from_le_bytes(b[0..4].try_into().expect("4-byte prefix"))).max().unwrap_or(rt.next_context);
    // The pair itself, then the block of its idups (see `Comm::new`).
    rt.next_context = ctx + CONTEXT_BLOCK;
    Ok((ctx, all.into_iter().map(|b| b[4..].to_vec()).collect()))
}
