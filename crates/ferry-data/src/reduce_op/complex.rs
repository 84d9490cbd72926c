//! Complex SUM and PROD over packed `{ re; im; }` elements, multiplication as C's `_Complex`
//! does it (Annex G of the C standard). Generic over the real type, `long double` included.

use super::element::{each, Elem, Num1};
use super::PredefinedOp;

/// What complex multiplication needs of a real type beyond [`Num1`].
pub(super) trait Real: Num1 {
    fn sub(self, o: Self) -> Self;
    fn is_nan(self) -> bool;
    fn is_inf(self) -> bool;
    /// `copysign(one ? 1 : 0, sign_of)`.
    fn signed(one: bool, sign_of: Self) -> Self;
    fn inf() -> Self;
}

/// A complex number, packed as `{ re; im; }`.
#[derive(Clone, Copy)]
pub(super) struct Cx<T> {
    pub(super) re: T,
    pub(super) im: T,
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

pub(super) fn complex<T: Real>(op: PredefinedOp, src: &[u8], dst: &mut [u8]) {
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
