//! The common calls on a window whose memory every member maps, without the general way's
//! packing and allocations: `MPI_Fetch_and_op`, `MPI_Compare_and_swap`, `MPI_Accumulate` /
//! `MPI_Get_accumulate` of one element, and `MPI_Put` / `MPI_Get` of a predefined type on both
//! sides, in an open epoch. One look-up of the window, the checks, and the update (`atomic`)
//! or the copy. A call these paths do not take, errors included, goes the general way (`ops`),
//! which says what is wrong.

use std::os::raw::c_void;

use ferry_data::datatype::Primitive;
use ferry_data::reduce_op::{self, ElemType, PredefinedOp};

use super::atomic::{self, Action};
use super::control::Control;
use crate::consts::*;
use crate::objects::Runtime;

/// Bytes of the largest primitive (`MPI_C_LONG_DOUBLE_COMPLEX`).
const MAX_ELEMENT: usize = 32;

/// Where the element lies and how it is updated.
struct Spot {
    at: *mut u8,
    prim: Primitive,
    control: Control,
    target: usize,
}

impl Spot {
    /// Apply `action` with the origin's element `src`, the old element into `old`.
    fn update(&self, action: Action, src: &[u8], old: Option<&mut [u8]>) {
        let _held = self.control.acc_lock(self.target);
        // SAFETY: `spot` checked that the element lies in the target's part of the shared
        // memory, which this process maps while the window lives; `src` and `old` are ours;
        // the lock is held, and every updater of window elements takes it.
        unsafe { atomic::element(self.at, self.prim, action, src, old) };
    }
}

/// The primitive of the predefined datatype `dt` (pairs excluded), through a one-entry cache.
fn primitive(rt: &mut Runtime, dt: MPI_Datatype) -> Option<Primitive> {
    let ws = super::wins_mut(rt);
    if let Some((h, p)) = ws.one_type {
        if h == dt {
            return Some(p);
        }
    }
    if crate::predefined::pair_type(dt).is_some() {
        return None;
    }
    let p = crate::predefined::predefined_datatype(dt)?.1.as_primitive()?;
    super::wins_mut(rt).one_type = Some((dt, p));
    Some(p)
}

/// Where `count` elements of `dt` at displacement `disp` of `rank` lie, when the window's
/// memory is shared, the rank and displacement valid, the epoch open and the elements inside
/// the target's part.
fn spot(rt: &mut Runtime, win: MPI_Win, rank: i32, disp: MPI_Aint, dt: MPI_Datatype, count: usize) -> Option<Spot> {
    let prim = primitive(rt, dt)?;
    let w = super::wins(rt).table.get(&win)?;
    let mem = w.shared_mem.as_ref()?;
    if rank < 0 || rank as usize >= w.group.len() || disp < 0 {
        return None;
    }
    let t = rank as usize;
    if !w.epoch.allows(t) {
        return None;
    }
    let offset = (disp as u64).checked_mul(w.disp_units[t])?;
    if offset.checked_add((prim.size() as u64).checked_mul(count as u64)?)? > w.sizes[t] {
        return None;
    }
    Some(Spot { at: mem.part(t).wrapping_add(offset as usize), prim, control: mem.control(), target: t })
}

/// The origin's element at `buf`, copied.
///
/// # Safety
/// `buf` holds one element of `n` bytes (MPI's contract).
#[inline]
unsafe fn element(buf: *const c_void, n: usize) -> [u8; MAX_ELEMENT] {
    let mut e = [0u8; MAX_ELEMENT];
    // SAFETY: forwarded from the caller; an unaligned read of the common size, else a copy
    // (`copy`: the buffer may be window memory).
    unsafe {
        if n == 8 {
            e[..8].copy_from_slice(&std::ptr::read_unaligned(buf as *const [u8; 8]));
        } else {
            std::ptr::copy(buf as *const u8, e.as_mut_ptr(), n);
        }
    }
    e
}

/// Write the element `e` of `n` bytes to `buf`.
///
/// # Safety
/// `buf` holds one element of `n` bytes (MPI's contract).
#[inline]
unsafe fn put_element(e: &[u8; MAX_ELEMENT], buf: *mut c_void, n: usize) {
    // SAFETY: forwarded from the caller, as in `element`.
    unsafe {
        if n == 8 {
            std::ptr::write_unaligned(buf as *mut [u8; 8], e[..8].try_into().expect("8 bytes"));
        } else {
            std::ptr::copy(e.as_ptr(), buf as *mut u8, n);
        }
    }
}

/// `MPI_Fetch_and_op`, `MPI_Get_accumulate` (`result`) and `MPI_Accumulate` of one element
/// of `dt`; whether this path took the call.
#[allow(clippy::too_many_arguments)]
pub(super) fn accumulate(rt: &mut Runtime, obuf: *const c_void, result: Option<*mut c_void>, dt: MPI_Datatype, rank: i32, disp: MPI_Aint, op: MPI_Op, win: MPI_Win) -> bool {
    let Some(pop) = PredefinedOp::from_handle(op) else { return false };
    let Some(s) = spot(rt, win, rank, disp, dt, 1) else { return false };
    let no_op = pop == PredefinedOp::NoOp;
    if reduce_op::check(pop, ElemType::Prim(s.prim)).is_err() || (!no_op && obuf.is_null()) || result.is_some_and(|r| r.is_null()) {
        return false;
    }
    let n = s.prim.size();
    // SAFETY: the origin buffer holds one element of `dt` (MPI's contract).
    let src = if no_op { [0u8; MAX_ELEMENT] } else { unsafe { element(obuf, n) } };
    let src = if no_op { &[][..] } else { &src[..n] };
    match result {
        None => s.update(Action::Op(pop), src, None),
        Some(r) => {
            let mut old = [0u8; MAX_ELEMENT];
            s.update(Action::Op(pop), src, Some(&mut old[..n]));
            // SAFETY: the result buffer holds one element of `dt` (MPI's contract).
            unsafe { put_element(&old, r, n) };
        }
    }
    true
}

/// `MPI_Accumulate` of `count` (more than one) elements of `dt` on both sides, read where
/// they lie; whether this path took the call.
#[allow(clippy::too_many_arguments)]
pub(super) fn accumulate_many(rt: &mut Runtime, obuf: *const c_void, count: i32, dt: MPI_Datatype, rank: i32, disp: MPI_Aint, op: MPI_Op, win: MPI_Win) -> bool {
    let Some(pop) = PredefinedOp::from_handle(op) else { return false };
    if count <= 1 || obuf.is_null() {
        return false;
    }
    let Some(s) = spot(rt, win, rank, disp, dt, count as usize) else { return false };
    let len = count as usize * s.prim.size();
    let (o, t) = (obuf as usize, s.at as usize);
    if reduce_op::check(pop, ElemType::Prim(s.prim)).is_err() || (o < t + len && t < o + len) {
        return false;
    }
    // SAFETY: the origin buffer holds `count` elements of `dt` (MPI's contract), apart from
    // the target bytes (checked above).
    let src = unsafe { std::slice::from_raw_parts(obuf as *const u8, len) };
    let run = [(0i64, len as u64)];
    // SAFETY: `spot` checked the target bytes against the target's part of the shared memory,
    // which this process maps while the window lives.
    unsafe { atomic::update(s.at, &run, Some(ElemType::Prim(s.prim)), Action::Op(pop), src, None, || s.control.acc_lock(s.target)) };
    true
}

/// `MPI_Compare_and_swap`; whether this path took the call.
#[allow(clippy::too_many_arguments)]
pub(super) fn compare_and_swap(rt: &mut Runtime, obuf: *const c_void, cbuf: *const c_void, rbuf: *mut c_void, dt: MPI_Datatype, rank: i32, disp: MPI_Aint, win: MPI_Win) -> bool {
    if obuf.is_null() || cbuf.is_null() || rbuf.is_null() {
        return false;
    }
    let Some(s) = spot(rt, win, rank, disp, dt, 1) else { return false };
    if !s.prim.compares_by_bits() {
        // The general path refuses it with its error class.
        return false;
    }
    let n = s.prim.size();
    // SAFETY: the three buffers hold one element of `dt` each (MPI's contract).
    let (new, compare) = unsafe { (element(obuf, n), element(cbuf, n)) };
    let mut old = [0u8; MAX_ELEMENT];
    s.update(Action::Cas(&compare[..n]), &new[..n], Some(&mut old[..n]));
    // SAFETY: as above.
    unsafe { put_element(&old, rbuf, n) };
    true
}

/// `MPI_Put` (`put`) or `MPI_Get` of `count` elements of `dt` on both sides; whether this
/// path took the call.
#[allow(clippy::too_many_arguments)]
pub(super) fn copy(rt: &mut Runtime, buf: *mut c_void, count: i32, dt: MPI_Datatype, rank: i32, disp: MPI_Aint, win: MPI_Win, put: bool) -> bool {
    if count <= 0 || buf.is_null() {
        return false;
    }
    let Some(s) = spot(rt, win, rank, disp, dt, count as usize) else { return false };
    let len = count as usize * s.prim.size();
    // SAFETY: `spot` checked the target bytes against the target's part of the shared memory,
    // which this process maps; the buffer holds `count` elements of `dt` (MPI's contract).
    // `copy`: the buffer may be window memory too.
    unsafe {
        if put {
            std::ptr::copy(buf as *const u8, s.at, len);
        } else {
            std::ptr::copy(s.at as *const u8, buf as *mut u8, len);
        }
    }
    if put {
        if let Some(w) = super::wins_mut(rt).table.get_mut(&win) {
            w.unfenced = true;
        }
    }
    true
}
