//! `long double`: the x87 80-bit extended format in 16 bytes. Arithmetic and comparisons run
//! on the x87 unit itself, so results are bit for bit those of C; off x86-64, `check` refuses
//! them before they get here.

use super::complex::Real;
use super::element::{arr, Elem, Num1};

/// An x87 extended-precision number as stored in 16 bytes: 64-bit significand (explicit
/// integer bit) in bytes 0..8, sign and 15-bit exponent in bytes 8..10, 6 bytes of padding.
#[derive(Clone, Copy)]
pub(super) struct X87(pub(super) [u8; 16]);

impl X87 {
    pub(super) const SIGN: u8 = 0x80;

    pub(super) fn exponent(self) -> u16 {
        u16::from_le_bytes([self.0[8], self.0[9]]) & 0x7fff
    }

    fn significand(self) -> u64 {
        u64::from_le_bytes(arr(&self.0[..8]))
    }

    pub(super) fn from_parts(negative: bool, exponent: u16, significand: u64) -> X87 {
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
