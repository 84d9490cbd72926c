//! Internal traffic of a communicator (its second context id): the dissemination barrier and
//! the small all-to-all exchange that communicator creation needs.

use ferry_core::engine::matching::Pattern;

use crate::error::{err, MpiResult};
use crate::consts::*;
use crate::runtime::Runtime;

const TAG_ALLGATHER: i32 = 1;
const TAG_BARRIER: i32 = 1000;
/// Largest contribution [`allgather`] carries.
const MAX_ITEM: usize = 256;

fn wait_all(rt: &mut Runtime, reqs: &[u64]) -> MpiResult<Vec<ferry_core::engine::Status>> {
    rt.engine.wait_until(|e| reqs.iter().all(|r| e.is_done(*r)))?;
    let mut out = Vec::with_capacity(reqs.len());
    for r in reqs {
        out.push(rt.engine.take(*r).expect("completed above")?);
    }
    Ok(out)
}

/// Dissemination barrier (Hensgen, Finkel and Manber): ceil(log2 n) rounds; in round k each
/// rank signals rank + 2^k and waits for rank - 2^k.
pub fn barrier(rt: &mut Runtime, comm: i32) -> MpiResult<()> {
    let c = rt.comm(comm)?;
    let (n, me, ctx) = (c.size(), c.rank, c.ctx + 1);
    let group = c.group.clone();
    let mut dist = 1;
    let mut round = 0;
    while dist < n {
        let to = group[((me + dist) % n) as usize];
        let from = group[((me - dist).rem_euclid(n)) as usize];
        let mut none = 0u8;
        // SAFETY: zero-byte transfers never touch their buffers.
        let r = unsafe { rt.engine.irecv(Pattern { ctx, src: Some(from), tag: Some(TAG_BARRIER + round) }, &mut none, 0) };
        let s = unsafe { rt.engine.isend(to, ctx, TAG_BARRIER + round, &none, 0, false) };
        wait_all(rt, &[s, r])?;
        dist *= 2;
        round += 1;
    }
    Ok(())
}

/// Every member's `mine` (at most 256 bytes), in communicator rank order.
pub fn allgather(rt: &mut Runtime, comm: i32, mine: &[u8]) -> MpiResult<Vec<Vec<u8>>> {
    if mine.len() > MAX_ITEM {
        return err(MPI_ERR_INTERN, "internal exchange item too large");
    }
    let c = rt.comm(comm)?;
    let (n, me, ctx) = (c.size() as usize, c.rank as usize, c.ctx + 1);
    let group = c.group.clone();
    let mut bufs = vec![vec![0u8; MAX_ITEM]; n];
    let mut reqs = Vec::with_capacity(2 * n);
    for (r, b) in bufs.iter_mut().enumerate() {
        if r != me {
            // SAFETY: `bufs` outlives the wait below and is not touched until then.
            reqs.push(unsafe { rt.engine.irecv(Pattern { ctx, src: Some(group[r]), tag: Some(TAG_ALLGATHER) }, b.as_mut_ptr(), MAX_ITEM) });
        }
    }
    for (r, &w) in group.iter().enumerate() {
        if r != me {
            // SAFETY: `mine` outlives the wait below.
            reqs.push(unsafe { rt.engine.isend(w, ctx, TAG_ALLGATHER, mine.as_ptr(), mine.len(), false) });
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
