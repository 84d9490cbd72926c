//! The predefined reduction operations of MPI (`MPI_MAX` … `MPI_NO_OP`) and their kernels.
//!
//! A kernel combines two packed buffers element by element, `dst[k] = src[k] op dst[k]`, the
//! way `MPI_Reduce_local(src, dst, …)` does. Buffers are packed (see [`Datatype::pack`]),
//! native-endian and may sit at any address: elements are read and written with
//! `from_ne_bytes` / `to_ne_bytes` on byte chunks, never through aligned pointers.
//!
//! Which operation applies to which type follows the table of the MPI standard (MPI-4.0,
//! section 6.9.2), widened where MPICH accepts more:
//!
//! | operation                 | types                                                      |
//! |---------------------------|------------------------------------------------------------|
//! | `MAX`, `MIN`              | integer, floating point                                    |
//! | `SUM`, `PROD`             | integer, floating point, complex                           |
//! | `LAND`, `LOR`, `LXOR`     | integer, logical (`MPI_C_BOOL`)                            |
//! | `BAND`, `BOR`, `BXOR`     | integer, byte                                              |
//! | `MAXLOC`, `MINLOC`        | value-and-index pairs of integer or floating point values  |
//! | `REPLACE`, `NO_OP`        | anything                                                   |
//!
//! "Integer" is the standard's C integer group plus the multi-language `MPI_AINT`,
//! `MPI_OFFSET` and `MPI_COUNT`, and (as in MPICH) `MPI_CHAR`. `MPI_WCHAR` and `MPI_PACKED`
//! belong to no group: only `REPLACE` and `NO_OP` take them. MPICH's check also lets logical
//! operations through on floating point types; this module refuses them, as the standard does.
//!
//! Arithmetic is C's:
//! - integer `SUM` and `PROD` wrap around (two's complement), signed types included;
//! - `MAX`/`MIN` on floating point are `a > b ? a : b` and `a < b ? a : b` with `a` the source
//!   element and `b` the destination one, so a comparison with a NaN on either side keeps the
//!   destination element, and `MAX(+0.0, -0.0)` keeps the destination's zero;
//! - logical operations treat any nonzero element as true and store 1 or 0 in the element's
//!   own type;
//! - complex `PROD` is `(ac - bd) + (ad + bc)i`, with the recovery of infinities of the C
//!   standard's Annex G when both parts come out NaN (what `_Complex` multiplication does in C);
//! - `long double` (`MPI_LONG_DOUBLE`, `MPI_C_LONG_DOUBLE_COMPLEX`, `MPI_LONG_DOUBLE_INT`) is
//!   the x87 80-bit format in 16 bytes and is computed by the x87 unit itself on x86-64, under
//!   the thread's x87 control word (round to nearest, 64-bit precision unless a program changed
//!   it), so results are bit for bit those of C. Only the first 10 bytes of a destination
//!   element are written; the 6 padding bytes are left as they were. On other targets every
//!   operation but `REPLACE` and `NO_OP` on these types is refused with
//!   [`OpError::Unsupported`].
//!
//! `MAXLOC`/`MINLOC` follow the standard: the greater (smaller) value wins with its index; on
//! equal values the smaller index is kept. If the values do not compare (a NaN), the
//! destination pair is kept.
//!
//! Each call dispatches once on the operation and type, then runs a loop over fixed-size chunks
//! (`chunks_exact`) monomorphised for the element type.

use std::fmt;

use crate::datatype::{Datatype, Primitive};

/// Runs `$body` with the type alias `$T` bound to the machine type of `$n`.
macro_rules! with_num {
    ($n:expr, $T:ident => $body:expr) => {
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
            Num::F32 => {
                type $T = f32;
                $body
            }
            Num::F64 => {
                type $T = f64;
                $body
            }
            Num::F80 => {
                type $T = X87;
                $body
            }
        }
    };
}
/// As [`with_num!`] for the integer machine types; floating point panics (callers check first).
macro_rules! with_int {
    ($n:expr, $T:ident => $body:expr) => {
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
            Num::F32 | Num::F64 | Num::F80 => unreachable!("bit operations on a floating type"),
        }
    };
}

/// One of MPI's predefined reduction operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PredefinedOp {
    /// `MPI_MAX`
    Max,
    /// `MPI_MIN`
    Min,
    /// `MPI_SUM`
    Sum,
    /// `MPI_PROD`
    Prod,
    /// `MPI_LAND`
    Land,
    /// `MPI_BAND`
    Band,
    /// `MPI_LOR`
    Lor,
    /// `MPI_BOR`
    Bor,
    /// `MPI_LXOR`
    Lxor,
    /// `MPI_BXOR`
    Bxor,
    /// `MPI_MAXLOC`
    Maxloc,
    /// `MPI_MINLOC`
    Minloc,
    /// `MPI_REPLACE` (one-sided accumulate): the source replaces the destination.
    Replace,
    /// `MPI_NO_OP` (one-sided accumulate): the destination stays as it is.
    NoOp,
}

impl PredefinedOp {
    /// Every predefined operation, in handle order.
    pub const ALL: [PredefinedOp; 14] = [
        PredefinedOp::Max,
        PredefinedOp::Min,
        PredefinedOp::Sum,
        PredefinedOp::Prod,
        PredefinedOp::Land,
        PredefinedOp::Band,
        PredefinedOp::Lor,
        PredefinedOp::Bor,
        PredefinedOp::Lxor,
        PredefinedOp::Bxor,
        PredefinedOp::Minloc,
        PredefinedOp::Maxloc,
        PredefinedOp::Replace,
        PredefinedOp::NoOp,
    ];

    /// The operation behind an MPICH `MPI_Op` handle; `None` for any other handle
    /// (`MPI_OP_NULL` and user-defined operations included).
    pub fn from_handle(handle: i32) -> Option<PredefinedOp> {
        use PredefinedOp::*;
        Some(match handle {
            0x5800_0001 => Max,
            0x5800_0002 => Min,
            0x5800_0003 => Sum,
            0x5800_0004 => Prod,
            0x5800_0005 => Land,
            0x5800_0006 => Band,
            0x5800_0007 => Lor,
            0x5800_0008 => Bor,
            0x5800_0009 => Lxor,
            0x5800_000a => Bxor,
            0x5800_000b => Minloc,
            0x5800_000c => Maxloc,
            0x5800_000d => Replace,
            0x5800_000e => NoOp,
            _ => return None,
        })
    }

    /// The MPICH handle of the operation.
    pub const fn handle(self) -> i32 {
        use PredefinedOp::*;
        match self {
            Max => 0x5800_0001,
            Min => 0x5800_0002,
            Sum => 0x5800_0003,
            Prod => 0x5800_0004,
            Land => 0x5800_0005,
            Band => 0x5800_0006,
            Lor => 0x5800_0007,
            Bor => 0x5800_0008,
            Lxor => 0x5800_0009,
            Bxor => 0x5800_000a,
            Minloc => 0x5800_000b,
            Maxloc => 0x5800_000c,
            Replace => 0x5800_000d,
            NoOp => 0x5800_000e,
        }
    }

    /// The MPI name (`"MPI_MAX"`).
    pub const fn name(self) -> &'static str {
        use PredefinedOp::*;
        match self {
            Max => "MPI_MAX",
            Min => "MPI_MIN",
            Sum => "MPI_SUM",
            Prod => "MPI_PROD",
            Land => "MPI_LAND",
            Band => "MPI_BAND",
            Lor => "MPI_LOR",
            Bor => "MPI_BOR",
            Lxor => "MPI_LXOR",
            Bxor => "MPI_BXOR",
            Maxloc => "MPI_MAXLOC",
            Minloc => "MPI_MINLOC",
            Replace => "MPI_REPLACE",
            NoOp => "MPI_NO_OP",
        }
    }
}

impl fmt::Display for PredefinedOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a reduction sees of a datatype: the element it combines one by one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ElemType {
    /// One primitive per element.
    Prim(Primitive),
    /// A `(value, index)` pair of MAXLOC/MINLOC; packed, the index follows the value without
    /// padding (`MPI_DOUBLE_INT` is 12 bytes an element).
    Pair(Primitive, Primitive),
}

impl ElemType {
    /// Bytes of one element in packed data.
    pub const fn size(self) -> usize {
        match self {
            ElemType::Prim(p) => p.size(),
            ElemType::Pair(v, i) => v.size() + i.size(),
        }
    }
}

impl fmt::Display for ElemType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Primitive as P;
        match *self {
            ElemType::Prim(p) => f.write_str(primitive_name(p)),
            ElemType::Pair(v, i) => {
                let name = match (v, i) {
                    (P::Float, P::Int) => "MPI_FLOAT_INT",
                    (P::Double, P::Int) => "MPI_DOUBLE_INT",
                    (P::Long, P::Int) => "MPI_LONG_INT",
                    (P::Short, P::Int) => "MPI_SHORT_INT",
                    (P::LongDouble, P::Int) => "MPI_LONG_DOUBLE_INT",
                    (P::Int, P::Int) => "MPI_2INT",
                    (P::Float, P::Float) => "MPI_2REAL",
                    (P::Double, P::Double) => "MPI_2DOUBLE_PRECISION",
                    _ => return write!(f, "pair ({}, {})", primitive_name(v), primitive_name(i)),
                };
                f.write_str(name)
            }
        }
    }
}

/// The MPI name of the C datatype of a primitive.
fn primitive_name(p: Primitive) -> &'static str {
    use Primitive::*;
    match p {
        Char => "MPI_CHAR",
        SignedChar => "MPI_SIGNED_CHAR",
        UnsignedChar => "MPI_UNSIGNED_CHAR",
        Byte => "MPI_BYTE",
        WChar => "MPI_WCHAR",
        Short => "MPI_SHORT",
        UnsignedShort => "MPI_UNSIGNED_SHORT",
        Int => "MPI_INT",
        Unsigned => "MPI_UNSIGNED",
        Long => "MPI_LONG",
        UnsignedLong => "MPI_UNSIGNED_LONG",
        LongLong => "MPI_LONG_LONG_INT",
        UnsignedLongLong => "MPI_UNSIGNED_LONG_LONG",
        Float => "MPI_FLOAT",
        Double => "MPI_DOUBLE",
        LongDouble => "MPI_LONG_DOUBLE",
        Packed => "MPI_PACKED",
        Int8 => "MPI_INT8_T",
        Int16 => "MPI_INT16_T",
        Int32 => "MPI_INT32_T",
        Int64 => "MPI_INT64_T",
        UInt8 => "MPI_UINT8_T",
        UInt16 => "MPI_UINT16_T",
        UInt32 => "MPI_UINT32_T",
        UInt64 => "MPI_UINT64_T",
        CBool => "MPI_C_BOOL",
        Aint => "MPI_AINT",
        Offset => "MPI_OFFSET",
        Count => "MPI_COUNT",
        CFloatComplex => "MPI_C_FLOAT_COMPLEX",
        CDoubleComplex => "MPI_C_DOUBLE_COMPLEX",
        CLongDoubleComplex => "MPI_C_LONG_DOUBLE_COMPLEX",
    }
}

/// Why an operation cannot combine two buffers.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OpError {
    /// The MPI standard (or MPICH) does not define the operation on the type.
    #[error("{op} is not defined for {ty}")]
    Undefined {
        /// the operation
        op: PredefinedOp,
        /// the element type
        ty: ElemType,
    },
    /// The operation is defined but this build cannot compute it (`long double` off x86-64).
    #[error("{op} on {ty} is not supported on this platform")]
    Unsupported {
        /// the operation
        op: PredefinedOp,
        /// the element type
        ty: ElemType,
    },
    /// Source and destination buffers differ in length.
    #[error("{op}: the source has {src} bytes but the destination {dst}")]
    LengthMismatch {
        /// the operation
        op: PredefinedOp,
        /// bytes in the source
        src: usize,
        /// bytes in the destination
        dst: usize,
    },
    /// The buffers stop inside an element.
    #[error("{op}: {len} bytes are not a whole number of {ty} elements")]
    PartialElement {
        /// the operation
        op: PredefinedOp,
        /// the element type
        ty: ElemType,
        /// bytes in each buffer
        len: usize,
    },
}

/// The element type a predefined operation combines for `dt`: `Prim(p)` when every element
/// of the type map is the primitive `p` (a primitive, or a contiguous, vector, indexed,
/// resized… of one primitive); `None` for types of mixed primitives or without data.
///
/// The value-and-index pairs of MAXLOC/MINLOC are not recognised here: the type map does not
/// tell them apart (`MPI_LONG_INT` and `MPI_DOUBLE_INT` have the same layout, `MPI_2INT` is two
/// `int`s). The caller knows them by handle and builds `ElemType::Pair(value, index)` itself.
/// For `REPLACE` and `NO_OP`, which take any type, a caller can copy (or skip) the packed
/// bytes without an element type.
pub fn elem_type(dt: &Datatype) -> Option<ElemType> {
    if dt.size() == 0 {
        return None;
    }
    dt.uniform_primitive().map(ElemType::Prim)
}

/// The standard's type groups, as far as reductions care.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    Integer,
    Float,
    Logical,
    Complex,
    Byte,
    /// `MPI_WCHAR`, `MPI_PACKED`: no arithmetic.
    Opaque,
}

fn class(p: Primitive) -> Class {
    use Primitive::*;
    match p {
        Char | SignedChar | UnsignedChar | Short | UnsignedShort | Int | Unsigned | Long
        | UnsignedLong | LongLong | UnsignedLongLong | Int8 | Int16 | Int32 | Int64 | UInt8
        | UInt16 | UInt32 | UInt64 | Aint | Offset | Count => Class::Integer,
        Float | Double | LongDouble => Class::Float,
        CBool => Class::Logical,
        CFloatComplex | CDoubleComplex | CLongDoubleComplex => Class::Complex,
        Byte => Class::Byte,
        WChar | Packed => Class::Opaque,
    }
}

/// Whether `long double` arithmetic is available.
const HAVE_X87: bool = cfg!(target_arch = "x86_64");

fn is_x87(p: Primitive) -> bool {
    matches!(p, Primitive::LongDouble | Primitive::CLongDoubleComplex)
}

/// Whether `op` is defined on `t` and computable here.
pub fn check(op: PredefinedOp, t: ElemType) -> Result<(), OpError> {
    use PredefinedOp::*;
    let defined = match (op, t) {
        (Replace | NoOp, _) => return Ok(()),
        (Maxloc | Minloc, ElemType::Pair(v, i)) => {
            matches!(class(v), Class::Integer | Class::Float)
                && matches!(class(i), Class::Integer | Class::Float)
        }
        (_, ElemType::Pair(..)) | (Maxloc | Minloc, ElemType::Prim(_)) => false,
        (Max | Min, ElemType::Prim(p)) => matches!(class(p), Class::Integer | Class::Float),
        (Sum | Prod, ElemType::Prim(p)) => {
            matches!(class(p), Class::Integer | Class::Float | Class::Complex)
        }
        (Land | Lor | Lxor, ElemType::Prim(p)) => {
            matches!(class(p), Class::Integer | Class::Logical)
        }
        (Band | Bor | Bxor, ElemType::Prim(p)) => matches!(class(p), Class::Integer | Class::Byte),
    };
    if !defined {
        return Err(OpError::Undefined { op, ty: t });
    }
    let x87 = match t {
        ElemType::Prim(p) => is_x87(p),
        ElemType::Pair(v, i) => is_x87(v) || is_x87(i),
    };
    if x87 && !HAVE_X87 {
        return Err(OpError::Unsupported { op, ty: t });
    }
    Ok(())
}

/// Combines `src` into `dst` element by element: `dst[k] = src[k] op dst[k]`. Both buffers
/// hold packed elements of `t`, have the same length, a whole number of elements, and may be
/// unaligned. On error `dst` is untouched.
pub fn apply(op: PredefinedOp, t: ElemType, src: &[u8], dst: &mut [u8]) -> Result<(), OpError> {
    check(op, t)?;
    if src.len() != dst.len() {
        return Err(OpError::LengthMismatch {
            op,
            src: src.len(),
            dst: dst.len(),
        });
    }
    if !src.len().is_multiple_of(t.size()) {
        return Err(OpError::PartialElement {
            op,
            ty: t,
            len: src.len(),
        });
    }
    match (op, t) {
        (PredefinedOp::NoOp, _) => {}
        (PredefinedOp::Replace, _) => dst.copy_from_slice(src),
        (_, ElemType::Prim(p)) => prim_kernel(op, p, src, dst),
        (_, ElemType::Pair(v, i)) => {
            let (v, i) = (num(v).expect("checked"), num(i).expect("checked"));
            if op == PredefinedOp::Maxloc {
                with_num!(v, V => pair_index::<V, true>(i, src, dst))
            } else {
                with_num!(v, V => pair_index::<V, false>(i, src, dst))
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Element types and dispatch.

/// The machine type a primitive computes as.
#[derive(Clone, Copy, Debug)]
enum Num {
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    F32,
    F64,
    F80,
}

/// The machine type of an integer, floating point, logical or byte primitive (x86-64 LP64:
/// `char` is signed, `long` is 64 bits).
fn num(p: Primitive) -> Option<Num> {
    use Primitive::*;
    Some(match p {
        Char | SignedChar | Int8 => Num::I8,
        UnsignedChar | UInt8 | Byte | CBool => Num::U8,
        Short | Int16 => Num::I16,
        UnsignedShort | UInt16 => Num::U16,
        Int | Int32 => Num::I32,
        Unsigned | UInt32 => Num::U32,
        Long | LongLong | Int64 | Aint | Offset | Count => Num::I64,
        UnsignedLong | UnsignedLongLong | UInt64 => Num::U64,
        Float => Num::F32,
        Double => Num::F64,
        LongDouble => Num::F80,
        WChar | Packed | CFloatComplex | CDoubleComplex | CLongDoubleComplex => return None,
    })
}

fn prim_kernel(op: PredefinedOp, p: Primitive, src: &[u8], dst: &mut [u8]) {
    use PredefinedOp::*;
    match p {
        Primitive::CFloatComplex => return complex::<f32>(op, src, dst),
        Primitive::CDoubleComplex => return complex::<f64>(op, src, dst),
        Primitive::CLongDoubleComplex => return complex::<X87>(op, src, dst),
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

/// A fixed-size element read from and written to native-endian bytes.
trait Elem: Copy {
    const SIZE: usize;
    /// Reads an element from exactly `SIZE` bytes.
    fn load(b: &[u8]) -> Self;
    /// Writes the element into exactly `SIZE` bytes.
    fn store(self, b: &mut [u8]);
}

/// Arithmetic and C's comparisons.
trait Num1: Elem {
    fn add(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    /// `self > o` in C.
    fn c_gt(self, o: Self) -> bool;
    /// `self < o` in C.
    fn c_lt(self, o: Self) -> bool;
    /// `self == o` in C.
    fn c_eq(self, o: Self) -> bool;
}

/// The loop every element-wise kernel runs: `dst[k] = f(src[k], dst[k])`.
#[inline(always)]
fn each<T: Elem>(src: &[u8], dst: &mut [u8], f: impl Fn(T, T) -> T) {
    for (s, d) in src.chunks_exact(T::SIZE).zip(dst.chunks_exact_mut(T::SIZE)) {
        f(T::load(s), T::load(d)).store(d);
    }
}

/// A fixed-size array from a slice of that length; the optimiser sees through it.
#[inline(always)]
fn arr<const N: usize>(b: &[u8]) -> [u8; N] {
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

// ---------------------------------------------------------------------------------------------
// MAXLOC / MINLOC.

/// Second half of the pair dispatch: the index type.
fn pair_index<V: Num1, const MAX: bool>(i: Num, src: &[u8], dst: &mut [u8]) {
    with_num!(i, I => pairs::<V, I, MAX>(src, dst))
}

/// `dst = MAXLOC(src, dst)` (or MINLOC) over packed `(value, index)` pairs.
#[inline(never)]
fn pairs<V: Num1, I: Num1, const MAX: bool>(src: &[u8], dst: &mut [u8]) {
    let n = V::SIZE + I::SIZE;
    for (s, d) in src.chunks_exact(n).zip(dst.chunks_exact_mut(n)) {
        let (u, v) = (V::load(&s[..V::SIZE]), V::load(&d[..V::SIZE]));
        let wins = if MAX { u.c_gt(v) } else { u.c_lt(v) };
        if wins {
            d.copy_from_slice(s);
        } else if u.c_eq(v) {
            let (i, j) = (I::load(&s[V::SIZE..]), I::load(&d[V::SIZE..]));
            if i.c_lt(j) {
                i.store(&mut d[V::SIZE..]);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Complex numbers.

/// What complex multiplication needs of a real type beyond [`Num1`].
trait Real: Num1 {
    fn sub(self, o: Self) -> Self;
    fn is_nan(self) -> bool;
    fn is_inf(self) -> bool;
    /// `copysign(one ? 1 : 0, sign_of)`.
    fn signed(one: bool, sign_of: Self) -> Self;
    fn inf() -> Self;
}

/// A complex number, packed as `{ re; im; }`.
#[derive(Clone, Copy)]
struct Cx<T> {
    re: T,
    im: T,
}

impl<T: Elem> Elem for Cx<T> {
    const SIZE: usize = 2 * T::SIZE;
    #[inline(always)]
    fn load(b: &[u8]) -> Self {
        Cx {
            re: T::load(&b[..T::SIZE]),
            im: T::load(&b[T::SIZE..]),
        }
    }
    #[inline(always)]
    fn store(self, b: &mut [u8]) {
        let (re, im) = b.split_at_mut(T::SIZE);
        self.re.store(re);
        self.im.store(im);
    }
}

fn complex<T: Real>(op: PredefinedOp, src: &[u8], dst: &mut [u8]) {
    match op {
        PredefinedOp::Sum => each::<Cx<T>>(src, dst, |a, b| Cx {
            re: a.re.add(b.re),
            im: a.im.add(b.im),
        }),
        PredefinedOp::Prod => each::<Cx<T>>(src, dst, cmul),
        _ => unreachable!("only SUM and PROD apply to complex types"),
    }
}

/// `z * w` as C's `_Complex` multiplication: the schoolbook formula, then, when both parts
/// are NaN, the recovery of infinite results described in Annex G of the C standard (an
/// infinite operand times a nonzero one is infinite).
#[inline(always)]
fn cmul<T: Real>(z: Cx<T>, w: Cx<T>) -> Cx<T> {
    let (a, b, c, d) = (z.re, z.im, w.re, w.im);
    let (ac, bd, ad, bc) = (a.mul(c), b.mul(d), a.mul(d), b.mul(c));
    let (x, y) = (ac.sub(bd), ad.add(bc));
    if x.is_nan() && y.is_nan() {
        cmul_recover(a, b, c, d, [ac, bd, ad, bc]).unwrap_or(Cx { re: x, im: y })
    } else {
        Cx { re: x, im: y }
    }
}

#[cold]
fn cmul_recover<T: Real>(
    mut a: T,
    mut b: T,
    mut c: T,
    mut d: T,
    products: [T; 4],
) -> Option<Cx<T>> {
    let zero_nan = |v: T| if v.is_nan() { T::signed(false, v) } else { v };
    let mut again = false;
    if a.is_inf() || b.is_inf() {
        // z is infinite: reduce it to a unit-like direction, NaNs of w to signed zeros.
        a = T::signed(a.is_inf(), a);
        b = T::signed(b.is_inf(), b);
        c = zero_nan(c);
        d = zero_nan(d);
        again = true;
    }
    if c.is_inf() || d.is_inf() {
        c = T::signed(c.is_inf(), c);
        d = T::signed(d.is_inf(), d);
        a = zero_nan(a);
        b = zero_nan(b);
        again = true;
    }
    if !again && products.iter().any(|p| p.is_inf()) {
        // A product overflowed: the NaNs came from inf - inf.
        a = zero_nan(a);
        b = zero_nan(b);
        c = zero_nan(c);
        d = zero_nan(d);
        again = true;
    }
    again.then(|| Cx {
        re: T::inf().mul(a.mul(c).sub(b.mul(d))),
        im: T::inf().mul(a.mul(d).add(b.mul(c))),
    })
}

// ---------------------------------------------------------------------------------------------
// long double: x87 extended precision in 16 bytes.

/// An x87 extended-precision number as stored in 16 bytes: 64-bit significand (explicit
/// integer bit) in bytes 0..8, sign and 15-bit exponent in bytes 8..10, 6 bytes of padding.
#[derive(Clone, Copy)]
struct X87([u8; 16]);

impl X87 {
    const SIGN: u8 = 0x80;

    fn exponent(self) -> u16 {
        u16::from_le_bytes([self.0[8], self.0[9]]) & 0x7fff
    }

    fn significand(self) -> u64 {
        u64::from_le_bytes(arr(&self.0[..8]))
    }

    fn from_parts(negative: bool, exponent: u16, significand: u64) -> X87 {
        let mut b = [0; 16];
        b[..8].copy_from_slice(&significand.to_le_bytes());
        b[8..10].copy_from_slice(&exponent.to_le_bytes());
        if negative {
            b[9] |= X87::SIGN;
        }
        X87(b)
    }

    fn negative(self) -> bool {
        self.0[9] & X87::SIGN != 0
    }

    fn neg(mut self) -> X87 {
        self.0[9] ^= X87::SIGN;
        self
    }
}

impl Elem for X87 {
    const SIZE: usize = 16;
    #[inline(always)]
    fn load(b: &[u8]) -> Self {
        X87(arr(b))
    }
    /// Writes the 10 bytes of the value; the padding of the destination stays.
    #[inline(always)]
    fn store(self, b: &mut [u8]) {
        b[..10].copy_from_slice(&self.0[..10]);
    }
}

impl Num1 for X87 {
    fn add(self, o: Self) -> Self {
        x87::add(self, o)
    }
    fn mul(self, o: Self) -> Self {
        x87::mul(self, o)
    }
    fn c_gt(self, o: Self) -> bool {
        x87::compare(self, o) == Some(std::cmp::Ordering::Greater)
    }
    fn c_lt(self, o: Self) -> bool {
        x87::compare(self, o) == Some(std::cmp::Ordering::Less)
    }
    fn c_eq(self, o: Self) -> bool {
        x87::compare(self, o) == Some(std::cmp::Ordering::Equal)
    }
}

impl Real for X87 {
    fn sub(self, o: Self) -> Self {
        // IEEE subtraction is addition of the negation, rounding and signed zeros included.
        x87::add(self, o.neg())
    }
    fn is_nan(self) -> bool {
        // Exponent all ones and anything but the infinity significand: NaNs, and the
        // pseudo-NaN/pseudo-infinity encodings that the x87 unit treats as invalid.
        self.exponent() == 0x7fff && self.significand() != 1 << 63
    }
    fn is_inf(self) -> bool {
        self.exponent() == 0x7fff && self.significand() == 1 << 63
    }
    fn signed(one: bool, sign_of: Self) -> Self {
        if one {
            X87::from_parts(sign_of.negative(), 0x3fff, 1 << 63)
        } else {
            X87::from_parts(sign_of.negative(), 0, 0)
        }
    }
    fn inf() -> Self {
        X87::from_parts(false, 0x7fff, 1 << 63)
    }
}

#[cfg(target_arch = "x86_64")]
mod x87 {
    //! The x87 unit computes: the result is what C gets for `long double`.

    use std::arch::asm;
    use std::cmp::Ordering;

    use super::X87;

    pub(super) fn add(a: X87, b: X87) -> X87 {
        let mut out = [0u8; 16];
        // SAFETY: reads 10 bytes of `a` and `b` and writes 10 bytes of `out`, all live local
        // arrays of 16 bytes; both pushed x87 registers are popped (the stack is left empty
        // as the clobber of every st register requires).
        unsafe {
            asm!(
                "fld tbyte ptr [{a}]",
                "fld tbyte ptr [{b}]",
                "faddp st(1), st",
                "fstp tbyte ptr [{out}]",
                a = in(reg) a.0.as_ptr(),
                b = in(reg) b.0.as_ptr(),
                out = in(reg) out.as_mut_ptr(),
                out("st(0)") _, out("st(1)") _, out("st(2)") _, out("st(3)") _,
                out("st(4)") _, out("st(5)") _, out("st(6)") _, out("st(7)") _,
                options(nostack),
            );
        }
        X87(out)
    }

    pub(super) fn mul(a: X87, b: X87) -> X87 {
        let mut out = [0u8; 16];
        // SAFETY: as in `add`.
        unsafe {
            asm!(
                "fld tbyte ptr [{a}]",
                "fld tbyte ptr [{b}]",
                "fmulp st(1), st",
                "fstp tbyte ptr [{out}]",
                a = in(reg) a.0.as_ptr(),
                b = in(reg) b.0.as_ptr(),
                out = in(reg) out.as_mut_ptr(),
                out("st(0)") _, out("st(1)") _, out("st(2)") _, out("st(3)") _,
                out("st(4)") _, out("st(5)") _, out("st(6)") _, out("st(7)") _,
                options(nostack),
            );
        }
        X87(out)
    }

    /// How `a` compares with `b`; `None` when unordered (a NaN or an invalid encoding).
    pub(super) fn compare(a: X87, b: X87) -> Option<Ordering> {
        let (below, zero, parity): (u8, u8, u8);
        // SAFETY: reads 10 bytes of `a` and `b`; both pushed registers are popped (`fucomip`
        // pops one, `fstp st(0)` the other, leaving EFLAGS as `fucomip` set them).
        unsafe {
            asm!(
                "fld tbyte ptr [{b}]",
                "fld tbyte ptr [{a}]",
                "fucomip st, st(1)",
                "fstp st(0)",
                "setb {below}",
                "sete {zero}",
                "setp {parity}",
                a = in(reg) a.0.as_ptr(),
                b = in(reg) b.0.as_ptr(),
                below = out(reg_byte) below,
                zero = out(reg_byte) zero,
                parity = out(reg_byte) parity,
                out("st(0)") _, out("st(1)") _, out("st(2)") _, out("st(3)") _,
                out("st(4)") _, out("st(5)") _, out("st(6)") _, out("st(7)") _,
                options(nostack, readonly),
            );
        }
        match (parity, below, zero) {
            (1, _, _) => None,
            (_, 1, _) => Some(Ordering::Less),
            (_, _, 1) => Some(Ordering::Equal),
            _ => Some(Ordering::Greater),
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod x87 {
    //! No x87 unit: `check` refuses every computation on `long double` before it gets here.

    use std::cmp::Ordering;

    use super::X87;

    pub(super) fn add(_: X87, _: X87) -> X87 {
        unreachable!("long double arithmetic is refused by check() on this target")
    }

    pub(super) fn mul(_: X87, _: X87) -> X87 {
        unreachable!("long double arithmetic is refused by check() on this target")
    }

    pub(super) fn compare(_: X87, _: X87) -> Option<Ordering> {
        unreachable!("long double comparison is refused by check() on this target")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use PredefinedOp::*;
    use Primitive as P;

    /// Packs values into native-endian bytes.
    fn enc<T: Elem>(v: &[T]) -> Vec<u8> {
        let mut b = vec![0; v.len() * T::SIZE];
        for (x, c) in v.iter().zip(b.chunks_exact_mut(T::SIZE)) {
            x.store(c);
        }
        b
    }

    fn dec<T: Elem>(b: &[u8]) -> Vec<T> {
        b.chunks_exact(T::SIZE).map(T::load).collect()
    }

    /// Runs `apply` on copies of the buffers placed at odd addresses.
    fn apply_unaligned(op: PredefinedOp, t: ElemType, src: &[u8], dst: &[u8]) -> Vec<u8> {
        let mut s = vec![0xa5; src.len() + 3];
        let mut d = vec![0x5a; dst.len() + 5];
        s[3..].copy_from_slice(src);
        d[1..1 + dst.len()].copy_from_slice(dst);
        apply(op, t, &s[3..], &mut d[1..1 + dst.len()]).unwrap();
        assert!(
            d[1 + dst.len()..].iter().all(|&x| x == 0x5a),
            "wrote past the buffer"
        );
        assert_eq!(d[0], 0x5a, "wrote before the buffer");
        d[1..1 + dst.len()].to_vec()
    }

    /// `dst = src op dst` on a primitive type, values in and out.
    fn run<T: Elem>(op: PredefinedOp, p: Primitive, src: &[T], dst: &[T]) -> Vec<T> {
        assert_eq!(T::SIZE, p.size());
        dec(&apply_unaligned(
            op,
            ElemType::Prim(p),
            &enc(src),
            &enc(dst),
        ))
    }

    fn prim(p: Primitive) -> ElemType {
        ElemType::Prim(p)
    }

    // ---- handles, names, check -------------------------------------------------------------

    #[test]
    fn handles_round_trip_and_match_mpich() {
        let expected = [
            (0x5800_0001, Max, "MPI_MAX"),
            (0x5800_0002, Min, "MPI_MIN"),
            (0x5800_0003, Sum, "MPI_SUM"),
            (0x5800_0004, Prod, "MPI_PROD"),
            (0x5800_0005, Land, "MPI_LAND"),
            (0x5800_0006, Band, "MPI_BAND"),
            (0x5800_0007, Lor, "MPI_LOR"),
            (0x5800_0008, Bor, "MPI_BOR"),
            (0x5800_0009, Lxor, "MPI_LXOR"),
            (0x5800_000a, Bxor, "MPI_BXOR"),
            (0x5800_000b, Minloc, "MPI_MINLOC"),
            (0x5800_000c, Maxloc, "MPI_MAXLOC"),
            (0x5800_000d, Replace, "MPI_REPLACE"),
            (0x5800_000e, NoOp, "MPI_NO_OP"),
        ];
        for (i, (h, op, name)) in expected.into_iter().enumerate() {
            assert_eq!(PredefinedOp::from_handle(h), Some(op));
            assert_eq!(op.handle(), h);
            assert_eq!(op.name(), name);
            assert_eq!(op.to_string(), name);
            assert_eq!(PredefinedOp::ALL[i], op);
        }
        for h in [
            0,
            0x1800_0000,
            0x5800_0000,
            0x5800_000f,
            -1,
            0x9800_0000u32 as i32,
        ] {
            assert_eq!(PredefinedOp::from_handle(h), None, "{h:#x}");
        }
    }

    fn class_of_test(p: Primitive) -> &'static str {
        match p {
            P::Float | P::Double | P::LongDouble => "float",
            P::CBool => "logical",
            P::CFloatComplex | P::CDoubleComplex | P::CLongDoubleComplex => "complex",
            P::Byte => "byte",
            P::WChar | P::Packed => "none",
            _ => "int",
        }
    }

    #[test]
    fn check_follows_the_standard_table() {
        for p in Primitive::ALL {
            let c = class_of_test(p);
            for op in PredefinedOp::ALL {
                let want = match op {
                    Max | Min => matches!(c, "int" | "float"),
                    Sum | Prod => matches!(c, "int" | "float" | "complex"),
                    Land | Lor | Lxor => matches!(c, "int" | "logical"),
                    Band | Bor | Bxor => matches!(c, "int" | "byte"),
                    Maxloc | Minloc => false,
                    Replace | NoOp => true,
                };
                let got = check(op, prim(p));
                if want {
                    if HAVE_X87 || !is_x87(p) || matches!(op, Replace | NoOp) {
                        assert_eq!(got, Ok(()), "{op} on {p:?}");
                    } else {
                        assert!(matches!(got, Err(OpError::Unsupported { .. })));
                    }
                } else {
                    assert_eq!(
                        got,
                        Err(OpError::Undefined { op, ty: prim(p) }),
                        "{op} {p:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn check_pairs() {
        let standard = [
            (P::Float, P::Int),
            (P::Double, P::Int),
            (P::Long, P::Int),
            (P::Short, P::Int),
            (P::LongDouble, P::Int),
            (P::Int, P::Int),
            (P::Float, P::Float),
            (P::Double, P::Double),
        ];
        for (v, i) in standard {
            let t = ElemType::Pair(v, i);
            for op in PredefinedOp::ALL {
                let got = check(op, t);
                match op {
                    Maxloc | Minloc | Replace | NoOp => assert_eq!(got, Ok(()), "{op} {t}"),
                    _ => assert_eq!(got, Err(OpError::Undefined { op, ty: t })),
                }
            }
        }
        for (v, i) in [
            (P::CFloatComplex, P::Int),
            (P::CBool, P::Int),
            (P::Int, P::Byte),
        ] {
            let t = ElemType::Pair(v, i);
            assert!(
                matches!(check(Maxloc, t), Err(OpError::Undefined { .. })),
                "{t}"
            );
            assert_eq!(check(Replace, t), Ok(()));
        }
    }

    #[test]
    fn errors_name_op_and_type() {
        let e = check(Sum, prim(P::CBool)).unwrap_err();
        assert_eq!(e.to_string(), "MPI_SUM is not defined for MPI_C_BOOL");
        let e = check(Maxloc, prim(P::Double)).unwrap_err();
        assert_eq!(e.to_string(), "MPI_MAXLOC is not defined for MPI_DOUBLE");
        let e = check(Band, ElemType::Pair(P::Double, P::Int)).unwrap_err();
        assert_eq!(e.to_string(), "MPI_BAND is not defined for MPI_DOUBLE_INT");
        let e = check(Maxloc, ElemType::Pair(P::CBool, P::Short)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "MPI_MAXLOC is not defined for pair (MPI_C_BOOL, MPI_SHORT)"
        );
        let mut d = [0u8; 8];
        let e = apply(Sum, prim(P::Int), &[0; 4], &mut d).unwrap_err();
        assert_eq!(
            e,
            OpError::LengthMismatch {
                op: Sum,
                src: 4,
                dst: 8
            }
        );
        assert!(e.to_string().contains("MPI_SUM"));
        let e = apply(Sum, prim(P::Int), &[1; 6], &mut [0; 6]).unwrap_err();
        assert_eq!(
            e,
            OpError::PartialElement {
                op: Sum,
                ty: prim(P::Int),
                len: 6
            }
        );
        assert!(e.to_string().contains("MPI_INT"));
        // A refused call leaves the destination alone.
        let mut d = [7u8; 4];
        assert!(apply(Land, prim(P::Float), &[0; 4], &mut d).is_err());
        assert_eq!(d, [7; 4]);
        let e = apply(
            Maxloc,
            ElemType::Pair(P::Double, P::Int),
            &[0; 13],
            &mut [0; 13],
        );
        assert!(matches!(e, Err(OpError::PartialElement { .. })));
    }

    #[test]
    fn elem_type_of_datatypes() {
        let int = Datatype::primitive(P::Int);
        assert_eq!(elem_type(&int), Some(prim(P::Int)));
        let c = Datatype::contiguous(5, &Datatype::primitive(P::Double)).unwrap();
        assert_eq!(elem_type(&c), Some(prim(P::Double)));
        let v = Datatype::vector(3, 2, 4, &int).unwrap();
        assert_eq!(elem_type(&v), Some(prim(P::Int)));
        let r = Datatype::resized(&v, -8, 100).unwrap();
        assert_eq!(elem_type(&r), Some(prim(P::Int)));
        let same = Datatype::create_struct(&[1, 2], &[0, 16], &[&int, &int]).unwrap();
        assert_eq!(elem_type(&same), Some(prim(P::Int)));
        let mixed = Datatype::create_struct(
            &[1, 1],
            &[0, 8],
            &[Datatype::primitive(P::Double), Datatype::primitive(P::Int)],
        )
        .unwrap();
        assert_eq!(elem_type(&mixed), None);
        assert_eq!(elem_type(&Datatype::pair(P::Double, P::Int)), None);
        assert_eq!(elem_type(&Datatype::contiguous(0, &int).unwrap()), None);
        assert_eq!(
            elem_type(&Datatype::primitive(P::CDoubleComplex)),
            Some(prim(P::CDoubleComplex))
        );
    }

    #[test]
    fn pair_sizes_are_packed() {
        assert_eq!(ElemType::Pair(P::Double, P::Int).size(), 12);
        assert_eq!(ElemType::Pair(P::Short, P::Int).size(), 6);
        assert_eq!(ElemType::Pair(P::LongDouble, P::Int).size(), 20);
        for (v, i) in [
            (P::Double, P::Int),
            (P::Short, P::Int),
            (P::LongDouble, P::Int),
        ] {
            assert_eq!(ElemType::Pair(v, i).size(), Datatype::pair(v, i).size());
        }
    }

    // ---- integers ------------------------------------------------------------------------

    /// SUM/PROD/MAX/MIN/bitwise/logical for one integer type against Rust's own operators.
    macro_rules! int_suite {
        ($name:ident, $t:ty, [$($p:expr),*]) => {
            #[test]
            fn $name() {
                let a: Vec<$t> = vec![0, 1, <$t>::MAX, <$t>::MIN, 5, 3, 0, 0x55 as $t, 7, 2];
                let b: Vec<$t> = vec![0, <$t>::MAX, 1, <$t>::MIN, 3, 5, 9, 0x0f as $t, 0, 2];
                for p in [$($p),*] {
                    let zip = |f: fn($t, $t) -> $t| -> Vec<$t> {
                        a.iter().zip(&b).map(|(&x, &y)| f(x, y)).collect()
                    };
                    assert_eq!(run(Sum, p, &a, &b), zip(|x, y| x.wrapping_add(y)), "{p:?}");
                    assert_eq!(run(Prod, p, &a, &b), zip(|x, y| x.wrapping_mul(y)), "{p:?}");
                    assert_eq!(run(Max, p, &a, &b), zip(|x, y| x.max(y)), "{p:?}");
                    assert_eq!(run(Min, p, &a, &b), zip(|x, y| x.min(y)), "{p:?}");
                    assert_eq!(run(Band, p, &a, &b), zip(|x, y| x & y), "{p:?}");
                    assert_eq!(run(Bor, p, &a, &b), zip(|x, y| x | y), "{p:?}");
                    assert_eq!(run(Bxor, p, &a, &b), zip(|x, y| x ^ y), "{p:?}");
                    assert_eq!(run(Land, p, &a, &b), zip(|x, y| (x != 0 && y != 0) as $t));
                    assert_eq!(run(Lor, p, &a, &b), zip(|x, y| (x != 0 || y != 0) as $t));
                    assert_eq!(run(Lxor, p, &a, &b), zip(|x, y| ((x != 0) != (y != 0)) as $t));
                    assert_eq!(run(Replace, p, &a, &b), a);
                    assert_eq!(run(NoOp, p, &a, &b), b);
                }
            }
        };
    }
    int_suite!(ops_on_i8, i8, [P::Char, P::SignedChar, P::Int8]);
    int_suite!(ops_on_u8, u8, [P::UnsignedChar, P::UInt8]);
    int_suite!(ops_on_i16, i16, [P::Short, P::Int16]);
    int_suite!(ops_on_u16, u16, [P::UnsignedShort, P::UInt16]);
    int_suite!(ops_on_i32, i32, [P::Int, P::Int32]);
    int_suite!(ops_on_u32, u32, [P::Unsigned, P::UInt32]);
    int_suite!(
        ops_on_i64,
        i64,
        [P::Long, P::LongLong, P::Int64, P::Aint, P::Offset, P::Count]
    );
    int_suite!(
        ops_on_u64,
        u64,
        [P::UnsignedLong, P::UnsignedLongLong, P::UInt64]
    );

    #[test]
    fn integers_wrap_and_compare_with_their_signedness() {
        assert_eq!(run::<i32>(Sum, P::Int, &[i32::MAX], &[1]), [i32::MIN]);
        assert_eq!(run::<i32>(Prod, P::Int, &[0x10000], &[0x10000]), [0]);
        assert_eq!(run::<u8>(Sum, P::UnsignedChar, &[200], &[100]), [44]);
        assert_eq!(run::<i64>(Prod, P::Long, &[i64::MIN], &[-1]), [i64::MIN]);
        // char is signed on x86-64 and MPICH reduces it as an integer.
        assert_eq!(run::<i8>(Max, P::Char, &[-1], &[1]), [1]);
        assert_eq!(run::<u8>(Max, P::UnsignedChar, &[255], &[1]), [255]);
        assert_eq!(run::<u64>(Min, P::UInt64, &[u64::MAX], &[0]), [0]);
        assert_eq!(run::<i64>(Min, P::Int64, &[i64::MIN], &[0]), [i64::MIN]);
    }

    #[test]
    fn byte_and_bool() {
        assert_eq!(
            run::<u8>(Band, P::Byte, &[0xf0, 0xff], &[0x3c, 0]),
            [0x30, 0]
        );
        assert_eq!(
            run::<u8>(Bor, P::Byte, &[0xf0, 0xff], &[0x3c, 0]),
            [0xfc, 0xff]
        );
        assert_eq!(
            run::<u8>(Bxor, P::Byte, &[0xf0, 0xff], &[0x3c, 0]),
            [0xcc, 0xff]
        );
        // Any nonzero byte is true; results are 0 or 1.
        let (a, b) = ([0u8, 0, 1, 2, 0xff], [0u8, 1, 0, 4, 1]);
        assert_eq!(run::<u8>(Land, P::CBool, &a, &b), [0, 0, 0, 1, 1]);
        assert_eq!(run::<u8>(Lor, P::CBool, &a, &b), [0, 1, 1, 1, 1]);
        assert_eq!(run::<u8>(Lxor, P::CBool, &a, &b), [0, 1, 1, 0, 0]);
        assert_eq!(run::<u8>(Replace, P::CBool, &a, &b), a);
    }

    #[test]
    fn opaque_types_only_replace() {
        for p in [P::WChar, P::Packed] {
            let (src, dst) = (vec![1u8; 2 * p.size()], vec![2u8; 2 * p.size()]);
            assert_eq!(apply_unaligned(Replace, prim(p), &src, &dst), src);
            assert_eq!(apply_unaligned(NoOp, prim(p), &src, &dst), dst);
            assert!(apply(Sum, prim(p), &src, &mut dst.clone()).is_err());
        }
    }

    #[test]
    fn empty_buffers_are_fine() {
        for op in PredefinedOp::ALL {
            let t = if matches!(op, Maxloc | Minloc) {
                ElemType::Pair(P::Double, P::Int)
            } else {
                prim(P::Int)
            };
            assert_eq!(apply(op, t, &[], &mut []), Ok(()));
        }
    }

    // ---- floating point ------------------------------------------------------------------

    macro_rules! float_suite {
        ($name:ident, $t:ty, $p:expr) => {
            #[test]
            fn $name() {
                let a: Vec<$t> = vec![1.5, -2.0, <$t>::MAX, 0.1, <$t>::INFINITY, -0.0, 3.0];
                let b: Vec<$t> = vec![2.25, 4.0, <$t>::MAX, 0.2, -1.0, 0.0, 3.0];
                let zip = |f: fn($t, $t) -> $t| -> Vec<$t> {
                    a.iter().zip(&b).map(|(&x, &y)| f(x, y)).collect()
                };
                let bits = |v: Vec<$t>| v.into_iter().map(<$t>::to_bits).collect::<Vec<_>>();
                assert_eq!(bits(run(Sum, $p, &a, &b)), bits(zip(|x, y| x + y)));
                assert_eq!(bits(run(Prod, $p, &a, &b)), bits(zip(|x, y| x * y)));
                assert_eq!(
                    bits(run(Max, $p, &a, &b)),
                    bits(zip(|x, y| if x > y { x } else { y }))
                );
                assert_eq!(
                    bits(run(Min, $p, &a, &b)),
                    bits(zip(|x, y| if x < y { x } else { y }))
                );
                assert_eq!(run(Sum, $p, &[<$t>::MAX], &[<$t>::MAX]), [<$t>::INFINITY]);
                // MAX(+0, -0) and MIN keep the destination's zero.
                assert!(run::<$t>(Max, $p, &[0.0], &[-0.0])[0].is_sign_negative());
                assert!(run::<$t>(Min, $p, &[-0.0], &[0.0])[0].is_sign_positive());
                // A NaN on either side keeps the destination element.
                let nan = <$t>::NAN;
                assert!(run::<$t>(Max, $p, &[1.0], &[nan])[0].is_nan());
                assert_eq!(run::<$t>(Max, $p, &[nan], &[1.0]), [1.0]);
                assert!(run::<$t>(Min, $p, &[1.0], &[nan])[0].is_nan());
                assert_eq!(run::<$t>(Min, $p, &[nan], &[1.0]), [1.0]);
                assert!(run::<$t>(Sum, $p, &[nan], &[1.0])[0].is_nan());
                for op in [Land, Lor, Lxor, Band, Bor, Bxor, Maxloc, Minloc] {
                    assert!(apply(op, prim($p), &enc(&a), &mut enc(&b)).is_err(), "{op}");
                }
            }
        };
    }
    float_suite!(ops_on_float, f32, P::Float);
    float_suite!(ops_on_double, f64, P::Double);

    // ---- complex -------------------------------------------------------------------------

    macro_rules! complex_suite {
        ($name:ident, $t:ty, $p:expr) => {
            #[test]
            fn $name() {
                let c = |re: $t, im: $t| Cx { re, im };
                let parts =
                    |v: Vec<Cx<$t>>| v.into_iter().map(|z| (z.re, z.im)).collect::<Vec<_>>();
                let a = [c(1.0, 2.0), c(-0.5, 0.0), c(0.0, 1.0)];
                let b = [c(3.0, 4.0), c(2.0, -8.0), c(0.0, 1.0)];
                assert_eq!(
                    parts(run(Sum, $p, &a, &b)),
                    [(4.0, 6.0), (1.5, -8.0), (0.0, 2.0)]
                );
                assert_eq!(
                    parts(run(Prod, $p, &a, &b)),
                    [(-5.0, 10.0), (-1.0, 4.0), (-1.0, 0.0)]
                );
                // Annex G: an infinite operand times a finite nonzero one stays infinite even
                // where the schoolbook formula gives NaN + NaN i.
                let inf = <$t>::INFINITY;
                let z = run(Prod, $p, &[c(inf, inf)], &[c(1.0, 0.0)])[0];
                assert_eq!((z.re, z.im), (inf, inf));
                let z = run(Prod, $p, &[c(1.0, 0.0)], &[c(inf, <$t>::NAN)])[0];
                assert!(
                    z.re.is_infinite() || z.im.is_infinite(),
                    "{} {}",
                    z.re,
                    z.im
                );
                // Overflowing products become infinite too.
                let m = <$t>::MAX;
                let z = run(Prod, $p, &[c(m, m)], &[c(m, m)])[0];
                assert!(z.im.is_infinite() && z.im > 0.0);
                // A plain NaN stays NaN.
                let z = run(Prod, $p, &[c(<$t>::NAN, 0.0)], &[c(1.0, 0.0)])[0];
                assert!(z.re.is_nan());
                for op in [Max, Min, Land, Band, Maxloc] {
                    assert!(check(op, prim($p)).is_err());
                }
            }
        };
    }
    complex_suite!(ops_on_float_complex, f32, P::CFloatComplex);
    complex_suite!(ops_on_double_complex, f64, P::CDoubleComplex);

    // ---- MAXLOC / MINLOC -----------------------------------------------------------------

    fn enc_pairs<V: Elem, I: Elem>(v: &[(V, I)]) -> Vec<u8> {
        let mut out = Vec::new();
        for &(x, i) in v {
            out.extend(enc(&[x]));
            out.extend(enc(&[i]));
        }
        out
    }

    fn dec_pairs<V: Elem, I: Elem>(b: &[u8]) -> Vec<(V, I)> {
        b.chunks_exact(V::SIZE + I::SIZE)
            .map(|c| (V::load(&c[..V::SIZE]), I::load(&c[V::SIZE..])))
            .collect()
    }

    fn run_pairs<V: Elem, I: Elem>(
        op: PredefinedOp,
        v: Primitive,
        i: Primitive,
        src: &[(V, I)],
        dst: &[(V, I)],
    ) -> Vec<(V, I)> {
        let t = ElemType::Pair(v, i);
        dec_pairs(&apply_unaligned(op, t, &enc_pairs(src), &enc_pairs(dst)))
    }

    #[test]
    fn maxloc_minloc_double_int() {
        let src = [
            (1.0f64, 5i32),
            (3.0, 9),
            (2.0, 1),
            (2.0, 8),
            (f64::NAN, 0),
            (1.0, 1),
        ];
        let dst = [
            (2.0f64, 7i32),
            (3.0, 4),
            (2.0, 3),
            (2.0, 8),
            (1.0, 2),
            (f64::NAN, 0),
        ];
        let max = run_pairs(Maxloc, P::Double, P::Int, &src, &dst);
        let got: Vec<_> = max.iter().map(|&(v, i)| (v.to_bits(), i)).collect();
        let want = [(2.0, 7), (3.0, 4), (2.0, 1), (2.0, 8), (1.0, 2)];
        for (g, w) in got.iter().zip(want) {
            assert_eq!(*g, (f64::to_bits(w.0), w.1));
        }
        assert!(max[5].0.is_nan());
        let min = run_pairs(Minloc, P::Double, P::Int, &src, &dst);
        assert_eq!(
            &min[..5],
            &[(1.0, 5), (3.0, 4), (2.0, 1), (2.0, 8), (1.0, 2)]
        );
    }

    #[test]
    fn maxloc_ties_take_the_smaller_index_either_way() {
        for (a, b) in [((4, 3), (4, 9)), ((4, 9), (4, 3)), ((4, -2), (4, 3))] {
            let want = (4, a.1.min(b.1));
            assert_eq!(
                run_pairs::<i32, i32>(Maxloc, P::Int, P::Int, &[a], &[b]),
                [want]
            );
            assert_eq!(
                run_pairs::<i32, i32>(Minloc, P::Int, P::Int, &[a], &[b]),
                [want]
            );
        }
    }

    #[test]
    fn maxloc_on_every_standard_pair() {
        assert_eq!(
            run_pairs::<f32, i32>(
                Maxloc,
                P::Float,
                P::Int,
                &[(1.0, 1), (5.0, 2)],
                &[(2.0, 0), (5.0, 0)]
            ),
            [(2.0, 0), (5.0, 0)]
        );
        assert_eq!(
            run_pairs::<i64, i32>(
                Minloc,
                P::Long,
                P::Int,
                &[(-1, 4), (i64::MAX, 1)],
                &[(0, 0), (i64::MAX, 2)]
            ),
            [(-1, 4), (i64::MAX, 1)]
        );
        assert_eq!(
            run_pairs::<i16, i32>(
                Maxloc,
                P::Short,
                P::Int,
                &[(-1, 4), (7, 1)],
                &[(-2, 0), (7, 2)]
            ),
            [(-1, 4), (7, 1)]
        );
        assert_eq!(
            run_pairs::<f32, f32>(Maxloc, P::Float, P::Float, &[(1.0, 2.0)], &[(1.0, 3.0)]),
            [(1.0, 2.0)]
        );
        assert_eq!(
            run_pairs::<f64, f64>(Minloc, P::Double, P::Double, &[(0.5, 9.0)], &[(1.0, 3.0)]),
            [(0.5, 9.0)]
        );
    }

    // ---- long double ---------------------------------------------------------------------

    /// The x87 encoding of a normal or zero `f64` (exact).
    fn ld(x: f64) -> X87 {
        let bits = x.to_bits();
        let negative = bits >> 63 != 0;
        let exp = ((bits >> 52) & 0x7ff) as u16;
        let frac = bits & ((1 << 52) - 1);
        match exp {
            0 => {
                assert_eq!(frac, 0, "subnormals are not needed here");
                X87::from_parts(negative, 0, 0)
            }
            0x7ff => X87::from_parts(negative, 0x7fff, 1 << 63 | frac << 11),
            e => X87::from_parts(negative, e + (16383 - 1023), 1 << 63 | frac << 11),
        }
    }

    fn value_bytes(x: X87) -> [u8; 10] {
        arr(&x.0[..10])
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn long_double_arithmetic_is_extended_precision() {
        let t = prim(P::LongDouble);
        let one = ld(1.0);
        let tiny = X87::from_parts(false, 16383 - 63, 1 << 63); // 2^-63
        let one_plus_tiny = X87::from_parts(false, 16383, 1 << 63 | 1);
        // 1 + 2^-63 is exact in 64 bits of significand (a double would round it to 1).
        let out = apply_unaligned(Sum, t, &enc(&[tiny, ld(2.5)]), &enc(&[one, ld(0.25)]));
        let out: Vec<X87> = dec(&out);
        assert_eq!(value_bytes(out[0]), value_bytes(one_plus_tiny));
        assert_eq!(value_bytes(out[1]), value_bytes(ld(2.75)));
        // 1 + 2^-64 is a tie and rounds to even: 1.
        let half_tiny = X87::from_parts(false, 16383 - 64, 1 << 63);
        let out: Vec<X87> = dec(&apply_unaligned(Sum, t, &enc(&[half_tiny]), &enc(&[one])));
        assert_eq!(value_bytes(out[0]), value_bytes(one));
        let out: Vec<X87> = dec(&apply_unaligned(
            Prod,
            t,
            &enc(&[ld(-1.5)]),
            &enc(&[ld(4.0)]),
        ));
        assert_eq!(value_bytes(out[0]), value_bytes(ld(-6.0)));
        // (1 + 2^-63)^2 = 1 + 2^-62 + 2^-126 rounds to 1 + 2^-62.
        let sq: Vec<X87> = dec(&apply_unaligned(
            Prod,
            t,
            &enc(&[one_plus_tiny]),
            &enc(&[one_plus_tiny]),
        ));
        assert_eq!(
            value_bytes(sq[0]),
            value_bytes(X87::from_parts(false, 16383, 1 << 63 | 2))
        );
        // Max/Min, NaN keeps the destination.
        let nan = X87::from_parts(false, 0x7fff, 0xc000_0000_0000_0000);
        let src = enc(&[one_plus_tiny, ld(-3.0), nan, ld(2.0)]);
        let dst = enc(&[one, ld(-2.0), ld(5.0), nan]);
        let max: Vec<X87> = dec(&apply_unaligned(Max, t, &src, &dst));
        let min: Vec<X87> = dec(&apply_unaligned(Min, t, &src, &dst));
        assert_eq!(value_bytes(max[0]), value_bytes(one_plus_tiny));
        assert_eq!(value_bytes(max[1]), value_bytes(ld(-2.0)));
        assert_eq!(value_bytes(max[2]), value_bytes(ld(5.0)));
        assert!(max[3].is_nan());
        assert_eq!(value_bytes(min[0]), value_bytes(one));
        assert_eq!(value_bytes(min[1]), value_bytes(ld(-3.0)));
        assert_eq!(value_bytes(min[2]), value_bytes(ld(5.0)));
        assert!(min[3].is_nan());
        // Padding bytes of the destination stay.
        let mut d = enc(&[ld(1.0)]);
        d[10..].fill(0xee);
        apply(Sum, t, &enc(&[ld(1.0)]), &mut d).unwrap();
        assert_eq!(&d[10..], &[0xee; 6]);
        assert_eq!(value_bytes(X87::load(&d)), value_bytes(ld(2.0)));
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn long_double_agrees_with_double_on_doubles() {
        let xs = [
            0.0, -0.0, 1.0, -1.5, 1e300, -1e-300, 3.25, 1e-10, 7e22, -2.0,
        ];
        for &x in &xs {
            for &y in &xs {
                let (a, b) = (ld(x), ld(y));
                assert_eq!(a.c_gt(b), x > y, "{x} > {y}");
                assert_eq!(a.c_lt(b), x < y, "{x} < {y}");
                assert_eq!(a.c_eq(b), x == y, "{x} == {y}");
            }
        }
        assert_eq!(value_bytes(ld(3.0).add(ld(-1.0))), value_bytes(ld(2.0)));
        // 1e600 overflows a double but not the 15-bit exponent of extended precision.
        let big = ld(1e300).mul(ld(1e300));
        assert!(!big.is_inf() && !big.is_nan());
        assert_eq!(big.exponent(), 16383 + 1993); // 2^1993 <= 1e600 < 2^1994
        assert!(ld(0.0).sub(ld(0.0)).0[9] & X87::SIGN == 0);
        assert!(ld(-0.0).sub(ld(0.0)).0[9] & X87::SIGN != 0);
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn long_double_complex_and_pairs() {
        let t = prim(P::CLongDoubleComplex);
        let c = |re: f64, im: f64| Cx {
            re: ld(re),
            im: ld(im),
        };
        let src = enc(&[c(1.0, 2.0), c(0.5, -1.0)]);
        let dst = enc(&[c(3.0, 4.0), c(2.0, 2.0)]);
        let sum: Vec<Cx<X87>> = dec(&apply_unaligned(Sum, t, &src, &dst));
        let prod: Vec<Cx<X87>> = dec(&apply_unaligned(Prod, t, &src, &dst));
        let vb = |z: Cx<X87>| (value_bytes(z.re), value_bytes(z.im));
        assert_eq!(vb(sum[0]), vb(c(4.0, 6.0)));
        assert_eq!(vb(sum[1]), vb(c(2.5, 1.0)));
        assert_eq!(vb(prod[0]), vb(c(-5.0, 10.0)));
        assert_eq!(vb(prod[1]), vb(c(3.0, -1.0)));
        let inf = f64::INFINITY;
        let z: Vec<Cx<X87>> = dec(&apply_unaligned(
            Prod,
            t,
            &enc(&[c(inf, inf)]),
            &enc(&[c(1.0, 0.0)]),
        ));
        assert!(z[0].re.is_inf() && z[0].im.is_inf());

        // MPI_LONG_DOUBLE_INT: 20 bytes packed.
        let p = ElemType::Pair(P::LongDouble, P::Int);
        let pairs = |v: &[(f64, i32)]| {
            let mut out = Vec::new();
            for &(x, i) in v {
                out.extend_from_slice(&ld(x).0);
                out.extend_from_slice(&i.to_ne_bytes());
            }
            out
        };
        let out = apply_unaligned(
            Maxloc,
            p,
            &pairs(&[(1.0, 3), (2.0, 5), (-1.0, 0)]),
            &pairs(&[(1.0, 2), (1.0, 1), (0.0, 9)]),
        );
        assert_eq!(out, pairs(&[(1.0, 2), (2.0, 5), (0.0, 9)]));
        let out = apply_unaligned(
            Minloc,
            p,
            &pairs(&[(1.0, 3), (2.0, 5), (-1.0, 0)]),
            &pairs(&[(1.0, 2), (1.0, 1), (0.0, 9)]),
        );
        assert_eq!(out, pairs(&[(1.0, 2), (1.0, 1), (-1.0, 0)]));
    }

    #[cfg(not(target_arch = "x86_64"))]
    #[test]
    fn long_double_is_refused_off_x86_64() {
        for t in [
            prim(P::LongDouble),
            prim(P::CLongDoubleComplex),
            ElemType::Pair(P::LongDouble, P::Int),
        ] {
            let op = if matches!(t, ElemType::Pair(..)) {
                Maxloc
            } else {
                Sum
            };
            assert_eq!(check(op, t), Err(OpError::Unsupported { op, ty: t }));
            assert_eq!(check(Replace, t), Ok(()));
        }
    }

    // ---- properties ----------------------------------------------------------------------

    /// Element types and ops whose result must not depend on operand order: everything on
    /// integers, bytes and bools, and the pair ops on integer pairs.
    fn commutative_cases() -> Vec<(PredefinedOp, ElemType)> {
        let mut cases = Vec::new();
        for p in Primitive::ALL {
            if !matches!(class_of_test(p), "int" | "byte" | "logical") {
                continue;
            }
            for op in [Max, Min, Sum, Prod, Land, Band, Lor, Bor, Lxor, Bxor] {
                if check(op, prim(p)).is_ok() {
                    cases.push((op, prim(p)));
                }
            }
        }
        for t in [
            ElemType::Pair(P::Int, P::Int),
            ElemType::Pair(P::Long, P::Int),
            ElemType::Pair(P::Short, P::Int),
        ] {
            cases.push((Maxloc, t));
            cases.push((Minloc, t));
        }
        cases
    }

    proptest! {
        #[test]
        fn sum_i32_matches_a_fold(contribs in prop::collection::vec(prop::collection::vec(any::<i32>(), 7), 1..6), offset in 0usize..4) {
            let mut acc = vec![0u8; 7 * 4 + offset];
            acc[offset..].copy_from_slice(&enc(&contribs[0]));
            for c in &contribs[1..] {
                apply(Sum, prim(P::Int), &enc(c), &mut acc[offset..]).unwrap();
            }
            let want: Vec<i32> = (0..7)
                .map(|k| contribs.iter().fold(0i32, |s, c| s.wrapping_add(c[k])))
                .collect();
            prop_assert_eq!(dec::<i32>(&acc[offset..]), want);
        }

        #[test]
        fn integer_ops_commute(case in 0usize..1000, seed in prop::collection::vec(any::<u8>(), 0..160)) {
            let cases = commutative_cases();
            let (op, t) = cases[case % cases.len()];
            let n = seed.len() / 2 / t.size() * t.size();
            let (a, b) = (&seed[..n], &seed[n..2 * n]);
            let ab = apply_unaligned(op, t, a, b);
            let ba = apply_unaligned(op, t, b, a);
            prop_assert_eq!(ab, ba, "{} on {}", op, t);
        }

        #[test]
        fn float_ops_commute(a in prop::collection::vec(-1e6f64..1e6, 1..12), b in prop::collection::vec(-1e6f64..1e6, 12)) {
            let b = &b[..a.len()];
            for op in [Sum, Prod, Max, Min] {
                let (x, y) = (enc(&a), enc(b));
                prop_assert_eq!(dec::<f64>(&apply_unaligned(op, prim(P::Double), &x, &y)), dec::<f64>(&apply_unaligned(op, prim(P::Double), &y, &x)));
                let (af, bf): (Vec<f32>, Vec<f32>) = (a.iter().map(|&v| v as f32).collect(), b.iter().map(|&v| v as f32).collect());
                let (x, y) = (enc(&af), enc(&bf));
                prop_assert_eq!(dec::<f32>(&apply_unaligned(op, prim(P::Float), &x, &y)), dec::<f32>(&apply_unaligned(op, prim(P::Float), &y, &x)));
            }
            let za: Vec<Cx<f64>> = a.chunks(2).map(|c| Cx { re: c[0], im: *c.last().unwrap() }).collect();
            let zb: Vec<Cx<f64>> = b.chunks(2).map(|c| Cx { re: c[0], im: *c.last().unwrap() }).collect();
            for op in [Sum, Prod] {
                let (x, y) = (enc(&za), enc(&zb));
                prop_assert_eq!(apply_unaligned(op, prim(P::CDoubleComplex), &x, &y), apply_unaligned(op, prim(P::CDoubleComplex), &y, &x));
            }
            // Coarse values make ties common; `+ 0.0` turns -0 into +0 (equal values with
            // equal indices keep the destination's bytes).
            let pa: Vec<(f64, i32)> = a.iter().map(|&v| ((v / 1e5).round() + 0.0, v as i32 % 5)).collect();
            let pb: Vec<(f64, i32)> = b.iter().map(|&v| ((v / 1e5).round() + 0.0, v as i32 % 5)).collect();
            for op in [Maxloc, Minloc] {
                let t = ElemType::Pair(P::Double, P::Int);
                let (x, y) = (enc_pairs(&pa), enc_pairs(&pb));
                prop_assert_eq!(apply_unaligned(op, t, &x, &y), apply_unaligned(op, t, &y, &x));
            }
        }

        #[cfg(target_arch = "x86_64")]
        #[test]
        fn long_double_sum_of_doubles_rounds_like_double_when_exact(x in -1e15f64..1e15, y in -1e15f64..1e15) {
            // Integers below 2^53 add exactly in both formats.
            let (x, y) = (x.trunc(), y.trunc());
            prop_assert_eq!(value_bytes(ld(x).add(ld(y))), value_bytes(ld(x + y)));
            prop_assert_eq!(value_bytes(ld(x).add(ld(y))), value_bytes(ld(y).add(ld(x))));
            prop_assert_eq!(value_bytes(ld(x).mul(ld(y))), value_bytes(ld(y).mul(ld(x))));
        }
    }
}
