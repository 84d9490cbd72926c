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
    /// Add lane by lane, each of this many bytes (a word of several elements).
    AddLanes(usize),
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
                How::AddLanes(lane) => {
                    // Each lane's top bit is added apart, so no carry crosses into the next.
                    let high = lane_tops(lane) as $int;
                    let b = v(src);
                    let mut cur = a.load(Ordering::Relaxed);
                    loop {
                        let new = ((cur & !high).wrapping_add(b & !high)) ^ ((cur ^ b) & high);
                        match a.compare_exchange_weak(cur, new, Ordering::AcqRel, Ordering::Relaxed) {
                            Ok(_) => break cur,
                            Err(now) => cur = now,
                        }
                    }
                }
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

/// The top bit of every lane of `lane` bytes in a word (the same for either byte order: lanes
/// are aligned groups of bytes); truncated for words under 8 bytes.
fn lane_tops(lane: usize) -> u64 {
    match lane {
        1 => 0x8080_8080_8080_8080,
        2 => 0x8000_8000_8000_8000,
        4 => 0x8000_0000_8000_0000,
        _ => 0x8000_0000_0000_0000,
    }
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

/// Whether `elem` is an integer-like primitive (updated by atomic instructions), or a type of
/// several primitives (`None`: only REPLACE and NO_OP).
fn lane_class(elem: Option<ElemType>) -> bool {
    match elem {
        Some(ElemType::Prim(p)) => lock_free(p),
        _ => true,
    }
}

/// The long runs of [`atomic_run`]: `n` aligned 8-byte words of lanes of `lane` bytes, one
/// instruction (or one compare-and-swap loop) a word, for the operations that have one;
/// whether it did them.
///
/// # Safety
/// As for [`atomic_run`], with `at` aligned to 8.
unsafe fn words(at: *mut u8, n: usize, lane: usize, action: Action, src: &[u8], old: Option<&mut [u8]>) -> bool {
    let op = match action {
        Action::Op(op @ (PredefinedOp::Sum | PredefinedOp::Band | PredefinedOp::Bor | PredefinedOp::Bxor | PredefinedOp::Replace | PredefinedOp::NoOp)) => op,
        _ => return false,
    };
    let word = |k: usize| -> &AtomicU64 {
        // SAFETY: the caller vouches for the memory; aligned words of the run.
        unsafe { &*(at.add(8 * k) as *const AtomicU64) }
    };
    let from = |k: usize| u64::from_ne_bytes(src[8 * k..8 * k + 8].try_into().expect("8 bytes"));
    let wants_old = old.is_some();
    let mut old = old;
    for k in 0..n {
        let a = word(k);
        let v = match op {
            PredefinedOp::NoOp if !wants_old => return true,
            PredefinedOp::NoOp => a.load(Ordering::Acquire),
            PredefinedOp::Replace if !wants_old => {
                a.store(from(k), Ordering::Release);
                continue;
            }
            PredefinedOp::Replace => a.swap(from(k), Ordering::AcqRel),
            PredefinedOp::Sum if lane == 8 => a.fetch_add(from(k), Ordering::AcqRel),
            PredefinedOp::Sum => {
                // The word of smaller lanes: the element-wise way's lane sum, one word.
                // SAFETY: the caller vouches for the memory; an aligned word of the run.
                unsafe { update_8(at.add(8 * k), How::AddLanes(lane), &src[8 * k..8 * k + 8], old.as_deref_mut().map(|o| &mut o[8 * k..8 * k + 8])) };
                continue;
            }
            PredefinedOp::Band => a.fetch_and(from(k), Ordering::AcqRel),
            PredefinedOp::Bor => a.fetch_or(from(k), Ordering::AcqRel),
            _ => a.fetch_xor(from(k), Ordering::AcqRel),
        };
        if let Some(o) = old.as_deref_mut() {
            o[8 * k..8 * k + 8].copy_from_slice(&v.to_ne_bytes());
        }
    }
    true
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
    let whole_words = (WORDWISE || lane == 8) && (at as usize).is_multiple_of(8) && len.is_multiple_of(8) && len > 8;
    if whole_words && lane_class(elem) {
        // SAFETY: forwarded; `at` is aligned to 8 and the run is whole words.
        if unsafe { words(at, len / 8, lane, action, src, old.as_deref_mut()) } {
            return;
        }
    }
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
            Action::Op(PredefinedOp::Sum) if elem.is_some_and(|e| matches!(e, ElemType::Prim(p) if lock_free(p))) => How::AddLanes(lane),
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
        let e = elem.expect("checked above");
        if runs.iter().all(|r| (r.1 as usize).is_multiple_of(e.size())) {
            // Whole elements in every run: the kernel works in place.
            let mut k = 0;
            for &(o, l) in runs {
                let l = l as usize;
                // SAFETY: forwarded from the caller; the lock is held, and every other
                // updater of these elements takes it.
                let target = unsafe { std::slice::from_raw_parts_mut(at.wrapping_offset(o as isize), l) };
                if let Some(old) = old.as_deref_mut() {
                    old[k..k + l].copy_from_slice(target);
                }
                match action_part(action, k, l) {
                    Action::Cas(compare) if *target == *compare => target.copy_from_slice(part(src, k, l)),
                    Action::Cas(_) | Action::Op(PredefinedOp::NoOp) => {}
                    Action::Op(PredefinedOp::Replace) => target.copy_from_slice(part(src, k, l)),
                    Action::Op(op) => reduce_op::apply(op, e, part(src, k, l), target).expect("the operation was checked against the type"),
                }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::win::control::{Control, LINE};

    #[repr(C, align(64))]
    struct Block([u8; 256]);

    /// `update` on memory of this process against the reduction kernel on a copy, for every
    /// integer width (whole words, lanes, a tail, a misaligned start) and for doubles.
    #[test]
    fn updates_agree_with_the_kernel() {
        let lock_block = Box::new(Block([0; 256]));
        // SAFETY: aligned, zeroed, outlives the control block's use below.
        let ctl = unsafe { Control::new(lock_block.0.as_ptr(), 256 / LINE) };
        let cases = [(Primitive::Int8, 1usize), (Primitive::Short, 2), (Primitive::Int, 4), (Primitive::Int64, 8), (Primitive::UInt8, 1), (Primitive::Double, 8)];
        for (p, size) in cases {
            for op in [PredefinedOp::Sum, PredefinedOp::Max, PredefinedOp::Band, PredefinedOp::Bxor, PredefinedOp::Replace, PredefinedOp::NoOp] {
                if reduce_op::check(op, ElemType::Prim(p)).is_err() {
                    continue;
                }
                for (start, count) in [(0usize, 40usize / size), (size, 3), (1, 5)] {
                    let len = count * size;
                    let mut mem = Block([0; 256]);
                    for (i, b) in mem.0.iter_mut().enumerate() {
                        *b = (i as u8).wrapping_mul(37).wrapping_add(0x7d);
                    }
                    let src: Vec<u8> = (0..len).map(|i| (i as u8).wrapping_mul(91).wrapping_add(0xc3)).collect();
                    let before = mem.0;
                    let mut want = before[start..start + len].to_vec();
                    reduce_op::apply(op, ElemType::Prim(p), &src, &mut want).unwrap();
                    let mut old = vec![0u8; len];
                    let src_arg: &[u8] = if op == PredefinedOp::NoOp { &[] } else { &src };
                    // SAFETY: the block is ours; nothing else touches it.
                    unsafe { update(mem.0.as_mut_ptr().add(start), &[(0, len as u64)], Some(ElemType::Prim(p)), Action::Op(op), src_arg, Some(&mut old), || ctl.acc_lock(0)) };
                    assert_eq!(&mem.0[start..start + len], &want[..], "{op} on {p:?} from byte {start}");
                    assert_eq!(old, &before[start..start + len], "old value of {op} on {p:?}");
                    assert_eq!(&mem.0[..start], &before[..start], "bytes before the run");
                    assert_eq!(&mem.0[start + len..], &before[start + len..], "bytes after the run");
                }
            }
        }
    }

    #[test]
    fn compare_and_swap_compares_bit_for_bit() {
        let lock_block = Box::new(Block([0; 256]));
        // SAFETY: as above.
        let ctl = unsafe { Control::new(lock_block.0.as_ptr(), 256 / LINE) };
        let mut mem = Block([0; 256]);
        mem.0[8..16].copy_from_slice(&(-0.0f64).to_ne_bytes());
        let mut old = [0u8; 8];
        // 0.0 == -0.0 as numbers, not as bits: no swap.
        // SAFETY: ours.
        unsafe { update(mem.0.as_mut_ptr().add(8), &[(0, 8)], Some(ElemType::Prim(Primitive::Double)), Action::Cas(&0.0f64.to_ne_bytes()), &1.0f64.to_ne_bytes(), Some(&mut old), || ctl.acc_lock(0)) };
        assert_eq!(f64::from_ne_bytes(mem.0[8..16].try_into().unwrap()).to_bits(), (-0.0f64).to_bits());
        for (at, lane) in [(16usize, 8usize), (3, 4)] {
            mem.0[at..at + lane].fill(0xab);
            let (compare, new) = (vec![0xabu8; lane], vec![0x11u8; lane]);
            let mut old = vec![0u8; lane];
            let p = if lane == 8 { Primitive::Int64 } else { Primitive::Int };
            // SAFETY: ours.
            unsafe { update(mem.0.as_mut_ptr().add(at), &[(0, lane as u64)], Some(ElemType::Prim(p)), Action::Cas(&compare), &new, Some(&mut old), || ctl.acc_lock(0)) };
            assert_eq!(&mem.0[at..at + lane], &new[..], "swapped at {at}");
            assert_eq!(old, compare);
        }
    }
}
