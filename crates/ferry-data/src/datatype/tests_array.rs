//! Tests of the block and distributed-array constructors and of external32: every type map
//! equals a reference expansion written straight from the standard's definitions.

use super::tests::flatten_n;
use super::*;
use proptest::prelude::*;

fn int() -> Datatype {
    Datatype::primitive(Primitive::Int)
}

/// Every index tuple of `dims`, in the order the array stores them.
fn indices(dims: &[usize], order: Order) -> Vec<Vec<usize>> {
    let n = dims.len();
    let total: usize = dims.iter().product();
    (0..total)
        .map(|mut lin| {
            let mut idx = vec![0; n];
            let axes: Vec<usize> =
                if order == Order::C { (0..n).rev().collect() } else { (0..n).collect() };
            for d in axes {
                idx[d] = lin % dims[d];
                lin /= dims[d];
            }
            idx
        })
        .collect()
}

/// Byte offset of element `idx` of an array of `dims` ints.
fn offset(idx: &[usize], dims: &[usize], order: Order) -> isize {
    let mut lin = 0;
    let axes: Vec<usize> =
        if order == Order::C { (0..dims.len()).collect() } else { (0..dims.len()).rev().collect() };
    for d in axes {
        lin = lin * dims[d] + idx[d];
    }
    lin as isize * 4
}

fn ints_at(offsets: impl IntoIterator<Item = isize>) -> Vec<(isize, Primitive)> {
    offsets.into_iter().map(|o| (o, Primitive::Int)).collect()
}

#[test]
fn block_constructors_repeat_one_length() {
    let t = Datatype::indexed_block(2, &[3, 0, 7], &int()).unwrap();
    assert_eq!(flatten_n(&t, 1), ints_at([12, 16, 0, 4, 28, 32]));
    let h = Datatype::hindexed_block(1, &[10, 2], &int()).unwrap();
    assert_eq!(flatten_n(&h, 1), ints_at([10, 2]));
    assert_eq!((h.lb(), h.extent()), (2, 12));
    let e = Datatype::hindexed_block(0, &[5], &int()).unwrap();
    assert_eq!((e.size(), e.extent()), (0, 0));
}

#[test]
fn subarray_of_a_c_and_a_fortran_matrix() {
    // Rows 1..3 and columns 2..5 of a 4 x 6 matrix.
    let c = Datatype::subarray(&[4, 6], &[2, 3], &[1, 2], Order::C, &int()).unwrap();
    let want: Vec<isize> = [(1, 2), (1, 3), (1, 4), (2, 2), (2, 3), (2, 4)]
        .iter()
        .map(|&(r, col)| (r * 6 + col) * 4)
        .collect();
    assert_eq!(flatten_n(&c, 1), ints_at(want));
    assert_eq!((c.size(), c.lb(), c.extent()), (24, 0, 96));
    assert_eq!((c.true_lb(), c.true_extent()), (32, 36));
    let f = Datatype::subarray(&[4, 6], &[2, 3], &[1, 2], Order::Fortran, &int()).unwrap();
    let want: Vec<isize> = [(1, 2), (2, 2), (1, 3), (2, 3), (1, 4), (2, 4)]
        .iter()
        .map(|&(r, col)| (col * 4 + r) * 4)
        .collect();
    assert_eq!(flatten_n(&f, 1), ints_at(want));
}

#[test]
fn bad_subarrays_and_grids_are_refused() {
    let bad = |r: Result<Datatype, TypeError>| matches!(r, Err(TypeError::BadArgument(_)));
    assert!(bad(Datatype::subarray(&[4], &[5], &[0], Order::C, &int())));
    assert!(bad(Datatype::subarray(&[4], &[2], &[3], Order::C, &int())));
    assert!(bad(Datatype::subarray(&[4], &[0], &[0], Order::C, &int())));
    assert!(bad(Datatype::subarray(&[], &[], &[], Order::C, &int())));
    assert!(matches!(
        Datatype::subarray(&[4, 4], &[2], &[0, 0], Order::C, &int()),
        Err(TypeError::LengthMismatch { .. })
    ));
    let none = [Distribution::None];
    assert!(bad(Datatype::darray(2, 0, &[8], &none, &[2], Order::C, &int())));
    let block = [Distribution::Block(Some(3))];
    assert!(bad(Datatype::darray(2, 0, &[8], &block, &[2], Order::C, &int())));
    assert!(bad(Datatype::darray(2, 2, &[8], &[Distribution::Block(None)], &[2], Order::C, &int())));
    assert!(bad(Datatype::darray(3, 0, &[8], &[Distribution::Block(None)], &[2], Order::C, &int())));
}

#[test]
fn darray_block_cyclic_by_hand() {
    // 10 elements over 3 processes in blocks of 2 dealt round robin: rank 1 owns 2,3 and 8,9.
    let t = Datatype::darray(3, 1, &[10], &[Distribution::Cyclic(Some(2))], &[3], Order::C, &int())
        .unwrap();
    assert_eq!(flatten_n(&t, 1), ints_at([8, 12, 32, 36]));
    assert_eq!((t.lb(), t.extent()), (0, 40));
    // Default blocks: ceil(10 / 3) = 4; rank 2 owns 8 and 9.
    let b = Datatype::darray(3, 2, &[10], &[Distribution::Block(None)], &[3], Order::C, &int())
        .unwrap();
    assert_eq!(flatten_n(&b, 1), ints_at([32, 36]));
}

fn owner(idx: usize, dist: Distribution, g: usize, p: usize) -> usize {
    match dist {
        Distribution::None => 0,
        Distribution::Block(b) => idx / b.unwrap_or(g.div_ceil(p)),
        Distribution::Cyclic(b) => (idx / b.unwrap_or(1)) % p,
    }
}

fn distribution() -> impl Strategy<Value = Distribution> {
    prop_oneof![
        Just(Distribution::Block(None)),
        Just(Distribution::Cyclic(None)),
        (1usize..4).prop_map(|b| Distribution::Cyclic(Some(b))),
        Just(Distribution::None),
    ]
}

proptest! {
    #[test]
    fn subarray_matches_the_reference(
        dims in prop::collection::vec((1usize..5, 0usize..5, 0usize..5), 1..4),
        fortran in any::<bool>(),
    ) {
        let order = if fortran { Order::Fortran } else { Order::C };
        let sizes: Vec<usize> = dims.iter().map(|d| d.0).collect();
        let subs: Vec<usize> = dims.iter().map(|d| 1 + d.1 % d.0).collect();
        let starts: Vec<usize> = dims.iter().zip(&subs).map(|(d, s)| d.2 % (d.0 - s + 1)).collect();
        let t = Datatype::subarray(&sizes, &subs, &starts, order, &int()).unwrap();
        let want = indices(&sizes, order)
            .into_iter()
            .filter(|i| i.iter().zip(&starts).zip(&subs).all(|((&x, &s), &n)| x >= s && x < s + n))
            .map(|i| offset(&i, &sizes, order));
        prop_assert_eq!(flatten_n(&t, 1), ints_at(want));
        prop_assert_eq!((t.lb(), t.extent()), (0, sizes.iter().product::<usize>() as isize * 4));
    }

    #[test]
    fn darray_matches_the_reference_and_covers_the_array_once(
        dims in prop::collection::vec((1usize..7, 1usize..4, distribution()), 1..4),
        fortran in any::<bool>(),
    ) {
        let order = if fortran { Order::Fortran } else { Order::C };
        let gsizes: Vec<usize> = dims.iter().map(|d| d.0).collect();
        let dists: Vec<Distribution> = dims.iter().map(|d| d.2).collect();
        let psizes: Vec<usize> =
            dims.iter().map(|d| if d.2 == Distribution::None { 1 } else { d.1 }).collect();
        let size: usize = psizes.iter().product();
        let mut covered = Vec::new();
        for rank in 0..size {
            let mut coords = vec![0; psizes.len()];
            let mut rest = rank;
            for d in (0..psizes.len()).rev() {
                coords[d] = rest % psizes[d];
                rest /= psizes[d];
            }
            let t = Datatype::darray(size, rank, &gsizes, &dists, &psizes, order, &int()).unwrap();
            let want: Vec<isize> = indices(&gsizes, order)
                .into_iter()
                .filter(|i| (0..i.len()).all(|d| owner(i[d], dists[d], gsizes[d], psizes[d]) == coords[d]))
                .map(|i| offset(&i, &gsizes, order))
                .collect();
            prop_assert_eq!(flatten_n(&t, 1), ints_at(want.iter().copied()));
            covered.extend(want);
        }
        covered.sort_unstable();
        let all: Vec<isize> = (0..gsizes.iter().product::<usize>() as isize).map(|i| i * 4).collect();
        prop_assert_eq!(covered, all);
    }
}

#[test]
fn external32_is_big_endian_with_the_standard_sizes() {
    let types = [
        Datatype::primitive(Primitive::Int),
        Datatype::primitive(Primitive::Long),
        Datatype::primitive(Primitive::Double),
        Datatype::primitive(Primitive::Short),
    ];
    let t = Datatype::create_struct(&[1, 1, 1, 1], &[0, 8, 16, 24], &types).unwrap();
    assert_eq!(t.external32_size(), Some(4 + 4 + 8 + 2));
    let mut native = [0u8; 32];
    native[0..4].copy_from_slice(&0x01020304i32.to_le_bytes());
    native[8..16].copy_from_slice(&(-2i64).to_le_bytes());
    native[16..24].copy_from_slice(&1.5f64.to_le_bytes());
    native[24..26].copy_from_slice(&0x0a0bi16.to_le_bytes());
    let mut out = [0u8; 18];
    // SAFETY: `native` covers the type map.
    let n = unsafe { t.pack_external32(native.as_ptr(), 1, &mut out) }.unwrap();
    assert_eq!(n, 18);
    assert_eq!(out, [1, 2, 3, 4, 0xff, 0xff, 0xff, 0xfe, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0, 0x0a, 0x0b]);
    let mut back = [0u8; 32];
    // SAFETY: `back` covers the type map.
    unsafe { t.unpack_external32(&out, back.as_mut_ptr(), 1) }.unwrap();
    for r in [0..4, 8..16, 16..24, 24..26] {
        assert_eq!(back[r.clone()], native[r]);
    }
    // A long that needs more than 4 bytes has no external32 form.
    let long = Datatype::primitive(Primitive::Long);
    let big = (1i64 << 40).to_le_bytes();
    // SAFETY: `big` holds one long.
    let r = unsafe { long.pack_external32(big.as_ptr(), 1, &mut [0; 4]) };
    assert_eq!(r, Err(ConversionError::OutOfRange(Primitive::Long)));
}

#[test]
fn float16_travels_as_big_endian_binary16() {
    // Not in the standard's table (MPICH's extension type); sent like the other IEEE types.
    let t = Datatype::contiguous(2, &Datatype::primitive(Primitive::Float16)).unwrap();
    assert_eq!(t.external32_size(), Some(4));
    let native = [0x00, 0x3e, 0xff, 0x7b]; // 1.5 and 65504, little-endian
    let mut out = [0u8; 4];
    // SAFETY: `native` holds two binary16 values.
    unsafe { t.pack_external32(native.as_ptr(), 1, &mut out) }.unwrap();
    assert_eq!(out, [0x3e, 0x00, 0x7b, 0xff]);
    let mut back = [0u8; 4];
    // SAFETY: `back` holds two binary16 values.
    unsafe { t.unpack_external32(&out, back.as_mut_ptr(), 1) }.unwrap();
    assert_eq!(back, native);
}

#[test]
fn real16_and_complex32_travel_as_big_endian_binary128() {
    // Already IEEE binary128 in memory: external32 only reverses the bytes of each value, the
    // real part of a complex first.
    let one = 0x3fff_u128 << 112;
    let minus_two = 0xc000_u128 << 112;
    let tiny = 1u128; // smallest subnormal: checks the low byte ends up last
    let real = Datatype::contiguous(2, &Datatype::primitive(Primitive::Float128)).unwrap();
    let complex = Datatype::primitive(Primitive::Float128Complex);
    assert_eq!((real.size(), real.extent()), (32, 32));
    assert_eq!((complex.size(), complex.extent()), (32, 32));
    assert_eq!(Primitive::Float128.align(), 16);
    assert_eq!(Primitive::Float128Complex.align(), 16);
    for t in [&real, &complex] {
        assert_eq!(t.external32_size(), Some(32));
        let mut native = [0u8; 32];
        native[..16].copy_from_slice(&one.to_le_bytes());
        native[16..].copy_from_slice(&(minus_two | tiny).to_le_bytes());
        let mut out = [0u8; 32];
        // SAFETY: `native` holds two binary128 values.
        unsafe { t.pack_external32(native.as_ptr(), 1, &mut out) }.unwrap();
        assert_eq!(out[..16], one.to_be_bytes());
        assert_eq!(out[16..], (minus_two | tiny).to_be_bytes());
        let mut back = [0u8; 32];
        // SAFETY: `back` holds two binary128 values.
        unsafe { t.unpack_external32(&out, back.as_mut_ptr(), 1) }.unwrap();
        assert_eq!(back, native);
    }
}

#[test]
fn real16_pads_structs_to_sixteen_bytes() {
    // struct { char c; __float128 q; } is 32 bytes with q at 16 (gcc and gfortran agree).
    let types = [Primitive::Char, Primitive::Float128].map(Datatype::primitive);
    let t = Datatype::create_struct(&[1, 1], &[0, 16], &types).unwrap();
    assert_eq!((t.size(), t.extent()), (17, 32));
}

#[test]
fn long_double_travels_as_binary128() {
    let ld = Datatype::primitive(Primitive::LongDouble);
    // 1.5 in x87: significand 0xC000..., exponent 0x3fff.
    let mut native = [0u8; 16];
    native[..8].copy_from_slice(&0xc000_0000_0000_0000u64.to_le_bytes());
    native[8..10].copy_from_slice(&0x3fffu16.to_le_bytes());
    let mut out = [0u8; 16];
    // SAFETY: `native` holds one long double.
    unsafe { ld.pack_external32(native.as_ptr(), 1, &mut out) }.unwrap();
    assert_eq!(out[..3], [0x3f, 0xff, 0x80]);
    assert!(out[3..].iter().all(|&b| b == 0));
    let mut back = [0u8; 16];
    // SAFETY: `back` holds one long double.
    unsafe { ld.unpack_external32(&out, back.as_mut_ptr(), 1) }.unwrap();
    assert_eq!(back[..10], native[..10]);
}
