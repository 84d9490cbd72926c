//! Reduction operations: the handle table of user-defined operations (`MPI_Op_create`,
//! `MPI_Op_free`) and [`Reduction`], what a collective combines packed data with, whether
//! the operation is predefined or the user's.
//!
//! A user function sees what MPI promises it: `invec` and `inoutvec` laid out as `len`
//! elements of the call's own datatype (unpacked, aligned, gaps included), and that
//! datatype's handle; `inoutvec[i] = invec[i] op inoutvec[i]`.

use std::os::raw::{c_int, c_void};
use std::sync::Arc;

use ferry_data::datatype::Datatype;
use ferry_data::reduce_op::{self, ElemType, PredefinedOp};

use crate::consts::*;
use crate::error::{err, MpiError, MpiResult};
use crate::op_queries::{with_view, View};
pub use crate::objects::records::{UserFn, UserOp};
use crate::objects::Runtime;
use crate::objects::threads::Locked;

/// Handles of user-defined operations: MPICH's "direct" kind for operations
/// (0x98000000 | index), next to the builtin ones (0x58000000 | index).
const USER_OP_BASE: i32 = 0x9800_0000u32 as i32;
const USER_OP_MAX: i32 = 0x03ff_ffff;

impl Runtime {
    pub(crate) fn add_op(&mut self, op: UserOp) -> MpiResult<MPI_Op> {
        for _ in 0..=USER_OP_MAX {
            self.next_op = (self.next_op + 1) & USER_OP_MAX;
            let h = USER_OP_BASE | self.next_op;
            if let std::collections::hash_map::Entry::Vacant(v) = self.ops.entry(h) {
                v.insert(op);
                return Ok(h);
            }
        }
        err(MPI_ERR_INTERN, "no operation handle left")
    }
}

/// How a collective combines data: `dst = src op dst` on packed elements.
#[derive(Clone)]
pub enum Reduction {
    Predefined { op: PredefinedOp, elem: ElemType },
    /// `view`: what the function's MPI queries are answered from while a collective runs it.
    User { op: UserOp, handle: MPI_Datatype, t: Datatype, view: Arc<View> },
}

/// Resolve the operation and datatype of a reduction call; an operation that is not defined
/// on the type is `MPI_ERR_OP`.
pub fn reduction(rt: &mut Runtime, op: MPI_Op, dt: MPI_Datatype) -> MpiResult<Reduction> {
    let t = rt.datatype(dt)?;
    if let Some(u) = rt.ops.get(&op) {
        let view = View::of(rt, dt, &t);
        return Ok(Reduction::User { op: *u, handle: dt, t, view });
    }
    let Some(pop) = PredefinedOp::from_handle(op) else {
        return err(MPI_ERR_OP, if op == MPI_OP_NULL { "MPI_OP_NULL is not an operation".to_string() } else { format!("invalid operation {op:#x}") });
    };
    if matches!(pop, PredefinedOp::Replace | PredefinedOp::NoOp) {
        return err(MPI_ERR_OP, format!("{} is defined for one-sided accumulates only, not for collective reductions", pop.name()));
    }
    let elem = match crate::predefined::pair_type(dt) {
        Some((v, i)) => Some(ElemType::Pair(v, i)),
        None => reduce_op::elem_type(&t),
    };
    let Some(elem) = elem else { return err(MPI_ERR_OP, format!("{} is not defined for datatype {dt:#x} (no single basic type)", pop.name())) };
    reduce_op::check(pop, elem).map_err(|e| MpiError::new(MPI_ERR_OP, e.to_string()))?;
    Ok(Reduction::Predefined { op: pop, elem })
}

/// Whether this thread is inside a user's reduction function run with the runtime held.
pub fn in_user_function() -> bool {
    crate::op_queries::active()
}

/// A byte buffer aligned for any C type (16 bytes), with `base` placed so that the bytes
/// `base + lo .. base + hi` lie inside it.
struct Aligned {
    words: Vec<u128>,
    /// Offset of `base` from the start of `words`, in bytes (may be negative).
    base: isize,
}

impl Aligned {
    fn new(lo: isize, hi: isize) -> Aligned {
        let len = (hi - lo).max(0) as usize;
        let words = vec![0u128; len.div_ceil(16) + 1];
        // base + lo must be >= 0 and base a multiple of 16: round -lo up.
        let base = (-lo).div_euclid(16) * 16 + if (-lo).rem_euclid(16) == 0 { 0 } else { 16 };
        Aligned { words, base }
    }
    fn base(&mut self) -> *mut u8 {
        (self.words.as_mut_ptr() as *mut u8).wrapping_offset(self.base)
    }
}

impl Reduction {
    /// Whether the operation commutes (every predefined one does).
    pub fn commutative(&self) -> bool {
        match self {
            Reduction::Predefined { .. } => true,
            Reduction::User { op, .. } => op.commute,
        }
    }

    /// A number that only an equal predefined reduction has (operation and element type):
    /// calls that reduce alike may share a kept call (`coll::uniform`); `None` for a user's
    /// operation.
    pub fn code(&self) -> Option<u64> {
        match self {
            Reduction::Predefined { op, elem } => {
                let (v, i) = match *elem {
                    ElemType::Prim(p) => (p as u64 + 1, 0),
                    ElemType::Pair(v, i) => (v as u64 + 1, i as u64 + 1),
                };
                Some(1 + ((*op as u64) << 32 | v << 16 | i))
            }
            Reduction::User { .. } => None,
        }
    }

    /// Bytes of one element in packed data: buffers are split only on these boundaries.
    pub fn elem_size(&self) -> usize {
        match self {
            Reduction::Predefined { elem, .. } => elem.size(),
            Reduction::User { t, .. } => t.size(),
        }
    }

    /// `dst = src op dst` element-wise on packed data of equal length. A user's function
    /// runs with its view: the runtime is held by the caller.
    pub fn apply(&self, src: &[u8], dst: &mut [u8]) -> Result<(), String> {
        match self {
            Reduction::Predefined { op, elem } => reduce_op::apply(*op, *elem, src, dst).map_err(|e| e.to_string()),
            Reduction::User { op, handle, t, view } => with_view(view, || user_apply(op, *handle, t, src, dst)),
        }
    }

    /// [`apply`](Self::apply) for a caller that has released the runtime: a user's function
    /// may then make any MPI call.
    pub fn apply_unlocked(&self, src: &[u8], dst: &mut [u8]) -> Result<(), String> {
        match self {
            Reduction::User { op, handle, t, .. } => user_apply(op, *handle, t, src, dst),
            _ => self.apply(src, dst),
        }
    }
}

/// Run a user function over packed `src` and `dst`: unpack both into aligned buffers in the
/// datatype's layout, call it (in pieces of at most `c_int::MAX` elements), pack the result.
fn user_apply(op: &UserOp, handle: MPI_Datatype, t: &Datatype, src: &[u8], dst: &mut [u8]) -> Result<(), String> {
    if src.len() != dst.len() {
        return Err(format!("user operation: the source has {} bytes but the destination {}", src.len(), dst.len()));
    }
    let size = t.size();
    if size == 0 || src.is_empty() {
        return Ok(());
    }
    if !src.len().is_multiple_of(size) {
        return Err(format!("user operation: {} bytes are not a whole number of {size}-byte elements", src.len()));
    }
    let total = src.len() / size;
    // An int-count function sees at most INT_MAX elements at a time.
    let most = match op.f {
        UserFn::Int(_) => c_int::MAX as usize,
        UserFn::Large(_) => usize::MAX,
    };
    let mut done = 0;
    while done < total {
        let n = (total - done).min(most);
        let (s, d) = (&src[done * size..(done + n) * size], &mut dst[done * size..(done + n) * size]);
        done += n;
        let aligned = |p: *const u8| (p as usize).is_multiple_of(16);
        if t.is_contiguous() && aligned(s.as_ptr()) && aligned(d.as_ptr()) {
            // Packed data of a contiguous type is already in the type's layout: no copies.
            // SAFETY: as below; the function only reads `invec` (MPI's contract for it).
            unsafe { call_user(op, handle, s.as_ptr() as *mut u8, d.as_mut_ptr(), n) };
            continue;
        }
        let span = t.true_span(n).expect("n > 0 elements of a type with data");
        let (mut a, mut b) = (Aligned::new(span.start, span.end), Aligned::new(span.start, span.end));
        let (pa, pb) = (a.base(), b.base());
        // SAFETY: each buffer covers the type map of `n` elements around its base (`Aligned`),
        // and packed data never overlaps them.
        unsafe {
            t.unpack(s, pa, n);
            t.unpack(d, pb, n);
        }
        // SAFETY: both buffers hold `n` elements of the type, unpacked above.
        unsafe { call_user(op, handle, pa, pb, n) };
        // SAFETY: as for the unpack above.
        unsafe { t.pack(pb, n, d) };
    }
    Ok(())
}

/// Call the user's function on `n` elements (at most INT_MAX for an int-count one).
///
/// # Safety
/// `a` and `b` hold `n` elements of `handle`'s type each, in its layout, 16-byte aligned.
unsafe fn call_user(op: &UserOp, handle: MPI_Datatype, a: *mut u8, b: *mut u8, n: usize) {
    let mut dt = handle;
    // SAFETY: the function was registered by MPI_Op_create(_c) with MPI's signature; its
    // arguments are valid for `len` elements of `dt` (the caller's contract).
    match op.f {
        UserFn::Int(f) => unsafe { f(a as *mut c_void, b as *mut c_void, &mut (n as c_int), &mut dt) },
        UserFn::Large(f) => unsafe { f(a as *mut c_void, b as *mut c_void, &mut (n as MPI_Count), &mut dt) },
    }
}

/// MPI_Reduce_local and MPI_Reduce_local_c: `inoutbuf = inbuf op inoutbuf`, `count` elements.
/// A contiguous type is combined where it lies; any other is packed, combined and unpacked.
pub(crate) fn reduce_local(rt: &mut Locked, inbuf: *const c_void, inoutbuf: *mut c_void, count: MPI_Count, dt: MPI_Datatype, op: MPI_Op) -> MpiResult<()> {
    let Ok(n) = usize::try_from(count) else { return err(MPI_ERR_COUNT, format!("count {count} is negative")) };
    let red = reduction(rt, op, dt)?;
    let t = rt.datatype(dt)?;
    if n == 0 || t.size() == 0 {
        return Ok(());
    }
    if inbuf.is_null() || inoutbuf.is_null() {
        return err(MPI_ERR_BUFFER, "a buffer is NULL");
    }
    // Neither buffer may be MPI_IN_PLACE (there is no other buffer to take its place), and
    // they may not be the same buffer.
    if inbuf == MPI_IN_PLACE as *const c_void || inoutbuf == MPI_IN_PLACE {
        return err(MPI_ERR_BUFFER, "MPI_IN_PLACE is not a buffer of MPI_Reduce_local");
    }
    if inbuf == inoutbuf as *const c_void {
        return err(MPI_ERR_BUFFER, "inbuf and inoutbuf are the same buffer");
    }
    let len = t.packed_len(n).filter(|l| *l <= isize::MAX as usize).ok_or_else(|| MpiError::new(MPI_ERR_COUNT, "the data is too large"))?;
    let (at_in, at_out) = (inbuf as usize, inoutbuf as usize);
    let apart = at_in.saturating_add(len) <= at_out || at_out.saturating_add(len) <= at_in;
    // Without the runtime's lock, a user's function may call MPI as it likes (unless this
    // call itself runs inside a callback that lent it the runtime).
    let apply = |rt: &mut Locked, a: &[u8], b: &mut [u8]| {
        let applied = if rt.owns_lock() { rt.unlocked(|| red.apply_unlocked(a, b)) } else { red.apply(a, b) };
        applied.map_err(|e| MpiError::new(MPI_ERR_OP, e))
    };
    if t.is_contiguous() && apart {
        // SAFETY: MPI's contract: both buffers hold `count` elements of `dt`, which lie
        // packed in their first `len` bytes (a contiguous type); the ranges do not overlap.
        let (a, b) = unsafe { (std::slice::from_raw_parts(inbuf as *const u8, len), std::slice::from_raw_parts_mut(inoutbuf as *mut u8, len)) };
        return apply(rt, a, b);
    }
    let (mut a, mut b) = (vec![0u8; len], vec![0u8; len]);
    // SAFETY: MPI's contract: both buffers hold `count` elements of `dt`.
    unsafe {
        t.pack(inbuf as *const u8, n, &mut a);
        t.pack(inoutbuf as *const u8, n, &mut b);
    }
    apply(rt, &a, &mut b)?;
    // SAFETY: as above.
    unsafe { t.unpack(&b, inoutbuf as *mut u8, n) };
    Ok(())
}

/// The value and index types of the pair type `h` is (`MPI_2INT`, `MPI_DOUBLE_INT`...) or is
/// built of alone (a vector of `MPI_LONG_DOUBLE_INT`...): MAXLOC and MINLOC then combine its
/// pairs. Read from the constructor calls that made it.
pub fn pair_of(rt: &Runtime, h: MPI_Datatype) -> Option<(ferry_data::datatype::Primitive, ferry_data::datatype::Primitive)> {
    fn pair_in(c: &crate::objects::records::Contents) -> Option<MPI_Datatype> {
        let mut found = None;
        for t in &c.types {
            let p = match t {
                crate::objects::records::Child::Named(h) => crate::predefined::pair_type(*h).map(|_| *h)?,
                crate::objects::records::Child::Derived(_, Some(inner)) => pair_in(inner)?,
                crate::objects::records::Child::Derived(_, None) => return None,
            };
            if found.is_some_and(|f| f != p) {
                return None;
            }
            found = Some(p);
        }
        found
    }
    if let Some(p) = crate::predefined::pair_type(h) {
        return Some(p);
    }
    let contents = rt.type_info.get(&h)?.contents.clone()?;
    crate::predefined::pair_type(pair_in(&contents)?)
}


#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_buffers_hold_the_span_with_an_aligned_base() {
        for (lo, hi) in [(0, 1), (0, 16), (3, 40), (-5, 7), (-16, 0), (17, 18), (-33, -1)] {
            let mut a = Aligned::new(lo, hi);
            let start = a.words.as_ptr() as usize;
            let end = start + a.words.len() * 16;
            let base = a.base() as usize;
            assert_eq!(base % 16, 0, "{lo}..{hi}");
            assert!(base.wrapping_add(lo as usize) >= start && base.wrapping_add(hi as usize) <= end, "{lo}..{hi}");
        }
    }

    unsafe extern "C" fn concat_pairs(a: *mut c_void, b: *mut c_void, len: *mut c_int, _dt: *mut MPI_Datatype) {
        // An element is an interval (first, last) laid out as the vector type below: ints
        // 0 and 3 of 4; a op b = (a.first, b.last).
        let (a, b) = (a as *const i32, b as *mut i32);
        for i in 0..unsafe { *len } as usize {
            unsafe { *b.add(4 * i) = *a.add(4 * i) };
        }
    }

    #[test]
    fn user_functions_see_the_datatype_layout_and_keep_operand_order() {
        // A vector type: 2 ints, stride 3 ints (extent 16 bytes, size 8).
        let int = Datatype::primitive(ferry_data::datatype::Primitive::Int);
        let v = Datatype::vector(2, 1, 3, &int).unwrap();
        let view = View::new(7, &v, [0, 0, 0, MPI_COMBINER_NAMED], Vec::new());
        let r = Reduction::User { op: UserOp { f: UserFn::Int(concat_pairs), commute: false }, handle: 7, t: v, view };
        let pack = |xs: &[i32]| xs.iter().flat_map(|x| x.to_ne_bytes()).collect::<Vec<u8>>();
        let src = pack(&[1, 2, 3, 4]);
        let mut dst = pack(&[10, 20, 30, 40]);
        r.apply(&src, &mut dst).unwrap();
        assert_eq!(dst, pack(&[1, 20, 3, 40]));
        assert!(!r.commutative());
        assert_eq!(r.elem_size(), 8);
        assert!(r.apply(&src[..4], &mut dst[..4]).is_err());
    }
}
