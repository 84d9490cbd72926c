//! Tests of the datatype module: bounds against the standard (and against MPICH where the two
//! agree), and pack/unpack/elements against a naive flattening of the type map.

use super::*;
use proptest::prelude::*;

fn prim(p: Primitive) -> Datatype {
    Datatype::primitive(p)
}

fn int() -> Datatype {
    prim(Primitive::Int)
}

fn double() -> Datatype {
    prim(Primitive::Double)
}

fn chr() -> Datatype {
    prim(Primitive::Char)
}

/// (size, lb, extent, true_lb, true_extent)
fn facts(t: &Datatype) -> (usize, isize, isize, isize, isize) {
    (t.size(), t.lb(), t.extent(), t.true_lb(), t.true_extent())
}

fn st(parts: &[(usize, isize, Datatype)]) -> Datatype {
    let lens: Vec<usize> = parts.iter().map(|p| p.0).collect();
    let displs: Vec<isize> = parts.iter().map(|p| p.1).collect();
    let types: Vec<&Datatype> = parts.iter().map(|p| &p.2).collect();
    Datatype::create_struct(&lens, &displs, &types).unwrap()
}

/// The type map of one copy at `origin`, expanded entry by entry, straight from the tree.
fn flatten(t: &Datatype, origin: isize, out: &mut Vec<(isize, Primitive)>) {
    let at = |base: isize, j: usize, child: &Datatype| base + j as isize * child.extent();
    match &t.0.layout {
        Layout::Primitive(p) => out.push((origin, *p)),
        Layout::Vector { count, blocklen, stride, child } => {
            for b in 0..*count {
                for j in 0..*blocklen {
                    flatten(child, at(origin + b as isize * stride, j, child), out);
                }
            }
        }
        Layout::Indexed { blocks, child } => {
            for block in blocks.iter() {
                for j in 0..block.len {
                    flatten(child, at(origin + block.displ, j, child), out);
                }
            }
        }
        Layout::Struct { blocks } => {
            for block in blocks.iter() {
                for j in 0..block.len {
                    flatten(&block.child, at(origin + block.displ, j, &block.child), out);
                }
            }
        }
        Layout::Resized { child } => flatten(child, origin, out),
    }
}

pub(super) fn flatten_n(t: &Datatype, count: usize) -> Vec<(isize, Primitive)> {
    let mut out = Vec::new();
    for i in 0..count {
        flatten(t, i as isize * t.extent(), &mut out);
    }
    out
}

/// Every byte offset the type map covers, in type-map order.
fn byte_offsets(entries: &[(isize, Primitive)]) -> Vec<isize> {
    entries.iter().flat_map(|&(o, p)| (0..p.size() as isize).map(move |k| o + k)).collect()
}

fn runs_of(t: &Datatype, count: usize) -> Vec<(isize, usize)> {
    let mut runs = Vec::new();
    let _ = t.for_each_run(count, |o, l| {
        runs.push((o, l));
        ControlFlow::Continue(())
    });
    runs
}

/// A buffer with room for the type map of `count` copies plus a margin on both sides.
struct Buffer {
    bytes: Vec<u8>,
    /// Index in `bytes` of the datatype's offset 0.
    zero: usize,
}

const MARGIN: usize = 16;

impl Buffer {
    fn new(entries: &[(isize, Primitive)], fill: impl Fn(usize) -> u8) -> Buffer {
        let lo = entries.iter().map(|e| e.0).min().unwrap_or(0).min(0);
        let hi = entries.iter().map(|e| e.0 + e.1.size() as isize).max().unwrap_or(0).max(0);
        let len = (hi - lo) as usize + 2 * MARGIN;
        Buffer { bytes: (0..len).map(fill).collect(), zero: MARGIN + (-lo) as usize }
    }

    fn base(&self) -> *const u8 {
        self.bytes.as_ptr().wrapping_add(self.zero)
    }

    fn base_mut(&mut self) -> *mut u8 {
        self.bytes.as_mut_ptr().wrapping_add(self.zero)
    }

    fn at(&self, offset: isize) -> u8 {
        self.bytes[(self.zero as isize + offset) as usize]
    }
}

fn pattern(i: usize) -> u8 {
    (i % 251) as u8 + 1
}

fn pack_vec(t: &Datatype, buf: &Buffer, count: usize) -> Vec<u8> {
    let mut out = vec![0; t.packed_len(count).unwrap()];
    // SAFETY: `buf` covers the whole type map of `count` copies.
    unsafe { t.pack(buf.base(), count, &mut out) };
    out
}

#[test]
fn primitive_sizes_match_the_c_types() {
    use std::mem::size_of;
    assert_eq!(Primitive::Char.size(), size_of::<libc::c_char>());
    assert_eq!(Primitive::WChar.size(), size_of::<libc::wchar_t>());
    assert_eq!(Primitive::Short.size(), size_of::<libc::c_short>());
    assert_eq!(Primitive::Int.size(), size_of::<libc::c_int>());
    assert_eq!(Primitive::Long.size(), size_of::<libc::c_long>());
    assert_eq!(Primitive::LongLong.size(), size_of::<libc::c_longlong>());
    assert_eq!(Primitive::Float.size(), size_of::<libc::c_float>());
    assert_eq!(Primitive::Double.size(), size_of::<libc::c_double>());
    assert_eq!(Primitive::Aint.size(), size_of::<isize>());
    assert_eq!(Primitive::CBool.size(), size_of::<bool>());
    assert_eq!(Primitive::LongDouble.size(), 16);
    assert_eq!(Primitive::CLongDoubleComplex.size(), 32);
    for p in Primitive::ALL {
        assert!(p.size().is_multiple_of(p.align()), "{p:?}");
        let t = prim(p);
        assert_eq!(facts(&t), (p.size(), 0, p.size() as isize, 0, p.size() as isize));
        assert!(t.is_contiguous());
        assert_eq!(t.as_primitive(), Some(p));
        assert_eq!(t.uniform_primitive(), Some(p));
    }
}

#[test]
fn pair_types_have_the_mpich_layout() {
    use Primitive::*;
    // (value, size, extent, true_extent) as MPICH 4.0 reports them.
    let cases = [
        (Float, 8, 8, 8),
        (Double, 12, 16, 12),
        (Long, 12, 16, 12),
        (Short, 6, 8, 8),
        (Int, 8, 8, 8),
        (LongDouble, 20, 32, 20),
    ];
    for (value, size, extent, true_extent) in cases {
        let t = Datatype::pair(value, Int);
        assert_eq!(facts(&t), (size, 0, extent, 0, true_extent), "{value:?}");
        assert_eq!(t.element_count(), 2);
    }
    let double_int = Datatype::pair(Double, Int);
    assert_eq!(runs_of(&double_int, 2), vec![(0, 12), (16, 12)]);
    assert_eq!(double_int.uniform_primitive(), None);
    assert_eq!(Datatype::pair(Int, Int).uniform_primitive(), Some(Int));
}

#[test]
fn struct_extent_is_padded_to_the_strictest_alignment() {
    use Primitive::*;
    let c = chr();
    // Each case agrees with MPICH 4.0 (size, lb, extent, true_lb, true_extent).
    assert_eq!(facts(&st(&[(1, 0, double()), (1, 8, int())])), (12, 0, 16, 0, 12));
    assert_eq!(facts(&st(&[(1, 0, c.clone()), (1, 8, double())])), (9, 0, 16, 0, 16));
    assert_eq!(facts(&st(&[(1, 0, int()), (1, 4, c.clone())])), (5, 0, 8, 0, 5));
    assert_eq!(facts(&st(&[(1, 0, c.clone()), (1, 1, prim(Short))])), (3, 0, 4, 0, 3));
    assert_eq!(facts(&st(&[(1, -8, double()), (1, 3, c.clone())])), (9, -8, 16, -8, 12));
    assert_eq!(facts(&st(&[(1, 1, double())])), (8, 1, 8, 1, 8));
    assert_eq!(facts(&st(&[(1, 3, int())])), (4, 3, 4, 3, 4));
    assert_eq!(facts(&st(&[(1, 0, prim(LongDouble)), (1, 16, c.clone())])), (17, 0, 32, 0, 17));
    let double_int = Datatype::pair(Double, Int);
    assert_eq!(facts(&st(&[(1, 0, double_int), (1, 16, c.clone())])), (13, 0, 24, 0, 17));
    let two_int = Datatype::pair(Int, Int);
    assert_eq!(facts(&st(&[(1, 0, two_int), (1, 8, c.clone())])), (9, 0, 12, 0, 9));
    let dc = prim(CDoubleComplex);
    assert_eq!(facts(&st(&[(1, 0, dc), (1, 8, c.clone())])), (17, 0, 16, 0, 16));
    let pair_of_chars = st(&[(1, 0, c.clone()), (1, 5, c.clone())]);
    assert_eq!(facts(&pair_of_chars), (2, 0, 6, 0, 6));
    assert_eq!(facts(&st(&[(1, 0, double()), (1, 8, pair_of_chars)])), (10, 0, 16, 0, 14));
    // Only struct pads: an hvector keeps its odd extent.
    let hv = Datatype::hvector(2, 1, 5, &int()).unwrap();
    assert_eq!(facts(&hv), (8, 0, 9, 0, 9));
    assert_eq!(facts(&st(&[(1, 0, int()), (1, 5, hv)])), (12, 0, 16, 0, 14));
}

#[test]
fn vectors_follow_negative_strides_and_resized_bounds() {
    let r = Datatype::resized(&int(), -2, 10).unwrap();
    assert_eq!(facts(&r), (4, -2, 10, 0, 4));
    let v = Datatype::vector(3, 2, -4, &r).unwrap();
    // Blocks at 0, -40 and -80 bytes; copies within a block 10 bytes apart. MPICH agrees.
    assert_eq!(facts(&v), (24, -82, 100, -80, 94));
    assert_eq!(runs_of(&v, 1), vec![(0, 4), (10, 4), (-40, 4), (-30, 4), (-80, 4), (-70, 4)]);

    let v = Datatype::vector(3, 1, 2, &Datatype::pair(Primitive::Double, Primitive::Int)).unwrap();
    assert_eq!(facts(&v), (36, 0, 80, 0, 76));
    let ix =
        Datatype::indexed(&[1, 1], &[0, 3], &Datatype::pair(Primitive::Double, Primitive::Int))
            .unwrap();
    assert_eq!(facts(&ix), (24, 0, 64, 0, 60));
    let ix = Datatype::indexed(&[2, 1], &[5, -1], &int()).unwrap();
    assert_eq!(facts(&ix), (12, -4, 32, -4, 32));
    assert_eq!(runs_of(&ix, 1), vec![(20, 8), (-4, 4)]);
}

#[test]
fn markers_are_sticky_as_the_standard_says() {
    // resized(int, -2, 10) next to a double at 100: only the markers bound the struct, and no
    // epsilon is added. (MPICH 4.0 answers lb -2, extent 112 here.)
    let r = Datatype::resized(&int(), -2, 10).unwrap();
    let s = st(&[(1, 0, r.clone()), (1, 100, double())]);
    assert_eq!(facts(&s), (12, -2, 10, 0, 108));
    // Markers survive further constructors.
    let c = Datatype::contiguous(3, &s).unwrap();
    assert_eq!(facts(&c), (36, -2, 30, 0, 128));
    let s2 = st(&[(1, 0, c), (1, -50, chr())]);
    assert_eq!((s2.lb(), s2.extent()), (-2, 30));
    assert_eq!((s2.true_lb(), s2.true_extent()), (-50, 178));
    // A second resize replaces the markers.
    let r2 = Datatype::resized(&s2, 0, 7).unwrap();
    assert_eq!(facts(&r2), (37, 0, 7, -50, 178));
    // Two resized doubles, 12 bytes apart: extent 12 each, no padding to 16.
    let rd = Datatype::resized(&double(), 0, 12).unwrap();
    assert_eq!(facts(&st(&[(2, 0, rd.clone())])), (16, 0, 24, 0, 20));
    assert_eq!(facts(&st(&[(1, 0, rd), (1, 12, chr())])), (9, 0, 12, 0, 13));
    // A negative extent is allowed; copies then go downwards.
    let down = Datatype::resized(&int(), 0, -4).unwrap();
    assert_eq!(down.extent(), -4);
    assert_eq!(runs_of(&down, 3), vec![(0, 4), (-4, 4), (-8, 4)]);
    assert_eq!(down.true_span(3), Some(-8..4));
}

#[test]
fn empty_blocks_and_empty_types_do_not_count() {
    // Zero-length blocks contribute nothing (MPICH agrees).
    let s = st(&[(0, -50, double()), (1, 0, int())]);
    assert_eq!(facts(&s), (4, 0, 4, 0, 4));
    let s = st(&[(0, -50, double()), (0, 7, int())]);
    assert_eq!(facts(&s), (0, 0, 0, 0, 0));
    // Nor does a block of a type without entries.
    let empty = Datatype::contiguous(0, &int()).unwrap();
    assert_eq!(facts(&empty), (0, 0, 0, 0, 0));
    let s = st(&[(1, 0, empty.clone()), (1, 3, chr())]);
    assert_eq!(facts(&s), (1, 3, 1, 3, 1));
    // Except for its markers.
    let marked = Datatype::resized(&empty, 0, 8).unwrap();
    let s = st(&[(1, 0, marked), (1, 3, chr())]);
    assert_eq!(facts(&s), (1, 0, 8, 3, 1));
}

#[test]
fn zero_sizes_and_zero_counts_work() {
    let empty = Datatype::contiguous(0, &int()).unwrap();
    let types = [
        empty.clone(),
        Datatype::vector(0, 3, 2, &int()).unwrap(),
        Datatype::vector(3, 0, 2, &int()).unwrap(),
        Datatype::indexed(&[], &[], &int()).unwrap(),
        Datatype::create_struct::<Datatype>(&[], &[], &[]).unwrap(),
        Datatype::contiguous(5, &empty).unwrap(),
    ];
    for t in &types {
        assert_eq!(t.size(), 0);
        assert!(t.is_contiguous());
        assert_eq!(t.elements(0), Some(0));
        assert_eq!(t.elements(1), None);
        assert_eq!(t.count_of(0), Some(0));
        assert_eq!(t.count_of(4), None);
        assert_eq!(t.true_span(3), None);
        assert_eq!(runs_of(t, 4), vec![]);
        // SAFETY: nothing is read or written for a type of size 0.
        unsafe {
            t.pack(std::ptr::null(), 7, &mut []);
            t.unpack(&[], std::ptr::null_mut(), 7);
        }
    }
    // Count 0 of a real type touches nothing either.
    // SAFETY: count 0 reads and writes nothing.
    unsafe {
        double().pack(std::ptr::null(), 0, &mut []);
        double().unpack(&[], std::ptr::null_mut(), 0);
    }
}

#[test]
fn dense_types_pack_as_one_run() {
    let c = Datatype::contiguous(1000, &Datatype::contiguous(3, &int()).unwrap()).unwrap();
    assert!(c.is_contiguous());
    assert_eq!(runs_of(&c, 7), vec![(0, 7 * 12_000)]);
    // A vector whose blocks abut is dense as well.
    let v = Datatype::vector(1000, 2, 2, &double()).unwrap();
    assert!(v.is_contiguous());
    assert_eq!(runs_of(&v, 1), vec![(0, 16_000)]);
    // A struct of fields without holes is dense; one with a hole is not.
    let s = st(&[(1, 0, int()), (1, 4, int()), (2, 8, double())]);
    assert!(s.is_contiguous());
    let s = st(&[(1, 0, int()), (1, 8, double())]);
    assert!(!s.is_contiguous());
    assert_eq!(runs_of(&s, 2), vec![(0, 4), (8, 12), (24, 8)]);
    // Out of order fields are not contiguous even when they tile the extent.
    let s = st(&[(1, 4, int()), (1, 0, int())]);
    assert!(!s.is_contiguous());
    // Data not at offset 0 is not contiguous either.
    let s = Datatype::resized(&st(&[(1, 4, int())]), 4, 4).unwrap();
    assert!(!s.is_contiguous());
    assert_eq!(runs_of(&s, 3), vec![(4, 12)]);
}

#[test]
fn huge_vectors_stay_small() {
    // 10^12 blocks: constructed and measured without walking them.
    let v = Datatype::vector(1_000_000_000_000, 1, 2, &prim(Primitive::Byte)).unwrap();
    assert_eq!(v.size(), 1_000_000_000_000);
    assert_eq!(v.extent(), 1_999_999_999_999);
    assert!(v.0.runs.is_none());
    assert_eq!(v.elements(999), Some(999));
    let mut seen = 0;
    let _ = v.for_each_run(1, |o, l| {
        assert_eq!((o, l), (2 * seen, 1));
        seen += 1;
        if seen == 5 {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    });
    // Dense though huge: one run, found without walking the blocks.
    let v = Datatype::vector(1 << 40, 4, 4, &prim(Primitive::Byte)).unwrap();
    assert!(v.is_contiguous());
    let v = Datatype::hvector(1 << 40, 1, 4, &Datatype::resized(&int(), 0, 100).unwrap()).unwrap();
    assert_eq!(runs_of(&v, 1), vec![(0, 1 << 42)]);
    // Blocks of two copies 8 bytes apart hold 8 bytes but are not dense: no single run.
    let spaced = Datatype::resized(&int(), 0, 8).unwrap();
    let v = Datatype::hvector(3, 2, 8, &spaced).unwrap();
    assert_eq!(runs_of(&v, 1), vec![(0, 4), (8, 4), (8, 4), (16, 4), (16, 4), (24, 4)]);
    // A million blocks walk lazily, block by block.
    let v = Datatype::vector(1_000_000, 1, 3, &double()).unwrap();
    assert_eq!(runs_of(&v, 1).len(), 1_000_000);
}

#[test]
fn overflow_and_length_errors_are_reported() {
    let big = Datatype::contiguous(usize::MAX / 2 + 1, &prim(Primitive::Byte)).unwrap_err();
    assert_eq!(big, TypeError::Overflow);
    assert_eq!(Datatype::contiguous(usize::MAX, &int()).unwrap_err(), TypeError::Overflow);
    assert_eq!(Datatype::resized(&int(), isize::MAX, 1).unwrap_err(), TypeError::Overflow);
    assert_eq!(Datatype::vector(2, 1, isize::MAX, &int()).unwrap_err(), TypeError::Overflow);
    assert_eq!(Datatype::hvector(3, 1, isize::MAX, &int()).unwrap_err(), TypeError::Overflow);
    assert_eq!(
        Datatype::hindexed(&[1, 2], &[0], &int()).unwrap_err(),
        TypeError::LengthMismatch { what: "displacements", expected: 2, got: 1 }
    );
    assert_eq!(
        Datatype::create_struct(&[1], &[0], &[int(), int()]).unwrap_err(),
        TypeError::LengthMismatch { what: "types", expected: 1, got: 2 }
    );
}

#[test]
fn elements_and_counts_follow_get_elements_and_get_count() {
    let double_int = Datatype::pair(Primitive::Double, Primitive::Int);
    assert_eq!(double_int.elements(12), Some(2));
    assert_eq!(double_int.elements(8), Some(1));
    assert_eq!(double_int.elements(20), Some(3));
    assert_eq!(double_int.elements(6), None);
    assert_eq!(double_int.count_of(12), Some(1));
    assert_eq!(double_int.count_of(8), None);
    assert_eq!(double_int.count_of(36), Some(3));
    let three = Datatype::contiguous(3, &int()).unwrap();
    assert_eq!(three.elements(8), Some(2));
    assert_eq!(three.elements(7), None);
    assert_eq!(three.elements(12 * 1000 + 4), Some(3001));
    // Element order is type-map order, not address order.
    let s = st(&[(1, 8, chr()), (1, 0, double())]);
    assert_eq!(s.elements(1), Some(1));
    assert_eq!(s.elements(5), None);
    assert_eq!(s.elements(9), Some(2));
}

#[test]
fn pack_and_unpack_a_strided_column() {
    // Column 1 of a 4x3 row-major matrix of ints.
    let col = Datatype::vector(4, 1, 3, &int()).unwrap();
    let m: Vec<i32> = (0..12).collect();
    let mut out = vec![0u8; 16];
    // SAFETY: the matrix covers the column's type map from element 1.
    unsafe { col.pack(m.as_ptr().add(1).cast(), 1, &mut out) };
    let got: Vec<i32> = out.chunks(4).map(|c| i32::from_ne_bytes(c.try_into().unwrap())).collect();
    assert_eq!(got, vec![1, 4, 7, 10]);
    let mut back = vec![-1i32; 12];
    // SAFETY: as above; a short source fills only the first two elements.
    unsafe { col.unpack(&out[..8], back.as_mut_ptr().add(1).cast(), 1) };
    assert_eq!(back, vec![-1, 1, -1, -1, 4, -1, -1, -1, -1, -1, -1, -1]);
}

#[test]
fn pack_range_windows_start_anywhere() {
    let s = st(&[(1, 0, chr()), (1, 8, double()), (2, 20, int())]);
    let count = 5;
    let entries = flatten_n(&s, count);
    let buf = Buffer::new(&entries, pattern);
    let full = pack_vec(&s, &buf, count);
    for start in 0..full.len() {
        for len in [0, 1, 3, 17, full.len() - start] {
            let len = len.min(full.len() - start);
            let mut out = vec![0; len];
            // SAFETY: `buf` covers the type map.
            unsafe { s.pack_range(buf.base(), count, start, &mut out) };
            assert_eq!(out, full[start..start + len], "window {start}+{len}");
        }
    }
}

#[test]
#[should_panic(expected = "output length")]
fn pack_rejects_a_short_output() {
    let mut out = [0u8; 3];
    let x = 0i32;
    // SAFETY: the panic comes before any access.
    unsafe { int().pack((&x as *const i32).cast(), 1, &mut out) };
}

#[test]
#[should_panic(expected = "reaches past")]
fn unpack_rejects_a_long_source() {
    let mut x = 0i32;
    // SAFETY: the panic comes before any access.
    unsafe { int().unpack(&[0; 5], (&mut x as *mut i32).cast(), 1) };
}

#[test]
fn debug_output_names_the_constructor() {
    let v = Datatype::vector(2, 1, 2, &int()).unwrap();
    let text = format!("{v:?}");
    assert!(text.starts_with("hvector(2 x 1, stride 8, Int)"), "{text}");
    assert!(text.contains("extent: 12"), "{text}");
}

fn arb_type() -> impl Strategy<Value = Datatype> {
    let leaf = prop_oneof![
        4 => prop::sample::select(Primitive::ALL.to_vec()).prop_map(Datatype::primitive),
        1 => (prop::sample::select(vec![Primitive::Float, Primitive::Double, Primitive::Short,
                                        Primitive::LongDouble]))
            .prop_map(|p| Datatype::pair(p, Primitive::Int)),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            (0usize..4, inner.clone()).prop_map(|(n, t)| Datatype::contiguous(n, &t).unwrap()),
            (0usize..4, 0usize..3, -3isize..4, inner.clone())
                .prop_map(|(c, b, s, t)| Datatype::vector(c, b, s, &t).unwrap()),
            (0usize..4, 0usize..3, -40isize..40, inner.clone())
                .prop_map(|(c, b, s, t)| Datatype::hvector(c, b, s, &t).unwrap()),
            // Strides that are multiples of the size make blocks abut (or nearly).
            (0usize..4, 0usize..4, -2isize..4, inner.clone()).prop_map(|(c, b, k, t)| {
                Datatype::hvector(c, b, k * t.size() as isize, &t).unwrap()
            }),
            (prop::collection::vec((0usize..3, -4isize..6), 0..4), inner.clone()).prop_map(
                |(blocks, t)| {
                    let (lens, displs): (Vec<_>, Vec<_>) = blocks.into_iter().unzip();
                    Datatype::indexed(&lens, &displs, &t).unwrap()
                }
            ),
            prop::collection::vec((0usize..3, -48isize..48, inner.clone()), 0..4).prop_map(
                |blocks| {
                    let lens: Vec<_> = blocks.iter().map(|b| b.0).collect();
                    let displs: Vec<_> = blocks.iter().map(|b| b.1).collect();
                    let types: Vec<_> = blocks.iter().map(|b| &b.2).collect();
                    Datatype::create_struct(&lens, &displs, &types).unwrap()
                }
            ),
            (-16isize..16, -8isize..48, inner)
                .prop_map(|(lb, ext, t)| Datatype::resized(&t, lb, ext).unwrap()),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn facts_match_the_flattened_type_map(t in arb_type()) {
        let entries = flatten_n(&t, 1);
        prop_assert_eq!(t.size(), entries.iter().map(|e| e.1.size()).sum::<usize>());
        prop_assert_eq!(t.element_count(), entries.len());
        if t.size() > 0 {
            let lo = entries.iter().map(|e| e.0).min().unwrap();
            let hi = entries.iter().map(|e| e.0 + e.1.size() as isize).max().unwrap();
            prop_assert_eq!((t.true_lb(), t.true_lb() + t.true_extent()), (lo, hi));
        }
        let uniform = entries.first().map(|e| e.1).filter(|p| entries.iter().all(|e| e.1 == *p));
        prop_assert_eq!(t.uniform_primitive(), uniform);
    }

    #[test]
    fn pack_then_unpack_restores_exactly_the_covered_bytes(
        t in arb_type(),
        count in 0usize..4,
        cuts in prop::collection::vec(0usize..64, 0..4),
    ) {
        let entries = flatten_n(&t, count);
        let offsets = byte_offsets(&entries);
        let src = Buffer::new(&entries, pattern);

        // Packing yields the covered bytes in type-map order.
        let packed = pack_vec(&t, &src, count);
        let expected: Vec<u8> = offsets.iter().map(|&o| src.at(o)).collect();
        prop_assert_eq!(&packed, &expected);

        // The runs cover the same bytes, merged as far as they go.
        let runs = runs_of(&t, count);
        let from_runs: Vec<isize> =
            runs.iter().flat_map(|&(o, l)| o..o + l as isize).collect();
        prop_assert_eq!(&from_runs, &offsets);
        for pair in runs.windows(2) {
            prop_assert!(pair[0].0 + pair[0].1 as isize != pair[1].0, "unmerged {:?}", pair);
        }
        if t.is_contiguous() {
            let dense: Vec<isize> = (0..packed.len() as isize).collect();
            prop_assert_eq!(&offsets, &dense);
        }
        if let Some(span) = t.true_span(count) {
            prop_assert_eq!(span.start, *offsets.iter().min().unwrap());
            prop_assert_eq!(span.end, *offsets.iter().max().unwrap() + 1);
        }

        // Unpacking into zeros restores the covered bytes and touches no other.
        let mut dst = Buffer::new(&entries, |_| 0);
        // SAFETY: `dst` covers the type map and is distinct from `packed`.
        unsafe { t.unpack(&packed, dst.base_mut(), count) };
        let covered: std::collections::HashSet<isize> = offsets.iter().copied().collect();
        for (i, &b) in dst.bytes.iter().enumerate() {
            let offset = i as isize - dst.zero as isize;
            let want = if covered.contains(&offset) { src.at(offset) } else { 0 };
            prop_assert_eq!(b, want, "byte at offset {}", offset);
        }

        // Windows of the stream, in pieces, give the same bytes both ways.
        let mut bounds: Vec<usize> = cuts.iter().map(|c| c % (packed.len() + 1)).collect();
        bounds.extend([0, packed.len()]);
        bounds.sort_unstable();
        let mut pieces = Vec::new();
        let mut dst2 = Buffer::new(&entries, |_| 0);
        for w in bounds.windows(2) {
            let mut out = vec![0; w[1] - w[0]];
            // SAFETY: as above.
            unsafe {
                t.pack_range(src.base(), count, w[0], &mut out);
                t.unpack_range(&out, dst2.base_mut(), count, w[0]);
            }
            pieces.extend(out);
        }
        prop_assert_eq!(&pieces, &packed);
        prop_assert_eq!(&dst2.bytes, &dst.bytes);

        // A short message unpacks its prefix only.
        let short = packed.len() / 2;
        let mut dst3 = Buffer::new(&entries, |_| 0);
        // SAFETY: as above.
        unsafe { t.unpack(&packed[..short], dst3.base_mut(), count) };
        let written: std::collections::HashSet<isize> = offsets[..short].iter().copied().collect();
        for (i, &b) in dst3.bytes.iter().enumerate() {
            let offset = i as isize - dst3.zero as isize;
            if !written.contains(&offset) {
                prop_assert_eq!(b, 0, "byte at offset {} written by a short unpack", offset);
            }
        }
    }

    #[test]
    fn elements_match_a_walk_of_the_entries(t in arb_type(), count in 0usize..4) {
        let entries = flatten_n(&t, count);
        let total = t.size() * count;
        let mut boundaries = std::collections::HashMap::new();
        let mut at = 0;
        boundaries.insert(0, 0);
        for (i, e) in entries.iter().enumerate() {
            at += e.1.size();
            boundaries.insert(at, i + 1);
        }
        for bytes in (0..=total).take(300) {
            prop_assert_eq!(t.elements(bytes), boundaries.get(&bytes).copied(), "{} bytes", bytes);
            let whole = (t.size() > 0 && bytes % t.size() == 0) || bytes == 0;
            prop_assert_eq!(t.count_of(bytes).is_some(), whole);
        }
    }
}
