//! The common calls on a window whose memory every member maps, done by the origin alone and
//! without the runtime: `MPI_Fetch_and_op`, `MPI_Compare_and_swap`, `MPI_Accumulate` /
//! `MPI_Get_accumulate` of one element and `MPI_Accumulate` of many, `MPI_Put` / `MPI_Get`
//! of a predefined type on both sides, in an open epoch, and `MPI_Win_flush` of a target that
//! was sent nothing.
//!
//! Each shared window has a [`Lean`]: where every member's part lies, the control block, and
//! per target one byte saying what the epoch allows, which the synchronisation calls write
//! ([`publish`]) under the runtime. The exported functions find it by the window's handle in
//! a table of their own ([`with`]), so that such a call costs the checks and the update: no
//! runtime, no error-handler set-up, no look-up in the window table. A call these paths do
//! not take, errors included, goes the general way (`ops`, `sync`), which says what is wrong.
//!
//! A window is found here from its creation to its free. MPI makes freeing a window while
//! another thread still uses it erroneous; that is the one thing these calls assume.

use std::os::raw::{c_int, c_void};
use std::ptr::null_mut;
use std::sync::atomic::{fence, AtomicBool, AtomicPtr, AtomicU64, AtomicU8, Ordering};

use ferry_data::datatype::Primitive;
use ferry_data::reduce_op::{self, ElemType, PredefinedOp};

use super::atomic::{self, Action};
use super::control::Control;
use super::Win;
use crate::consts::*;

/// Bytes of the largest primitive (`MPI_C_LONG_DOUBLE_COMPLEX`).
const MAX_ELEMENT: usize = 32;

/// Accumulates of up to this many bytes go element by element as single words where they can
/// (`atomic::words`), which costs less than the reduction kernel's dispatch.
const SHORT_ACCUMULATE: usize = 256;

/// A target's byte: an epoch allows operations on it.
const OPEN: u8 = 1;
/// A lock or `MPI_Win_lock_all` covers it: `MPI_Win_flush` may name it.
const PASSIVE: u8 = 2;
/// Requests were sent to it since its last completion: a flush goes the general way.
const DIRTY: u8 = 4;

/// Windows found by handle: the slot of the window table (`Wins::table`), the first 1024.
/// Windows beyond take the same paths through the runtime.
const SLOTS: usize = 1024;
static TABLE: [AtomicPtr<Lean>; SLOTS] = [const { AtomicPtr::new(null_mut()) }; SLOTS];

fn slot_of(win: MPI_Win) -> usize {
    (win as u32 & 0xffff) as usize
}

/// One member's part of the shared memory, in this process's mapping.
struct Part {
    at: *mut u8,
    size: u64,
    disp_unit: u64,
}

/// What the lean calls know of one shared window.
pub(crate) struct Lean {
    handle: MPI_Win,
    parts: Box<[Part]>,
    control: Control,
    /// Per target: `OPEN`, `PASSIVE`, `DIRTY`.
    state: Box<[AtomicU8]>,
    /// Plain stores went into the shared memory since the last fence of a flush or unlock
    /// (the atomic instructions and lock releases of the accumulates are fences themselves).
    unfenced: AtomicBool,
    /// The last (operation, datatype) pair found valid together: the operation's handle in
    /// the high half, the datatype's in the low.
    checked: AtomicU64,
    /// The last datatype and its place in `predefined::primitives()`: the place plus one in
    /// the high half, the handle in the low.
    last_type: AtomicU64,
}

// SAFETY: the pointers are this process's mapping of the window's shared memory, which lives
// as long as the window and so as this value; every store into it by an accumulate is made
// under the target's accumulate lock, puts and gets are plain copies as in any shared window,
// and the rest of the state is atomic.
unsafe impl Send for Lean {}
// SAFETY: as above.
unsafe impl Sync for Lean {}

/// A window's [`Lean`], found by handle while this value lives.
pub(crate) struct Registered(Box<Lean>);

impl Drop for Registered {
    fn drop(&mut self) {
        if let Some(s) = TABLE.get(slot_of(self.0.handle)) {
            let me = &*self.0 as *const Lean as *mut Lean;
            let _ = s.compare_exchange(me, null_mut(), Ordering::AcqRel, Ordering::Relaxed);
        }
    }
}

impl std::ops::Deref for Registered {
    type Target = Lean;
    fn deref(&self) -> &Lean {
        &self.0
    }
}

/// The lean state of window `h` (handle), whose members' parts start at `parts` in this
/// process's mapping, guarded by `control`; state as `w`'s epoch says.
pub(crate) fn register(h: MPI_Win, w: &Win, parts: Vec<*mut u8>, control: Control) -> Registered {
    let parts = parts.into_iter().zip(w.sizes.iter().zip(&w.disp_units)).map(|(at, (&size, &disp_unit))| Part { at, size, disp_unit }).collect();
    let state = (0..w.group.len()).map(|_| AtomicU8::new(0)).collect();
    let lean = Box::new(Lean { handle: h, parts, control, state, unfenced: AtomicBool::new(false), checked: AtomicU64::new(0), last_type: AtomicU64::new(0) });
    for t in 0..w.group.len() {
        lean.state[t].store(state_of(w, t), Ordering::Relaxed);
    }
    if let Some(s) = TABLE.get(slot_of(h)) {
        let me = &*lean as *const Lean as *mut Lean;
        // A slot still held names a window that lives on, which stays on the general way.
        let _ = s.compare_exchange(null_mut(), me, Ordering::AcqRel, Ordering::Relaxed);
    }
    Registered(lean)
}

fn state_of(w: &Win, t: usize) -> u8 {
    let mut s = 0;
    if w.epoch.allows(t) {
        s |= OPEN;
    }
    if w.epoch.passive(t) {
        s |= PASSIVE;
    }
    if w.dirty[t] {
        s |= DIRTY;
    }
    s
}

/// Tell the lean calls what `w`'s epoch and requests now allow, for every target (`None`) or
/// one. Every change of the epoch or of `dirty` is followed by this.
pub(crate) fn publish(w: &Win, target: Option<usize>) {
    let Some(l) = w.lean.as_ref() else { return };
    match target {
        Some(t) => l.state[t].store(state_of(w, t), Ordering::Relaxed),
        None => {
            for t in 0..l.state.len() {
                l.state[t].store(state_of(w, t), Ordering::Relaxed);
            }
        }
    }
}

/// Run `f` with window `win`'s lean state, if it has one the table holds.
#[inline(always)]
pub(crate) fn with<R>(win: MPI_Win, f: impl FnOnce(&Lean) -> R) -> Option<R> {
    let p = TABLE.get(slot_of(win))?.load(Ordering::Acquire);
    if p.is_null() {
        return None;
    }
    // SAFETY: a registered `Lean` stays in the table until its window is freed, which no
    // correct program does while this call runs (see the module's text).
    let l = unsafe { &*p };
    (l.handle == win).then(|| f(l))
}

/// Where the element lies and how it is updated.
struct Spot<'a> {
    at: *mut u8,
    prim: Primitive,
    lean: &'a Lean,
    target: usize,
}

impl Spot<'_> {
    /// Apply `action` with the origin's element `src`, the old element into `old`.
    #[inline(always)]
    fn update(&self, action: Action, src: &[u8], old: Option<&mut [u8]>) {
        let _held = self.lean.control.acc_lock(self.target);
        // SAFETY: `spot` checked that the element lies in the target's part of the shared
        // memory, which this process maps while the window lives; `src` and `old` are ours;
        // the lock is held, and every updater of window elements takes it.
        unsafe { atomic::element(self.at, self.prim, action, src, old) };
    }
}

impl Spot<'_> {
    /// `pop` with the origin's `N`-byte element at `obuf`, the old element to `result`.
    ///
    /// # Safety
    /// `obuf` and `result` hold one element of `N` bytes (MPI's contract).
    #[inline(always)]
    unsafe fn word<const N: usize>(&self, pop: PredefinedOp, obuf: *const c_void, result: Option<*mut c_void>) {
        // SAFETY: the caller's contract.
        let src = unsafe { std::ptr::read_unaligned(obuf as *const [u8; N]) };
        match result {
            None => self.update(Action::Op(pop), &src, None),
            Some(r) => {
                let mut old = [0u8; N];
                self.update(Action::Op(pop), &src, Some(&mut old));
                // SAFETY: the caller's contract.
                unsafe { std::ptr::write_unaligned(r as *mut [u8; N], old) };
            }
        }
    }
}

impl Spot<'_> {
    /// Compare-and-swap of an `N`-byte element: `obuf` where the target equals `cbuf`, the
    /// old element to `rbuf`.
    ///
    /// # Safety
    /// The three buffers hold one element of `N` bytes (MPI's contract).
    #[inline(always)]
    unsafe fn swap<const N: usize>(&self, obuf: *const c_void, cbuf: *const c_void, rbuf: *mut c_void) {
        // SAFETY: the caller's contract.
        let (new, compare) = unsafe { (std::ptr::read_unaligned(obuf as *const [u8; N]), std::ptr::read_unaligned(cbuf as *const [u8; N])) };
        let mut old = [0u8; N];
        self.update(Action::Cas(&compare), &new, Some(&mut old));
        // SAFETY: the caller's contract.
        unsafe { std::ptr::write_unaligned(rbuf as *mut [u8; N], old) };
    }
}

impl Lean {
    /// Where `count` elements of `dt` at displacement `disp` of `rank` lie, when the rank
    /// and displacement are valid, the epoch open and the elements inside the target's part.
    #[inline(always)]
    fn spot(&self, rank: c_int, disp: MPI_Aint, dt: MPI_Datatype, count: usize) -> Option<Spot<'_>> {
        let t = usize::try_from(rank).ok()?;
        let part = self.parts.get(t)?;
        if self.state[t].load(Ordering::Relaxed) & OPEN == 0 || disp < 0 {
            return None;
        }
        let prim = self.primitive(dt)?;
        let offset = (disp as u64).checked_mul(part.disp_unit)?;
        if offset.checked_add((prim.size() as u64).checked_mul(count as u64)?)? > part.size {
            return None;
        }
        Some(Spot { at: part.at.wrapping_add(offset as usize), prim, lean: self, target: t })
    }

    /// The primitive of the predefined datatype `dt`, if it is one.
    #[inline]
    fn primitive(&self, dt: MPI_Datatype) -> Option<Primitive> {
        let all = crate::predefined::primitives();
        let last = self.last_type.load(Ordering::Relaxed);
        if last as u32 == dt as u32 && last >> 32 != 0 {
            return Some(all[(last >> 32) as usize - 1].1);
        }
        let i = all.binary_search_by_key(&dt, |e| e.0).ok()?;
        self.last_type.store((i as u64 + 1) << 32 | dt as u32 as u64, Ordering::Relaxed);
        Some(all[i].1)
    }

    /// Whether `op` is defined on `dt` (whose primitive is `prim`).
    #[inline]
    fn op_defined(&self, op: MPI_Op, pop: PredefinedOp, dt: MPI_Datatype, prim: Primitive) -> bool {
        let pair = (op as u32 as u64) << 32 | dt as u32 as u64;
        if self.checked.load(Ordering::Relaxed) == pair {
            return true;
        }
        let ok = reduce_op::check(pop, ElemType::Prim(prim)).is_ok();
        if ok {
            self.checked.store(pair, Ordering::Relaxed);
        }
        ok
    }

    pub(crate) fn mark_unfenced(&self) {
        self.unfenced.store(true, Ordering::Relaxed);
    }

    /// Whether plain stores were made since the last fence of a flush or unlock; forgets them.
    pub(crate) fn take_unfenced(&self) -> bool {
        self.unfenced.load(Ordering::Relaxed) && self.unfenced.swap(false, Ordering::Relaxed)
    }

    /// `MPI_Fetch_and_op`, `MPI_Get_accumulate` (`result`) and `MPI_Accumulate` of one
    /// element of `dt`; whether this path took the call.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn accumulate(&self, obuf: *const c_void, result: Option<*mut c_void>, dt: MPI_Datatype, rank: c_int, disp: MPI_Aint, op: MPI_Op) -> bool {
        let Some(pop) = PredefinedOp::from_handle(op) else { return false };
        let no_op = pop == PredefinedOp::NoOp;
        if (!no_op && obuf.is_null()) || result.is_some_and(|r| r.is_null()) {
            return false;
        }
        let Some(s) = self.spot(rank, disp, dt, 1) else { return false };
        if !self.op_defined(op, pop, dt, s.prim) {
            return false;
        }
        if pop == PredefinedOp::Replace {
            // As the general way's replacements, which may be plain stores (see `flush`).
            self.mark_unfenced();
        }
        let n = s.prim.size();
        if !no_op && matches!(n, 1 | 2 | 4 | 8) {
            // The common sizes, without the general buffers.
            // SAFETY: the origin and result buffers hold one element of `dt` (MPI's contract).
            unsafe {
                match n {
                    8 => s.word::<8>(pop, obuf, result),
                    4 => s.word::<4>(pop, obuf, result),
                    2 => s.word::<2>(pop, obuf, result),
                    _ => s.word::<1>(pop, obuf, result),
                }
            }
            return true;
        }
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

    /// `MPI_Accumulate` of `count` (more than one) elements of `dt` on both sides, read
    /// where they lie; whether this path took the call.
    pub(crate) fn accumulate_many(&self, obuf: *const c_void, count: c_int, dt: MPI_Datatype, rank: c_int, disp: MPI_Aint, op: MPI_Op) -> bool {
        let Some(pop) = PredefinedOp::from_handle(op) else { return false };
        if count <= 1 || obuf.is_null() {
            return false;
        }
        let Some(s) = self.spot(rank, disp, dt, count as usize) else { return false };
        let len = count as usize * s.prim.size();
        let (o, t) = (obuf as usize, s.at as usize);
        if !self.op_defined(op, pop, dt, s.prim) || (o < t + len && t < o + len) {
            return false;
        }
        if pop == PredefinedOp::Replace {
            self.mark_unfenced();
        }
        // SAFETY: the origin buffer holds `count` elements of `dt` (MPI's contract), apart
        // from the target bytes (checked above).
        let src = unsafe { std::slice::from_raw_parts(obuf as *const u8, len) };
        if len <= SHORT_ACCUMULATE {
            let _held = self.control.acc_lock(s.target);
            // SAFETY: as below, with the target's accumulate lock held.
            if unsafe { atomic::words(s.at, s.prim, Action::Op(pop), src) } {
                return true;
            }
        }
        let run = [(0i64, len as u64)];
        // SAFETY: `spot` checked the target bytes against the target's part of the shared
        // memory, which this process maps while the window lives.
        unsafe { atomic::update(s.at, &run, Some(ElemType::Prim(s.prim)), Action::Op(pop), src, None, || self.control.acc_lock(s.target)) };
        true
    }

    /// `MPI_Compare_and_swap`; whether this path took the call.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn compare_and_swap(&self, obuf: *const c_void, cbuf: *const c_void, rbuf: *mut c_void, dt: MPI_Datatype, rank: c_int, disp: MPI_Aint) -> bool {
        if obuf.is_null() || cbuf.is_null() || rbuf.is_null() {
            return false;
        }
        let Some(s) = self.spot(rank, disp, dt, 1) else { return false };
        if !s.prim.compares_by_bits() {
            // The general path refuses it with its error class.
            return false;
        }
        let n = s.prim.size();
        if matches!(n, 1 | 2 | 4 | 8) {
            // SAFETY: the three buffers hold one element of `dt` each (MPI's contract).
            unsafe {
                match n {
                    8 => s.swap::<8>(obuf, cbuf, rbuf),
                    4 => s.swap::<4>(obuf, cbuf, rbuf),
                    2 => s.swap::<2>(obuf, cbuf, rbuf),
                    _ => s.swap::<1>(obuf, cbuf, rbuf),
                }
            }
            return true;
        }
        // SAFETY: the three buffers hold one element of `dt` each (MPI's contract).
        let (new, compare) = unsafe { (element(obuf, n), element(cbuf, n)) };
        let mut old = [0u8; MAX_ELEMENT];
        s.update(Action::Cas(&compare[..n]), &new[..n], Some(&mut old[..n]));
        // SAFETY: as above.
        unsafe { put_element(&old, rbuf, n) };
        true
    }

    /// `MPI_Put` (`put`) or `MPI_Get` of `count` elements of `dt` on both sides; whether
    /// this path took the call.
    pub(crate) fn copy(&self, buf: *mut c_void, count: c_int, dt: MPI_Datatype, rank: c_int, disp: MPI_Aint, put: bool) -> bool {
        if count <= 0 || buf.is_null() {
            return false;
        }
        let Some(s) = self.spot(rank, disp, dt, count as usize) else { return false };
        let len = count as usize * s.prim.size();
        // SAFETY: `spot` checked the target bytes against the target's part of the shared
        // memory, which this process maps; the buffer holds `count` elements of `dt` (MPI's
        // contract). `copy`: the buffer may be window memory too.
        unsafe {
            if put {
                std::ptr::copy(buf as *const u8, s.at, len);
            } else {
                std::ptr::copy(s.at as *const u8, buf as *mut u8, len);
            }
        }
        if put {
            self.mark_unfenced();
        }
        true
    }

    /// `MPI_Win_flush` and `MPI_Win_flush_local` of `rank`, locked and sent no request: the
    /// operations on shared memory are complete when they return, and plain stores are
    /// visible to the target's loads once a fence passed. Whether this path took the call.
    #[inline]
    pub(crate) fn flush(&self, rank: c_int) -> bool {
        let Some(s) = usize::try_from(rank).ok().and_then(|t| self.state.get(t)) else { return false };
        if s.load(Ordering::Relaxed) & (PASSIVE | DIRTY) != PASSIVE {
            return false;
        }
        if self.take_unfenced() {
            fence(Ordering::SeqCst);
        }
        true
    }
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
