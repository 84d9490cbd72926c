//! `_Float16` (`MPIX_C_FLOAT16`): IEEE binary16 elements. Arithmetic widens both operands to
//! `f32` (exactly: every binary16 value is a binary32 value), computes there and rounds the
//! result back to nearest, ties to even. The single rounding of `f32` cannot spoil the second:
//! 24 significand bits are at least twice binary16's 11 plus 2, so a sum or product rounded
//! twice equals the one correctly rounded in binary16, subnormals and overflow included. This
//! is also what C does for `_Float16` arithmetic on x86-64.

use super::element::{arr, Elem, Num1};

/// A binary16 value as its bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct F16(pub(super) u16);

impl F16 {
    const SIGN: u16 = 0x8000;
    const INFINITY: u16 = 0x7c00;
    /// The most significant fraction bit: set in a quiet NaN.
    const QUIET: u16 = 0x0200;

    /// The value as an `f32`, exactly; a NaN keeps its sign and payload.
    pub(super) fn to_f32(self) -> f32 {
        let h = u32::from(self.0);
        let sign = (h & 0x8000) << 16;
        let exponent = (h >> 10) & 0x1f;
        let fraction = h & 0x3ff;
        let magnitude = match exponent {
            // Zero or subnormal: fraction * 2^-24, exact in f32 (normal there).
            0 => (fraction as f32 * f32::from_bits(0x3380_0000)).to_bits(),
            0x1f => 0x7f80_0000 | fraction << 13,
            // Rebias 15 -> 127.
            _ => (exponent + 112) << 23 | fraction << 13,
        };
        f32::from_bits(sign | magnitude)
    }

    /// `x` rounded to the nearest binary16 value, ties to even; beyond the largest finite
    /// value (65504) by half a unit or more, an infinity. A NaN stays a NaN of the same sign,
    /// quiet, with the top 9 bits of its payload.
    pub(super) fn from_f32(x: f32) -> F16 {
        let b = x.to_bits();
        let sign = (b >> 16) as u16 & F16::SIGN;
        let exponent = ((b >> 23) & 0xff) as i32;
        let fraction = b & 0x7f_ffff;
        if exponent == 0xff {
            let nan = if fraction == 0 {
                0
            } else {
                F16::QUIET | (fraction >> 13) as u16
            };
            return F16(sign | F16::INFINITY | nan);
        }
        // The binary16 biased exponent of x's leading bit.
        let e = exponent - 127 + 15;
        let magnitude = if e >= 0x1f {
            // 2^16 or more: past the largest finite value plus half a unit (65520).
            u32::from(F16::INFINITY)
        } else if e >= 1 {
            // Normal: exponent and fraction side by side, so a round-up that carries out of the
            // fraction bumps the exponent (up to infinity).
            round_off(((e as u32) << 23) | fraction, 13)
        } else if e >= -10 {
            // Subnormal (or rounds up to the smallest normal): the significand with its
            // leading bit, in units of 2^-24.
            round_off(fraction | 0x80_0000, (14 - e) as u32)
        } else {
            // Below 2^-25, under half the smallest subnormal: zero.
            0
        };
        F16(sign | magnitude as u16)
    }
}

/// `m >> s` rounded to nearest, ties to even (`1 <= s <= 31`).
fn round_off(m: u32, s: u32) -> u32 {
    let q = m >> s;
    let rest = m & ((1 << s) - 1);
    let half = 1 << (s - 1);
    if rest > half || (rest == half && q & 1 == 1) {
        q + 1
    } else {
        q
    }
}

impl Elem for F16 {
    const SIZE: usize = 2;
    #[inline(always)]
    fn load(b: &[u8]) -> Self {
        F16(u16::from_ne_bytes(arr(b)))
    }
    #[inline(always)]
    fn store(self, b: &mut [u8]) {
        b.copy_from_slice(&self.0.to_ne_bytes());
    }
}

/// MAX and MIN pick one operand and so keep its bits (a NaN payload, the sign of a zero)
/// untouched; only SUM and PROD round.
impl Num1 for F16 {
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        F16::from_f32(self.to_f32() + o.to_f32())
    }
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        F16::from_f32(self.to_f32() * o.to_f32())
    }
    #[inline(always)]
    fn c_gt(self, o: Self) -> bool {
        self.to_f32() > o.to_f32()
    }
    #[inline(always)]
    fn c_lt(self, o: Self) -> bool {
        self.to_f32() < o.to_f32()
    }
    #[inline(always)]
    fn c_eq(self, o: Self) -> bool {
        self.to_f32() == o.to_f32()
    }
}
