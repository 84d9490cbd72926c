//! Reusable byte buffers for the collective executor's staging, packing and scratch space.
//!
//! A large collective call would otherwise allocate, zero and free megabytes per call; above
//! the allocator's mmap threshold each of those is fresh pages from the kernel (a fault per
//! page, then an unmap with its TLB shootdown), which cost more than the transfer itself.
//! Buffers come back here when a run is done with them and are handed out again by size.
//! Contents of a taken buffer are unspecified (always initialised memory).

use std::cell::RefCell;

/// Buffers kept per thread, at most.
const KEEP: usize = 16;
/// Bytes kept per thread, at most.
const KEEP_BYTES: usize = 256 << 20;

thread_local! {
    static POOL: RefCell<Vec<Vec<u8>>> = const { RefCell::new(Vec::new()) };
}

/// A buffer of exactly `len` bytes, with unspecified (but initialised) contents.
pub fn take(len: usize) -> Vec<u8> {
    if len == 0 {
        return Vec::new();
    }
    let reused = POOL.with(|p| {
        let mut p = p.borrow_mut();
        // The smallest buffer that holds `len`, so large ones stay for large requests.
        let best = p.iter().enumerate().filter(|(_, b)| b.capacity() >= len).min_by_key(|(_, b)| b.capacity()).map(|(i, _)| i);
        best.map(|i| p.swap_remove(i))
    });
    match reused {
        Some(mut v) => {
            if v.len() >= len {
                v.truncate(len);
            } else {
                v.resize(len, 0);
            }
            v
        }
        None => vec![0u8; len],
    }
}

/// A buffer of `len` zero bytes.
pub fn take_zeroed(len: usize) -> Vec<u8> {
    let mut v = take(len);
    v.fill(0);
    v
}

/// Return a buffer for reuse (dropped when the pool is full).
pub fn give(v: Vec<u8>) {
    if v.capacity() == 0 {
        return;
    }
    POOL.with(|p| {
        let mut p = p.borrow_mut();
        let held: usize = p.iter().map(|b| b.capacity()).sum();
        if p.len() < KEEP && held + v.capacity() <= KEEP_BYTES {
            p.push(v);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bufpool_reuses_by_size() {
        let a = take(1000);
        let pa = a.as_ptr();
        give(a);
        let b = take(600);
        assert_eq!((b.len(), b.as_ptr()), (600, pa), "the kept buffer serves a smaller request");
        give(b);
        let c = take(5000);
        assert_eq!(c.len(), 5000);
        assert_ne!(c.as_ptr(), pa);
        assert!(take_zeroed(800).iter().all(|&x| x == 0));
        assert!(take(0).is_empty());
    }
}
