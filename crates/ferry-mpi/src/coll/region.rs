//! User buffers as schedules see them: packed byte regions, straight in user memory when
//! the datatype is contiguous, else staged and packed or unpacked around the run.

use std::os::raw::c_void;

use ferry_data::datatype::Datatype;

/// A user buffer as a schedule sees it: a packed byte region, straight in user memory when
/// the datatype is contiguous, else in a staging vector packed or unpacked around the run.
pub(crate) struct Region {
    pub(super) ptr: *mut u8,
    staging: Option<Vec<u8>>,
}

impl Region {
    pub(super) fn none() -> Region {
        Region { ptr: std::ptr::null_mut(), staging: None }
    }

    pub(super) fn staged(len: usize) -> Region {
        let mut v = vec![0u8; len];
        Region { ptr: v.as_mut_ptr(), staging: Some(v) }
    }

    /// `blocks` of (element offset, count) of type `t` at user `base`, laid out packed at
    /// `offset * size`. `fill` packs the user data in (for inputs).
    pub(super) fn new(base: *const c_void, t: &Datatype, len: usize, blocks: &[(usize, usize)], fill: bool) -> Region {
        if t.is_contiguous() {
            return Region { ptr: base as *mut u8, staging: None };
        }
        let mut r = Region::staged(len);
        if fill {
            let v = r.staging.as_mut().expect("staged");
            for &(off, n) in blocks {
                let at = off * t.size();
                // SAFETY: the user buffer holds these elements (MPI's contract for the call).
                unsafe { t.pack((base as *const u8).wrapping_offset(off as isize * t.extent()), n, &mut v[at..at + n * t.size()]) };
            }
        }
        r
    }

    /// What copies the staged blocks back into user memory once the call is complete
    /// (nothing to do when the data went straight to user memory).
    pub(super) fn unpacker(&self, base: *mut c_void, t: Datatype, blocks: Vec<(usize, usize)>) -> Option<Box<dyn FnOnce()>> {
        self.staging.as_ref()?;
        let staged = self.ptr as *const u8;
        Some(Box::new(move || {
            for &(off, n) in &blocks {
                let at = off * t.size();
                // SAFETY: `staged` is this region's vector, which the call keeps alive until
                // after this runs; the user buffer holds these elements (MPI's contract).
                unsafe {
                    let src = std::slice::from_raw_parts(staged.add(at), n * t.size());
                    t.unpack(src, (base as *mut u8).wrapping_offset(off as isize * t.extent()), n);
                }
            }
        }))
    }
}

/// One peer's block of an alltoallw: `count` elements of `t` at byte `disp` of the user buffer.
pub(crate) struct TypedBlock {
    pub(super) disp: usize,
    pub(super) count: usize,
    pub(super) t: Datatype,
}

impl Region {
    /// Blocks of different datatypes, always staged: packed one after the other in order.
    /// `fill` packs the user data in (for inputs).
    pub(super) fn typed(base: *const c_void, blocks: &[TypedBlock], fill: bool) -> Region {
        let mut r = Region::staged(blocks.iter().map(|b| b.count * b.t.size()).sum());
        if fill {
            let v = r.staging.as_mut().expect("staged");
            let mut at = 0;
            for b in blocks {
                let len = b.count * b.t.size();
                // SAFETY: the user buffer holds these elements (MPI's contract for the call).
                unsafe { b.t.pack((base as *const u8).wrapping_add(b.disp), b.count, &mut v[at..at + len]) };
                at += len;
            }
        }
        r
    }

    /// What unpacks a [`Region::typed`] into user memory once the call is complete.
    pub(super) fn typed_unpacker(&self, base: *mut c_void, blocks: Vec<TypedBlock>) -> Option<Box<dyn FnOnce()>> {
        let staged = self.ptr as *const u8;
        Some(Box::new(move || {
            let mut at = 0;
            for b in &blocks {
                let len = b.count * b.t.size();
                // SAFETY: `staged` is this region's vector, kept alive until after this runs;
                // the user buffer holds these elements (MPI's contract).
                unsafe {
                    let src = std::slice::from_raw_parts(staged.add(at), len);
                    b.t.unpack(src, (base as *mut u8).wrapping_add(b.disp), b.count);
                }
                at += len;
            }
        }))
    }
}
