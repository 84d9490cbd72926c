//! The element-wise kernels on primitives: SUM, PROD, MAX and MIN with C's arithmetic and
//! comparisons, and the bitwise and logical operations on integers. Complex types are handed
//! on to their own kernel.

use crate::datatype::Primitive;

use super::complex::complex;
use super::element::{each, num, with_int, with_num, Num1};
use super::float128::F128;
use super::long_double::X87;
use super::PredefinedOp;

/// `dst[k] = src[k] op dst[k]` for an element-wise operation on primitive `p`, which
/// [`check`](super::check) has accepted.
pub(super) fn prim_kernel(op: PredefinedOp, p: Primitive, src: &[u8], dst: &mut [u8]) {
    use PredefinedOp::*;
    match p {
        Primitive::CFloatComplex => return complex::<f32>(op, src, dst),
        Primitive::CDoubleComplex => return complex::<f64>(op, src, dst),
        Primitive::CLongDoubleComplex => return complex::<X87>(op, src, dst),
        Primitive::Float128Complex => return complex::<F128>(op, src, dst),
        _ => {}
    }
    let n = num(p).expect("checked");
    match op {
        Sum => with_num!(n, T => each::<T>(src, dst, T::add)),
        Prod => with_num!(n, T => each::<T>(src, dst, T::mul)),
        Max => with_num!(n, T => each::<T>(src, dst, |a, b| if a.c_gt(b) { a } else { b })),
        Min => with_num!(n, T => each::<T>(src, dst, |a, b| if a.c_lt(b) { a } else { b })),
        Band => with_int!(n, T => each::<T>(src, dst, |a, b| a & b)),
        Bor => with_int!(n, T => each::<T>(src, dst, |a, b| a | b)),
        Bxor => with_int!(n, T => each::<T>(src, dst, |a, b| a ^ b)),
        Land => with_int!(n, T => each::<T>(src, dst, |a, b| T::from(a != 0 && b != 0))),
        Lor => with_int!(n, T => each::<T>(src, dst, |a, b| T::from(a != 0 || b != 0))),
        Lxor => with_int!(n, T => each::<T>(src, dst, |a, b| T::from((a != 0) != (b != 0)))),
        Maxloc | Minloc | Replace | NoOp => unreachable!("not an element-wise primitive op"),
    }
}
