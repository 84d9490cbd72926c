//! Tests of the reduction kernels: the operation table and the dispatch here, one file per
//! family of kernels, and properties every kernel must have. Buffers are placed at odd
//! addresses throughout, as packed data may be.

use super::element::Elem;
use super::*;
use PredefinedOp::*;
use Primitive as P;

mod elementwise;
mod float128;
mod float16;
mod loc_pairs;
mod long_double;
mod properties;

/// Packs values into native-endian bytes.
fn enc<T: Elem>(v: &[T]) -> Vec<u8> {
    let mut b = vec![0; v.len() * T::SIZE];
    for (x, c) in v.iter().zip(b.chunks_exact_mut(T::SIZE)) {
        x.store(c);
    }
    b
}

fn dec<T: Elem>(b: &[u8]) -> Vec<T> {
    b.chunks_exact(T::SIZE).map(T::load).collect()
}

/// Runs `apply` on copies of the buffers placed at odd addresses.
fn apply_unaligned(op: PredefinedOp, t: ElemType, src: &[u8], dst: &[u8]) -> Vec<u8> {
    let mut s = vec![0xa5; src.len() + 3];
    let mut d = vec![0x5a; dst.len() + 5];
    s[3..].copy_from_slice(src);
    d[1..1 + dst.len()].copy_from_slice(dst);
    apply(op, t, &s[3..], &mut d[1..1 + dst.len()]).unwrap();
    assert!(
        d[1 + dst.len()..].iter().all(|&x| x == 0x5a),
        "wrote past the buffer"
    );
    assert_eq!(d[0], 0x5a, "wrote before the buffer");
    d[1..1 + dst.len()].to_vec()
}

/// `dst = src op dst` on a primitive type, values in and out.
fn run<T: Elem>(op: PredefinedOp, p: Primitive, src: &[T], dst: &[T]) -> Vec<T> {
    assert_eq!(T::SIZE, p.size());
    dec(&apply_unaligned(
        op,
        ElemType::Prim(p),
        &enc(src),
        &enc(dst),
    ))
}

fn prim(p: Primitive) -> ElemType {
    ElemType::Prim(p)
}

// ---- handles, names, check -------------------------------------------------------------

#[test]
fn handles_round_trip_and_match_mpich() {
    let expected = [
        (0x5800_0001, Max, "MPI_MAX"),
        (0x5800_0002, Min, "MPI_MIN"),
        (0x5800_0003, Sum, "MPI_SUM"),
        (0x5800_0004, Prod, "MPI_PROD"),
        (0x5800_0005, Land, "MPI_LAND"),
        (0x5800_0006, Band, "MPI_BAND"),
        (0x5800_0007, Lor, "MPI_LOR"),
        (0x5800_0008, Bor, "MPI_BOR"),
        (0x5800_0009, Lxor, "MPI_LXOR"),
        (0x5800_000a, Bxor, "MPI_BXOR"),
        (0x5800_000b, Minloc, "MPI_MINLOC"),
        (0x5800_000c, Maxloc, "MPI_MAXLOC"),
        (0x5800_000d, Replace, "MPI_REPLACE"),
        (0x5800_000e, NoOp, "MPI_NO_OP"),
    ];
    for (i, (h, op, name)) in expected.into_iter().enumerate() {
        assert_eq!(PredefinedOp::from_handle(h), Some(op));
        assert_eq!(op.handle(), h);
        assert_eq!(op.name(), name);
        assert_eq!(op.to_string(), name);
        assert_eq!(PredefinedOp::ALL[i], op);
    }
    for h in [
        0,
        0x1800_0000,
        0x5800_0000,
        0x5800_000f,
        -1,
        0x9800_0000u32 as i32,
    ] {
        assert_eq!(PredefinedOp::from_handle(h), None, "{h:#x}");
    }
}

fn class_of_test(p: Primitive) -> &'static str {
    match p {
        P::Float16 | P::Float | P::Double | P::LongDouble | P::Float128 => "float",
        P::CBool | P::Logical => "logical",
        P::CFloatComplex | P::CDoubleComplex | P::CLongDoubleComplex | P::Float128Complex => {
            "complex"
        }
        P::Byte => "byte",
        P::WChar | P::Packed => "none",
        _ => "int",
    }
}

#[test]
fn check_follows_the_standard_table() {
    for p in Primitive::ALL {
        let c = class_of_test(p);
        for op in PredefinedOp::ALL {
            let want = match op {
                Max | Min => matches!(c, "int" | "float"),
                Sum | Prod => matches!(c, "int" | "float" | "complex"),
                Land | Lor | Lxor => matches!(c, "int" | "logical"),
                Band | Bor | Bxor => matches!(c, "int" | "byte"),
                Maxloc | Minloc => false,
                Replace | NoOp => true,
            };
            let got = check(op, prim(p));
            if want {
                if HAVE_X87 || !is_x87(p) || matches!(op, Replace | NoOp) {
                    assert_eq!(got, Ok(()), "{op} on {p:?}");
                } else {
                    assert!(matches!(got, Err(OpError::Unsupported { .. })));
                }
            } else {
                assert_eq!(
                    got,
                    Err(OpError::Undefined { op, ty: prim(p) }),
                    "{op} {p:?}"
                );
            }
        }
    }
}

#[test]
fn check_pairs() {
    let standard = [
        (P::Float, P::Int),
        (P::Double, P::Int),
        (P::Long, P::Int),
        (P::Short, P::Int),
        (P::LongDouble, P::Int),
        (P::Int, P::Int),
        (P::Float, P::Float),
        (P::Double, P::Double),
    ];
    for (v, i) in standard {
        let t = ElemType::Pair(v, i);
        for op in PredefinedOp::ALL {
            let got = check(op, t);
            match op {
                Maxloc | Minloc | Replace | NoOp => assert_eq!(got, Ok(()), "{op} {t}"),
                _ => assert_eq!(got, Err(OpError::Undefined { op, ty: t })),
            }
        }
    }
    for (v, i) in [
        (P::CFloatComplex, P::Int),
        (P::CBool, P::Int),
        (P::Int, P::Byte),
    ] {
        let t = ElemType::Pair(v, i);
        assert!(
            matches!(check(Maxloc, t), Err(OpError::Undefined { .. })),
            "{t}"
        );
        assert_eq!(check(Replace, t), Ok(()));
    }
}

#[test]
fn errors_name_op_and_type() {
    let e = check(Sum, prim(P::CBool)).unwrap_err();
    assert_eq!(e.to_string(), "MPI_SUM is not defined for MPI_C_BOOL");
    let e = check(Maxloc, prim(P::Double)).unwrap_err();
    assert_eq!(e.to_string(), "MPI_MAXLOC is not defined for MPI_DOUBLE");
    let e = check(Band, ElemType::Pair(P::Double, P::Int)).unwrap_err();
    assert_eq!(e.to_string(), "MPI_BAND is not defined for MPI_DOUBLE_INT");
    let e = check(Maxloc, ElemType::Pair(P::CBool, P::Short)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "MPI_MAXLOC is not defined for pair (MPI_C_BOOL, MPI_SHORT)"
    );
    let mut d = [0u8; 8];
    let e = apply(Sum, prim(P::Int), &[0; 4], &mut d).unwrap_err();
    assert_eq!(
        e,
        OpError::LengthMismatch {
            op: Sum,
            src: 4,
            dst: 8
        }
    );
    assert!(e.to_string().contains("MPI_SUM"));
    let e = apply(Sum, prim(P::Int), &[1; 6], &mut [0; 6]).unwrap_err();
    assert_eq!(
        e,
        OpError::PartialElement {
            op: Sum,
            ty: prim(P::Int),
            len: 6
        }
    );
    assert!(e.to_string().contains("MPI_INT"));
    // A refused call leaves the destination alone.
    let mut d = [7u8; 4];
    assert!(apply(Land, prim(P::Float), &[0; 4], &mut d).is_err());
    assert_eq!(d, [7; 4]);
    let e = apply(
        Maxloc,
        ElemType::Pair(P::Double, P::Int),
        &[0; 13],
        &mut [0; 13],
    );
    assert!(matches!(e, Err(OpError::PartialElement { .. })));
}

#[test]
fn elem_type_of_datatypes() {
    let int = Datatype::primitive(P::Int);
    assert_eq!(elem_type(&int), Some(prim(P::Int)));
    let c = Datatype::contiguous(5, &Datatype::primitive(P::Double)).unwrap();
    assert_eq!(elem_type(&c), Some(prim(P::Double)));
    let v = Datatype::vector(3, 2, 4, &int).unwrap();
    assert_eq!(elem_type(&v), Some(prim(P::Int)));
    let r = Datatype::resized(&v, -8, 100).unwrap();
    assert_eq!(elem_type(&r), Some(prim(P::Int)));
    let same = Datatype::create_struct(&[1, 2], &[0, 16], &[&int, &int]).unwrap();
    assert_eq!(elem_type(&same), Some(prim(P::Int)));
    let mixed = Datatype::create_struct(
        &[1, 1],
        &[0, 8],
        &[Datatype::primitive(P::Double), Datatype::primitive(P::Int)],
    )
    .unwrap();
    assert_eq!(elem_type(&mixed), None);
    assert_eq!(elem_type(&Datatype::pair(P::Double, P::Int)), None);
    assert_eq!(elem_type(&Datatype::contiguous(0, &int).unwrap()), None);
    assert_eq!(
        elem_type(&Datatype::primitive(P::CDoubleComplex)),
        Some(prim(P::CDoubleComplex))
    );
}

#[test]
fn pair_sizes_are_packed() {
    assert_eq!(ElemType::Pair(P::Double, P::Int).size(), 12);
    assert_eq!(ElemType::Pair(P::Short, P::Int).size(), 6);
    assert_eq!(ElemType::Pair(P::LongDouble, P::Int).size(), 20);
    for (v, i) in [
        (P::Double, P::Int),
        (P::Short, P::Int),
        (P::LongDouble, P::Int),
    ] {
        assert_eq!(ElemType::Pair(v, i).size(), Datatype::pair(v, i).size());
    }
}

#[test]
fn fortran_logical_ops_give_fortran_truth_values() {
    let bytes = |v: &[i32]| v.iter().flat_map(|x| x.to_ne_bytes()).collect::<Vec<u8>>();
    // Any non-zero word counts as true (as gfortran tests it); results are 1 or 0.
    let src = bytes(&[1, 0, 7, 0]);
    for (op, want) in [(Land, [1, 0, 0, 0]), (Lor, [1, 1, 1, 0]), (Lxor, [0, 1, 1, 0])] {
        let mut dst = bytes(&[1, 1, 0, 0]);
        apply(op, prim(P::Logical), &src, &mut dst).unwrap();
        assert_eq!(dst, bytes(&want), "{op}");
    }
    assert_eq!(P::Logical.size(), 4);
}
