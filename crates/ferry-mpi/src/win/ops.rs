//! The communication calls: put, get, accumulate and their fetching, atomic and
//! request-based forms. Each checks its arguments and the epoch, works out the target
//! layout (offset and byte runs) and sends one request; the origin's data is packed into
//! it, so the origin buffer is free when the call returns (local completion). Answers land
//! in the origin buffer directly when its type is contiguous, else they are unpacked once
//! they arrived. On a window whose memory every member maps, puts and gets are copies and
//! the accumulate family is done here too (`atomic`): no request goes to the target.

use std::os::raw::{c_int, c_void};

use ferry_core::engine::matching::Pattern;
use ferry_data::datatype::Datatype;
use ferry_data::reduce_op::{self, ElemType, PredefinedOp};

use crate::objects::comm::Ranks;
use super::atomic::Action;
use super::codec::{Header, Kind};
use super::target::TAG_REQUEST;
use super::Reply;
use crate::objects::request::{ApiReq, Body};
use crate::consts::*;
use crate::error::{err, MpiError, MpiResult};
use crate::objects::Runtime;

/// Where an operation lands at its target.
struct Place {
    target: usize,
    offset: u64,
    len: usize,
    runs: Vec<(i64, u64)>,
    /// The target type (for the accumulate type check).
    ttype: Datatype,
}

fn check_count(n: c_int, what: &str) -> MpiResult<usize> {
    if n < 0 {
        return err(MPI_ERR_COUNT, format!("{what} {n} is negative"));
    }
    Ok(n as usize)
}

/// The checks every operation shares; `None` for `MPI_PROC_NULL` (nothing to do).
fn place(rt: &mut Runtime, win: MPI_Win, rank: c_int, disp: MPI_Aint, count: c_int, dt: MPI_Datatype, request_based: bool) -> MpiResult<Option<Place>> {
    let count = check_count(count, "target count")?;
    let ttype = rt.datatype(dt)?;
    let w = rt.win(win)?;
    if rank == MPI_PROC_NULL {
        return Ok(None);
    }
    let target = w.target(rank)?;
    if !w.epoch.allows(target) {
        return err(MPI_ERR_RMA_SYNC, format!("no access epoch to rank {rank} is open (MPI_Win_fence, MPI_Win_start or MPI_Win_lock first)"));
    }
    if request_based && !w.epoch.passive(target) {
        return err(MPI_ERR_RMA_SYNC, "request-based operations need a passive-target epoch (MPI_Win_lock or MPI_Win_lock_all)");
    }
    let len = ttype.size() * count;
    let runs: Vec<(i64, u64)> = if ttype.is_contiguous() || len == 0 {
        Vec::new()
    } else {
        let mut v = Vec::new();
        let _ = ttype.for_each_run(count, |o, l| {
            v.push((o as i64, l as u64));
            std::ops::ControlFlow::Continue(())
        });
        v
    };
    let offset = if w.flavor == MPI_WIN_FLAVOR_DYNAMIC {
        // The displacement is the target's address (MPI_Get_address at the target).
        disp as u64
    } else {
        if disp < 0 {
            return err(MPI_ERR_DISP, format!("target displacement {disp} is negative"));
        }
        let offset = (disp as u64).checked_mul(w.disp_units[target]).ok_or_else(|| MpiError::new(MPI_ERR_RMA_RANGE, "target displacement overflows"))?;
        let mut h = Header::new(Kind::Put);
        h.len = len as u64;
        h.runs = runs.clone();
        let span = h.span();
        if len > 0 && (offset as i128 + (span.start as i128) < 0 || offset as i128 + span.end as i128 > w.sizes[target] as i128) {
            return err(MPI_ERR_RMA_RANGE, format!("bytes {}..{} of rank {rank}'s window, which has {} bytes", offset as i128 + span.start as i128, offset as i128 + span.end as i128, w.sizes[target]));
        }
        offset
    };
    Ok(Some(Place { target, offset, len, runs, ttype }))
}

/// The origin's `count` elements of `dt` at `buf`, packed; their length must be the target's.
fn origin_bytes(rt: &mut Runtime, buf: *const c_void, count: c_int, dt: MPI_Datatype, want: usize) -> MpiResult<(Vec<u8>, Datatype)> {
    let n = check_count(count, "origin count")?;
    let t = rt.datatype(dt)?;
    let len = t.size() * n;
    if len != want {
        return err(MPI_ERR_TYPE, format!("the origin gives {len} bytes but the target takes {want}"));
    }
    let mut v = vec![0u8; len];
    if len > 0 {
        if buf.is_null() && Runtime::is_predefined_type(dt) {
            return err(MPI_ERR_BUFFER, "origin buffer is NULL");
        }
        // SAFETY: the origin buffer holds `count` elements of `t` (MPI's contract).
        unsafe { t.pack(buf as *const u8, n, &mut v) };
    }
    Ok((v, t))
}

/// Whether `f` took the call on window `win`'s lean state (a shared window's).
fn lean(rt: &Runtime, win: MPI_Win, f: impl FnOnce(&super::lean::Lean) -> bool) -> bool {
    rt.win(win).ok().and_then(|w| w.lean.as_deref()).is_some_and(f)
}

/// Send a request to window rank `target`.
fn send(rt: &mut Runtime, win: MPI_Win, target: usize, msg: Vec<u8>) -> MpiResult<()> {
    let (w, engine) = super::win_and_engine(rt, win)?;
    // SAFETY: `msg` is kept in `sends` until the engine is done with it.
    if let Some(rid) = unsafe { engine.isend(w.group[target], w.ctx, TAG_REQUEST, msg.as_ptr(), msg.len(), false) } {
        w.sends.push((rid, msg));
    }
    w.dirty[target] = true;
    super::lean::publish(w, Some(target));
    w.sends.retain(|(rid, _)| !(engine.is_done(*rid) && engine.take(*rid).is_some()));
    Ok(())
}

/// Post the receive of an answer of `count` elements of `dt` into `buf`; returns its tag.
/// `request`: the answer completes a request instead of waiting in the window's list.
fn expect(rt: &mut Runtime, win: MPI_Win, target: usize, buf: *mut c_void, count: usize, dt: MPI_Datatype, request: bool) -> MpiResult<(i32, Option<c_int>)> {
    let into = crate::typed_buffer::recv_target(rt, buf, count as c_int, dt)?;
    let (w, engine) = super::win_and_engine(rt, win)?;
    let tag = w.reply_tag();
    let pat = Pattern { ctx: w.ctx + 1, src: Some(w.group[target]), tag: Some(tag) };
    // SAFETY: the answer's buffer (the user's, valid until the operation completes by MPI's
    // contract, or our own temporary) outlives the receive.
    let rid = unsafe { engine.irecv(pat, into.ptr, into.cap) };
    if !request {
        w.replies.push(Reply { target, rid, unpack: into.unpack, by_request: None });
        return Ok((tag, None));
    }
    let h = rt.add_req(ApiReq { body: Body::Engine(rid), comm: MPI_COMM_WORLD, group: Ranks::None, unpack: into.unpack, keep: None });
    let w = super::wins_mut(rt).table.get_mut(&win).expect("looked up above");
    w.replies.push(Reply { target, rid, unpack: None, by_request: Some(h) });
    Ok((tag, Some(h)))
}

fn header(kind: Kind, p: &Place) -> Header {
    let mut h = Header::new(kind);
    h.offset = p.offset;
    h.len = p.len as u64;
    h.runs = p.runs.clone();
    h
}

/// A request complete from the start (local completion of a put or accumulate).
fn done_request(rt: &mut Runtime) -> c_int {
    rt.add_req(ApiReq::done(MPI_COMM_WORLD, MPI_ANY_SOURCE))
}

/// The operation and element type of an accumulate, checked against both types.
/// An accumulate of no data combines nothing: only the operation's handle is checked then.
/// `dt` names the element type where it is a pair type (MPI_2INT...) or built of one alone.
fn accumulate_op(rt: &Runtime, op: MPI_Op, dt: MPI_Datatype, ot: &Datatype, tt: &Datatype, len: usize) -> MpiResult<(PredefinedOp, Option<ElemType>)> {
    let Some(pop) = PredefinedOp::from_handle(op) else {
        return err(MPI_ERR_OP, format!("operation {op:#x} is not predefined (one-sided accumulates take only predefined operations)"));
    };
    let elem = match crate::op::pair_of(rt, dt) {
        Some((v, i)) => Some(ElemType::Pair(v, i)),
        None => reduce_op::elem_type(ot),
    };
    if matches!(pop, PredefinedOp::Replace | PredefinedOp::NoOp) || len == 0 {
        return Ok((pop, elem));
    }
    let Some(e) = elem else { return err(MPI_ERR_TYPE, format!("{} needs a type of one basic datatype", pop.name())) };
    reduce_op::check(pop, e).map_err(|x| MpiError::new(MPI_ERR_OP, x.to_string()))?;
    if let (ElemType::Prim(p), Some(q)) = (e, tt.uniform_primitive()) {
        if p != q {
            return err(MPI_ERR_TYPE, "origin and target datatypes are built from different basic datatypes");
        }
    }
    Ok((pop, elem))
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn put(rt: &mut Runtime, obuf: *const c_void, ocount: c_int, otype: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: c_int, ttype: MPI_Datatype, win: MPI_Win, request: bool) -> MpiResult<()> {
    if !request && ocount == tcount && otype == ttype && lean(rt, win, |l| l.copy(obuf as *mut c_void, ocount, otype, rank, disp, true)) {
        return Ok(());
    }
    let Some(p) = place(rt, win, rank, disp, tcount, ttype, request)? else { return Ok(()) };
    if let Some(at) = direct_place(rt, win, &p, obuf, ocount, otype)? {
        // SAFETY: `direct_place` checked the origin's size against the target bytes, which
        // `place` checked against the target's part of the shared memory we map; the origin
        // holds them (MPI's contract). `copy` because a program may put from shared memory.
        unsafe { std::ptr::copy(obuf as *const u8, at, p.len) };
        rt.win(win)?.mark_unfenced();
        return Ok(());
    }
    let (data, _) = origin_bytes(rt, obuf, ocount, otype, p.len)?;
    if let Some(at) = shared_place(rt, win, &p)? {
        // SAFETY: `place` checked the runs against the target's part of the shared memory,
        // which this process maps; `data` is ours.
        unsafe { super::target::scatter(at, &p.runs_or_all(), &data) };
        rt.win(win)?.mark_unfenced();
        return Ok(());
    }
    send(rt, win, p.target, header(Kind::Put, &p).encode(&data))
}

impl Place {
    fn runs_or_all(&self) -> Vec<(i64, u64)> {
        if self.runs.is_empty() {
            vec![(0, self.len as u64)]
        } else {
            self.runs.clone()
        }
    }
}

/// The target bytes in shared memory when both sides are contiguous and the origin's type is
/// predefined (its data starts at the buffer): the one-copy path of puts and gets, with no
/// packing. Checks that both sides hold the same number of bytes.
fn direct_place(rt: &mut Runtime, win: MPI_Win, p: &Place, obuf: *const c_void, ocount: c_int, otype: MPI_Datatype) -> MpiResult<Option<*mut u8>> {
    if !p.runs.is_empty() || !Runtime::is_predefined_type(otype) {
        return Ok(None);
    }
    let Some(at) = shared_place(rt, win, p)? else { return Ok(None) };
    let n = check_count(ocount, "origin count")?;
    let len = rt.datatype(otype)?.size() * n;
    if len != p.len {
        return err(MPI_ERR_TYPE, format!("the origin gives {len} bytes but the target takes {}", p.len));
    }
    if len > 0 && obuf.is_null() {
        return err(MPI_ERR_BUFFER, "origin buffer is NULL");
    }
    Ok(Some(at))
}

/// Where the operation's target bytes lie in this process's mapping, when the window's
/// memory is shared (the copy needs no target then).
fn shared_place(rt: &Runtime, win: MPI_Win, p: &Place) -> MpiResult<Option<*mut u8>> {
    Ok(rt.win(win)?.shared_mem.as_ref().map(|m| m.part(p.target).wrapping_add(p.offset as usize)))
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn get(rt: &mut Runtime, obuf: *mut c_void, ocount: c_int, otype: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: c_int, ttype: MPI_Datatype, win: MPI_Win, request: bool) -> MpiResult<Option<c_int>> {
    if !request && ocount == tcount && otype == ttype && lean(rt, win, |l| l.copy(obuf, ocount, otype, rank, disp, false)) {
        return Ok(None);
    }
    let Some(p) = place(rt, win, rank, disp, tcount, ttype, request)? else { return Ok(None) };
    if let Some(at) = direct_place(rt, win, &p, obuf, ocount, otype)? {
        // SAFETY: as in `put`, the other way.
        unsafe { std::ptr::copy(at as *const u8, obuf as *mut u8, p.len) };
        return Ok(if request { Some(done_request(rt)) } else { None });
    }
    let n = check_count(ocount, "origin count")?;
    if rt.datatype(otype)?.size() * n != p.len {
        return err(MPI_ERR_TYPE, "origin and target hold different amounts of data");
    }
    if let Some(at) = shared_place(rt, win, &p)? {
        let mut data = Vec::with_capacity(p.len);
        // SAFETY: as in `put`; the origin buffer holds `n` elements of its type (MPI's
        // contract) and is not the window's memory we just read into `data`.
        unsafe {
            super::target::gather(at, &p.runs_or_all(), &mut data);
            rt.datatype(otype)?.unpack(&data, obuf as *mut u8, n);
        }
        return Ok(if request { Some(done_request(rt)) } else { None });
    }
    let (tag, h) = expect(rt, win, p.target, obuf, n, otype, request)?;
    let mut hd = header(Kind::Get, &p);
    hd.reply = tag;
    send(rt, win, p.target, hd.encode(&[]))?;
    Ok(h)
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn accumulate(rt: &mut Runtime, obuf: *const c_void, ocount: c_int, otype: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: c_int, ttype: MPI_Datatype, op: MPI_Op, win: MPI_Win, request: bool) -> MpiResult<()> {
    if op == MPI_REPLACE {
        // A replacement may be a plain store (see `flush`).
        if let Ok(w) = rt.win(win) {
            w.mark_unfenced();
        }
    }
    if !request && ocount == 1 && tcount == 1 && otype == ttype && lean(rt, win, |l| l.accumulate(obuf, None, ttype, rank, disp, op)) {
        return Ok(());
    }
    if !request && ocount == tcount && otype == ttype && lean(rt, win, |l| l.accumulate_many(obuf, ocount, ttype, rank, disp, op)) {
        return Ok(());
    }
    let Some(p) = place(rt, win, rank, disp, tcount, ttype, request)? else { return Ok(()) };
    if let Some(at) = shared_place(rt, win, &p)? {
        if let Some(ot) = contiguous_origin(rt, obuf, ocount, otype, &p, at)? {
            let (pop, elem) = accumulate_op(rt, op, otype, &ot, &p.ttype, p.len)?;
            // SAFETY: `contiguous_origin` checked that the buffer's `p.len` bytes are its data
            // and lie apart from the target's; MPI's contract makes them readable.
            let src = unsafe { std::slice::from_raw_parts(obuf as *const u8, p.len) };
            return combine_here(rt, win, &p, at, elem, Action::Op(pop), src, None);
        }
    }
    let (data, ot) = origin_bytes(rt, obuf, ocount, otype, p.len)?;
    let (pop, elem) = accumulate_op(rt, op, otype, &ot, &p.ttype, p.len)?;
    if let Some(at) = shared_place(rt, win, &p)? {
        return combine_here(rt, win, &p, at, elem, Action::Op(pop), &data, None);
    }
    let mut h = header(Kind::Acc, &p);
    h.op = op;
    h.elem = elem;
    send(rt, win, p.target, h.encode(&data))
}

/// The origin's datatype when its `ocount` elements at `obuf` are `p.len` contiguous bytes
/// that do not overlap the target bytes at `at`: an accumulate then reads them in place,
/// without packing a copy.
fn contiguous_origin(rt: &mut Runtime, obuf: *const c_void, ocount: c_int, otype: MPI_Datatype, p: &Place, at: *mut u8) -> MpiResult<Option<Datatype>> {
    let ot = rt.datatype(otype)?;
    let n = check_count(ocount, "origin count")?;
    if obuf.is_null() || !ot.is_contiguous() || ot.size() * n != p.len || p.len == 0 {
        return Ok(None);
    }
    let runs = p.runs_or_all();
    let lo = runs.iter().map(|r| at as i128 + r.0 as i128).min().unwrap_or(0);
    let hi = runs.iter().map(|r| at as i128 + r.0 as i128 + r.1 as i128).max().unwrap_or(0);
    let (olo, ohi) = (obuf as i128, obuf as i128 + p.len as i128);
    Ok((ohi <= lo || hi <= olo).then_some(ot))
}

/// An accumulate-family operation on shared window memory, done here: with atomic
/// instructions or under the target's accumulate lock (`atomic`). Every accumulate on such a
/// window comes this way, never to the target, so both ways exclude each other.
#[allow(clippy::too_many_arguments)]
fn combine_here(rt: &Runtime, win: MPI_Win, p: &Place, at: *mut u8, elem: Option<ElemType>, action: Action, src: &[u8], old: Option<&mut [u8]>) -> MpiResult<()> {
    let ctl = rt.win(win)?.shared_mem.as_ref().expect("shared_place found shared memory").control();
    // SAFETY: `place` checked the runs against the target's part of the shared memory, which
    // this process maps while the window lives; `src` and `old` are our own buffers.
    unsafe { super::atomic::update(at, &p.runs_or_all(), elem, action, src, old, || ctl.acc_lock(p.target)) };
    Ok(())
}

/// `MPI_Get_accumulate` (and `MPI_Fetch_and_op`): the old target bytes come back into the
/// result buffer, then the origin's are combined in. With `MPI_NO_OP` the origin sends none.
#[allow(clippy::too_many_arguments)]
pub(crate) fn get_accumulate(rt: &mut Runtime, obuf: *const c_void, ocount: c_int, otype: MPI_Datatype, rbuf: *mut c_void, rcount: c_int, rtype: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: c_int, ttype: MPI_Datatype, op: MPI_Op, win: MPI_Win, request: bool) -> MpiResult<Option<c_int>> {
    let same_origin = op == MPI_NO_OP || (ocount == 1 && otype == ttype);
    if !request && same_origin && rcount == 1 && tcount == 1 && rtype == ttype && lean(rt, win, |l| l.accumulate(obuf, Some(rbuf), ttype, rank, disp, op)) {
        return Ok(None);
    }
    let Some(p) = place(rt, win, rank, disp, tcount, ttype, request)? else { return Ok(None) };
    let no_op = op == MPI_NO_OP;
    let (data, ot) = if no_op { (Vec::new(), p.ttype.clone()) } else { origin_bytes(rt, obuf, ocount, otype, p.len)? };
    let (pop, elem) = accumulate_op(rt, op, if no_op { ttype } else { otype }, &ot, &p.ttype, p.len)?;
    let rn = check_count(rcount, "result count")?;
    if rt.datatype(rtype)?.size() * rn != p.len {
        return err(MPI_ERR_TYPE, "result and target hold different amounts of data");
    }
    if let Some(at) = shared_place(rt, win, &p)? {
        let mut old = vec![0u8; p.len];
        combine_here(rt, win, &p, at, elem, Action::Op(pop), &data, Some(&mut old))?;
        // SAFETY: the result buffer holds `rn` elements of its type (MPI's contract).
        unsafe { rt.datatype(rtype)?.unpack(&old, rbuf as *mut u8, rn) };
        return Ok(None);
    }
    let (tag, h) = expect(rt, win, p.target, rbuf, rn, rtype, request)?;
    let mut hd = header(Kind::GetAcc, &p);
    hd.op = op;
    hd.elem = elem;
    hd.reply = tag;
    send(rt, win, p.target, hd.encode(&data))?;
    Ok(h)
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn compare_and_swap(rt: &mut Runtime, obuf: *const c_void, cbuf: *const c_void, rbuf: *mut c_void, dt: MPI_Datatype, rank: c_int, disp: MPI_Aint, win: MPI_Win) -> MpiResult<()> {
    if lean(rt, win, |l| l.compare_and_swap(obuf, cbuf, rbuf, dt, rank, disp)) {
        return Ok(());
    }
    let t = rt.datatype(dt)?;
    match t.uniform_primitive() {
        Some(p) if Runtime::is_predefined_type(dt) && p.compares_by_bits() => {}
        Some(_) if Runtime::is_predefined_type(dt) => {
            return err(MPI_ERR_TYPE, "MPI_Compare_and_swap takes an integer, logical, character, byte or address type: a floating or complex value is not compared by its bits");
        }
        _ => return err(MPI_ERR_TYPE, "MPI_Compare_and_swap takes one element of a predefined type"),
    }
    let Some(p) = place(rt, win, rank, disp, 1, dt, false)? else { return Ok(()) };
    let (mut data, _) = origin_bytes(rt, obuf, 1, dt, p.len)?;
    let compare = origin_bytes(rt, cbuf, 1, dt, p.len)?.0;
    if let Some(at) = shared_place(rt, win, &p)? {
        let elem = t.uniform_primitive().map(ElemType::Prim);
        let mut old = vec![0u8; p.len];
        combine_here(rt, win, &p, at, elem, Action::Cas(&compare), &data, Some(&mut old))?;
        // SAFETY: the result buffer holds one element of the predefined type (MPI's contract).
        unsafe { std::ptr::copy_nonoverlapping(old.as_ptr(), rbuf as *mut u8, old.len()) };
        return Ok(());
    }
    data.extend(compare);
    let (tag, _) = expect(rt, win, p.target, rbuf, 1, dt, false)?;
    let mut hd = header(Kind::Cas, &p);
    hd.reply = tag;
    send(rt, win, p.target, hd.encode(&data))
}

/// The request handle of a request-based operation (`MPI_REQUEST_NULL` never: a call on
/// `MPI_PROC_NULL` gets a request complete from the start).
pub(crate) fn request_out(rt: &mut Runtime, out: &mut MPI_Request, h: Option<c_int>) {
    *out = match h {
        Some(h) => h,
        None => done_request(rt),
    };
}
