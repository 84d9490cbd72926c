//! Properties over random operands: reductions fold like their definitions, and operations
//! that commute give the same bytes in either operand order.

use super::super::complex::Cx;
use super::loc_pairs::enc_pairs;
use super::*;
use proptest::prelude::*;

/// Element types and ops whose result must not depend on operand order: everything on
/// integers, bytes and bools, and the pair ops on integer pairs.
fn commutative_cases() -> Vec<(PredefinedOp, ElemType)> {
    let mut cases = Vec::new();
    for p in Primitive::ALL {
        if !matches!(class_of_test(p), "int" | "byte" | "logical") {
            continue;
        }
        for op in [Max, Min, Sum, Prod, Land, Band, Lor, Bor, Lxor, Bxor] {
            if check(op, prim(p)).is_ok() {
                cases.push((op, prim(p)));
            }
        }
    }
    for t in [
        ElemType::Pair(P::Int, P::Int),
        ElemType::Pair(P::Long, P::Int),
        ElemType::Pair(P::Short, P::Int),
    ] {
        cases.push((Maxloc, t));
        cases.push((Minloc, t));
    }
    cases
}

proptest! {
    #[test]
    fn sum_i32_matches_a_fold(contribs in prop::collection::vec(prop::collection::vec(any::<i32>(), 7), 1..6), offset in 0usize..4) {
        let mut acc = vec![0u8; 7 * 4 + offset];
        acc[offset..].copy_from_slice(&enc(&contribs[0]));
        for c in &contribs[1..] {
            apply(Sum, prim(P::Int), &enc(c), &mut acc[offset..]).unwrap();
        }
        let want: Vec<i32> = (0..7)
            .map(|k| contribs.iter().fold(0i32, |s, c| s.wrapping_add(c[k])))
            .collect();
        prop_assert_eq!(dec::<i32>(&acc[offset..]), want);
    }

    #[test]
    fn integer_ops_commute(case in 0usize..1000, seed in prop::collection::vec(any::<u8>(), 0..160)) {
        let cases = commutative_cases();
        let (op, t) = cases[case % cases.len()];
        let n = seed.len() / 2 / t.size() * t.size();
        let (a, b) = (&seed[..n], &seed[n..2 * n]);
        let ab = apply_unaligned(op, t, a, b);
        let ba = apply_unaligned(op, t, b, a);
        prop_assert_eq!(ab, ba, "{} on {}", op, t);
    }

    #[test]
    fn float_ops_commute(a in prop::collection::vec(-1e6f64..1e6, 1..12), b in prop::collection::vec(-1e6f64..1e6, 12)) {
        let b = &b[..a.len()];
        for op in [Sum, Prod, Max, Min] {
            let (x, y) = (enc(&a), enc(b));
            prop_assert_eq!(dec::<f64>(&apply_unaligned(op, prim(P::Double), &x, &y)), dec::<f64>(&apply_unaligned(op, prim(P::Double), &y, &x)));
            let (af, bf): (Vec<f32>, Vec<f32>) = (a.iter().map(|&v| v as f32).collect(), b.iter().map(|&v| v as f32).collect());
            let (x, y) = (enc(&af), enc(&bf));
            prop_assert_eq!(dec::<f32>(&apply_unaligned(op, prim(P::Float), &x, &y)), dec::<f32>(&apply_unaligned(op, prim(P::Float), &y, &x)));
        }
        let za: Vec<Cx<f64>> = a.chunks(2).map(|c| Cx { re: c[0], im: *c.last().unwrap() }).collect();
        let zb: Vec<Cx<f64>> = b.chunks(2).map(|c| Cx { re: c[0], im: *c.last().unwrap() }).collect();
        for op in [Sum, Prod] {
            let (x, y) = (enc(&za), enc(&zb));
            prop_assert_eq!(apply_unaligned(op, prim(P::CDoubleComplex), &x, &y), apply_unaligned(op, prim(P::CDoubleComplex), &y, &x));
        }
        // Coarse values make ties common; `+ 0.0` turns -0 into +0 (equal values with
        // equal indices keep the destination's bytes).
        let pa: Vec<(f64, i32)> = a.iter().map(|&v| ((v / 1e5).round() + 0.0, v as i32 % 5)).collect();
        let pb: Vec<(f64, i32)> = b.iter().map(|&v| ((v / 1e5).round() + 0.0, v as i32 % 5)).collect();
        for op in [Maxloc, Minloc] {
            let t = ElemType::Pair(P::Double, P::Int);
            let (x, y) = (enc_pairs(&pa), enc_pairs(&pb));
            prop_assert_eq!(apply_unaligned(op, t, &x, &y), apply_unaligned(op, t, &y, &x));
        }
    }
}
