//! The Wait and Test families over arrays of requests, MPI_Request_free and
//! MPI_Request_get_status: what the exports of the point-to-point chapter call to complete
//! requests.

use std::os::raw::c_int;

use super::*;
use crate::error::{err, out_arg, MpiError, MpiResult};
use crate::objects::threads::Locked;
use crate::objects::Runtime;

/// Read the handles of an array argument.
fn handles<'a>(count: c_int, reqs: *mut MPI_Request) -> MpiResult<&'a mut [MPI_Request]> {
    if count < 0 {
        return err(MPI_ERR_COUNT, format!("negative count {count}"));
    }
    if count == 0 {
        return Ok(&mut []);
    }
    if reqs.is_null() {
        return err(MPI_ERR_REQUEST, "array of requests is NULL");
    }
    // SAFETY: MPI passes an array of `count` request handles.
    Ok(unsafe { std::slice::from_raw_parts_mut(reqs, count as usize) })
}

fn validate(rt: &Runtime, hs: &[MPI_Request]) -> MpiResult<()> {
    for &h in hs {
        if h != MPI_REQUEST_NULL {
            rt.check_req(h)?;
        }
    }
    Ok(())
}

fn status_at(sts: *mut MPI_Status, i: usize) -> *mut MPI_Status {
    if status_ignored(sts) {
        sts
    } else {
        // SAFETY: a statuses array has one entry per request.
        unsafe { sts.add(i) }
    }
}

pub(crate) fn wait_one(rt: &mut Locked, req: *mut MPI_Request, status: *mut MPI_Status) -> MpiResult<()> {
    let h = out_arg(req, "request")?;
    if is_done_recv(*h) {
        // Complete from the start: its outcome is all there is.
        let Some(d) = rt.done_recvs.remove_made(*h) else { return err(MPI_ERR_REQUEST, format!("invalid request handle {:#x}", *h)) };
        *h = MPI_REQUEST_NULL;
        write_status(status, &d.outcome, d.outcome.error != MPI_SUCCESS);
        return check(d.outcome, d.comm).map(|_| ());
    }
    if h != &MPI_REQUEST_NULL {
        rt.check_req(*h)?;
    }
    if !rt.live(*h) {
        write_status(status, &Outcome::empty(), false);
        return Ok(());
    }
    let comm = rt.reqs[h].comm;
    rt.block_until(&[*h], true).map_err(|e| e.on_comm(comm))?;
    let o = rt.complete_handle(h);
    write_status(status, &o, o.error != MPI_SUCCESS);
    check(o, comm).map(|_| ())
}

pub(crate) fn test_one(rt: &mut Locked, req: *mut MPI_Request, flag: *mut c_int, status: *mut MPI_Status) -> MpiResult<()> {
    let h = *out_arg(req, "request")?;
    let flag = out_arg(flag, "flag")?;
    if h != MPI_REQUEST_NULL {
        rt.check_req(h)?;
    }
    if !rt.live(h) {
        *flag = 1;
        write_status(status, &Outcome::empty(), false);
        return Ok(());
    }
    if is_done_recv(h) {
        *flag = 1;
        return wait_one(rt, req, status);
    }
    rt.progress_once()?;
    if !rt.req_done(h) {
        *flag = 0;
        return Ok(());
    }
    *flag = 1;
    wait_one(rt, req, status)
}

/// Complete request `i` of `hs` and record its outcome; returns its error class.
fn complete_at(rt: &mut Runtime, hs: &mut [MPI_Request], i: usize, st: *mut MPI_Status, first_err: &mut Option<i32>) -> i32 {
    let comm = rt.req_comm(hs[i]).unwrap_or(MPI_COMM_WORLD);
    let o = rt.complete_handle(&mut hs[i]);
    write_status(st, &o, true);
    if o.error != MPI_SUCCESS && first_err.is_none() {
        *first_err = Some(comm);
    }
    o.error
}

fn in_status(first_err: Option<i32>) -> MpiResult<()> {
    match first_err {
        None => Ok(()),
        Some(comm) => Err(MpiError::new(MPI_ERR_IN_STATUS, "a request completed with an error; see the statuses").on_comm(comm)),
    }
}

/// One pass over `hs` for the common wait: check every handle, and when each request is a
/// plain one (null, complete from the start, or one engine operation) gather in `wait_ids`
/// the engine ids still in flight and say `true`; `false` sends the caller to the general
/// wait ([`Locked::block_until`]).
fn gather_plain(rt: &mut Runtime, hs: &[MPI_Request]) -> MpiResult<bool> {
    let mut ids = std::mem::take(&mut rt.wait_ids);
    ids.clear();
    let mut plain = true;
    for &h in hs {
        if h == MPI_REQUEST_NULL || is_shared_done(h) {
            continue;
        }
        if is_done_recv(h) {
            if !rt.done_recvs.contains_key(&h) {
                rt.wait_ids = ids;
                return err(MPI_ERR_REQUEST, format!("invalid request handle {h:#x}"));
            }
            continue;
        }
        match rt.reqs.get(&h).map(|r| &r.body) {
            Some(&Body::Engine(id)) => {
                if !rt.engine.is_done(id) {
                    ids.push(id);
                }
            }
            Some(Body::Done { .. } | Body::Finished(_)) => {}
            Some(_) => plain = false,
            None => {
                rt.wait_ids = ids;
                return err(MPI_ERR_REQUEST, format!("invalid request handle {h:#x}"));
            }
        }
    }
    rt.wait_ids = ids;
    Ok(plain)
}

/// Wait until every engine id [`gather_plain`] gathered is complete.
fn wait_gathered(rt: &mut Locked) -> MpiResult<()> {
    if rt.wait_ids.is_empty() {
        return Ok(());
    }
    // Out of the runtime while the lock may be let go (MPI_THREAD_MULTIPLE).
    let ids = std::mem::take(&mut rt.wait_ids);
    // A cursor over the set: what completed stays completed, so each pass looks only from
    // the first request not yet seen done.
    let mut seen = 0;
    let r = rt.wait_until(|e| {
        while seen < ids.len() && e.is_done(ids[seen]) {
            seen += 1;
        }
        seen == ids.len()
    });
    rt.wait_ids = ids;
    Ok(r?)
}

pub(crate) fn waitall(rt: &mut Locked, count: c_int, reqs: *mut MPI_Request, sts: *mut MPI_Status) -> MpiResult<()> {
    let hs = handles(count, reqs)?;
    if hs.iter().all(|&h| is_shared_done(h) || h == MPI_REQUEST_NULL) {
        // Sends their route took at once, and operations with MPI_PROC_NULL: a compare each.
        if status_ignored(sts) {
            hs.fill(MPI_REQUEST_NULL);
        } else {
            for (i, h) in hs.iter_mut().enumerate() {
                let o = if *h == MPI_REQUEST_NULL { Outcome::empty() } else { shared_outcome(*h) };
                *h = MPI_REQUEST_NULL;
                write_status(status_at(sts, i), &o, true);
            }
        }
        return Ok(());
    }
    if gather_plain(rt, hs)? {
        wait_gathered(rt)?;
    } else {
        rt.block_until(hs, true)?;
    }
    let mut first_err = None;
    for i in 0..hs.len() {
        if is_shared_done(hs[i]) {
            let o = shared_outcome(hs[i]);
            hs[i] = MPI_REQUEST_NULL;
            write_status(status_at(sts, i), &o, true);
        } else if let Some(d) = take_done_recv(rt, hs[i]) {
            hs[i] = MPI_REQUEST_NULL;
            write_status(status_at(sts, i), &d.outcome, true);
            if d.outcome.error != MPI_SUCCESS && first_err.is_none() {
                first_err = Some(d.comm);
            }
        } else if let Some((o, comm)) = finish_plain(rt, hs[i]) {
            hs[i] = MPI_REQUEST_NULL;
            write_status(status_at(sts, i), &o, true);
            if o.error != MPI_SUCCESS && first_err.is_none() {
                first_err = Some(comm);
            }
        } else if !rt.live(hs[i]) {
            write_status(status_at(sts, i), &Outcome::empty(), true);
        } else {
            complete_at(rt, hs, i, status_at(sts, i), &mut first_err);
        }
    }
    in_status(first_err)
}

/// Take `h` when it is a receive complete from the start (checked: it was gathered).
#[inline]
fn take_done_recv(rt: &mut Runtime, h: MPI_Request) -> Option<DoneRecv> {
    if !is_done_recv(h) {
        return None;
    }
    rt.done_recvs.remove_made(h)
}

/// Finish `h` when it is a plain request whose operation is over (one engine operation with
/// nothing to unpack, or one complete with its outcome): its outcome and communicator, the
/// handle gone. `None` for any other request, left as it was.
#[inline]
fn finish_plain(rt: &mut Runtime, h: MPI_Request) -> Option<(Outcome, i32)> {
    let Runtime { reqs, engine, .. } = rt;
    reqs.remove_with(&h, |r| {
        let o = match r.body {
            Body::Engine(id) if r.unpack.is_none() && engine.is_done(id) => engine_outcome(engine, id, None, r.group.view()),
            Body::Finished(o) => o,
            Body::Done { source, tag } => Outcome { source, tag, ..Outcome::empty() },
            _ => return None,
        };
        Some((o, r.comm))
    })
}

pub(crate) fn testall(rt: &mut Locked, count: c_int, reqs: *mut MPI_Request, flag: *mut c_int, sts: *mut MPI_Status) -> MpiResult<()> {
    let hs = handles(count, reqs)?;
    let flag = out_arg(flag, "flag")?;
    validate(rt, hs)?;
    rt.progress_once()?;
    if !hs.iter().all(|&h| !rt.live(h) || rt.req_done(h)) {
        *flag = 0;
        return Ok(());
    }
    *flag = 1;
    waitall(rt, count, reqs, sts)
}

/// Complete one finished request of `hs`, if any, and set `index` to it (also when it
/// completed with an error, so the caller knows which one failed).
fn any_done(rt: &mut Runtime, hs: &mut [MPI_Request], index: &mut c_int, status: *mut MPI_Status) -> MpiResult<Option<usize>> {
    let Some(i) = hs.iter().position(|&h| rt.live(h) && rt.req_done(h)) else {
        *index = MPI_UNDEFINED;
        return Ok(None);
    };
    *index = i as c_int;
    let comm = rt.req_comm(hs[i])?;
    let o = rt.complete_handle(&mut hs[i]);
    write_status(status, &o, o.error != MPI_SUCCESS);
    check(o, comm)?;
    Ok(Some(i))
}

pub(crate) fn waitany(rt: &mut Locked, count: c_int, reqs: *mut MPI_Request, index: *mut c_int, status: *mut MPI_Status) -> MpiResult<()> {
    let hs = handles(count, reqs)?;
    let index = out_arg(index, "index")?;
    validate(rt, hs)?;
    if hs.iter().all(|&h| !rt.live(h)) {
        *index = MPI_UNDEFINED;
        write_status(status, &Outcome::empty(), false);
        return Ok(());
    }
    wait_for_any(rt, hs)?;
    any_done(rt, hs, index, status).map(|_| ())
}

pub(crate) fn testany(rt: &mut Runtime, count: c_int, reqs: *mut MPI_Request, index: *mut c_int, flag: *mut c_int, status: *mut MPI_Status) -> MpiResult<()> {
    let hs = handles(count, reqs)?;
    let index = out_arg(index, "index")?;
    let flag = out_arg(flag, "flag")?;
    validate(rt, hs)?;
    if hs.iter().all(|&h| !rt.live(h)) {
        *flag = 1;
        *index = MPI_UNDEFINED;
        write_status(status, &Outcome::empty(), false);
        return Ok(());
    }
    rt.progress_once()?;
    let r = any_done(rt, hs, index, status);
    *flag = !matches!(r, Ok(None)) as c_int;
    r.map(|_| ())
}

fn some(rt: &mut Runtime, hs: &mut [MPI_Request], outcount: &mut c_int, indices: *mut c_int, sts: *mut MPI_Status) -> MpiResult<()> {
    let mut first_err = None;
    let mut k = 0usize;
    for i in 0..hs.len() {
        if rt.live(hs[i]) && rt.req_done(hs[i]) {
            complete_at(rt, hs, i, status_at(sts, k), &mut first_err);
            if !indices.is_null() {
                // SAFETY: `indices` has room for one entry per request.
                unsafe { *indices.add(k) = i as c_int };
            }
            k += 1;
        }
    }
    *outcount = k as c_int;
    in_status(first_err)
}

/// Block until at least one of `hs` (not all null) has completed.
fn wait_for_any(rt: &mut Locked, hs: &[MPI_Request]) -> MpiResult<()> {
    rt.block_until(hs, false)
}

/// MPI_Waitsome (`block`) and MPI_Testsome.
pub(crate) fn some_of(rt: &mut Locked, count: c_int, reqs: *mut MPI_Request, outcount: *mut c_int, indices: *mut c_int, sts: *mut MPI_Status, block: bool) -> MpiResult<()> {
    let hs = handles(count, reqs)?;
    let outcount = out_arg(outcount, "outcount")?;
    validate(rt, hs)?;
    if hs.iter().all(|&h| !rt.live(h)) {
        *outcount = MPI_UNDEFINED;
        return Ok(());
    }
    if block {
        wait_for_any(rt, hs)?;
    } else {
        rt.progress_once()?;
    }
    some(rt, hs, outcount, indices, sts)
}

pub(crate) fn request_free(rt: &mut Runtime, req: *mut MPI_Request) -> MpiResult<()> {
    let o = out_arg(req, "request")?;
    let h = *o;
    if h == MPI_REQUEST_NULL {
        return err(MPI_ERR_REQUEST, "MPI_REQUEST_NULL cannot be freed");
    }
    rt.check_req(h)?;
    if is_shared_done(h) {
        *o = MPI_REQUEST_NULL;
        return Ok(());
    }
    if is_done_recv(h) {
        rt.done_recvs.remove(&h);
        *o = MPI_REQUEST_NULL;
        return Ok(());
    }
    if matches!(rt.reqs.get_mut(&h).expect("validated above").operation_mut().body, Body::Coll(_)) {
        return err(MPI_ERR_REQUEST, "a collective request in flight cannot be freed; wait for it");
    }
    if matches!(rt.reqs[&h].body, Body::Generalized(_)) {
        (rt.hooks.free_generalized)(rt, h);
        *o = MPI_REQUEST_NULL;
        return Ok(());
    }
    if matches!(&rt.reqs[&h].body, Body::Partitioned(p) if p.awaits_ready()) {
        return err(MPI_ERR_REQUEST, "a partitioned send whose partitions are not all marked ready cannot be freed: it could never complete");
    }
    let mut r = rt.reqs.remove(&h).expect("validated above");
    // A started persistent or partitioned request: its operation goes on as a freed
    // ordinary one.
    let in_flight = match &mut r.body {
        Body::Persistent(p) => Some(p.active.take()),
        Body::Partitioned(p) => Some(p.take_in_flight()),
        _ => None,
    };
    match in_flight {
        Some(Some(a)) => r = *a,
        Some(None) => {
            *o = MPI_REQUEST_NULL;
            return Ok(());
        }
        None => {}
    }
    release(rt, r);
    *o = MPI_REQUEST_NULL;
    Ok(())
}

/// Let a freed request's operation finish on its own.
fn release(rt: &mut Runtime, r: ApiReq) {
    if r.is_done(&rt.engine) {
        rt.finish_api_req(r);
        return;
    }
    if let Body::Engine(id) = r.body {
        if r.unpack.is_some() || r.keep.is_some() {
            // Buffers the engine still uses must outlive it: keep them until finalize.
            rt.orphans.push((id, r));
        } else {
            rt.engine.detach(id);
        }
    } else if let Body::Multi(parts, _) = r.body {
        for p in parts {
            release(rt, p);
        }
    }
}

pub(crate) fn request_get_status(rt: &mut Runtime, h: MPI_Request, flag: *mut c_int, status: *mut MPI_Status) -> MpiResult<()> {
    let flag = out_arg(flag, "flag")?;
    if h != MPI_REQUEST_NULL {
        rt.check_req(h)?;
    }
    match rt.peek_req(h)? {
        Some(o) => {
            *flag = 1;
            write_status(status, &o, o.error != MPI_SUCCESS);
        }
        None => *flag = 0,
    }
    Ok(())
}
