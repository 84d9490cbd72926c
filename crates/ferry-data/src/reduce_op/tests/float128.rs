//! Binary128 (`MPI_REAL16`): MAX and MIN against an order known independently (values listed
//! in increasing order, and `f64` values widened exactly, whose order the hardware knows), the
//! NaN and signed-zero rules of C, and the refusal of arithmetic.

use super::super::complex::Cx;
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
fn only_the_numeric_operations_apply() {
    for p in [P::Float128, P::Float128Complex] {
        for op in [Sum, Prod] {
            assert_eq!(check(op, prim(p)), Ok(()));
        }
        for op in [Land, Band, Lor, Bor, Lxor, Bxor] {
            assert!(matches!(check(op, prim(p)), Err(OpError::Undefined { .. })));
        }
    }
    assert!(matches!(
        check(Max, prim(P::Float128Complex)),
        Err(OpError::Undefined { .. })
    ));
    assert_eq!(prim(P::Float128).to_string(), "MPI_REAL16");
    assert_eq!(prim(P::Float128Complex).to_string(), "MPI_COMPLEX32");
}

// ---- arithmetic ------------------------------------------------------------------------

/// The binary128 nearest to the integer `m` (ties to even), from the definition: keep the
/// top 113 bits, round on what is cut off.
fn from_u128(m: u128) -> u128 {
    if m == 0 {
        return 0;
    }
    let lead = 127 - m.leading_zeros(); // 2^lead <= m
    let (mut sig, mut e) = if lead <= 112 {
        (m << (112 - lead), lead)
    } else {
        let cut = lead - 112;
        let (q, rest, half) = (m >> cut, m & ((1 << cut) - 1), 1u128 << (cut - 1));
        let up = rest > half || (rest == half && q & 1 == 1);
        (q + u128::from(up), lead)
    };
    if sig >> 113 != 0 {
        sig >>= 1;
        e += 1;
    }
    ((u128::from(e) + 16383) << 112) | (sig & ((1 << 112) - 1))
}

fn from_i128(v: i128) -> u128 {
    let m = from_u128(v.unsigned_abs());
    if v < 0 {
        m | SIGN
    } else {
        m
    }
}

fn sum(a: u128, b: u128) -> u128 {
    run(Sum, P::Float128, &[F128(a)], &[F128(b)])[0].0
}

fn prod(a: u128, b: u128) -> u128 {
    run(Prod, P::Float128, &[F128(a)], &[F128(b)])[0].0
}

fn is_nan(x: u128) -> bool {
    x & !SIGN > 0x7fff << 112
}

const ONE: u128 = 0x3fff << 112;
const INF: u128 = 0x7fff << 112;
const MAX_FINITE: u128 = INF - 1;
const MIN_NORMAL: u128 = 1 << 112;

/// 2^k as a binary128, for normal k.
fn pow2(k: i32) -> u128 {
    ((16383 + k) as u128) << 112
}

#[test]
fn integer_conversion_agrees_with_known_encodings() {
    assert_eq!(from_u128(1), ONE);
    assert_eq!(from_i128(-2), widen(-2.0));
    assert_eq!(from_u128(3 << 60), widen(3.0 * 2f64.powi(60)));
    // 2^113 + 1 is a tie between 2^113 and 2^113 + 2: the even one.
    assert_eq!(from_u128((1 << 113) + 1), pow2(113));
    assert_eq!(from_u128((1 << 113) + 3), pow2(113) + 2);
}

#[test]
fn rounding_ties_go_to_even() {
    let (half_ulp, ulp) = (pow2(-113), pow2(-112));
    assert_eq!(sum(ONE, half_ulp), ONE, "1 + 2^-113 ties down to 1");
    assert_eq!(sum(ONE + 1, half_ulp), ONE + 2, "odd + half ties up");
    assert_eq!(sum(ONE, ulp), ONE + 1);
    assert_eq!(sum(ONE, pow2(-114)), ONE, "below half: down");
    assert_eq!(sum(ONE, half_ulp + 1), ONE + 1, "just above half: up");
    assert_eq!(
        sum(ONE | SIGN, half_ulp),
        (ONE - 1) | SIGN,
        "-1 + 2^-113 is exact"
    );
    // (1 + 2^-112)^2 = 1 + 2^-111 + 2^-224: just above 1 + 2^-111.
    assert_eq!(prod(ONE + 1, ONE + 1), ONE + 2);
    // (1 + 2^-56)^2 = 1 + 2^-55 + 2^-112: exact.
    let a = ONE + (1 << 56);
    assert_eq!(prod(a, a), ONE + (1 << 57) + 1);
}

#[test]
fn zeros_infinities_and_nans_follow_ieee() {
    let neg = |x: u128| x | SIGN;
    assert_eq!(sum(neg(0), neg(0)), neg(0));
    assert_eq!(sum(0, neg(0)), 0);
    assert_eq!(sum(neg(0), 0), 0);
    assert_eq!(sum(ONE, neg(ONE)), 0, "exact cancellation is +0");
    assert_eq!(sum(neg(third()), third()), 0);
    assert_eq!(sum(neg(0), third()), third());
    assert_eq!(prod(neg(0), ONE), neg(0));
    assert_eq!(prod(neg(ONE), neg(0)), 0);
    assert_eq!(sum(INF, MAX_FINITE), INF);
    assert_eq!(sum(neg(INF), neg(INF)), neg(INF));
    assert!(is_nan(sum(INF, neg(INF))));
    assert!(is_nan(prod(INF, 0)));
    assert!(is_nan(prod(neg(0), INF)));
    assert_eq!(prod(neg(INF), MIN_NORMAL), neg(INF));
    let signalling = INF | 5;
    for r in [
        sum(signalling, ONE),
        sum(ONE, signalling),
        prod(signalling, INF),
    ] {
        assert!(
            is_nan(r) && r & (1 << 111) != 0,
            "a NaN result is quiet: {r:#x}"
        );
    }
    // Overflow rounds to the infinity, not to the largest finite value.
    assert_eq!(sum(MAX_FINITE, MAX_FINITE), INF);
    assert_eq!(prod(MAX_FINITE, neg(pow2(1))), neg(INF));
    assert_eq!(sum(MAX_FINITE, 1), MAX_FINITE);
}

#[test]
fn subnormal_results_round_once() {
    let tiny = 1u128; // 2^-16494
    assert_eq!(sum(tiny, tiny), 2);
    assert_eq!(
        sum(MIN_NORMAL, tiny | SIGN),
        MIN_NORMAL - 1,
        "largest subnormal"
    );
    assert_eq!(sum(MIN_NORMAL - 1, tiny), MIN_NORMAL, "into the normals");
    assert_eq!(prod(MIN_NORMAL, pow2(-1)), 1 << 111);
    assert_eq!(
        prod(tiny, pow2(-1)),
        0,
        "half the smallest subnormal ties to 0"
    );
    assert_eq!(prod(3, pow2(-1)), 2, "1.5 ties to 2");
    assert_eq!(prod(5, pow2(-1)), 2, "2.5 ties to 2");
    assert_eq!(prod(tiny, pow2(-2)), 0);
    assert_eq!(prod(tiny, ONE + (1 << 111)), 2, "1.5 smallest: up to 2");
    // Twice the largest subnormal: a normal whose encoding is the sum of the two.
    assert_eq!(prod(MIN_NORMAL - 1, pow2(1)), 2 * (MIN_NORMAL - 1));
    assert_eq!(
        prod(pow2(-16000), pow2(-400)),
        1 << 94,
        "2^-16400, subnormal"
    );
    assert_eq!(prod(pow2(-16000), pow2(-600)), 0, "far below: zero");
    assert_eq!(prod(tiny, pow2(16000)), pow2(16000 - 16494));
}

fn third() -> u128 {
    // 1/3 rounded: 0x3ffd5555...5555
    (0x3ffd << 112) | ((1 << 112) - 1) / 3
}

#[test]
fn complex_sum_and_product() {
    let c = |re: i128, im: i128| [F128(from_i128(re)), F128(from_i128(im))];
    let z = |v: [F128; 2]| Cx { re: v[0], im: v[1] };
    let got = run(Prod, P::Float128Complex, &[z(c(1, 2))], &[z(c(3, 4))]);
    assert_eq!((got[0].re.0, got[0].im.0), (from_i128(-5), from_i128(10)));
    let got = run(Sum, P::Float128Complex, &[z(c(1, -2))], &[z(c(3, 4))]);
    assert_eq!((got[0].re.0, got[0].im.0), (from_i128(4), from_i128(2)));
    // Annex G: an infinite factor times a nonzero one is infinite, not NaN.
    let inf = Cx {
        re: F128(INF),
        im: F128(INF),
    };
    let got = run(Prod, P::Float128Complex, &[inf], &[z(c(1, 0))]);
    assert!(got[0].re.0 & !SIGN == INF || got[0].im.0 & !SIGN == INF);
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

    #[test]
    fn integer_sums_and_products_are_exact(a in -(1i64 << 56)..(1i64 << 56), b in -(1i64 << 56)..(1i64 << 56)) {
        let (qa, qb) = (from_i128(a.into()), from_i128(b.into()));
        prop_assert_eq!(sum(qa, qb), from_i128(i128::from(a) + i128::from(b)));
        prop_assert_eq!(prod(qa, qb), from_i128(i128::from(a) * i128::from(b)));
    }

    #[test]
    fn wide_sums_and_products_round_to_nearest_even(x in 1u128..(1 << 113), k in 0u32..14, y in any::<u64>(), z in 1u128..(1 << 60), w in 1u128..(1 << 60)) {
        // x * 2^k + y: up to 127 bits, so the exact sum is an integer the reference rounds.
        let big = x << k;
        let y = u128::from(y);
        prop_assert_eq!(sum(from_u128(big), from_u128(y)), from_u128(big + y), "{:#x} + {:#x}", big, y);
        // Products of up to 120 bits: rounding of up to 7 bits, ties included.
        prop_assert_eq!(prod(from_u128(z), from_u128(w)), from_u128(z * w), "{:#x} * {:#x}", z, w);
        // Differences: big - y, exact below 2^113 and rounded above.
        prop_assume!(big > y);
        prop_assert_eq!(sum(from_u128(big), from_u128(y) | SIGN), from_u128(big - y));
    }
}
