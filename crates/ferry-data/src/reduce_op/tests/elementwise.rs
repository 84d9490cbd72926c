//! The element-wise kernels on every integer, floating point and complex type, against
//! Rust's own operators.

use super::super::complex::Cx;
use super::*;

// ---- integers ------------------------------------------------------------------------

/// SUM/PROD/MAX/MIN/bitwise/logical for one integer type against Rust's own operators.
macro_rules! int_suite {
    ($name:ident, $t:ty, [$($p:expr),*]) => {
        #[test]
        fn $name() {
            let a: Vec<$t> = vec![0, 1, <$t>::MAX, <$t>::MIN, 5, 3, 0, 0x55 as $t, 7, 2];
            let b: Vec<$t> = vec![0, <$t>::MAX, 1, <$t>::MIN, 3, 5, 9, 0x0f as $t, 0, 2];
            for p in [$($p),*] {
                let zip = |f: fn($t, $t) -> $t| -> Vec<$t> {
                    a.iter().zip(&b).map(|(&x, &y)| f(x, y)).collect()
                };
                assert_eq!(run(Sum, p, &a, &b), zip(|x, y| x.wrapping_add(y)), "{p:?}");
                assert_eq!(run(Prod, p, &a, &b), zip(|x, y| x.wrapping_mul(y)), "{p:?}");
                assert_eq!(run(Max, p, &a, &b), zip(|x, y| x.max(y)), "{p:?}");
                assert_eq!(run(Min, p, &a, &b), zip(|x, y| x.min(y)), "{p:?}");
                assert_eq!(run(Band, p, &a, &b), zip(|x, y| x & y), "{p:?}");
                assert_eq!(run(Bor, p, &a, &b), zip(|x, y| x | y), "{p:?}");
                assert_eq!(run(Bxor, p, &a, &b), zip(|x, y| x ^ y), "{p:?}");
                assert_eq!(run(Land, p, &a, &b), zip(|x, y| (x != 0 && y != 0) as $t));
                assert_eq!(run(Lor, p, &a, &b), zip(|x, y| (x != 0 || y != 0) as $t));
                assert_eq!(run(Lxor, p, &a, &b), zip(|x, y| ((x != 0) != (y != 0)) as $t));
                assert_eq!(run(Replace, p, &a, &b), a);
                assert_eq!(run(NoOp, p, &a, &b), b);
            }
        }
    };
}
int_suite!(ops_on_i8, i8, [P::Char, P::SignedChar, P::Int8]);
int_suite!(ops_on_u8, u8, [P::UnsignedChar, P::UInt8]);
int_suite!(ops_on_i16, i16, [P::Short, P::Int16]);
int_suite!(ops_on_u16, u16, [P::UnsignedShort, P::UInt16]);
int_suite!(ops_on_i32, i32, [P::Int, P::Int32]);
int_suite!(ops_on_u32, u32, [P::Unsigned, P::UInt32]);
int_suite!(
    ops_on_i64,
    i64,
    [P::Long, P::LongLong, P::Int64, P::Aint, P::Offset, P::Count]
);
int_suite!(
    ops_on_u64,
    u64,
    [P::UnsignedLong, P::UnsignedLongLong, P::UInt64]
);

#[test]
fn integers_wrap_and_compare_with_their_signedness() {
    assert_eq!(run::<i32>(Sum, P::Int, &[i32::MAX], &[1]), [i32::MIN]);
    assert_eq!(run::<i32>(Prod, P::Int, &[0x10000], &[0x10000]), [0]);
    assert_eq!(run::<u8>(Sum, P::UnsignedChar, &[200], &[100]), [44]);
    assert_eq!(run::<i64>(Prod, P::Long, &[i64::MIN], &[-1]), [i64::MIN]);
    // char is signed on x86-64 and MPICH reduces it as an integer.
    assert_eq!(run::<i8>(Max, P::Char, &[-1], &[1]), [1]);
    assert_eq!(run::<u8>(Max, P::UnsignedChar, &[255], &[1]), [255]);
    assert_eq!(run::<u64>(Min, P::UInt64, &[u64::MAX], &[0]), [0]);
    assert_eq!(run::<i64>(Min, P::Int64, &[i64::MIN], &[0]), [i64::MIN]);
}

#[test]
fn byte_and_bool() {
    assert_eq!(
        run::<u8>(Band, P::Byte, &[0xf0, 0xff], &[0x3c, 0]),
        [0x30, 0]
    );
    assert_eq!(
        run::<u8>(Bor, P::Byte, &[0xf0, 0xff], &[0x3c, 0]),
        [0xfc, 0xff]
    );
    assert_eq!(
        run::<u8>(Bxor, P::Byte, &[0xf0, 0xff], &[0x3c, 0]),
        [0xcc, 0xff]
    );
    // Any nonzero byte is true; results are 0 or 1.
    let (a, b) = ([0u8, 0, 1, 2, 0xff], [0u8, 1, 0, 4, 1]);
    assert_eq!(run::<u8>(Land, P::CBool, &a, &b), [0, 0, 0, 1, 1]);
    assert_eq!(run::<u8>(Lor, P::CBool, &a, &b), [0, 1, 1, 1, 1]);
    assert_eq!(run::<u8>(Lxor, P::CBool, &a, &b), [0, 1, 1, 0, 0]);
    assert_eq!(run::<u8>(Replace, P::CBool, &a, &b), a);
}

#[test]
fn opaque_types_only_replace() {
    for p in [P::WChar, P::Packed] {
        let (src, dst) = (vec![1u8; 2 * p.size()], vec![2u8; 2 * p.size()]);
        assert_eq!(apply_unaligned(Replace, prim(p), &src, &dst), src);
        assert_eq!(apply_unaligned(NoOp, prim(p), &src, &dst), dst);
        assert!(apply(Sum, prim(p), &src, &mut dst.clone()).is_err());
    }
}

#[test]
fn empty_buffers_are_fine() {
    for op in PredefinedOp::ALL {
        let t = if matches!(op, Maxloc | Minloc) {
            ElemType::Pair(P::Double, P::Int)
        } else {
            prim(P::Int)
        };
        assert_eq!(apply(op, t, &[], &mut []), Ok(()));
    }
}

// ---- floating point ------------------------------------------------------------------

macro_rules! float_suite {
    ($name:ident, $t:ty, $p:expr) => {
        #[test]
        fn $name() {
            let a: Vec<$t> = vec![1.5, -2.0, <$t>::MAX, 0.1, <$t>::INFINITY, -0.0, 3.0];
            let b: Vec<$t> = vec![2.25, 4.0, <$t>::MAX, 0.2, -1.0, 0.0, 3.0];
            let zip = |f: fn($t, $t) -> $t| -> Vec<$t> {
                a.iter().zip(&b).map(|(&x, &y)| f(x, y)).collect()
            };
            let bits = |v: Vec<$t>| v.into_iter().map(<$t>::to_bits).collect::<Vec<_>>();
            assert_eq!(bits(run(Sum, $p, &a, &b)), bits(zip(|x, y| x + y)));
            assert_eq!(bits(run(Prod, $p, &a, &b)), bits(zip(|x, y| x * y)));
            assert_eq!(
                bits(run(Max, $p, &a, &b)),
                bits(zip(|x, y| if x > y { x } else { y }))
            );
            assert_eq!(
                bits(run(Min, $p, &a, &b)),
                bits(zip(|x, y| if x < y { x } else { y }))
            );
            assert_eq!(run(Sum, $p, &[<$t>::MAX], &[<$t>::MAX]), [<$t>::INFINITY]);
            // MAX(+0, -0) and MIN keep the destination's zero.
            assert!(run::<$t>(Max, $p, &[0.0], &[-0.0])[0].is_sign_negative());
            assert!(run::<$t>(Min, $p, &[-0.0], &[0.0])[0].is_sign_positive());
            // A NaN on either side keeps the destination element.
            let nan = <$t>::NAN;
            assert!(run::<$t>(Max, $p, &[1.0], &[nan])[0].is_nan());
            assert_eq!(run::<$t>(Max, $p, &[nan], &[1.0]), [1.0]);
            assert!(run::<$t>(Min, $p, &[1.0], &[nan])[0].is_nan());
            assert_eq!(run::<$t>(Min, $p, &[nan], &[1.0]), [1.0]);
            assert!(run::<$t>(Sum, $p, &[nan], &[1.0])[0].is_nan());
            for op in [Land, Lor, Lxor, Band, Bor, Bxor, Maxloc, Minloc] {
                assert!(apply(op, prim($p), &enc(&a), &mut enc(&b)).is_err(), "{op}");
            }
        }
    };
}
float_suite!(ops_on_float, f32, P::Float);
float_suite!(ops_on_double, f64, P::Double);

// ---- complex -------------------------------------------------------------------------

macro_rules! complex_suite {
    ($name:ident, $t:ty, $p:expr) => {
        #[test]
        fn $name() {
            let c = |re: $t, im: $t| Cx { re, im };
            let parts =
                |v: Vec<Cx<$t>>| v.into_iter().map(|z| (z.re, z.im)).collect::<Vec<_>>();
            let a = [c(1.0, 2.0), c(-0.5, 0.0), c(0.0, 1.0)];
            let b = [c(3.0, 4.0), c(2.0, -8.0), c(0.0, 1.0)];
            assert_eq!(
                parts(run(Sum, $p, &a, &b)),
                [(4.0, 6.0), (1.5, -8.0), (0.0, 2.0)]
            );
            assert_eq!(
                parts(run(Prod, $p, &a, &b)),
                [(-5.0, 10.0), (-1.0, 4.0), (-1.0, 0.0)]
            );
            // Annex G: an infinite operand times a finite nonzero one stays infinite even
            // where the schoolbook formula gives NaN + NaN i.
            let inf = <$t>::INFINITY;
            let z = run(Prod, $p, &[c(inf, inf)], &[c(1.0, 0.0)])[0];
            assert_eq!((z.re, z.im), (inf, inf));
            let z = run(Prod, $p, &[c(1.0, 0.0)], &[c(inf, <$t>::NAN)])[0];
            assert!(
                z.re.is_infinite() || z.im.is_infinite(),
                "{} {}",
                z.re,
                z.im
            );
            // Overflowing products become infinite too.
            let m = <$t>::MAX;
            let z = run(Prod, $p, &[c(m, m)], &[c(m, m)])[0];
            assert!(z.im.is_infinite() && z.im > 0.0);
            // A plain NaN stays NaN.
            let z = run(Prod, $p, &[c(<$t>::NAN, 0.0)], &[c(1.0, 0.0)])[0];
            assert!(z.re.is_nan());
            for op in [Max, Min, Land, Band, Maxloc] {
                assert!(check(op, prim($p)).is_err());
            }
        }
    };
}
complex_suite!(ops_on_float_complex, f32, P::CFloatComplex);
complex_suite!(ops_on_double_complex, f64, P::CDoubleComplex);

/// Vectors long enough for the wide loop (on CPUs that have it) give the element-wise
/// definition's results at every length around its threshold, remainders included.
#[test]
fn long_vectors_give_the_element_wise_results() {
    for n in [7, 31, 32, 33, 63, 64, 65, 1003] {
        let a: Vec<f64> = (0..n).map(|i| i as f64 * 0.37 - 11.0).collect();
        let b: Vec<f64> = (0..n).map(|i| 5.0 - i as f64 * 1.13).collect();
        let zip = |f: fn(f64, f64) -> f64| -> Vec<f64> { a.iter().zip(&b).map(|(&x, &y)| f(x, y)).collect() };
        assert_eq!(run(Sum, P::Double, &a, &b), zip(|x, y| x + y), "{n}");
        assert_eq!(run(Prod, P::Double, &a, &b), zip(|x, y| x * y), "{n}");
        assert_eq!(run(Max, P::Double, &a, &b), zip(f64::max), "{n}");
        assert_eq!(run(Min, P::Double, &a, &b), zip(f64::min), "{n}");
        let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.25 - 3.0).collect();
        let b: Vec<f32> = (0..n).map(|i| 1.5 - i as f32).collect();
        assert_eq!(run(Sum, P::Float, &a, &b), a.iter().zip(&b).map(|(&x, &y)| x + y).collect::<Vec<_>>(), "{n}");
        let a: Vec<i32> = (0..n).map(|i| (i * 7919) as i32 - 4000).collect();
        let b: Vec<i32> = (0..n).map(|i| i32::MAX - (i * 31) as i32).collect();
        let zip = |f: fn(i32, i32) -> i32| -> Vec<i32> { a.iter().zip(&b).map(|(&x, &y)| f(x, y)).collect() };
        assert_eq!(run(Sum, P::Int, &a, &b), zip(i32::wrapping_add), "{n}");
        assert_eq!(run(Max, P::Int, &a, &b), zip(i32::max), "{n}");
        assert_eq!(run(Bxor, P::Int, &a, &b), zip(|x, y| x ^ y), "{n}");
        let a: Vec<u8> = (0..n).map(|i| (i * 37) as u8).collect();
        let b: Vec<u8> = (0..n).map(|i| (i * 11 + 200) as u8).collect();
        assert_eq!(run(Sum, P::UInt8, &a, &b), a.iter().zip(&b).map(|(&x, &y)| x.wrapping_add(y)).collect::<Vec<_>>(), "{n}");
    }
}
