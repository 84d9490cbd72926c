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
//! - `_Float16` (`MPIX_C_FLOAT16`, MPICH's extension) is floating point: `SUM` and `PROD`
//!   compute in `f32` and round once to the nearest binary16, ties to even (what C does for
//!   `_Float16`); `MAX` and `MIN` compare and keep one operand's bits.
//! - Fortran's `REAL(16)` and `COMPLEX(16)` (`MPI_REAL16`, `MPI_COMPLEX32`) are IEEE binary128,
//!   computed in software from the bits: comparisons are exact, `SUM` and `PROD` round the
//!   exact result once to nearest, ties to even (what C's `__float128` gives), and complex
//!   `PROD` is the formula above on those operations.
//!
//! `MAXLOC`/`MINLOC` follow the standard: the greater (smaller) value wins with its index; on
//! equal values the smaller index is kept. If the values do not compare (a NaN), the
//! destination pair is kept.
//!
//! Each call dispatches once on the operation and type, then runs a loop over fixed-size chunks
//! (`chunks_exact`) monomorphised for the element type.
//!
//! The kernels live one family to a file: `elementwise` (arithmetic, bitwise and logical
//! operations on primitives), `loc_pairs` (MAXLOC/MINLOC), `complex`, `long_double`,
//! `float16` and `float128`;
//! `element` has the machine types they share. This file holds the operations, the element
//! types, the table of what applies to what, and the dispatch.

mod complex;
mod element;
mod elementwise;
mod float128;
mod float16;
mod loc_pairs;
mod long_double;

use std::fmt;

use crate::datatype::{Datatype, Primitive};

use element::{num, with_num};
use elementwise::prim_kernel;
use loc_pairs::pair_index;

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
        Float16 => "MPIX_C_FLOAT16",
        Float128 => "MPI_REAL16",
        Float128Complex => "MPI_COMPLEX32",
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
        Logical => "MPI_LOGICAL",
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
        Float16 | Float | Double | LongDouble | Float128 => Class::Float,
        CBool | Logical => Class::Logical,
        CFloatComplex | CDoubleComplex | CLongDoubleComplex | Float128Complex => Class::Complex,
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

#[cfg(test)]
mod tests;
