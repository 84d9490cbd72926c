//! Accumulates done by the origin itself, on window memory that every member maps and may
//! update at the same moment. Every element is updated one way, whoever updates it and
//! however many elements the call has, so that accumulates stay atomic element by element:
//! under the target's accumulate lock (`Control::acc_lock`), with plain loads and stores and
//! the reduction kernel, as Open MPI's shared-memory windows do.
//!
//! One element costs the lock's two atomic instructions (take, release) where an atomic
//! instruction on the element would cost one, and measures the same (docs/performance.md,
//! one-sided on shared windows); a long accumulate runs the kernel at memory speed, where
//! one atomic instruction per element took 30-40 us for 32 KiB of 32-bit integers.

use ferry_data::datatype::Primitive;
use ferry_data::reduce_op::{self, ElemType, PredefinedOp};

use super::control::AccGuard;

/// What an update does to each element.
#[derive(Clone, Copy)]
pub enum Action<'a> {
    /// Combine the origin's element into the target's with a predefined operation
    /// (`MPI_REPLACE` and `MPI_NO_OP` included).
    Op(PredefinedOp),
    /// Write the origin's element where the target's equals this one, bit for bit.
    Cas(&'a [u8]),
}

/// `n` bytes of `b` from `k`, or nothing when `b` is empty (`MPI_NO_OP` sends no data).
fn part(b: &[u8], k: usize, n: usize) -> &[u8] {
    if b.is_empty() {
        b
    } else {
        &b[k..k + n]
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

/// [`update`] of the one element of `p` at `at` (the lock already held by the caller):
/// compare-and-swap, replacement, `MPI_NO_OP` and the sums of integers and of `float` and
/// `double` without the kernel's dispatch.
///
/// # Safety
/// As for [`update`], with the target's accumulate lock held.
#[inline]
pub unsafe fn element(at: *mut u8, p: Primitive, action: Action, src: &[u8], mut old: Option<&mut [u8]>) {
    let n = p.size();
    // SAFETY: forwarded; `word` reads and writes `n` bytes at `at`, as below.
    let done = match n {
        8 => unsafe { word::<8>(at, p, action, src, old.as_deref_mut()) },
        4 => unsafe { word::<4>(at, p, action, src, old.as_deref_mut()) },
        2 => unsafe { word::<2>(at, p, action, src, old.as_deref_mut()) },
        1 => unsafe { word::<1>(at, p, action, src, old.as_deref_mut()) },
        _ => false,
    };
    if done {
        return;
    }
    let mut cur = [0u8; 32];
    let cur = &mut cur[..n];
    // SAFETY: the caller vouches for the memory and holds the lock; `cur` is ours.
    unsafe { std::ptr::copy_nonoverlapping(at, cur.as_mut_ptr(), n) };
    if let Some(new) = plain_new(cur, Some(ElemType::Prim(p)), action, src, old) {
        // SAFETY: as above; `new` is ours or the origin's, `n` bytes.
        unsafe { std::ptr::copy_nonoverlapping(new.as_ptr(), at, n) };
    }
}

/// `action` on each element of `p` in the `src.len()` bytes at `at`, element by element as
/// single words (the lock already held by the caller); whether it could (the element's size
/// and the action allow it), else nothing was read or written.
///
/// # Safety
/// As for [`element`], for every element of the run.
pub unsafe fn words(at: *mut u8, p: Primitive, action: Action, src: &[u8]) -> bool {
    // SAFETY: forwarded, one element at a time.
    unsafe fn each<const N: usize>(at: *mut u8, p: Primitive, action: Action, src: &[u8]) -> bool {
        for (k, e) in src.chunks_exact(N).enumerate() {
            // SAFETY: the caller's run covers element k.
            if !unsafe { word::<N>(at.add(k * N), p, action, e, None) } {
                // Only the first can refuse (every element is alike): nothing was written.
                return false;
            }
        }
        true
    }
    if matches!(action, Action::Cas(_)) {
        return false;
    }
    // SAFETY: forwarded.
    unsafe {
        match p.size() {
            8 => each::<8>(at, p, action, src),
            4 => each::<4>(at, p, action, src),
            2 => each::<2>(at, p, action, src),
            1 => each::<1>(at, p, action, src),
            _ => false,
        }
    }
}

/// [`element`] of an `N`-byte element as one word; whether this path took the action (else
/// nothing was read or written).
///
/// # Safety
/// As for [`element`], `N` the element's size.
#[inline(always)]
unsafe fn word<const N: usize>(at: *mut u8, p: Primitive, action: Action, src: &[u8], old: Option<&mut [u8]>) -> bool {
    let bytes = |b: &[u8]| <[u8; N]>::try_from(&b[..N]).expect("an element of N bytes");
    // SAFETY: the caller vouches for the memory and holds the lock.
    let cur = unsafe { std::ptr::read_unaligned(at as *const [u8; N]) };
    let new = match action {
        Action::Cas(compare) => (cur[..] == compare[..N]).then(|| bytes(src)),
        Action::Op(PredefinedOp::NoOp) => None,
        Action::Op(PredefinedOp::Replace) => Some(bytes(src)),
        Action::Op(PredefinedOp::Sum) => match sum(p, cur, bytes(src)) {
            Some(v) => Some(v),
            None => return false,
        },
        Action::Op(_) => return false,
    };
    if let Some(o) = old {
        o[..N].copy_from_slice(&cur);
    }
    if let Some(v) = new {
        // SAFETY: as for the read.
        unsafe { std::ptr::write_unaligned(at as *mut [u8; N], v) };
    }
    true
}

/// `a + b` for the `N`-byte primitive `p`, when it is one of the common sums: integers
/// (wrapping, the same signed or not), `float` and `double`; `None` for the others.
#[inline(always)]
fn sum<const N: usize>(p: Primitive, a: [u8; N], b: [u8; N]) -> Option<[u8; N]> {
    let mut out = [0u8; N];
    match N {
        8 => {
            let (x, y) = (<[u8; 8]>::try_from(&a[..]).ok()?, <[u8; 8]>::try_from(&b[..]).ok()?);
            let r = match p {
                Primitive::Double => (f64::from_ne_bytes(x) + f64::from_ne_bytes(y)).to_ne_bytes(),
                _ if integer(p) => u64::from_ne_bytes(x).wrapping_add(u64::from_ne_bytes(y)).to_ne_bytes(),
                _ => return None,
            };
            out.copy_from_slice(&r);
        }
        4 => {
            let (x, y) = (<[u8; 4]>::try_from(&a[..]).ok()?, <[u8; 4]>::try_from(&b[..]).ok()?);
            let r = match p {
                Primitive::Float => (f32::from_ne_bytes(x) + f32::from_ne_bytes(y)).to_ne_bytes(),
                _ if integer(p) => u32::from_ne_bytes(x).wrapping_add(u32::from_ne_bytes(y)).to_ne_bytes(),
                _ => return None,
            };
            out.copy_from_slice(&r);
        }
        2 => {
            let (x, y) = (<[u8; 2]>::try_from(&a[..]).ok()?, <[u8; 2]>::try_from(&b[..]).ok()?);
            out.copy_from_slice(&integer(p).then(|| u16::from_ne_bytes(x).wrapping_add(u16::from_ne_bytes(y)).to_ne_bytes())?);
        }
        1 => out[0] = integer(p).then(|| a[0].wrapping_add(b[0]))?,
        _ => return None,
    }
    Some(out)
}

/// Integers (and C's characters, which MPI sums as integers), whose sum is the same wrapping
/// addition signed or not.
fn integer(p: Primitive) -> bool {
    use Primitive::*;
    matches!(
        p,
        Char | SignedChar | UnsignedChar | Int8 | UInt8 | Short | UnsignedShort | Int16 | UInt16 | Int | Unsigned | Int32 | UInt32 | Long | UnsignedLong | LongLong | UnsignedLongLong | Int64 | UInt64 | Aint | Offset | Count
    )
}

/// Apply `action` to the target elements at `at` + `runs` (offset and length in bytes; each
/// run whole elements) with the origin's packed elements `src` (empty for `MPI_NO_OP`),
/// writing the elements' old bytes, packed, to `old` when given, under the lock `lock`
/// takes (the target's accumulate lock).
///
/// # Safety
/// Every run is mapped memory that other processes update only through this function (or
/// with conflicting puts, which MPI leaves undefined); `src` and `old` do not overlap it.
pub unsafe fn update<'g>(at: *mut u8, runs: &[(i64, u64)], elem: Option<ElemType>, action: Action, src: &[u8], mut old: Option<&mut [u8]>, lock: impl FnOnce() -> AccGuard<'g>) {
    let _held = lock();
    let whole = match elem {
        Some(e) => runs.iter().all(|r| (r.1 as usize).is_multiple_of(e.size())),
        None => true,
    };
    if whole {
        // Whole elements in every run (or bytes moved as they are): in place.
        let mut k = 0;
        for &(o, l) in runs {
            let l = l as usize;
            // SAFETY: forwarded from the caller; the lock is held, and every other updater
            // of these elements takes it.
            let target = unsafe { std::slice::from_raw_parts_mut(at.wrapping_offset(o as isize), l) };
            if let Some(old) = old.as_deref_mut() {
                old[k..k + l].copy_from_slice(target);
            }
            match action_part(action, k, l) {
                Action::Cas(compare) if *target == *compare => target.copy_from_slice(part(src, k, l)),
                Action::Cas(_) | Action::Op(PredefinedOp::NoOp) => {}
                Action::Op(PredefinedOp::Replace) => target.copy_from_slice(part(src, k, l)),
                Action::Op(op) => {
                    let e = elem.expect("only REPLACE and NO_OP come without an element type");
                    reduce_op::apply(op, e, part(src, k, l), target).expect("the operation was checked against the type")
                }
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::win::control::{Control, LINE};

    #[repr(C, align(64))]
    struct Block([u8; 256]);

    /// `update` on memory of this process against the reduction kernel on a copy, for every
    /// integer width (whole words, a tail, a misaligned start) and for doubles.
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
