//! The predefined C datatypes of the MPI standard, the leaves of every type map, with the
//! sizes and alignments the C compiler gives them.

/// A predefined C datatype of the MPI standard: one element of a basic C type.
///
/// Sizes and alignments are those of x86_64 Linux (LP64, 16-byte `long double`, 4-byte
/// `wchar_t`). The pair types of MINLOC/MAXLOC are not primitives; see
/// [`Datatype::pair`](super::Datatype::pair).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Primitive {
    /// `char` (`MPI_CHAR`)
    Char,
    /// `signed char` (`MPI_SIGNED_CHAR`)
    SignedChar,
    /// `unsigned char` (`MPI_UNSIGNED_CHAR`)
    UnsignedChar,
    /// an uninterpreted byte (`MPI_BYTE`)
    Byte,
    /// `wchar_t` (`MPI_WCHAR`)
    WChar,
    /// `short` (`MPI_SHORT`)
    Short,
    /// `unsigned short` (`MPI_UNSIGNED_SHORT`)
    UnsignedShort,
    /// `int` (`MPI_INT`)
    Int,
    /// `unsigned` (`MPI_UNSIGNED`)
    Unsigned,
    /// `long` (`MPI_LONG`)
    Long,
    /// `unsigned long` (`MPI_UNSIGNED_LONG`)
    UnsignedLong,
    /// `long long` (`MPI_LONG_LONG_INT`, `MPI_LONG_LONG`)
    LongLong,
    /// `unsigned long long` (`MPI_UNSIGNED_LONG_LONG`)
    UnsignedLongLong,
    /// `float` (`MPI_FLOAT`)
    Float,
    /// `double` (`MPI_DOUBLE`)
    Double,
    /// `long double` (`MPI_LONG_DOUBLE`): x87 extended precision in 16 bytes
    LongDouble,
    /// a byte of packed data (`MPI_PACKED`)
    Packed,
    /// `int8_t` (`MPI_INT8_T`)
    Int8,
    /// `int16_t` (`MPI_INT16_T`)
    Int16,
    /// `int32_t` (`MPI_INT32_T`)
    Int32,
    /// `int64_t` (`MPI_INT64_T`)
    Int64,
    /// `uint8_t` (`MPI_UINT8_T`)
    UInt8,
    /// `uint16_t` (`MPI_UINT16_T`)
    UInt16,
    /// `uint32_t` (`MPI_UINT32_T`)
    UInt32,
    /// `uint64_t` (`MPI_UINT64_T`)
    UInt64,
    /// `_Bool` (`MPI_C_BOOL`)
    CBool,
    /// `MPI_Aint` (`MPI_AINT`)
    Aint,
    /// `MPI_Offset` (`MPI_OFFSET`)
    Offset,
    /// `MPI_Count` (`MPI_COUNT`)
    Count,
    /// `float _Complex` (`MPI_C_FLOAT_COMPLEX`, `MPI_C_COMPLEX`)
    CFloatComplex,
    /// `double _Complex` (`MPI_C_DOUBLE_COMPLEX`)
    CDoubleComplex,
    /// `long double _Complex` (`MPI_C_LONG_DOUBLE_COMPLEX`)
    CLongDoubleComplex,
    /// Fortran `LOGICAL` (`MPI_LOGICAL`): 4 bytes, `.TRUE.` is 1 and `.FALSE.` 0 as gfortran
    /// stores them.
    Logical,
    /// `_Float16`, IEEE binary16 (`MPIX_C_FLOAT16`, MPICH's extension)
    Float16,
    /// Fortran `REAL(16)` (`MPI_REAL16`): IEEE binary128 in 16 bytes, gfortran's quad
    /// precision and C's `__float128` (not `long double`, which is x87 extended).
    Float128,
    /// Fortran `COMPLEX(16)` (`MPI_COMPLEX32`): two binary128 values, real part first.
    Float128Complex,
}

impl Primitive {
    /// Every primitive, in declaration order.
    pub const ALL: [Primitive; 36] = [
        Primitive::Char,
        Primitive::SignedChar,
        Primitive::UnsignedChar,
        Primitive::Byte,
        Primitive::WChar,
        Primitive::Short,
        Primitive::UnsignedShort,
        Primitive::Int,
        Primitive::Unsigned,
        Primitive::Long,
        Primitive::UnsignedLong,
        Primitive::LongLong,
        Primitive::UnsignedLongLong,
        Primitive::Float,
        Primitive::Double,
        Primitive::LongDouble,
        Primitive::Packed,
        Primitive::Int8,
        Primitive::Int16,
        Primitive::Int32,
        Primitive::Int64,
        Primitive::UInt8,
        Primitive::UInt16,
        Primitive::UInt32,
        Primitive::UInt64,
        Primitive::CBool,
        Primitive::Aint,
        Primitive::Offset,
        Primitive::Count,
        Primitive::CFloatComplex,
        Primitive::CDoubleComplex,
        Primitive::CLongDoubleComplex,
        Primitive::Logical,
        Primitive::Float16,
        Primitive::Float128,
        Primitive::Float128Complex,
    ];

    /// Size of one element in bytes.
    /// Whether the type's values are compared by their bits alone: integers, logicals,
    /// characters, bytes and the multi-language types, as `MPI_Compare_and_swap` requires
    /// (floating and complex values are not: `0.0 == -0.0`, and `MPI_PACKED` is no value).
    pub const fn compares_by_bits(self) -> bool {
        use Primitive::*;
        !matches!(self, Float | Double | LongDouble | Float16 | Float128 | CFloatComplex | CDoubleComplex | CLongDoubleComplex | Float128Complex | Packed)
    }

    pub const fn size(self) -> usize {
        use Primitive::*;
        match self {
            Char | SignedChar | UnsignedChar | Byte | Packed | Int8 | UInt8 | CBool => 1,
            Short | UnsignedShort | Int16 | UInt16 | Float16 => 2,
            WChar | Int | Unsigned | Float | Int32 | UInt32 | Logical => 4,
            Long | UnsignedLong | LongLong | UnsignedLongLong | Double | Int64 | UInt64 | Aint
            | Offset | Count | CFloatComplex => 8,
            LongDouble | CDoubleComplex | Float128 => 16,
            CLongDoubleComplex | Float128Complex => 32,
        }
    }

    /// Alignment the C compiler gives the type; pads the extent of struct types.
    pub const fn align(self) -> usize {
        use Primitive::*;
        match self {
            CFloatComplex => 4,
            CDoubleComplex => 8,
            CLongDoubleComplex | Float128Complex => 16,
            other => other.size(),
        }
    }
}
