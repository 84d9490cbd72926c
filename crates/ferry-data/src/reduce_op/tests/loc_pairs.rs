//! MAXLOC and MINLOC on the standard pair types: values, ties and NaNs.

use super::*;

pub(super) fn enc_pairs<V: Elem, I: Elem>(v: &[(V, I)]) -> Vec<u8> {
    let mut out = Vec::new();
    for &(x, i) in v {
        out.extend(enc(&[x]));
        out.extend(enc(&[i]));
    }
    out
}

fn dec_pairs<V: Elem, I: Elem>(b: &[u8]) -> Vec<(V, I)> {
    b.chunks_exact(V::SIZE + I::SIZE)
        .map(|c| (V::load(&c[..V::SIZE]), I::load(&c[V::SIZE..])))
        .collect()
}

fn run_pairs<V: Elem, I: Elem>(
    op: PredefinedOp,
    v: Primitive,
    i: Primitive,
    src: &[(V, I)],
    dst: &[(V, I)],
) -> Vec<(V, I)> {
    let t = ElemType::Pair(v, i);
    dec_pairs(&apply_unaligned(op, t, &enc_pairs(src), &enc_pairs(dst)))
}

#[test]
fn maxloc_minloc_double_int() {
    let src = [
        (1.0f64, 5i32),
        (3.0, 9),
        (2.0, 1),
        (2.0, 8),
        (f64::NAN, 0),
        (1.0, 1),
    ];
    let dst = [
        (2.0f64, 7i32),
        (3.0, 4),
        (2.0, 3),
        (2.0, 8),
        (1.0, 2),
        (f64::NAN, 0),
    ];
    let max = run_pairs(Maxloc, P::Double, P::Int, &src, &dst);
    let got: Vec<_> = max.iter().map(|&(v, i)| (v.to_bits(), i)).collect();
    let want = [(2.0, 7), (3.0, 4), (2.0, 1), (2.0, 8), (1.0, 2)];
    for (g, w) in got.iter().zip(want) {
        assert_eq!(*g, (f64::to_bits(w.0), w.1));
    }
    assert!(max[5].0.is_nan());
    let min = run_pairs(Minloc, P::Double, P::Int, &src, &dst);
    assert_eq!(
        &min[..5],
        &[(1.0, 5), (3.0, 4), (2.0, 1), (2.0, 8), (1.0, 2)]
    );
}

#[test]
fn maxloc_ties_take_the_smaller_index_either_way() {
    for (a, b) in [((4, 3), (4, 9)), ((4, 9), (4, 3)), ((4, -2), (4, 3))] {
        let want = (4, a.1.min(b.1));
        assert_eq!(
            run_pairs::<i32, i32>(Maxloc, P::Int, P::Int, &[a], &[b]),
            [want]
        );
        assert_eq!(
            run_pairs::<i32, i32>(Minloc, P::Int, P::Int, &[a], &[b]),
            [want]
        );
    }
}

#[test]
fn maxloc_on_every_standard_pair() {
    assert_eq!(
        run_pairs::<f32, i32>(
            Maxloc,
            P::Float,
            P::Int,
            &[(1.0, 1), (5.0, 2)],
            &[(2.0, 0), (5.0, 0)]
        ),
        [(2.0, 0), (5.0, 0)]
    );
    assert_eq!(
        run_pairs::<i64, i32>(
            Minloc,
            P::Long,
            P::Int,
            &[(-1, 4), (i64::MAX, 1)],
            &[(0, 0), (i64::MAX, 2)]
        ),
        [(-1, 4), (i64::MAX, 1)]
    );
    assert_eq!(
        run_pairs::<i16, i32>(
            Maxloc,
            P::Short,
            P::Int,
            &[(-1, 4), (7, 1)],
            &[(-2, 0), (7, 2)]
        ),
        [(-1, 4), (7, 1)]
    );
    assert_eq!(
        run_pairs::<f32, f32>(Maxloc, P::Float, P::Float, &[(1.0, 2.0)], &[(1.0, 3.0)]),
        [(1.0, 2.0)]
    );
    assert_eq!(
        run_pairs::<f64, f64>(Minloc, P::Double, P::Double, &[(0.5, 9.0)], &[(1.0, 3.0)]),
        [(0.5, 9.0)]
    );
}
