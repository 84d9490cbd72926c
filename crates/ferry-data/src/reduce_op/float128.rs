//! IEEE binary128 (`MPI_REAL16`, `MPI_COMPLEX32`; Fortran's `REAL(16)`, C's `__float128`),
//! computed in software on the bits, as no machine Ferry runs on has binary128 hardware.
//! Comparisons are exact; SUM and PROD compute the exact result (the sum on aligned
//! significands with a sticky bit for what alignment shifts out, the product as a 226-bit
//! integer) and round it once to nearest, ties to even, subnormals and overflow included: what
//! C's `__float128` arithmetic (gcc's soft-fp) gives. A NaN result is quiet; which NaN is not
//! specified.

use super::complex::Real;
use super::element::{arr, Elem, Num1};

/// A binary128 value as its bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct F128(pub(super) u128);

const SIGN: u128 = 1 << 127;
const INFINITY: u128 = 0x7fff << 112;
const FRACTION: u128 = (1 << 112) - 1;
const HIDDEN: u128 = 1 << 112;
/// The most significant fraction bit: set in a quiet NaN.
const QUIET: u128 = 1 << 111;
/// The NaN of an invalid operation (inf - inf, 0 * inf), as x86's default NaN.
const DEFAULT_NAN: u128 = SIGN | INFINITY | QUIET;
/// Extra low bits kept below a significand while computing, for rounding.
const GUARD: u32 = 8;

impl F128 {
    fn is_nan(self) -> bool {
        self.0 & !SIGN > INFINITY
    }

    fn is_inf(self) -> bool {
        self.0 & !SIGN == INFINITY
    }

    fn is_zero(self) -> bool {
        self.0 & !SIGN == 0
    }

    fn sign(self) -> u128 {
        self.0 & SIGN
    }

    /// The value on a line where the order of integers is the order of the numbers: finite
    /// magnitudes and the infinity grow with their bit patterns, a sign negates, and both
    /// zeros land on 0 (so `-0.0 == +0.0`, as C compares). A magnitude is below 2^127, so
    /// it and its negation fit an `i128`.
    fn key(self) -> i128 {
        let magnitude = (self.0 & !SIGN) as i128;
        if self.0 & SIGN != 0 {
            -magnitude
        } else {
            magnitude
        }
    }

    /// C's `<`, `>`, `==`: false whenever a NaN takes part.
    fn ordered(self, o: F128) -> bool {
        !self.is_nan() && !o.is_nan()
    }

    /// Exponent (subnormals count as 1) and significand with the hidden bit, of a finite
    /// value: it is `significand * 2^(exponent - 16383 - 112)`.
    fn unpack(self) -> (i32, u128) {
        let exponent = ((self.0 >> 112) & 0x7fff) as i32;
        let fraction = self.0 & FRACTION;
        if exponent == 0 {
            (1, fraction)
        } else {
            (exponent, fraction | HIDDEN)
        }
    }

    /// A NaN operand, made quiet: the first one, as x86 propagates NaNs.
    fn propagate(self, o: F128) -> F128 {
        let nan = if self.is_nan() { self } else { o };
        F128(nan.0 | QUIET)
    }

    fn add(self, o: F128) -> F128 {
        if self.is_nan() || o.is_nan() {
            return self.propagate(o);
        }
        if self.is_inf() || o.is_inf() {
            if self.is_inf() && o.is_inf() && self.sign() != o.sign() {
                return F128(DEFAULT_NAN);
            }
            return if self.is_inf() { self } else { o };
        }
        if self.is_zero() && o.is_zero() {
            // Only -0 + -0 is -0 when rounding to nearest.
            return F128(self.0 & o.0);
        }
        if self.is_zero() || o.is_zero() {
            return if self.is_zero() { o } else { self };
        }
        let (big, small) = if self.0 & !SIGN >= o.0 & !SIGN {
            (self, o)
        } else {
            (o, self)
        };
        let ((eb, sb), (es, ss)) = (big.unpack(), small.unpack());
        let sb = sb << GUARD;
        let ss = shift_right_sticky(ss << GUARD, (eb - es) as u32);
        if big.sign() == small.sign() {
            round_pack(big.sign(), eb, sb + ss)
        } else if sb == ss {
            // Exact cancellation: +0 when rounding to nearest.
            F128(0)
        } else {
            // |big| >= |small|, so the difference is not negative.
            round_pack(big.sign(), eb, sb - ss)
        }
    }

    fn mul(self, o: F128) -> F128 {
        if self.is_nan() || o.is_nan() {
            return self.propagate(o);
        }
        let sign = self.sign() ^ o.sign();
        if self.is_inf() || o.is_inf() {
            if self.is_zero() || o.is_zero() {
                return F128(DEFAULT_NAN);
            }
            return F128(sign | INFINITY);
        }
        if self.is_zero() || o.is_zero() {
            return F128(sign);
        }
        let ((ea, sa), (eb, sb)) = (self.unpack(), o.unpack());
        let (hi, lo) = mul_wide(sa, sb);
        // The exact product hi:lo (up to 226 bits), narrowed to at most 126 bits with what
        // falls off kept as a sticky bit: still more than GUARD bits below the rounding point.
        let bits = if hi == 0 {
            128 - lo.leading_zeros()
        } else {
            256 - hi.leading_zeros()
        };
        let s = bits.saturating_sub(126);
        let narrow = if s == 0 {
            lo
        } else {
            let sticky = u128::from(lo & ((1 << s) - 1) != 0);
            (hi << (128 - s)) | (lo >> s) | sticky
        };
        // hi:lo * 2^(ea + eb - 2*16383 - 224) = narrow * 2^(e - 16383 - 112 - GUARD).
        round_pack(
            sign,
            ea + eb - 16383 - 112 + s as i32 + GUARD as i32,
            narrow,
        )
    }
}

/// `x >> n` with every bit shifted out ORed into the lowest bit.
fn shift_right_sticky(x: u128, n: u32) -> u128 {
    match n {
        0 => x,
        1..=127 => (x >> n) | u128::from(x & ((1 << n) - 1) != 0),
        _ => u128::from(x != 0),
    }
}

/// The full 256-bit product of two 113-bit significands, as (high, low) halves.
fn mul_wide(a: u128, b: u128) -> (u128, u128) {
    let (a1, a0) = (a >> 64, a & u128::from(u64::MAX));
    let (b1, b0) = (b >> 64, b & u128::from(u64::MAX));
    let (p00, p01, p10, p11) = (a0 * b0, a0 * b1, a1 * b0, a1 * b1);
    // Each partial product of 64-bit halves fits 128 bits; sum the middle column with carries.
    let (mid, carry_mid) = p01.overflowing_add(p10);
    let (lo, carry_lo) = p00.overflowing_add(mid << 64);
    let hi = p11 + (mid >> 64) + (u128::from(carry_mid) << 64) + u128::from(carry_lo);
    (hi, lo)
}

/// The binary128 nearest to `sig * 2^(e - 16383 - 112 - GUARD)` (`sig` nonzero, its lowest
/// bit possibly a sticky bit), ties to even; past the largest finite value, an infinity.
fn round_pack(sign: u128, mut e: i32, mut sig: u128) -> F128 {
    debug_assert!(sig != 0);
    // Leading bit to position 112 + GUARD.
    let lead = 127 - sig.leading_zeros() as i32;
    let target = 112 + GUARD as i32;
    if lead > target {
        sig = shift_right_sticky(sig, (lead - target) as u32);
    } else {
        sig <<= target - lead;
    }
    e += lead - target;
    if e >= 0x7fff {
        return F128(sign | INFINITY);
    }
    if e < 1 {
        // Subnormal: the significand moves down to the fixed exponent of the subnormals, then
        // rounds once there.
        sig = shift_right_sticky(sig, (1 - e).min(200) as u32);
        e = 1;
    }
    let rest = sig & ((1 << GUARD) - 1);
    let half = 1 << (GUARD - 1);
    sig >>= GUARD;
    if rest > half || (rest == half && sig & 1 == 1) {
        sig += 1;
    }
    // Adding the significand (hidden bit included) to the exponent field below it carries a
    // round-up past 2^113 into the exponent, and makes a subnormal that rounds up to 2^112 the
    // smallest normal.
    let bits = ((e as u128 - 1) << 112) + sig;
    if bits >= INFINITY {
        return F128(sign | INFINITY);
    }
    F128(sign | bits)
}

impl Elem for F128 {
    const SIZE: usize = 16;
    #[inline(always)]
    fn load(b: &[u8]) -> Self {
        F128(u128::from_ne_bytes(arr(b)))
    }
    #[inline(always)]
    fn store(self, b: &mut [u8]) {
        b.copy_from_slice(&self.0.to_ne_bytes());
    }
}

/// MAX and MIN pick one operand and so keep its bits (a NaN payload, the sign of a zero).
impl Num1 for F128 {
    fn add(self, o: Self) -> Self {
        F128::add(self, o)
    }
    fn mul(self, o: Self) -> Self {
        F128::mul(self, o)
    }
    fn c_gt(self, o: Self) -> bool {
        self.ordered(o) && self.key() > o.key()
    }
    fn c_lt(self, o: Self) -> bool {
        self.ordered(o) && self.key() < o.key()
    }
    fn c_eq(self, o: Self) -> bool {
        self.ordered(o) && self.key() == o.key()
    }
}

impl Real for F128 {
    fn sub(self, o: Self) -> Self {
        // x - y is x + (-y) exactly, NaNs aside (whose sign is not specified).
        F128::add(self, F128(o.0 ^ SIGN))
    }
    fn is_nan(self) -> bool {
        F128::is_nan(self)
    }
    fn is_inf(self) -> bool {
        F128::is_inf(self)
    }
    fn signed(one: bool, sign_of: Self) -> Self {
        let magnitude = if one { 0x3fff << 112 } else { 0 };
        F128(magnitude | sign_of.sign())
    }
    fn inf() -> Self {
        F128(INFINITY)
    }
}
