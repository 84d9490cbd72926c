//! A hash map for the small integer keys of the hot paths (request ids, handles, context
//! ids): the default SipHash resists collision attacks that cannot happen on keys we choose
//! ourselves, and costs a sizeable share of a shared-memory message. Same mixing as rustc's
//! Fx hash: rotate, xor, multiply by an odd constant.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// `HashMap` with [`FastHasher`]; create it with `FastMap::default()`.
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;
/// `HashSet` with [`FastHasher`].
pub type FastSet<K> = HashSet<K, BuildHasherDefault<FastHasher>>;

const K: u64 = 0xf135_7aea_2e62_a9c5;

/// A fast, non-cryptographic hasher for keys the program itself picks.
#[derive(Default, Clone, Copy)]
pub struct FastHasher {
    h: u64,
}

impl FastHasher {
    #[inline]
    fn add(&mut self, x: u64) {
        self.h = (self.h.rotate_left(26) ^ x).wrapping_mul(K);
    }
}

impl Hasher for FastHasher {
    #[inline]
    fn finish(&self) -> u64 {
        // Fold the well-mixed high bits down: the table indexes with the low ones.
        self.h ^ (self.h >> 32)
    }
    fn write(&mut self, bytes: &[u8]) {
        for c in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..c.len()].copy_from_slice(c);
            self.add(u64::from_le_bytes(b));
        }
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(i as u64);
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(i as u64);
    }
    #[inline]
    fn write_i32(&mut self, i: i32) {
        self.add(i as u32 as u64);
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::{BuildHasher, Hash};

    fn h<T: Hash>(t: T) -> u64 {
        BuildHasherDefault::<FastHasher>::default().hash_one(t)
    }

    #[test]
    fn fastmap_spreads_sequential_keys_and_works_as_a_map() {
        let low: FastSet<u64> = (0..4096u64).map(|i| h(i) & 4095).collect();
        assert!(low.len() > 2500, "sequential ids should fill most buckets, got {}", low.len());
        assert_ne!(h((1u32, 2u64)), h((2u32, 1u64)));
        let mut m: FastMap<i32, u32> = FastMap::default();
        for i in -500..500 {
            m.insert(i, i.unsigned_abs());
        }
        assert_eq!((m.len(), m.get(&-7).copied()), (1000, Some(7)));
        assert_eq!(m.remove(&499), Some(499));
    }
}
