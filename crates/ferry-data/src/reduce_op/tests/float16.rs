//! `_Float16`: the conversions against a reference that knows binary16 only by its definition
//! (every value, every rounding boundary), and the kernels on the cases where rounding, range
//! and NaN matter.

use super::super::float16::F16;
use super::*;

/// The magnitude of a binary16 encoding without its sign, from the definition; 0x7c00 (the
/// infinity) counts as 2^16, the value an unbounded exponent would give it, so that rounding
/// to it is rounding to the next value up.
fn magnitude(h: u16) -> f64 {
    let (exponent, fraction) = (i32::from(h >> 10 & 0x1f), f64::from(h & 0x3ff));
    match exponent {
        0 => fraction * 2f64.powi(-24),
        _ => (1024.0 + fraction) * 2f64.powi(exponent - 25),
    }
}

fn is_nan(h: u16) -> bool {
    h & 0x7c00 == 0x7c00 && h & 0x3ff != 0
}

/// The nearest binary16 to `x` (not a NaN), ties to the even encoding, found by search.
fn nearest(x: f32) -> u16 {
    let sign = if x.is_sign_negative() { 0x8000 } else { 0 };
    let a = f64::from(x.abs());
    // Binary16 magnitudes grow with their encodings: the last one not above `a`.
    let (mut lo, mut hi) = (0u16, 0x7c00u16);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if magnitude(mid) <= a {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    if a >= magnitude(0x7c00) {
        return sign | 0x7c00;
    }
    let (below, above) = (a - magnitude(lo), magnitude(hi) - a);
    let pick = if below < above || (below == above && lo & 1 == 0) {
        lo
    } else {
        hi
    };
    sign | pick
}

#[test]
fn every_binary16_widens_exactly() {
    for h in 0..=u16::MAX {
        let x = F16(h).to_f32();
        if is_nan(h) {
            // The sign and payload travel along.
            assert!(x.is_nan(), "{h:#06x}");
            assert_eq!(
                x.to_bits(),
                u32::from(h & 0x8000) << 16 | 0x7f80_0000 | u32::from(h & 0x3ff) << 13
            );
        } else if h & 0x7fff == 0x7c00 {
            assert_eq!(
                x,
                if h & 0x8000 != 0 {
                    f32::NEG_INFINITY
                } else {
                    f32::INFINITY
                }
            );
        } else {
            let want = if h & 0x8000 != 0 {
                -magnitude(h)
            } else {
                magnitude(h)
            };
            assert_eq!(f64::from(x), want, "{h:#06x}");
            assert_eq!(x.is_sign_negative(), h & 0x8000 != 0, "{h:#06x}");
        }
    }
}

#[test]
fn every_binary16_survives_a_round_trip() {
    for h in 0..=u16::MAX {
        let back = F16::from_f32(F16(h).to_f32()).0;
        if is_nan(h) {
            // Quieted, sign and payload kept.
            assert_eq!(back, h | 0x0200, "{h:#06x}");
        } else {
            assert_eq!(back, h, "{h:#06x}");
        }
    }
}

#[test]
fn every_rounding_boundary_goes_the_right_way() {
    // Between each pair of neighbours (the largest finite value and 2^16 included): the
    // midpoint, exact in f32, and the f32 values just below and above it.
    for lo in 0..0x7c00u16 {
        let hi = lo + 1;
        let mid = (magnitude(lo) + magnitude(hi)) / 2.0;
        let m = mid as f32;
        assert_eq!(f64::from(m), mid);
        let even = if lo & 1 == 0 { lo } else { hi };
        let cases = [(m.next_down(), lo), (m, even), (m.next_up(), hi)];
        for (x, want) in cases {
            assert_eq!(
                F16::from_f32(x).0,
                want,
                "{x:e} between {lo:#06x} and {hi:#06x}"
            );
            assert_eq!(F16::from_f32(-x).0, want | 0x8000, "{:e}", -x);
        }
    }
}

#[test]
fn rounding_matches_the_reference_across_the_f32_range() {
    // Every exponent of f32 with a spread of significands (xorshift, fixed seed).
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s as u32
    };
    for _ in 0..400_000 {
        let x = f32::from_bits(next());
        if x.is_nan() {
            let h = F16::from_f32(x).0;
            assert!(
                is_nan(h) && h & 0x0200 != 0,
                "{:#x} -> {h:#06x}",
                x.to_bits()
            );
            assert_eq!(h & 0x8000 != 0, x.is_sign_negative());
            continue;
        }
        assert_eq!(F16::from_f32(x).0, nearest(x), "{x:e} ({:#x})", x.to_bits());
    }
    for x in [
        0.0f32,
        -0.0,
        f32::MIN_POSITIVE,
        f32::from_bits(1),
        65504.0,
        65519.996,
        65520.0,
        f32::MAX,
        f32::INFINITY,
    ] {
        assert_eq!(F16::from_f32(x).0, nearest(x), "{x:e}");
        assert_eq!(F16::from_f32(-x).0, nearest(-x), "{:e}", -x);
    }
}

fn h(x: f32) -> F16 {
    let v = F16::from_f32(x);
    assert_eq!(v.to_f32(), x, "{x} is not a binary16 value");
    v
}

fn bits(v: Vec<F16>) -> Vec<u16> {
    v.into_iter().map(|x| x.0).collect()
}

#[test]
fn sum_and_prod_round_once_to_nearest_even() {
    let tiny = F16(0x0001); // 2^-24, the smallest subnormal
    let milli = F16::from_f32(1e-3);
    let src = [
        h(1.0),
        h(2048.0),
        h(2048.0),
        h(65504.0),
        h(-65504.0),
        tiny,
        h(0.5),
        milli,
    ];
    let dst = [
        h(2.0),
        h(1.0),
        h(3.0),
        h(16.0),
        h(-16.0),
        tiny,
        F16(0x0003),
        F16(milli.0 | 0x8000),
    ];
    let sum = run(Sum, P::Float16, &src, &dst);
    // 2049 ties to 2048 (even), 2051 to 2052, 65520 overflows; subnormals add exactly; a
    // term far below half a unit vanishes; an exact zero sum is +0.
    let want = [
        h(3.0),
        h(2048.0),
        h(2052.0),
        F16(0x7c00),
        F16(0xfc00),
        F16(0x0002),
        h(0.5),
        F16(0),
    ];
    assert_eq!(bits(sum), bits(want.to_vec()));
    let a = [
        h(256.0),
        tiny,
        F16(0x0003),
        h(3.0),
        h(-0.0),
        h(1.0 + 2f32.powi(-10)),
    ];
    let third = F16::from_f32(1.0 / 3.0);
    let b = [
        h(256.0),
        h(0.5),
        h(0.5),
        third,
        h(5.0),
        h(1.0 + 2f32.powi(-10)),
    ];
    let prod = run(Prod, P::Float16, &a, &b);
    // 2^16 overflows; half the smallest subnormal ties to 0, 1.5 of it to 2; 3 * (1/3 in
    // binary16) rounds to 1; -0 * 5 is -0; (1 + 2^-10)^2 = 1 + 2^-9 + 2^-20 rounds down.
    let want = [
        F16(0x7c00),
        F16(0),
        F16(0x0002),
        h(1.0),
        F16(0x8000),
        h(1.0 + 2f32.powi(-9)),
    ];
    assert_eq!(bits(prod), bits(want.to_vec()));
}

#[test]
fn infinities_and_nans_follow_ieee() {
    let (inf, ninf, nan) = (F16(0x7c00), F16(0xfc00), F16(0x7e00));
    let sum = run(
        Sum,
        P::Float16,
        &[inf, inf, nan, h(1.0)],
        &[ninf, h(1.0), h(1.0), nan],
    );
    assert!(is_nan(sum[0].0) && is_nan(sum[2].0) && is_nan(sum[3].0));
    assert_eq!(sum[1], inf);
    let prod = run(Prod, P::Float16, &[inf, ninf], &[h(0.0), h(2.0)]);
    assert!(is_nan(prod[0].0));
    assert_eq!(prod[1], ninf);
}

#[test]
fn max_and_min_pick_an_operand_bit_for_bit() {
    let payload = F16(0x7e15);
    let src = [
        h(1.0),
        payload,
        h(1.0),
        h(0.0),
        h(-2.0),
        F16(0x0001),
        F16(0xfc00),
    ];
    let dst = [
        h(2.0),
        h(1.0),
        payload,
        h(-0.0),
        h(-3.0),
        F16(0x8001),
        h(-65504.0),
    ];
    // A comparison with a NaN keeps the destination, as does MAX(+0, -0).
    let want = [
        h(2.0),
        h(1.0),
        payload,
        h(-0.0),
        h(-2.0),
        F16(0x0001),
        h(-65504.0),
    ];
    assert_eq!(bits(run(Max, P::Float16, &src, &dst)), bits(want.to_vec()));
    let want = [
        h(1.0),
        h(1.0),
        payload,
        h(-0.0),
        h(-3.0),
        F16(0x8001),
        F16(0xfc00),
    ];
    assert_eq!(bits(run(Min, P::Float16, &src, &dst)), bits(want.to_vec()));
}

#[test]
fn float16_takes_the_floating_point_operations_only() {
    for op in [Max, Min, Sum, Prod, Replace, NoOp] {
        assert_eq!(check(op, prim(P::Float16)), Ok(()), "{op}");
    }
    for op in [Land, Lor, Lxor, Band, Bor, Bxor, Maxloc, Minloc] {
        let err = check(op, prim(P::Float16)).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("{op} is not defined for MPIX_C_FLOAT16")
        );
    }
}
