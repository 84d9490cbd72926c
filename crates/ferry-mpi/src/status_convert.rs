//! A status in its three forms (MPI-4 19.3.5): C's `MPI_Status`, the Fortran `INTEGER`
//! array of the `mpi` module and `mpif.h` (`MPI_F_STATUS_SIZE` integers; the public fields
//! at `MPI_F_SOURCE`, `MPI_F_TAG`, `MPI_F_ERROR`) and the `mpi_f08` module's
//! `TYPE(MPI_Status)` as C sees it (`MPI_F08_status`), each laid out as MPICH lays it out,
//! with the six conversions between them. Every conversion goes through `MPI_F08_status`,
//! field by field, so the private count and cancelled fields travel too.


use crate::abi_objects;
use crate::consts::*;
use crate::error::{err, MpiResult};

/// A Fortran status, and where its public fields are (from 0, as C indexes it).
const F_SIZE: usize = MPI_F_STATUS_SIZE as usize;
const F_SOURCE: usize = MPI_F_SOURCE as usize;
const F_TAG: usize = MPI_F_TAG as usize;
const F_ERROR: usize = MPI_F_ERROR as usize;

impl From<&MPI_Status> for MPI_F08_status {
    fn from(s: &MPI_Status) -> Self {
        MPI_F08_status {
            count_lo: s.count_lo,
            count_hi_and_cancelled: s.count_hi_and_cancelled,
            MPI_SOURCE: s.MPI_SOURCE,
            MPI_TAG: s.MPI_TAG,
            MPI_ERROR: s.MPI_ERROR,
        }
    }
}

impl From<&MPI_F08_status> for MPI_Status {
    fn from(s: &MPI_F08_status) -> Self {
        MPI_Status {
            count_lo: s.count_lo,
            count_hi_and_cancelled: s.count_hi_and_cancelled,
            MPI_SOURCE: s.MPI_SOURCE,
            MPI_TAG: s.MPI_TAG,
            MPI_ERROR: s.MPI_ERROR,
        }
    }
}

impl MPI_F08_status {
    fn from_fortran(f: &[MPI_Fint; F_SIZE]) -> Self {
        MPI_F08_status { count_lo: f[0], count_hi_and_cancelled: f[1], MPI_SOURCE: f[F_SOURCE], MPI_TAG: f[F_TAG], MPI_ERROR: f[F_ERROR] }
    }

    fn to_fortran(self) -> [MPI_Fint; F_SIZE] {
        let mut f = [0; F_SIZE];
        f[0] = self.count_lo;
        f[1] = self.count_hi_and_cancelled;
        f[F_SOURCE] = self.MPI_SOURCE;
        f[F_TAG] = self.MPI_TAG;
        f[F_ERROR] = self.MPI_ERROR;
        f
    }
}

/// A status argument of some form: NULL is no status (MPI_ERR_ARG); an IGNORE sentinel is
/// none to convert, which MPICH calls MPI_ERR_OTHER, and so does Ferry.
fn check<T>(p: *const T, form: &str, ignores: &[(*const T, &str)]) -> MpiResult<()> {
    if p.is_null() {
        return err(MPI_ERR_ARG, format!("the {form} status is NULL"));
    }
    match ignores.iter().find(|(q, _)| !q.is_null() && std::ptr::eq(p, *q)) {
        Some((_, name)) => err(MPI_ERR_OTHER, format!("{name} cannot be converted")),
        None => Ok(()),
    }
}

pub(crate) fn check_c(p: *const MPI_Status) -> MpiResult<()> {
    // MPICH's MPI_STATUS_IGNORE and MPI_STATUSES_IGNORE are both (MPI_Status *)1.
    check(p, "C", &[(MPI_STATUS_IGNORE as *const MPI_Status, "MPI_STATUS_IGNORE")])
}

pub(crate) fn check_f(p: *const MPI_Fint) -> MpiResult<()> {
    let (one, many) = abi_objects::fortran_status_ignores();
    check(p, "Fortran", &[(one, "MPI_F_STATUS_IGNORE"), (many, "MPI_F_STATUSES_IGNORE")])
}

pub(crate) fn check_f08(p: *const MPI_F08_status) -> MpiResult<()> {
    let (one, many) = abi_objects::f08_status_ignores();
    check(p, "Fortran 2008", &[(one, "MPI_F08_STATUS_IGNORE"), (many, "MPI_F08_STATUSES_IGNORE")])
}

/// Read a status the checks above accepted.
pub(crate) fn read<T: Copy>(p: *const T) -> T {
    // SAFETY: checked non-null and no sentinel; MPI's contract makes it a whole status.
    unsafe { p.read_unaligned() }
}

/// Write a status the checks above accepted.
pub(crate) fn write<T>(p: *mut T, v: T) {
    // SAFETY: as for `read`, the caller's status to fill.
    unsafe { p.write_unaligned(v) }
}

pub(crate) fn read_f(p: *const MPI_Fint) -> MPI_F08_status {
    MPI_F08_status::from_fortran(&read(p as *const [MPI_Fint; F_SIZE]))
}

pub(crate) fn write_f(p: *mut MPI_Fint, s: MPI_F08_status) {
    write(p as *mut [MPI_Fint; F_SIZE], s.to_fortran());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_travels_through_every_form() {
        let c = MPI_Status { count_lo: 7, count_hi_and_cancelled: 3, MPI_SOURCE: 4, MPI_TAG: 99, MPI_ERROR: 15 };
        let f08 = MPI_F08_status::from(&c);
        let f = f08.to_fortran();
        assert_eq!(f, [7, 3, 4, 99, 15]);
        assert_eq!(MPI_Status::from(&MPI_F08_status::from_fortran(&f)), c);
    }

    #[test]
    fn the_layouts_are_mpichs() {
        assert_eq!(std::mem::size_of::<MPI_F08_status>(), F_SIZE * std::mem::size_of::<MPI_Fint>());
        assert_eq!(std::mem::offset_of!(MPI_F08_status, MPI_SOURCE), F_SOURCE * 4);
        assert_eq!(std::mem::offset_of!(MPI_F08_status, MPI_ERROR), F_ERROR * 4);
    }
}
