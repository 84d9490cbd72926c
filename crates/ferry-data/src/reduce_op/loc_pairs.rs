//! MAXLOC and MINLOC over packed `(value, index)` pairs: the greater (smaller) value wins
//! with its index, equal values keep the smaller index, values that do not compare keep the
//! destination pair.

use super::element::{with_num, Num, Num1};

/// Second half of the pair dispatch: the index type.
pub(super) fn pair_index<V: Num1, const MAX: bool>(i: Num, src: &[u8], dst: &mut [u8]) {
    with_num!(i, I => pairs::<V, I, MAX>(src, dst))
}

/// `dst = MAXLOC(src, dst)` (or MINLOC) over packed `(value, index)` pairs.
#[inline(never)]
fn pairs<V: Num1, I: Num1, const MAX: bool>(src: &[u8], dst: &mut [u8]) {
    let n = V::SIZE + I::SIZE;
    for (s, d) in src.chunks_exact(n).zip(dst.chunks_exact_mut(n)) {
        let (u, v) = (V::load(&s[..V::SIZE]), V::load(&d[..V::SIZE]));
        let wins = if MAX { u.c_gt(v) } else { u.c_lt(v) };
        if wins {
            d.copy_from_slice(s);
        } else if u.c_eq(v) {
            let (i, j) = (I::load(&s[V::SIZE..]), I::load(&d[V::SIZE..]));
            if i.c_lt(j) {
                i.store(&mut d[V::SIZE..]);
            }
        }
    }
}
