//! Rank arithmetic shared by the tree and ring algorithms: virtual ranks relative to a root,
//! logarithms and powers.

/// Rank relative to `root` (the root is 0).
pub(crate) fn vrank(rank: usize, root: usize, p: usize) -> usize {
    (rank + p - root) % p
}

/// Real rank of virtual rank `v`.
pub(crate) fn unvrank(v: usize, root: usize, p: usize) -> usize {
    (v + root) % p
}

/// ceil(log_k(p)) for p >= 1, k >= 2: steps for data to grow k-fold per step to p blocks.
pub(crate) fn ceil_log(p: usize, k: usize) -> usize {
    let (mut steps, mut reach) = (0, 1usize);
    while reach < p {
        reach = reach.saturating_mul(k);
        steps += 1;
    }
    steps
}

/// The largest power of two not above p (p >= 1).
pub(crate) fn floor_pow2(p: usize) -> usize {
    1 << (usize::BITS - 1 - p.leading_zeros())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logs_and_powers() {
        assert_eq!(ceil_log(1, 2), 0);
        assert_eq!(ceil_log(8, 2), 3);
        assert_eq!(ceil_log(9, 2), 4);
        assert_eq!(ceil_log(9, 3), 2);
        assert_eq!(ceil_log(10, 3), 3);
        assert_eq!(floor_pow2(1), 1);
        assert_eq!(floor_pow2(12), 8);
        assert_eq!(vrank(2, 5, 8), 5);
        assert_eq!(unvrank(5, 5, 8), 2);
    }
}
