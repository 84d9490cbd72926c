//! Synchronisation: fence, post/start/complete/wait (PSCW), and passive target (lock,
//! unlock, flush). Remote completion rests on order: a target applies one origin's requests
//! in the order sent, so its answer to a `Flush` or `Unlock` request says every earlier one
//! was applied; a `Complete` request counted at the target likewise follows the epoch's
//! operations. On a window whose memory every member maps, every operation is complete when
//! it returns, and locks are words of the window's control block (`control`): passive-target
//! synchronisation sends nothing there.

use std::os::raw::c_int;

use ferry_core::engine::matching::Pattern;

use super::codec::{Header, Kind};
use super::control::Control;
use super::target::{self, TAG_REQUEST};
use super::{Held, TAG_FENCE, TAG_POST};
use crate::completion::{engine_outcome, Body};
use crate::consts::*;
use crate::error::{err, MpiError, MpiResult};
use crate::objects::Runtime;

/// Longest sleep while waiting for a lock in a window's control block, between two passes
/// of the engine (the holder may be waiting for a message from this process).
const LOCK_NAP: std::time::Duration = std::time::Duration::from_millis(1);
/// A lock of a shared window that is free costs no wait, so no pass of the engine: a rank that
/// only locks, stores and unlocks would never learn that a peer died (its engine's watch
/// says so in a pass). Every so many such locks run one pass.
const LOCKS_PER_PASS: u32 = 256;

const MODES: c_int = MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED;

fn check_assert(a: c_int) -> MpiResult<()> {
    if a & !MODES != 0 {
        return err(MPI_ERR_ASSERT, format!("assert {a:#x} holds bits that are no MPI_MODE_* value"));
    }
    Ok(())
}

/// Wait for the answers to operations on the targets `which` selects, and finish them.
pub fn wait_replies(rt: &mut Runtime, win: MPI_Win, which: impl Fn(usize) -> bool) -> MpiResult<()> {
    let w = rt.win(win)?;
    // A request-based operation's answer is waited for only while its request still holds it.
    let live = |r: &super::Reply| match r.by_request {
        None => true,
        Some(h) => matches!(rt.reqs.get(&h).map(|q| &q.body), Some(Body::Engine(id)) if *id == r.rid),
    };
    let ids: Vec<u64> = w.replies.iter().filter(|r| which(r.target) && live(r)).map(|r| r.rid).collect();
    rt.engine.wait_until(|e| ids.iter().all(|&id| e.is_done(id)))?;
    let (w, engine) = super::win_and_engine(rt, win).expect("looked up above");
    let (done, keep): (Vec<_>, Vec<_>) = std::mem::take(&mut w.replies).into_iter().partition(|r| which(r.target));
    w.replies = keep;
    w.sends.retain(|(rid, _)| !(engine.is_done(*rid) && engine.take(*rid).is_some()));
    let mut failed = None;
    for r in done {
        if r.by_request.is_none() {
            let o = engine_outcome(engine, r.rid, r.unpack, crate::objects::comm::SourceRanks::None);
            if o.error != MPI_SUCCESS {
                failed = Some(o.error);
            }
        }
    }
    match failed {
        Some(class) => err(class, "a one-sided operation failed (its target is lost?)"),
        None => Ok(()),
    }
}

pub fn wait_all_replies(rt: &mut Runtime, win: MPI_Win) -> MpiResult<()> {
    wait_replies(rt, win, |_| true)
}

/// Send a synchronisation request `kind` to each of `targets` and wait for every answer.
fn ask_all(rt: &mut Runtime, win: MPI_Win, targets: &[usize], kind: Kind, flag: u8) -> MpiResult<()> {
    let mut rids = Vec::with_capacity(targets.len());
    let mut msgs = Vec::with_capacity(targets.len());
    for &t in targets {
        let w = super::wins_mut(rt).table.get_mut(&win).ok_or_else(|| MpiError::new(MPI_ERR_WIN, "window vanished"))?;
        let mut h = Header::new(kind);
        h.flag = flag;
        h.reply = w.reply_tag();
        let (ctx, to) = (w.ctx, w.group[t]);
        // SAFETY: an answer of no bytes: the pointer is never written through.
        rids.push(unsafe { rt.engine.irecv(Pattern { ctx: ctx + 1, src: Some(to), tag: Some(h.reply) }, std::ptr::NonNull::dangling().as_ptr(), 0) });
        let m = h.encode(&[]);
        // SAFETY: `msgs` keeps the bytes until the wait below is over, and the sends are
        // waited for with it.
        if let Some(rid) = unsafe { rt.engine.isend(to, ctx, TAG_REQUEST, m.as_ptr(), m.len(), false) } {
            rids.push(rid);
        }
        msgs.push(m);
    }
    rt.engine.wait_until(|e| rids.iter().all(|&id| e.is_done(id)))?;
    for id in rids {
        if let Some(Err(e)) = rt.engine.take(id) {
            return Err(MpiError::from(e));
        }
    }
    Ok(())
}

/// Every member of the window reached this point (an exchange of nothing on `tag`).
fn barrier(rt: &mut Runtime, win: MPI_Win, tag: i32) -> MpiResult<()> {
    let w = rt.win(win)?;
    let (ctx, group, me) = (w.ctx, w.group.clone(), w.rank);
    crate::internal::allgather_among(rt, ctx + 1, &group, me, tag, &[])?;
    Ok(())
}

pub(crate) fn fence(rt: &mut Runtime, win: MPI_Win, assert: c_int) -> MpiResult<()> {
    check_assert(assert)?;
    let w = rt.win(win)?;
    if w.epoch.start.is_some() || w.posted.is_some() || w.epoch.passive_any() {
        return err(MPI_ERR_RMA_SYNC, "MPI_Win_fence inside a PSCW or passive-target epoch");
    }
    if assert & MPI_MODE_NOPRECEDE == 0 {
        let dirty: Vec<usize> = w.dirty.iter().enumerate().filter(|d| *d.1).map(|d| d.0).collect();
        ask_all(rt, win, &dirty, Kind::Flush, 0)?;
    }
    wait_all_replies(rt, win)?;
    // Everybody's operations on this process are applied once everybody got here.
    barrier(rt, win, TAG_FENCE)?;
    let w = rt.win_mut(win)?;
    w.dirty.fill(false);
    w.epoch.fence = assert & MPI_MODE_NOSUCCEED == 0;
    super::lean::publish(w, None);
    Ok(())
}

impl super::Epoch {
    pub fn passive_any(&self) -> bool {
        self.lock_all.is_some() || !self.locks.is_empty()
    }
}

pub(crate) fn lock(rt: &mut Runtime, win: MPI_Win, lock_type: c_int, rank: c_int, assert: c_int) -> MpiResult<()> {
    check_assert(assert)?;
    if lock_type != MPI_LOCK_EXCLUSIVE && lock_type != MPI_LOCK_SHARED {
        return err(MPI_ERR_LOCKTYPE, format!("lock type {lock_type} is neither MPI_LOCK_EXCLUSIVE nor MPI_LOCK_SHARED"));
    }
    let w = rt.win(win)?;
    if rank == MPI_PROC_NULL {
        return Ok(());
    }
    let t = w.target(rank)?;
    if w.epoch.locks.contains_key(&t) || w.epoch.lock_all.is_some() {
        return err(MPI_ERR_RMA_SYNC, format!("rank {rank} of the window is locked already"));
    }
    if w.epoch.start.is_some() || w.epoch.fence && w.dirty.iter().any(|&d| d) {
        return err(MPI_ERR_RMA_SYNC, "MPI_Win_lock inside an active-target epoch");
    }
    let nocheck = assert & MPI_MODE_NOCHECK != 0;
    let exclusive = lock_type == MPI_LOCK_EXCLUSIVE;
    if !nocheck {
        match control(rt, win)? {
            Some(ctl) => {
                let w = rt.win_mut(win)?;
                w.quiet_locks = w.quiet_locks.wrapping_add(1);
                if w.quiet_locks % LOCKS_PER_PASS == 0 {
                    rt.progress_once()?;
                }
                take(rt, ctl, t, exclusive)?
            }
            None => ask_all(rt, win, &[t], Kind::Lock, exclusive as u8)?,
        }
    }
    let w = rt.win_mut(win)?;
    w.epoch.locks.insert(t, Held { nocheck, exclusive });
    // A fence with no operation since ends there: the lock's epoch is the window's now, and
    // once unlocked the window is in no epoch until the next synchronisation.
    w.epoch.fence = false;
    super::lean::publish(w, None);
    Ok(())
}

/// The control block of window `win`, when its memory is shared.
fn control(rt: &Runtime, win: MPI_Win) -> MpiResult<Option<Control>> {
    Ok(rt.win(win)?.shared_mem.as_ref().map(|m| m.control()))
}

/// Take target `t`'s lock in the control block, moving the engine while waiting.
fn take(rt: &mut Runtime, ctl: Control, t: usize, exclusive: bool) -> MpiResult<()> {
    while !ctl.try_passive(t, exclusive) {
        rt.progress_once()?;
        ctl.wait_passive(t, exclusive, LOCK_NAP);
    }
    Ok(())
}

/// Complete what was sent to the targets `targets` (requests go to the target only on
/// windows whose memory is not shared), then release their locks: in the control block,
/// or with `Unlock` requests (`Flush` for a lock taken without asking).
fn release(rt: &mut Runtime, win: MPI_Win, targets: &[(usize, Held)]) -> MpiResult<()> {
    let Some(ctl) = control(rt, win)? else {
        let with = |nocheck: bool| -> Vec<usize> { targets.iter().filter(|(_, h)| h.nocheck == nocheck).map(|(t, _)| *t).collect() };
        ask_all(rt, win, &with(false), Kind::Unlock, 0)?;
        return ask_all(rt, win, &with(true), Kind::Flush, 0);
    };
    let w = rt.win(win)?;
    let sent: Vec<usize> = targets.iter().map(|x| x.0).filter(|&t| w.dirty[t]).collect();
    ask_all(rt, win, &sent, Kind::Flush, 0)?;
    // What this process stored into the targets' memory is visible before the lock goes.
    std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
    for &(t, h) in targets {
        if !h.nocheck {
            ctl.release_passive(t, h.exclusive);
        }
    }
    Ok(())
}

pub(crate) fn unlock(rt: &mut Runtime, win: MPI_Win, rank: c_int) -> MpiResult<()> {
    let w = rt.win(win)?;
    if rank == MPI_PROC_NULL {
        return Ok(());
    }
    let t = w.target(rank)?;
    let Some(&held) = w.epoch.locks.get(&t) else { return err(MPI_ERR_RMA_SYNC, format!("rank {rank} of the window is not locked")) };
    if let Some(m) = w.shared_mem.as_ref().filter(|_| !w.dirty[t] && w.replies.is_empty()) {
        // The common case of a shared window: everything is done; let the lock go.
        let ctl = m.control();
        if w.take_unfenced() {
            std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
        }
        if !held.nocheck {
            // The release is a locked instruction: a fence for this process's stores.
            ctl.release_passive(t, held.exclusive);
        }
        let w = rt.win_mut(win)?;
        w.epoch.locks.remove(&t);
        super::lean::publish(w, Some(t));
        return Ok(());
    }
    // Without a lock taken there is none to release, but the operations must still complete.
    release(rt, win, &[(t, held)])?;
    wait_replies(rt, win, |x| x == t)?;
    let w = rt.win_mut(win)?;
    w.epoch.locks.remove(&t);
    w.dirty[t] = false;
    super::lean::publish(w, Some(t));
    Ok(())
}

pub(crate) fn lock_all(rt: &mut Runtime, win: MPI_Win, assert: c_int) -> MpiResult<()> {
    check_assert(assert)?;
    let w = rt.win(win)?;
    if w.epoch.passive_any() {
        return err(MPI_ERR_RMA_SYNC, "the window is locked already");
    }
    if w.epoch.start.is_some() || w.epoch.fence && w.dirty.iter().any(|&d| d) {
        return err(MPI_ERR_RMA_SYNC, "MPI_Win_lock_all inside an active-target epoch");
    }
    let all: Vec<usize> = (0..w.group.len()).collect();
    let nocheck = assert & MPI_MODE_NOCHECK != 0;
    if !nocheck {
        match control(rt, win)? {
            Some(ctl) => {
                for &t in &all {
                    take(rt, ctl, t, false)?;
                }
            }
            None => ask_all(rt, win, &all, Kind::Lock, 0)?,
        }
    }
    let w = rt.win_mut(win)?;
    w.epoch.lock_all = Some(nocheck);
    // As in `lock`: a fence with nothing since ends here.
    w.epoch.fence = false;
    super::lean::publish(w, None);
    Ok(())
}

pub(crate) fn unlock_all(rt: &mut Runtime, win: MPI_Win) -> MpiResult<()> {
    let w = rt.win(win)?;
    let Some(nocheck) = w.epoch.lock_all else { return err(MPI_ERR_RMA_SYNC, "the window is not locked by MPI_Win_lock_all") };
    let all: Vec<(usize, Held)> = (0..w.group.len()).map(|t| (t, Held { nocheck, exclusive: false })).collect();
    release(rt, win, &all)?;
    wait_all_replies(rt, win)?;
    let w = rt.win_mut(win)?;
    w.epoch.lock_all = None;
    w.dirty.fill(false);
    super::lean::publish(w, None);
    Ok(())
}

/// `MPI_Win_flush` (`rank`: one target, else all) and, with `local`, `MPI_Win_flush_local`:
/// local completion needs only the answers, which carry the data of gets.
pub(crate) fn flush(rt: &mut Runtime, win: MPI_Win, rank: Option<c_int>, local: bool) -> MpiResult<()> {
    let w = rt.win(win)?;
    // The common case first: one target of a shared window, nothing sent to it.
    if let Some(r) = rank.filter(|&r| r >= 0 && (r as usize) < w.group.len()) {
        let t = r as usize;
        if w.shared_mem.is_some() && !w.dirty[t] && w.epoch.passive(t) {
            // Plain stores into the target's memory (puts) are visible to its loads, and
            // ordered before this process's next loads, once a fence passed; updates made
            // with atomic instructions need none.
            if w.take_unfenced() {
                std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
            }
            return Ok(());
        }
    }
    let targets: Vec<usize> = match rank {
        Some(MPI_PROC_NULL) => return Ok(()),
        Some(r) => {
            let t = w.target(r)?;
            if !w.epoch.passive(t) {
                return err(MPI_ERR_RMA_SYNC, format!("rank {r} of the window is not locked"));
            }
            // Operations on shared window memory are complete when they return; only a
            // target that was sent requests needs asking.
            if w.dirty[t] { vec![t] } else { Vec::new() }
        }
        None => {
            if !w.epoch.passive_any() {
                return err(MPI_ERR_RMA_SYNC, "no passive-target epoch is open on the window");
            }
            (0..w.group.len()).filter(|&t| w.dirty[t]).collect()
        }
    };
    // Stores into shared window memory are visible to the target once this returns.
    std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
    if targets.is_empty() {
        return Ok(());
    }
    if !local {
        ask_all(rt, win, &targets, Kind::Flush, 0)?;
    }
    wait_replies(rt, win, |t| targets.contains(&t))?;
    if !local {
        let w = rt.win_mut(win)?;
        for t in targets {
            w.dirty[t] = false;
            super::lean::publish(w, Some(t));
        }
    }
    Ok(())
}

/// The window ranks of group `g`'s members; each must belong to the window.
fn ranks_of(rt: &Runtime, win: MPI_Win, g: MPI_Group) -> MpiResult<Vec<usize>> {
    let members = rt.group(g)?;
    let w = rt.win(win)?;
    members.iter().map(|m| w.group.iter().position(|x| x == m).ok_or_else(|| MpiError::new(MPI_ERR_GROUP, format!("world rank {m} of the group is not in the window")))).collect()
}

pub(crate) fn post(rt: &mut Runtime, win: MPI_Win, g: MPI_Group, assert: c_int) -> MpiResult<()> {
    check_assert(assert)?;
    let origins = ranks_of(rt, win, g)?;
    let w = rt.win_mut(win)?;
    if w.posted.is_some() {
        return err(MPI_ERR_RMA_SYNC, "the window is posted already (MPI_Win_wait first)");
    }
    w.posted = Some(origins.len());
    if assert & MPI_MODE_NOCHECK == 0 {
        let (ctx, group) = (w.ctx, w.group.clone());
        for o in origins {
            // SAFETY: no bytes to keep.
            if let Some(rid) = unsafe { rt.engine.isend(group[o], ctx + 1, TAG_POST, std::ptr::NonNull::dangling().as_ptr(), 0, false) } {
                rt.win_mut(win)?.sends.push((rid, Vec::new()));
            }
        }
    }
    Ok(())
}

pub(crate) fn start(rt: &mut Runtime, win: MPI_Win, g: MPI_Group, assert: c_int) -> MpiResult<()> {
    check_assert(assert)?;
    let targets = ranks_of(rt, win, g)?;
    let w = rt.win(win)?;
    if w.epoch.start.is_some() || w.epoch.passive_any() || w.epoch.fence && w.dirty.iter().any(|&d| d) {
        return err(MPI_ERR_RMA_SYNC, "an access epoch is open on the window already");
    }
    if assert & MPI_MODE_NOCHECK == 0 {
        let (ctx, group) = (w.ctx, w.group.clone());
        let mut rids = Vec::new();
        for &t in &targets {
            // SAFETY: an empty message: nothing is written.
            rids.push(unsafe { rt.engine.irecv(Pattern { ctx: ctx + 1, src: Some(group[t]), tag: Some(TAG_POST) }, std::ptr::NonNull::dangling().as_ptr(), 0) });
        }
        rt.engine.wait_until(|e| rids.iter().all(|&id| e.is_done(id)))?;
        for id in rids {
            rt.engine.take(id);
        }
    }
    let w = rt.win_mut(win)?;
    w.epoch.start = Some(targets);
    // As in `lock`: a fence with nothing since ends here.
    w.epoch.fence = false;
    super::lean::publish(w, None);
    Ok(())
}

pub(crate) fn complete(rt: &mut Runtime, win: MPI_Win) -> MpiResult<()> {
    let w = rt.win(win)?;
    let Some(targets) = w.epoch.start.clone() else { return err(MPI_ERR_RMA_SYNC, "MPI_Win_complete without MPI_Win_start") };
    for &t in &targets {
        let (w, engine) = super::win_and_engine(rt, win)?;
        let m = Header::new(Kind::Complete).encode(&[]);
        // SAFETY: `m` goes to `sends` until the engine is done with it.
        if let Some(rid) = unsafe { engine.isend(w.group[t], w.ctx, TAG_REQUEST, m.as_ptr(), m.len(), false) } {
            w.sends.push((rid, m));
        }
    }
    wait_replies(rt, win, |t| targets.contains(&t))?;
    let w = rt.win_mut(win)?;
    w.epoch.start = None;
    for t in targets {
        w.dirty[t] = false;
    }
    super::lean::publish(w, None);
    Ok(())
}

/// `MPI_Win_wait` (`block`) and `MPI_Win_test`: whether every origin of the post completed.
pub(crate) fn wait(rt: &mut Runtime, win: MPI_Win, block: bool) -> MpiResult<bool> {
    let w = rt.win(win)?;
    let Some(n) = w.posted else { return err(MPI_ERR_RMA_SYNC, "MPI_Win_wait without MPI_Win_post") };
    let ctx = w.ctx;
    let shared = super::wins(rt).shared.clone();
    let done = |_: &ferry_core::engine::Engine| target::lock(&shared).wins.get(&ctx).is_none_or(|x| x.completes >= n);
    if block {
        rt.engine.wait_until(done)?;
    } else {
        rt.progress_once()?;
        if !done(&rt.engine) {
            return Ok(false);
        }
    }
    if let Some(x) = target::lock(&super::wins(rt).shared).wins.get_mut(&ctx) {
        x.completes -= n;
    }
    rt.win_mut(win)?.posted = None;
    Ok(true)
}
