//! Copies of small byte strings: most messages are a few bytes, and a `memcpy` call costs
//! more than the move itself (plain code, used by the rings and the protocol core).

/// Copy `src` into `dst` (of the same length). Small messages are most of a ring's records:
/// up to 32 bytes go as a few word moves, where `memcpy` would cost a call and its dispatch.
#[inline]
pub(crate) fn copy_bytes(dst: &mut [u8], src: &[u8]) {
    let n = src.len();
    assert_eq!(dst.len(), n, "copy between slices of one length");
    let (s, d) = (src.as_ptr(), dst.as_mut_ptr());
    // SAFETY: both slices hold `n` bytes; every access below lies within them (the two
    // moves of each case overlap when `n` is not a multiple of the word), and the slices
    // do not overlap (one is borrowed mutably).
    unsafe {
        match n {
            0 => {}
            1..=3 => {
                for i in 0..n {
                    *d.add(i) = *s.add(i);
                }
            }
            4..=7 => {
                let (a, b) = ((s as *const u32).read_unaligned(), (s.add(n - 4) as *const u32).read_unaligned());
                (d as *mut u32).write_unaligned(a);
                (d.add(n - 4) as *mut u32).write_unaligned(b);
            }
            8..=16 => {
                let (a, b) = ((s as *const u64).read_unaligned(), (s.add(n - 8) as *const u64).read_unaligned());
                (d as *mut u64).write_unaligned(a);
                (d.add(n - 8) as *mut u64).write_unaligned(b);
            }
            17..=32 => {
                let (a, b) = ((s as *const u128).read_unaligned(), (s.add(n - 16) as *const u128).read_unaligned());
                (d as *mut u128).write_unaligned(a);
                (d.add(n - 16) as *mut u128).write_unaligned(b);
            }
            _ => dst.copy_from_slice(src),
        }
    }
}
