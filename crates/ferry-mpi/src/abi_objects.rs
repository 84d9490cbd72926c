//! Data objects that MPICH's library exports under fixed names, for programs and libraries
//! built against MPICH's header: such a program refers to them by symbol, and a data symbol
//! must resolve when the program is loaded, before any call (lazy binding covers functions
//! only). Debian's MPICH Fortran layer (`libmpichfort.so.12`) needs these four merely to
//! load, and its initialisation writes the addresses of its own STATUS_IGNORE objects into
//! `MPI_F_STATUS_IGNORE` and `MPI_F_STATUSES_IGNORE`, which are therefore writable and null
//! until then, as in MPICH. The two weights sentinels point to objects of their own, so that
//! comparisons against them work; the distributed graph functions compare weights arguments
//! with them, and no Ferry function reads through any of them.

use std::os::raw::c_int;

/// A pointer a C program reads as `T *`: the address of one of the objects below, fixed at
/// link time and never written, so sharing it between threads is sound.
#[repr(transparent)]
pub struct Sentinel(*const c_int);

// SAFETY: the pointer is a constant address that nothing writes through.
unsafe impl Sync for Sentinel {}

// The objects the sentinels point at (MPICH's names for them).
#[no_mangle]
pub static MPIR_C_MPI_UNWEIGHTED: c_int = 0;
#[no_mangle]
pub static MPIR_C_MPI_WEIGHTS_EMPTY: c_int = 0;

/// `int * const MPI_UNWEIGHTED`: "no weights" for distributed graph topologies.
#[no_mangle]
pub static MPI_UNWEIGHTED: Sentinel = Sentinel(&MPIR_C_MPI_UNWEIGHTED);
/// `int * const MPI_WEIGHTS_EMPTY`: an empty weights array.
#[no_mangle]
pub static MPI_WEIGHTS_EMPTY: Sentinel = Sentinel(&MPIR_C_MPI_WEIGHTS_EMPTY);
/// Whether a weights argument is `MPI_UNWEIGHTED`.
pub(crate) fn is_unweighted(p: *const c_int) -> bool {
    std::ptr::eq(p, MPI_UNWEIGHTED.0)
}
/// Whether a weights argument is `MPI_WEIGHTS_EMPTY`.
pub(crate) fn is_weights_empty(p: *const c_int) -> bool {
    std::ptr::eq(p, MPI_WEIGHTS_EMPTY.0)
}

/// `MPI_Fint *MPI_F_STATUS_IGNORE`: the Fortran STATUS_IGNORE seen from C, set by the
/// Fortran layer when it starts.
#[no_mangle]
pub static mut MPI_F_STATUS_IGNORE: *mut c_int = std::ptr::null_mut();
/// `MPI_Fint *MPI_F_STATUSES_IGNORE`: the Fortran STATUSES_IGNORE seen from C, likewise.
#[no_mangle]
pub static mut MPI_F_STATUSES_IGNORE: *mut c_int = std::ptr::null_mut();

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentinels_are_distinct_and_not_null() {
        let all = [MPI_UNWEIGHTED.0, MPI_WEIGHTS_EMPTY.0];
        for (i, p) in all.iter().enumerate() {
            assert!(!p.is_null());
            assert!(all[..i].iter().all(|q| q != p), "sentinel {i} repeats another");
        }
    }
}
