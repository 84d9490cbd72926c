//! Fault-tolerant MPI (the ULFM proposal, `MPIX_` names; docs/fault-tolerance.md): revoking
//! a communicator, acknowledging and listing failures, and (`agree.rs`) the agreement and the
//! shrink built on it. Only a job with recovery enabled has failures to handle; without it
//! the calls still work and find none.

mod agree;

pub(crate) use agree::{agree, shrink};

use crate::error::MpiResult;
use crate::objects::Runtime;

/// The world ranks of `comm`'s members, both groups of an intercommunicator.
fn members(rt: &Runtime, comm: i32) -> MpiResult<(u32, Vec<u32>)> {
    let c = rt.comm(comm)?;
    let mut all = c.group.to_vec();
    if let Some(r) = c.remote() {
        all.extend(r.iter());
    }
    Ok((c.ctx, all))
}

/// `MPIX_Comm_revoke`: every operation on `comm`, pending or later, here and at every other
/// member, fails with `MPIX_ERR_REVOKED` (agreement and shrink excepted).
pub(crate) fn revoke(rt: &mut Runtime, comm: i32) -> MpiResult<()> {
    let (ctx, all) = members(rt, comm)?;
    rt.engine.revoke(ctx, &all);
    rt.engine.revoke(ctx + 1, &all);
    Ok(())
}

/// `MPIX_Comm_is_revoked`.
pub(crate) fn is_revoked(rt: &mut Runtime, comm: i32) -> MpiResult<bool> {
    rt.progress_once()?;
    rt.note_failures();
    let ctx = rt.comm(comm)?.ctx;
    Ok(rt.engine.is_revoked(ctx))
}

/// The failed members of `comm` this process knows of (world ranks, in the order it learned
/// of them), after a look at what the engine found.
fn failed_members(rt: &mut Runtime, comm: i32) -> MpiResult<(u32, Vec<u32>)> {
    rt.progress_once()?;
    rt.note_failures();
    let (ctx, all) = members(rt, comm)?;
    Ok((ctx, rt.fault.failed.iter().copied().filter(|w| all.contains(w)).collect()))
}

/// `MPIX_Comm_failure_ack`: acknowledge every failure of `comm` known here (receives from any
/// source may start again; an agreement no longer reports them).
pub(crate) fn failure_ack(rt: &mut Runtime, comm: i32) -> MpiResult<()> {
    let (ctx, failed) = failed_members(rt, comm)?;
    rt.ft_comm(ctx).acked = failed;
    Ok(())
}

/// `MPIX_Comm_failure_get_acked`: the group of the failures acknowledged on `comm`.
pub(crate) fn failure_get_acked(rt: &mut Runtime, comm: i32) -> MpiResult<i32> {
    let ctx = rt.comm(comm)?.ctx;
    let acked = rt.ft_comm(ctx).acked.clone();
    Ok(rt.add_group(std::sync::Arc::new(acked)))
}

/// `MPIX_Comm_get_failed` (MPI-4.1 draft): the group of the failed members known here, in the
/// order they were learned of.
pub(crate) fn get_failed(rt: &mut Runtime, comm: i32) -> MpiResult<i32> {
    let (_, failed) = failed_members(rt, comm)?;
    Ok(rt.add_group(std::sync::Arc::new(failed)))
}

/// `MPIX_Comm_ack_failed` (MPI-4.1 draft): acknowledge the first `num_to_ack` failures of the
/// `MPIX_Comm_get_failed` order; returns how many are acknowledged in all.
pub(crate) fn ack_failed(rt: &mut Runtime, comm: i32, num_to_ack: i32) -> MpiResult<i32> {
    if num_to_ack < 0 {
        return crate::error::err(crate::consts::MPI_ERR_ARG, format!("num_to_ack is {num_to_ack}"));
    }
    let (ctx, failed) = failed_members(rt, comm)?;
    let ft = rt.ft_comm(ctx);
    for &w in failed.iter().take(num_to_ack as usize) {
        if !ft.acked.contains(&w) {
            ft.acked.push(w);
        }
    }
    Ok(ft.acked.len() as i32)
}
