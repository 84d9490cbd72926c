//! Binary128 (`MPI_REAL16`): MAX and MIN against an order known independently (values listed
//! in increasing order, and `f64` values widened exactly, whose order the hardware knows), the
//! NaN and signed-zero rules of C, and the refusal of arithmetic.

use super::super::float128::F128;
use super::*;
use proptest::prelude::*;

const SIGN: u128 = 1 << 127;

/// The binary128 encoding of a finite or infinite `f64`, exactly (every `f64` is a binary128
/// value): the exponent is rebiased from 1023 to 16383 and the fraction moved up 60 bits;
/// subnormals are normalised first.
fn widen(x: f64) -> u128 {
    let b = x.to_bits();
    let sign = u128::from(b >> 63) << 127;
    let exponent = (b >> 52) & 0x7ff;
    let fraction = u128::from(b & ((1 << 52) - 1));
    let magnitude = match exponent {
        0x7ff => {
            assert_eq!(fraction, 0, "widen takes no NaN");
            0x7fff << 112
        }
        0 if fraction == 0 => 0,
        0 => {
            // fraction * 2^-1074: its leading bit becomes the implicit one.
            let lead = 127 - fraction.leading_zeros(); // bit index of the leading one
            let e = 16383 - 1074 + lead as u128;
            (e << 112) | ((fraction << (112 - lead)) & ((1 << 112) - 1))
        }
        _ => ((u128::from(exponent) + 16383 - 1023) << 112) | fraction << 60,
    };
    sign | magnitude
}

/// Binary128 encodings in increasing order of value; adjacent ones differ.
fn ladder() -> Vec<u128> {
    let one = 0x3fff_u128 << 112;
    let positive = [
        1,                                       // smallest subnormal
        (1 << 112) - 1,                          // largest subnormal
        1 << 112,                                // smallest normal
        one,                                     // 1
        one + 1,                                 // 1 + 2^-112: beyond any f64
        0x3fff_8000_u128 << 96,                  // 1.5
        0x4000_u128 << 112,                      // 2
        (0x7ffe_u128 << 112) | ((1 << 112) - 1), // largest finite
        0x7fff_u128 << 112,                      // infinity
    ];
    let mut v: Vec<u128> = positive.iter().rev().map(|p| p | SIGN).collect();
    v.push(0);
    v.extend(positive);
    v
}

fn max_min(op: PredefinedOp, src: u128, dst: u128) -> u128 {
    run(op, P::Float128, &[F128(src)], &[F128(dst)])[0].0
}

#[test]
fn max_and_min_follow_the_order_of_values() {
    let v = ladder();
    for (i, &a) in v.iter().enumerate() {
        for (j, &b) in v.iter().enumerate() {
            let (hi, lo) = if i >= j { (a, b) } else { (b, a) };
            assert_eq!(max_min(Max, a, b), hi, "MAX({a:#x}, {b:#x})");
            assert_eq!(max_min(Min, a, b), lo, "MIN({a:#x}, {b:#x})");
        }
    }
}

#[test]
fn widening_agrees_with_known_encodings() {
    assert_eq!(widen(1.0), 0x3fff_u128 << 112);
    assert_eq!(widen(-2.0), SIGN | 0x4000_u128 << 112);
    assert_eq!(widen(1.5), 0x3fff_8000_u128 << 96);
    assert_eq!(widen(f64::INFINITY), 0x7fff_u128 << 112);
    // 2^-1074 = 2^(1 - 16383 + ... ): exponent 16383 - 1074, fraction 0.
    assert_eq!(widen(f64::from_bits(1)), (16383 - 1074) << 112);
    assert_eq!(widen(-0.0), SIGN);
}

#[test]
fn nan_on_either_side_keeps_the_destination() {
    let quiet = 0x7fff_8000_u128 << 96;
    let signalling_negative = SIGN | (0x7fff_u128 << 112) | 1;
    for nan in [quiet, quiet | 0x1234, signalling_negative] {
        for x in ladder() {
            for op in [Max, Min] {
                assert_eq!(max_min(op, nan, x), x, "{op}(NaN, {x:#x})");
                assert_eq!(max_min(op, x, nan), nan, "{op}({x:#x}, NaN)");
            }
        }
    }
}

#[test]
fn equal_zeros_keep_the_destination_zero() {
    for op in [Max, Min] {
        assert_eq!(max_min(op, 0, SIGN), SIGN);
        assert_eq!(max_min(op, SIGN, 0), 0);
    }
}

#[test]
fn many_elements_each_take_their_own_winner() {
    let v = ladder();
    let src: Vec<F128> = v.iter().map(|&x| F128(x)).collect();
    let dst: Vec<F128> = v.iter().rev().map(|&x| F128(x)).collect();
    let got = run(Max, P::Float128, &src, &dst);
    // Element k holds ladder values k and n-1-k: the one higher on the ladder wins.
    let n = v.len();
    for (k, g) in got.iter().enumerate() {
        assert_eq!(g.0, v[k.max(n - 1 - k)], "element {k}");
    }
}

#[test]
fn arithmetic_is_refused_with_its_own_error() {
    for p in [P::Float128, P::Float128Complex] {
        for op in [Sum, Prod] {
            let e = check(op, prim(p)).unwrap_err();
            assert_eq!(e, OpError::NoBinary128Arithmetic { op, ty: prim(p) });
            assert!(e.to_string().contains("no binary128"), "{e}");
        }
        for op in [Land, Band, Lor, Bor, Lxor, Bxor] {
            assert!(matches!(check(op, prim(p)), Err(OpError::Undefined { .. })));
        }
    }
    assert!(matches!(
        check(Max, prim(P::Float128Complex)),
        Err(OpError::Undefined { .. })
    ));
    assert_eq!(
        check(Maxloc, ElemType::Pair(P::Float128, P::Int)),
        Err(OpError::NoBinary128Arithmetic {
            op: Maxloc,
            ty: ElemType::Pair(P::Float128, P::Int)
        })
    );
    let mut dst = [0u8; 16];
    assert!(apply(Sum, prim(P::Float128), &[0; 16], &mut dst).is_err());
    assert_eq!(prim(P::Float128).to_string(), "MPI_REAL16");
    assert_eq!(prim(P::Float128Complex).to_string(), "MPI_COMPLEX32");
}

proptest! {
    #[test]
    fn max_and_min_order_as_f64_does(a in any::<f64>(), b in any::<f64>()) {
        prop_assume!(!a.is_nan() && !b.is_nan());
        let (qa, qb) = (widen(a), widen(b));
        // C's `a > b ? a : b` and `a < b ? a : b`, a the source.
        let max = if a > b { qa } else { qb };
        let min = if a < b { qa } else { qb };
        prop_assert_eq!(max_min(Max, qa, qb), max);
        prop_assert_eq!(max_min(Min, qa, qb), min);
    }
}
