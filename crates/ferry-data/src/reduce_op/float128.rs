//! IEEE binary128 (`MPI_REAL16`, Fortran's `REAL(16)`): MAX and MIN, compared exactly from the
//! bits. Ferry has no binary128 arithmetic yet, so [`check`](super::check) refuses SUM and PROD
//! on these types (and on `MPI_COMPLEX32`) before a kernel is chosen.

use std::cmp::Ordering;

use super::element::{arr, each, Elem};
use super::PredefinedOp;

/// A binary128 value as its bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct F128(pub(super) u128);

impl F128 {
    const SIGN: u128 = 1 << 127;
    const INFINITY: u128 = 0x7fff << 112;

    fn is_nan(self) -> bool {
        self.0 & !F128::SIGN > F128::INFINITY
    }

    /// The value on a line where the order of integers is the order of the numbers: finite
    /// magnitudes and the infinity grow with their bit patterns, a sign negates, and both
    /// zeros land on 0 (so `-0.0 == +0.0`, as C compares). A magnitude is below 2^127, so
    /// it and its negation fit an `i128`.
    fn key(self) -> i128 {
        let magnitude = (self.0 & !F128::SIGN) as i128;
        if self.0 & F128::SIGN != 0 {
            -magnitude
        } else {
            magnitude
        }
    }

    /// C's comparison: `None` when either side is a NaN.
    pub(super) fn compare(self, o: F128) -> Option<Ordering> {
        if self.is_nan() || o.is_nan() {
            return None;
        }
        Some(self.key().cmp(&o.key()))
    }
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

/// `dst[k] = src[k] op dst[k]` for MAX or MIN, as C's `a > b ? a : b` and `a < b ? a : b`
/// with `a` the source element: a NaN on either side, or two equal values (zeros of either
/// sign), keep the destination element's bits.
pub(super) fn max_min(op: PredefinedOp, src: &[u8], dst: &mut [u8]) {
    let wins = match op {
        PredefinedOp::Max => Ordering::Greater,
        PredefinedOp::Min => Ordering::Less,
        _ => unreachable!("binary128 has MAX and MIN only"),
    };
    each::<F128>(
        src,
        dst,
        |a, b| if a.compare(b) == Some(wins) { a } else { b },
    );
}
