//! Accumulates done by the origin itself, on window memory that every member maps and may
//! update at the same moment. Every element is updated one way, whoever updates it and
//! however many elements the call has, so that accumulates stay atomic element by element:
//! - integer-like elements of 1, 2, 4 or 8 bytes at aligned addresses with atomic
//!   instructions (an add, and, or, xor, exchange, load or compare-and-swap; a
//!   compare-and-swap loop around the reduction kernel for the other operations);
//! - every other element (floating point, complex, long double, MAXLOC/MINLOC pairs,
//!   misaligned elements) under the target's accumulate lock, with plain loads and stores.
//!
//! Floating point goes under the lock rather than through compare-and-swap loops so that a
//! long accumulate of doubles runs at memory speed; a compare-and-swap on a double therefore
//! takes the lock too (it must exclude the sums).

use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, AtomicU8, Ordering};

use ferry_data::datatype::Primitive;
use ferry_data::reduce_op::{self, ElemType, PredefinedOp};

use super::control::AccGuard;

/// Whether an aligned 8-byte word of smaller elements may be updated by one instruction
/// while other processes update single elements in it: x86-64 keeps such mixed-size atomic
/// accesses coherent. Elsewhere every element is updated alone.
const WORDWISE: bool = cfg!(target_arch = "x86_64");

/// What an update does to each element.
#[derive(Clone, Copy)]
pub enum Action<'a> {
    /// Combine the origin's element into the target's with a predefined operation
    /// (`MPI_REPLACE` and `MPI_NO_OP` included).
    Op(PredefinedOp),
    /// Write the origin's element where the target's equals this one, bit for bit.
    Cas(&'a [u8]),
}

/// Whether elements of `p` are updated with atomic instructions when aligned.
pub fn lock_free(p: Primitive) -> bool {
    use Primitive::*;
    let integer_like = matches!(
        p,
        Char | SignedChar | UnsignedChar | Byte | WChar | Short | UnsignedShort | Int | Unsigned | Long | UnsignedLong | LongLong | UnsignedLongLong | Packed | Int8 | Int16 | Int32 | Int64 | UInt8 | UInt16 | UInt32 | UInt64 | CBool | Logical | Aint | Offset | Count
    );
    integer_like && matches!(p.size(), 1 | 2 | 4 | 8)
}

/// What one instruction (or one compare-and-swap loop) does to one element or word.
#[derive(Clone, Copy)]
enum How<'a> {
    Load,
    Store,
    Swap,
    Add,
    And,
    Or,
    Xor,
    Cas(&'a [u8]),
    /// Compare-and-swap loop around the kernel of the operation, on elements of the type.
    Combine(PredefinedOp, ElemType),
}

macro_rules! sized {
    ($name:ident, $atomic:ty, $int:ty) => {
        /// One aligned element (or word of elements) of this size.
        ///
        /// # Safety
        /// `at` is aligned to the size and starts that many bytes of mapped memory, which
        /// other processes access only atomically.
        unsafe fn $name(at: *mut u8, how: How, src: &[u8], old: Option<&mut [u8]>) {
            const N: usize = std::mem::size_of::<$int>();
            // SAFETY: the caller vouches for the alignment and the memory.
            let a = unsafe { &*(at as *const $atomic) };
            let v = |b: &[u8]| <$int>::from_ne_bytes(b[..N].try_into().expect("N bytes"));
            let prev = match how {
                How::Load => a.load(Ordering::Acquire),
                How::Store => {
                    a.store(v(src), Ordering::Release);
                    return;
                }
                How::Swap => a.swap(v(src), Ordering::AcqRel),
                How::Add => a.fetch_add(v(src), Ordering::AcqRel),
                How::And => a.fetch_and(v(src), Ordering::AcqRel),
                How::Or => a.fetch_or(v(src), Ordering::AcqRel),
                How::Xor => a.fetch_xor(v(src), Ordering::AcqRel),
                How::Cas(compare) => match a.compare_exchange(v(compare), v(src), Ordering::AcqRel, Ordering::Acquire) {
                    Ok(x) | Err(x) => x,
                },
                How::Combine(op, elem) => {
                    let mut cur = a.load(Ordering::Relaxed);
                    loop {
                        let mut new = cur.to_ne_bytes();
                        reduce_op::apply(op, elem, &src[..N], &mut new).expect("the operation was checked against the type");
                        match a.compare_exchange_weak(cur, <$int>::from_ne_bytes(new), Ordering::AcqRel, Ordering::Relaxed) {
                            Ok(_) => break cur,
                            Err(now) => cur = now,
                        }
                    }
                }
            };
            if let Some(o) = old {
                o[..N].copy_from_slice(&prev.to_ne_bytes());
            }
        }
    };
}

sized!(update_1, AtomicU8, u8);
sized!(update_2, AtomicU16, u16);
sized!(update_4, AtomicU32, u32);
sized!(update_8, AtomicU64, u64);

/// `n` bytes of `b` from `k`, or nothing when `b` is empty (`MPI_NO_OP` sends no data).
fn part(b: &[u8], k: usize, n: usize) -> &[u8] {
    if b.is_empty() {
        b
    } else {
        &b[k..k + n]
    }
}

/// Update the `len` bytes at `at`, elements of `lane` bytes aligned to it, with atomic
/// instructions: one per element, or (`WORDWISE`) one per aligned word of up to 8 bytes
/// where the operation allows. `elem` is `None` only for `MPI_REPLACE` and `MPI_NO_OP`.
///
/// # Safety
/// The bytes are mapped memory that nothing else accesses but atomically; `src` (the
/// origin's elements, packed, empty for `MPI_NO_OP`) and `old` do not overlap them.
unsafe fn atomic_run(at: *mut u8, len: usize, lane: usize, elem: Option<ElemType>, action: Action, src: &[u8], mut old: Option<&mut [u8]>) {
    let wants_old = old.is_some();
    let mut k = 0;
    while k < len {
        let addr = at as usize + k;
        let mut n = lane;
        let cas = matches!(action, Action::Cas(_));
        while WORDWISE && !cas && n < 8 && addr.is_multiple_of(2 * n) && len - k >= 2 * n {
            n *= 2;
        }
        let how = match action {
            Action::Cas(compare) => How::Cas(part(compare, k, n)),
            Action::Op(PredefinedOp::NoOp) if !wants_old => return,
            Action::Op(PredefinedOp::NoOp) => How::Load,
            Action::Op(PredefinedOp::Replace) if wants_old => How::Swap,
            Action::Op(PredefinedOp::Replace) => How::Store,
            Action::Op(PredefinedOp::Sum) if n == lane => How::Add,
            Action::Op(PredefinedOp::Band) => How::And,
            Action::Op(PredefinedOp::Bor) => How::Or,
            Action::Op(PredefinedOp::Bxor) => How::Xor,
            Action::Op(op) => How::Combine(op, elem.expect("only REPLACE and NO_OP come without an element type")),
        };
        let (s, o) = (part(src, k, n), old.as_deref_mut().map(|b| &mut b[k..k + n]));
        let p = at.wrapping_add(k);
        // SAFETY: `p` is aligned to `n` (the lane, or a power of two `addr` is a multiple
        // of) and `n` bytes of the run; the caller vouches for the memory.
        unsafe {
            match n {
                1 => update_1(p, how, s, o),
                2 => update_2(p, how, s, o),
                4 => update_4(p, how, s, o),
                _ => update_8(p, how, s, o),
            }
        }
        k += n;
    }
}

/// The new value of elements that hold `cur`, updated under the accumulate lock with plain
/// loads and stores; `None` when they keep their value. `old` gets `cur`.
fn plain_new<'a>(cur: &'a mut [u8], elem: Option<ElemType>, action: Action, src: &'a [u8], old: Option<&mut [u8]>) -> Option<&'a [u8]> {
    if let Some(o) = old {
        o.copy_from_slice(cur);
    }
    match action {
        Action::Cas(compare) if cur == compare => Some(src),
        Action::Cas(_) | Action::Op(PredefinedOp::NoOp) => None,
        Action::Op(PredefinedOp::Replace) => Some(src),
        Action::Op(op) => {
            reduce_op::apply(op, elem.expect("only REPLACE and NO_OP come without an element type"), src, cur).expect("the operation was checked against the type");
            Some(cur)
        }
    }
}

/// `action` for the bytes `k..k + n` of the call's data.
fn action_part(action: Action<'_>, k: usize, n: usize) -> Action<'_> {
    match action {
        Action::Cas(compare) => Action::Cas(part(compare, k, n)),
        a => a,
    }
}

/// [`update`] of the one element of `p` at `at`, when atomic instructions do it (an
/// integer-like element at an aligned address); whether they did.
///
/// # Safety
/// As for [`update`].
#[inline]
pub unsafe fn element(at: *mut u8, p: Primitive, action: Action, src: &[u8], old: Option<&mut [u8]>) -> bool {
    let n = p.size();
    if !lock_free(p) || !(at as usize).is_multiple_of(n) {
        return false;
    }
    let how = match action {
        Action::Cas(compare) => How::Cas(compare),
        Action::Op(PredefinedOp::NoOp) if old.is_none() => return true,
        Action::Op(PredefinedOp::NoOp) => How::Load,
        Action::Op(PredefinedOp::Replace) if old.is_some() => How::Swap,
        Action::Op(PredefinedOp::Replace) => How::Store,
        Action::Op(PredefinedOp::Sum) => How::Add,
        Action::Op(PredefinedOp::Band) => How::And,
        Action::Op(PredefinedOp::Bor) => How::Or,
        Action::Op(PredefinedOp::Bxor) => How::Xor,
        Action::Op(op) => How::Combine(op, ElemType::Prim(p)),
    };
    // SAFETY: aligned to its size, which is 1, 2, 4 or 8 (`lock_free`); the caller vouches
    // for the memory.
    unsafe {
        match n {
            1 => update_1(at, how, src, old),
            2 => update_2(at, how, src, old),
            4 => update_4(at, how, src, old),
            _ => update_8(at, how, src, old),
        }
    }
    true
}

/// Apply `action` to the target elements at `at` + `runs` (offset and length in bytes; each
/// run whole elements) with the origin's packed elements `src` (empty for `MPI_NO_OP`),
/// writing the elements' old bytes, packed, to `old` when given. `lock` takes the target's
/// accumulate lock, which only the elements that need it wait for.
///
/// # Safety
/// Every run is mapped memory that other processes update only through this function (or
/// with conflicting puts, which MPI leaves undefined); `src` and `old` do not overlap it.
pub unsafe fn update<'g>(at: *mut u8, runs: &[(i64, u64)], elem: Option<ElemType>, action: Action, src: &[u8], mut old: Option<&mut [u8]>, lock: impl FnOnce() -> AccGuard<'g>) {
    let lane = match (elem, action) {
        // A compare-and-swap is of one element: a pair's, wider than its primitive, takes
        // the lock as its accumulates do.
        (Some(ElemType::Prim(p)), Action::Cas(c)) if c.len() != p.size() => None,
        (Some(ElemType::Prim(p)), _) if lock_free(p) => Some(p.size()),
        _ => None,
    };
    let aligned = |o: i64, lane: usize| (at as usize).wrapping_add(o as usize).is_multiple_of(lane);
    let Some(lane) = lane else {
        let _held = lock();
        if elem.is_none() {
            // REPLACE or NO_OP of a type of several primitives: under the lock for the
            // elements that take it, by aligned words for the integers inside, which
            // others may update with atomic instructions meanwhile.
            let mut k = 0;
            for &(o, l) in runs {
                let l = l as usize;
                // SAFETY: forwarded from the caller; a lane of 1 is always aligned.
                unsafe { atomic_run(at.wrapping_offset(o as isize), l, 1, None, action_part(action, k, l), part(src, k, l), old.as_deref_mut().map(|b| &mut b[k..k + l])) };
                k += l;
            }
            return;
        }
        let total = runs.iter().map(|r| r.1 as usize).sum();
        let (mut small, mut big) = ([0u8; 32], Vec::new());
        let cur = if total <= small.len() {
            &mut small[..total]
        } else {
            big.resize(total, 0);
            &mut big[..]
        };
        let mut k = 0;
        for &(o, l) in runs {
            // SAFETY: forwarded from the caller; `cur` is ours; the lock is held.
            unsafe { std::ptr::copy_nonoverlapping(at.wrapping_offset(o as isize), cur[k..].as_mut_ptr(), l as usize) };
            k += l as usize;
        }
        if let Some(new) = plain_new(cur, elem, action, src, old) {
            // SAFETY: as for the gather.
            unsafe { super::target::scatter(at, runs, new) };
        }
        return;
    };
    let _held = runs.iter().any(|&(o, _)| !aligned(o, lane)).then(lock);
    let mut k = 0;
    for &(o, l) in runs {
        let (p, l) = (at.wrapping_offset(o as isize), l as usize);
        let (s, old_part) = (part(src, k, l), old.as_deref_mut().map(|b| &mut b[k..k + l]));
        if aligned(o, lane) {
            // SAFETY: forwarded from the caller; the run's elements are aligned.
            unsafe { atomic_run(p, l, lane, elem, action_part(action, k, l), s, old_part) };
        } else {
            let mut cur = vec![0u8; l];
            // SAFETY: forwarded from the caller; misaligned elements are updated only under
            // the lock, which is held.
            unsafe { std::ptr::copy_nonoverlapping(p, cur.as_mut_ptr(), l) };
            if let Some(new) = plain_new(&mut cur, elem, action_part(action, k, l), s, old_part) {
                // SAFETY: as above; `new` is ours or the origin's.
                unsafe { std::ptr::copy_nonoverlapping(new.as_ptr(), p, l) };
            }
        }
        k += l;
    }
}
