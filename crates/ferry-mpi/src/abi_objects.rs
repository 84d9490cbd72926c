//! Data objects that MPICH's library exports under fixed names, for programs and libraries
//! built against MPICH's header: such a program refers to them by symbol, and a data symbol
//! must resolve when the program is loaded, before any call (lazy binding covers functions
//! only). Debian's MPICH Fortran layer (`libmpichfort.so.12`) needs these four merely to
//! load, and its initialisation writes the addresses of its own STATUS_IGNORE objects into
//! `MPI_F_STATUS_IGNORE` and `MPI_F_STATUSES_IGNORE`, which are therefore writable and null
//! until then, as in MPICH. The weights sentinels and the `mpi_f08` status sentinels
//! (`MPI_F08_STATUS_IGNORE`, `MPI_F08_STATUSES_IGNORE`, which MPICH's Fortran layer also
//! needs to load) point to objects of their own, so that comparisons against them work; the
//! distributed graph functions and the status conversions compare arguments with them, and
//! no Ferry function reads or writes through any of them.

use std::os::raw::c_int;

use crate::consts::MPI_F08_status;

/// A pointer a C program reads as `T *`: the address of one of the objects below, fixed at
/// link time and never written, so sharing it between threads is sound.
#[repr(transparent)]
pub struct Sentinel<T>(*const T);

// SAFETY: the pointer is a constant address that nothing writes through.
unsafe impl<T> Sync for Sentinel<T> {}

// The objects the sentinels point at (MPICH's names for them).
#[no_mangle]
pub static MPIR_C_MPI_UNWEIGHTED: c_int = 0;
#[no_mangle]
pub static MPIR_C_MPI_WEIGHTS_EMPTY: c_int = 0;

/// `int * const MPI_UNWEIGHTED`: "no weights" for distributed graph topologies.
#[no_mangle]
pub static MPI_UNWEIGHTED: Sentinel<c_int> = Sentinel(&MPIR_C_MPI_UNWEIGHTED);
/// `int * const MPI_WEIGHTS_EMPTY`: an empty weights array.
#[no_mangle]
pub static MPI_WEIGHTS_EMPTY: Sentinel<c_int> = Sentinel(&MPIR_C_MPI_WEIGHTS_EMPTY);
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

const NO_STATUS: MPI_F08_status = MPI_F08_status { count_lo: 0, count_hi_and_cancelled: 0, MPI_SOURCE: 0, MPI_TAG: 0, MPI_ERROR: 0 };
// The objects the `mpi_f08` status sentinels point at (MPICH's names for them, which MPICH's
// own `mpi_f08` module binds its MPI_STATUS(ES)_IGNORE to).
#[no_mangle]
pub static MPIR_F08_MPI_STATUS_IGNORE_OBJ: MPI_F08_status = NO_STATUS;
#[no_mangle]
pub static MPIR_F08_MPI_STATUSES_IGNORE_OBJ: [MPI_F08_status; 1] = [NO_STATUS];

/// `MPI_F08_status *MPI_F08_STATUS_IGNORE`: the `mpi_f08` module's MPI_STATUS_IGNORE seen
/// from C.
#[no_mangle]
pub static MPI_F08_STATUS_IGNORE: Sentinel<MPI_F08_status> = Sentinel(&MPIR_F08_MPI_STATUS_IGNORE_OBJ);
/// `MPI_F08_status *MPI_F08_STATUSES_IGNORE`: its MPI_STATUSES_IGNORE.
#[no_mangle]
pub static MPI_F08_STATUSES_IGNORE: Sentinel<MPI_F08_status> = Sentinel(MPIR_F08_MPI_STATUSES_IGNORE_OBJ.as_ptr());

/// `MPI_F08_STATUS_IGNORE` and `MPI_F08_STATUSES_IGNORE`.
pub(crate) fn f08_status_ignores() -> (*const MPI_F08_status, *const MPI_F08_status) {
    (MPI_F08_STATUS_IGNORE.0, MPI_F08_STATUSES_IGNORE.0)
}

/// `MPI_F_STATUS_IGNORE` and `MPI_F_STATUSES_IGNORE`: null until a Fortran layer sets them.
pub(crate) fn fortran_status_ignores() -> (*const c_int, *const c_int) {
    // SAFETY: plain reads of pointers that only a Fortran library's start-up writes.
    unsafe { (std::ptr::addr_of!(MPI_F_STATUS_IGNORE).read(), std::ptr::addr_of!(MPI_F_STATUSES_IGNORE).read()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentinels_are_distinct_and_not_null() {
        let all = [MPI_UNWEIGHTED.0, MPI_WEIGHTS_EMPTY.0, MPI_F08_STATUS_IGNORE.0 as *const c_int, MPI_F08_STATUSES_IGNORE.0 as *const c_int];
        for (i, p) in all.iter().enumerate() {
            assert!(!p.is_null());
            assert!(all[..i].iter().all(|q| q != p), "sentinel {i} repeats another");
        }
    }
}
