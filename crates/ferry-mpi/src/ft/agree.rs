//! The agreement of fault-tolerant MPI driven over the engine: the state machine of
//! `ferry_core::engine::agreement` fed with the messages that arrive on its context and the
//! failures the runtime notes, until it has decided.

use ferry_core::engine::agreement::{decode, encode, Agreement, Ranks, Value, AGREE_CONTEXT};
use ferry_core::engine::{Pattern, ReqId};

use crate::consts::*;
use crate::error::{err, MpiError, MpiResult};
use crate::objects::threads::Locked;
use crate::objects::Runtime;

/// What the survivors of `comm` decided (see `Value`): `flags` ANDed, `floor` the largest,
/// the failed members (as communicator ranks) and those acknowledged everywhere. Works on a
/// revoked communicator. The failures decided become known here too.
pub(crate) fn agreement(rt: &mut Locked, comm: i32, flags: u32, floor: u32) -> MpiResult<Value> {
    rt.note_failures();
    let c = rt.comm(comm)?;
    if c.is_inter() {
        return err(MPI_ERR_COMM, "fault-tolerant agreement on an intercommunicator is not supported");
    }
    let (ctx, group, me) = (c.ctx, c.group.clone(), c.rank as usize);
    let n = group.len();
    let failed = Ranks::of(n, positions(&group, &rt.fault.failed));
    let ft = rt.ft_comm(ctx);
    let seq = ft.agree_seq;
    ft.agree_seq = seq.wrapping_add(1);
    let acked = Ranks::of(n, positions(&group, &ft.acked));
    let (early, later): (Vec<_>, Vec<_>) = std::mem::take(&mut ft.early).into_iter().partition(|(s, _, _)| *s == seq);
    ft.early = later;
    let mut a = Agreement::new(me, n, Value { flags, floor, failed: Ranks::new(n), acked }, &failed);
    for (_, from, m) in early {
        a.on_message(from, m);
    }
    let words = n.div_ceil(64);
    let mut buf = vec![0u8; 64 + 32 * words];
    let mut sends: Vec<(ReqId, Vec<u8>)> = Vec::new();
    let pat = Pattern { ctx: AGREE_CONTEXT, src: None, tag: Some(ctx as i32) };
    // SAFETY: `buf` lives until the receive is taken or cancelled below.
    let mut recv = unsafe { rt.engine.irecv(pat, buf.as_mut_ptr(), buf.len()) };
    let mut known = rt.fault.failed.len();
    loop {
        for (to, m) in a.take_outbox() {
            let bytes = encode(seq, &m);
            // SAFETY: `bytes` is kept in `sends` until the send completes.
            if let Some(id) = unsafe { rt.engine.isend(group[to], AGREE_CONTEXT, ctx as i32, bytes.as_ptr(), bytes.len(), false) } {
                sends.push((id, bytes));
            }
        }
        if a.result().is_some() {
            break;
        }
        rt.engine.wait_until(|e| e.is_done(recv) || e.has_lost_peers() || e.has_revoked_by_peers())?;
        rt.note_failures();
        for &w in &rt.fault.failed[known..] {
            if let Some(r) = group.iter().position(|&g| g == w) {
                a.on_failed(r);
            }
        }
        known = rt.fault.failed.len();
        if !rt.engine.is_done(recv) {
            continue;
        }
        if let Some(Ok(st)) = rt.engine.take(recv) {
            let from = group.iter().position(|&g| g == st.source);
            match (from, decode(&buf[..st.bytes.min(buf.len())], n)) {
                (Some(from), Some((s, m))) if s == seq => a.on_message(from, m),
                // A later agreement's, from a member already in it: kept for it.
                (Some(from), Some((s, m))) if s.wrapping_sub(seq) < 1 << 31 => rt.ft_comm(ctx).early.push((s, from, m)),
                // An earlier agreement's (a commit passed on), or bytes that are no message.
                _ => {}
            }
        }
        // SAFETY: as above.
        recv = unsafe { rt.engine.irecv(pat, buf.as_mut_ptr(), buf.len()) };
    }
    if !rt.engine.cancel(recv) {
        // It matched meanwhile: a message of another agreement, which the next one would
        // want; wait for its bytes (they are here or on their way) and keep it.
        rt.engine.wait_until(|e| e.is_done(recv))?;
        if let Some(Ok(st)) = rt.engine.take(recv) {
            if let (Some(from), Some((s, m))) = (group.iter().position(|&g| g == st.source), decode(&buf[..st.bytes.min(buf.len())], n)) {
                if s != seq && s.wrapping_sub(seq) < 1 << 31 {
                    rt.ft_comm(ctx).early.push((s, from, m));
                }
            }
        }
    } else {
        rt.engine.take(recv);
    }
    // Small sends leave at once; one to a process that died meanwhile fails, which is fine.
    rt.engine.wait_until(|e| sends.iter().all(|(id, _)| e.is_done(*id)))?;
    for (id, _) in sends {
        rt.engine.take(id);
    }
    let value = a.result().expect("decided above").clone();
    for r in value.failed.members() {
        if let Some(&w) = group.get(r) {
            if !rt.fault.failed.contains(&w) {
                rt.fault.failed.push(w);
            }
        }
    }
    Ok(value)
}

/// Where each of `ranks` (world ranks) stands in `group`, for those in it.
pub(crate) fn positions<'a>(group: &'a [u32], ranks: &'a [u32]) -> impl Iterator<Item = usize> + 'a {
    ranks.iter().filter_map(|w| group.iter().position(|g| g == w))
}

/// `MPIX_Comm_agree`: the flags ANDed over the survivors; `MPIX_ERR_PROC_FAILED` (at every
/// survivor alike) when a member failed whose failure not every survivor acknowledged.
pub(crate) fn agree(rt: &mut Locked, comm: i32, flag: &mut i32) -> MpiResult<()> {
    let v = agreement(rt, comm, *flag as u32, 0)?;
    *flag = v.flags as i32;
    if !v.failed.is_subset(&v.acked) {
        let who: Vec<String> = v.failed.members().filter(|&r| !v.acked.contains(r)).map(|r| r.to_string()).collect();
        return Err(MpiError::new(MPIX_ERR_PROC_FAILED, format!("rank(s) {} of the communicator failed, and not every survivor acknowledged it", who.join(","))).on_comm(comm));
    }
    Ok(())
}

/// `MPIX_Comm_shrink`: a new communicator of the survivors, in their order in `comm`, on a
/// context id they all agree on.
pub(crate) fn shrink(rt: &mut Locked, comm: i32) -> MpiResult<i32> {
    let floor = rt.next_context;
    let v = agreement(rt, comm, !0, floor)?;
    let rt: &mut Runtime = rt;
    let c = rt.comm(comm)?;
    let group: Vec<u32> = c.group.iter().enumerate().filter(|(r, _)| !v.failed.contains(*r)).map(|(_, &w)| w).collect();
    if !group.contains(&rt.world_rank) {
        return Err(MpiError::new(MPI_ERR_INTERN, "this process was decided failed by the others").on_comm(comm));
    }
    let errhandler = c.errhandler;
    rt.next_context = rt.next_context.max(v.floor + crate::objects::CONTEXT_BLOCK);
    let mut new = crate::objects::Comm::new(v.floor, group, rt.world_rank);
    new.errhandler = errhandler;
    Ok(rt.add_comm(new))
}
