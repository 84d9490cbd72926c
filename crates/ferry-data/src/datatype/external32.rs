//! The "external32" data representation (MPI-4.0, section 13.5.2): every primitive big-endian,
//! with the sizes of the standard's table (`long` in 4 bytes, `long double` as an IEEE
//! binary128 in 16, `wchar_t` in 2; MPICH's `_Float16`, which the table lacks, as a big-endian
//! binary16 in 2; Fortran's `REAL(16)` and `COMPLEX(16)`, IEEE binary128 already, as one or two
//! big-endian binary128 values). Packing converts element by element, walking the type
//! map in type-map order; values that do not fit the smaller external size are refused.

use super::{Datatype, Layout, Primitive};

/// Why data could not be converted to or from external32.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConversionError {
    /// A native value has no external32 representation of the standard's size.
    #[error("a {0:?} value does not fit its external32 size")]
    OutOfRange(Primitive),
}

impl Primitive {
    /// Size of one element in external32.
    pub const fn external32_size(self) -> usize {
        use Primitive::*;
        match self {
            Long | UnsignedLong => 4,
            WChar => 2,
            other => other.size(),
        }
    }
}

impl Datatype {
    /// Bytes one copy takes in external32, if that fits a `usize`.
    pub fn external32_size(&self) -> Option<usize> {
        match &self.0.layout {
            Layout::Primitive(p) => Some(p.external32_size()),
            Layout::Vector { count, blocklen, child, .. } => {
                count.checked_mul(*blocklen)?.checked_mul(child.external32_size()?)
            }
            Layout::Indexed { blocks, child } => {
                let per = child.external32_size()?;
                blocks.iter().try_fold(0usize, |a, b| a.checked_add(b.len.checked_mul(per)?))
            }
            Layout::Struct { blocks } => blocks.iter().try_fold(0usize, |a, b| {
                a.checked_add(b.len.checked_mul(b.child.external32_size()?)?)
            }),
            Layout::Resized { child } => child.external32_size(),
        }
    }

    /// Packs `count` copies laid out from `base` into `out` in external32; returns the bytes
    /// written. `out` must hold `count * external32_size()` bytes.
    ///
    /// # Safety
    /// Every byte the type map of `count` copies covers must be readable at `base` plus its
    /// offset.
    pub unsafe fn pack_external32(
        &self,
        base: *const u8,
        count: usize,
        out: &mut [u8],
    ) -> Result<usize, ConversionError> {
        let mut pos = 0;
        self.each_element(0, count, &mut |offset, p| {
            let n = p.size();
            // SAFETY: the caller vouches for every byte of the type map.
            let native = unsafe { std::slice::from_raw_parts(base.wrapping_offset(offset), n) };
            let m = p.external32_size();
            to_external(p, native, &mut out[pos..pos + m])?;
            pos += m;
            Ok(())
        })?;
        Ok(pos)
    }

    /// Unpacks `count` copies from external32 bytes in `src` into the buffer at `base`;
    /// returns the bytes read. `src` must hold `count * external32_size()` bytes.
    ///
    /// # Safety
    /// Every byte the type map of `count` copies covers must be writable at `base` plus its
    /// offset.
    pub unsafe fn unpack_external32(
        &self,
        src: &[u8],
        base: *mut u8,
        count: usize,
    ) -> Result<usize, ConversionError> {
        let mut pos = 0;
        self.each_element(0, count, &mut |offset, p| {
            let m = p.external32_size();
            let mut native = [0u8; 32];
            from_external(p, &src[pos..pos + m], &mut native[..p.size()])?;
            // SAFETY: the caller vouches for every byte of the type map.
            unsafe {
                std::ptr::copy_nonoverlapping(native.as_ptr(), base.wrapping_offset(offset), p.size())
            };
            pos += m;
            Ok(())
        })?;
        Ok(pos)
    }

    /// Calls `f(offset, primitive)` for every element of `count` copies from `origin`, in
    /// type-map order.
    fn each_element(
        &self,
        origin: isize,
        count: usize,
        f: &mut dyn FnMut(isize, Primitive) -> Result<(), ConversionError>,
    ) -> Result<(), ConversionError> {
        let extent = self.extent();
        for i in 0..count {
            let at = origin.wrapping_add((i as isize).wrapping_mul(extent));
            match &self.0.layout {
                Layout::Primitive(p) => f(at, *p)?,
                Layout::Vector { count, blocklen, stride, child } => {
                    for b in 0..*count {
                        child.each_element(at.wrapping_add(b as isize * stride), *blocklen, f)?;
                    }
                }
                Layout::Indexed { blocks, child } => {
                    for b in blocks.iter() {
                        child.each_element(at.wrapping_add(b.displ), b.len, f)?;
                    }
                }
                Layout::Struct { blocks } => {
                    for b in blocks.iter() {
                        b.child.each_element(at.wrapping_add(b.displ), b.len, f)?;
                    }
                }
                Layout::Resized { child } => child.each_element(at, 1, f)?,
            }
        }
        Ok(())
    }
}

/// Size of the parts converted on their own: the real and imaginary halves of a complex.
fn component(p: Primitive) -> usize {
    use Primitive::*;
    match p {
        CFloatComplex | CDoubleComplex | CLongDoubleComplex | Float128Complex => p.size() / 2,
        _ => p.size(),
    }
}

fn is_long_double(p: Primitive) -> bool {
    matches!(p, Primitive::LongDouble | Primitive::CLongDoubleComplex)
}

fn to_external(p: Primitive, native: &[u8], out: &mut [u8]) -> Result<(), ConversionError> {
    use Primitive::*;
    let word = |b: &[u8]| u64::from_le_bytes(b[..8].try_into().expect("8 bytes"));
    match p {
        Long => {
            let v = i32::try_from(word(native) as i64).map_err(|_| ConversionError::OutOfRange(p))?;
            out.copy_from_slice(&v.to_be_bytes());
        }
        UnsignedLong => {
            let v = u32::try_from(word(native)).map_err(|_| ConversionError::OutOfRange(p))?;
            out.copy_from_slice(&v.to_be_bytes());
        }
        WChar => {
            let w = i32::from_le_bytes(native[..4].try_into().expect("4 bytes"));
            let v = u16::try_from(w).map_err(|_| ConversionError::OutOfRange(p))?;
            out.copy_from_slice(&v.to_be_bytes());
        }
        _ if is_long_double(p) => {
            for (n, o) in native.chunks(16).zip(out.chunks_mut(16)) {
                o.copy_from_slice(&x87_to_binary128(n).to_be_bytes());
            }
        }
        _ => {
            let c = component(p);
            for (n, o) in native.chunks(c).zip(out.chunks_mut(c)) {
                o.iter_mut().zip(n.iter().rev()).for_each(|(o, n)| *o = *n);
            }
        }
    }
    Ok(())
}

fn from_external(p: Primitive, ext: &[u8], native: &mut [u8]) -> Result<(), ConversionError> {
    use Primitive::*;
    match p {
        Long => {
            let v = i32::from_be_bytes(ext.try_into().expect("4 bytes")) as i64;
            native.copy_from_slice(&v.to_le_bytes());
        }
        UnsignedLong => {
            let v = u32::from_be_bytes(ext.try_into().expect("4 bytes")) as u64;
            native.copy_from_slice(&v.to_le_bytes());
        }
        WChar => {
            let v = u16::from_be_bytes(ext.try_into().expect("2 bytes")) as i32;
            native.copy_from_slice(&v.to_le_bytes());
        }
        _ if is_long_double(p) => {
            for (e, n) in ext.chunks(16).zip(native.chunks_mut(16)) {
                let q = u128::from_be_bytes(e.try_into().expect("16 bytes"));
                n.copy_from_slice(&binary128_to_x87(q));
            }
        }
        _ => {
            let c = component(p);
            for (e, n) in ext.chunks(c).zip(native.chunks_mut(c)) {
                n.iter_mut().zip(e.iter().rev()).for_each(|(n, e)| *n = *e);
            }
        }
    }
    Ok(())
}

/// An x87 extended value (64-bit significand with an explicit integer bit, then sign and
/// 15-bit exponent, little-endian in 16 bytes) as an IEEE binary128 (same exponent bias).
fn x87_to_binary128(n: &[u8]) -> u128 {
    let mantissa = u64::from_le_bytes(n[..8].try_into().expect("8 bytes"));
    let sign_exp = u16::from_le_bytes(n[8..10].try_into().expect("2 bytes"));
    let fraction = ((mantissa & (u64::MAX >> 1)) as u128) << 49;
    ((sign_exp as u128) << 112) | fraction
}

/// The inverse of [`x87_to_binary128`]; the 49 lowest fraction bits are rounded off
/// (truncated) as the x87 format has no room for them.
fn binary128_to_x87(q: u128) -> [u8; 16] {
    let sign_exp = (q >> 112) as u16;
    let integer_bit = if sign_exp & 0x7fff != 0 { 1u64 << 63 } else { 0 };
    let mantissa = ((q >> 49) as u64 & (u64::MAX >> 1)) | integer_bit;
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&mantissa.to_le_bytes());
    out[8..10].copy_from_slice(&sign_exp.to_le_bytes());
    out
}
