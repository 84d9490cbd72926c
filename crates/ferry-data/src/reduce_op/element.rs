//! The machine types the kernels compute with: which one a primitive computes as, how an
//! element is read from and written to unaligned native-endian bytes, and the loop every
//! element-wise kernel runs.

use crate::datatype::Primitive;

use super::complex::Real;

/// Runs `$body` with the type alias `$T` bound to the machine type of `$n`.
macro_rules! with_num {
    ($n:expr, $T:ident => $body:expr) => {{
        use $crate::reduce_op::element::Num;
        match $n {
            Num::I8 => {
                type $T = i8;
                $body
            }
            Num::U8 => {
                type $T = u8;
                $body
            }
            Num::I16 => {
                type $T = i16;
                $body
            }
            Num::U16 => {
                type $T = u16;
                $body
            }
            Num::I32 => {
                type $T = i32;
                $body
            }
            Num::U32 => {
                type $T = u32;
                $body
            }
            Num::I64 => {
                type $T = i64;
                $body
            }
            Num::U64 => {
                type $T = u64;
                $body
            }
            Num::F16 => {
                type $T = $crate::reduce_op::float16::F16;
                $body
            }
            Num::F128 => {
                type $T = $crate::reduce_op::float128::F128;
                $body
            }
            Num::F32 => {
                type $T = f32;
                $body
            }
            Num::F64 => {
                type $T = f64;
                $body
            }
            Num::F80 => {
                type $T = $crate::reduce_op::long_double::X87;
                $body
            }
        }
    }};
}
/// As [`with_num!`] for the integer machine types; floating point panics (callers check first).
macro_rules! with_int {
    ($n:expr, $T:ident => $body:expr) => {{
        use $crate::reduce_op::element::Num;
        match $n {
            Num::I8 => {
                type $T = i8;
                $body
            }
            Num::U8 => {
                type $T = u8;
                $body
            }
            Num::I16 => {
                type $T = i16;
                $body
            }
            Num::U16 => {
                type $T = u16;
                $body
            }
            Num::I32 => {
                type $T = i32;
                $body
            }
            Num::U32 => {
                type $T = u32;
                $body
            }
            Num::I64 => {
                type $T = i64;
                $body
            }
            Num::U64 => {
                type $T = u64;
                $body
            }
            Num::F16 | Num::F32 | Num::F64 | Num::F80 | Num::F128 => unreachable!("bit operations on a floating type"),
        }
    }};
}

// Imported by path, like any other item, by the files that dispatch on the machine type.
pub(super) use {with_int, with_num};

/// The machine type a primitive computes as.
#[derive(Clone, Copy, Debug)]
pub(super) enum Num {
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    F16,
    F32,
    F64,
    F80,
    F128,
}

/// The machine type of an integer, floating point, logical or byte primitive (x86-64 LP64:
/// `char` is signed, `long` is 64 bits).
pub(super) fn num(p: Primitive) -> Option<Num> {
    use Primitive::*;
    Some(match p {
        Char | SignedChar | Int8 => Num::I8,
        UnsignedChar | UInt8 | Byte | CBool => Num::U8,
        Short | Int16 => Num::I16,
        UnsignedShort | UInt16 => Num::U16,
        Int | Int32 | Logical => Num::I32,
        Unsigned | UInt32 => Num::U32,
        Long | LongLong | Int64 | Aint | Offset | Count => Num::I64,
        UnsignedLong | UnsignedLongLong | UInt64 => Num::U64,
        Float16 => Num::F16,
        Float => Num::F32,
        Double => Num::F64,
        LongDouble => Num::F80,
        Float128 => Num::F128,
        WChar | Packed | CFloatComplex | CDoubleComplex | CLongDoubleComplex | Float128Complex => {
            return None
        }
    })
}

/// A fixed-size element read from and written to native-endian bytes.
pub(super) trait Elem: Copy {
    const SIZE: usize;
    /// Reads an element from exactly `SIZE` bytes.
    fn load(b: &[u8]) -> Self;
    /// Writes the element into exactly `SIZE` bytes.
    fn store(self, b: &mut [u8]);
}

/// Arithmetic and C's comparisons.
pub(super) trait Num1: Elem {
    fn add(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    /// `self > o` in C.
    fn c_gt(self, o: Self) -> bool;
    /// `self < o` in C.
    fn c_lt(self, o: Self) -> bool;
    /// `self == o` in C.
    fn c_eq(self, o: Self) -> bool;
}

/// The loop every element-wise kernel runs: `dst[k] = f(src[k], dst[k])`. On a CPU with
/// AVX2, vectors of [`WIDE`] bytes or more run a copy of the loop compiled for it, which
/// the compiler vectorises twice as wide as the baseline's SSE2 (the same operation on
/// each element, so the results are the same bits).
#[inline(always)]
pub(super) fn each<T: Elem>(src: &[u8], dst: &mut [u8], f: impl Fn(T, T) -> T) {
    #[cfg(target_arch = "x86_64")]
    if src.len() >= WIDE && std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2.
        return unsafe { each_avx2(src, dst, f) };
    }
    each_loop(src, dst, f)
}

/// Below this many bytes the plain loop is as fast as the wide one.
const WIDE: usize = 256;

#[inline(always)]
fn each_loop<T: Elem>(src: &[u8], dst: &mut [u8], f: impl Fn(T, T) -> T) {
    for (s, d) in src.chunks_exact(T::SIZE).zip(dst.chunks_exact_mut(T::SIZE)) {
        f(T::load(s), T::load(d)).store(d);
    }
}

/// [`each_loop`] compiled for AVX2.
///
/// # Safety
/// The CPU must have AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn each_avx2<T: Elem>(src: &[u8], dst: &mut [u8], f: impl Fn(T, T) -> T) {
    each_loop(src, dst, f)
}

/// A fixed-size array from a slice of that length; the optimiser sees through it.
#[inline(always)]
pub(super) fn arr<const N: usize>(b: &[u8]) -> [u8; N] {
    b.try_into().expect("chunk of the element size")
}

macro_rules! int_elem {
    ($($t:ty),*) => {$(
        impl Elem for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            #[inline(always)]
            fn load(b: &[u8]) -> Self {
                <$t>::from_ne_bytes(arr(b))
            }
            #[inline(always)]
            fn store(self, b: &mut [u8]) {
                b.copy_from_slice(&self.to_ne_bytes());
            }
        }
        impl Num1 for $t {
            #[inline(always)]
            fn add(self, o: Self) -> Self {
                self.wrapping_add(o)
            }
            #[inline(always)]
            fn mul(self, o: Self) -> Self {
                self.wrapping_mul(o)
            }
            #[inline(always)]
            fn c_gt(self, o: Self) -> bool {
                self > o
            }
            #[inline(always)]
            fn c_lt(self, o: Self) -> bool {
                self < o
            }
            #[inline(always)]
            fn c_eq(self, o: Self) -> bool {
                self == o
            }
        }
    )*};
}
int_elem!(i8, u8, i16, u16, i32, u32, i64, u64);

macro_rules! float_elem {
    ($($t:ty),*) => {$(
        impl Elem for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            #[inline(always)]
            fn load(b: &[u8]) -> Self {
                <$t>::from_ne_bytes(arr(b))
            }
            #[inline(always)]
            fn store(self, b: &mut [u8]) {
                b.copy_from_slice(&self.to_ne_bytes());
            }
        }
        impl Num1 for $t {
            #[inline(always)]
            fn add(self, o: Self) -> Self {
                self + o
            }
            #[inline(always)]
            fn mul(self, o: Self) -> Self {
                self * o
            }
            #[inline(always)]
            fn c_gt(self, o: Self) -> bool {
                self > o
            }
            #[inline(always)]
            fn c_lt(self, o: Self) -> bool {
                self < o
            }
            #[inline(always)]
            fn c_eq(self, o: Self) -> bool {
                self == o
            }
        }
        impl Real for $t {
            #[inline(always)]
            fn sub(self, o: Self) -> Self {
                self - o
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            #[inline(always)]
            fn is_inf(self) -> bool {
                <$t>::is_infinite(self)
            }
            #[inline(always)]
            fn signed(one: bool, sign_of: Self) -> Self {
                let magnitude: $t = if one { 1.0 } else { 0.0 };
                magnitude.copysign(sign_of)
            }
            #[inline(always)]
            fn inf() -> Self {
                <$t>::INFINITY
            }
        }
    )*};
}
float_elem!(f32, f64);
