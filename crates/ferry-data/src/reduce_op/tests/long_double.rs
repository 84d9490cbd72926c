//! `long double` against known extended-precision results and against `double` where the
//! two must agree.

use super::super::complex::{Cx, Real};
use super::super::element::{arr, Num1};
use super::super::long_double::X87;
use super::*;
use proptest::prelude::*;

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

proptest! {
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
