//! Language bindings (MPI-4.1 chapter 19): the Fortran 90 parameterized types and the
//! conversions of a status between its C, Fortran and `mpi_f08` forms.

use std::os::raw::c_int;

use crate::boundary::call;
use crate::consts::*;
use crate::error::{err, MpiResult, out_arg};
use crate::f90types::*;
use crate::status_convert::*;

/// Run a conversion: check the source, then the destination, then convert.
pub(crate) fn convert(name: &'static str, checks: [MpiResult<()>; 2], body: impl FnOnce()) -> c_int {
    call(name, MPI_COMM_WORLD, |_| {
        for c in checks {
            c?;
        }
        body();
        Ok(())
    })
}

crate::mpi_export! { MPI_Type_create_f90_integer, PMPI_Type_create_f90_integer, (r: c_int, newtype: *mut MPI_Datatype) {
    call("MPI_Type_create_f90_integer", MPI_COMM_WORLD, move |rt| {
        let o = out_arg(newtype, "newtype")?;
        if r < 0 {
            return err(MPI_ERR_ARG, format!("range {r} is negative"));
        }
        let Some(&(_, base)) = INTEGERS.iter().find(|k| r <= k.0) else {
            return err(MPI_ERR_ARG, format!("no integer kind has range {r} (the largest, INTEGER8, has 18)"));
        };
        *o = handle(rt, MPI_COMBINER_F90_INTEGER, vec![r], base)?;
        Ok(())
    })
}}
crate::mpi_export! { MPI_Type_create_f90_real, PMPI_Type_create_f90_real, (p: c_int, r: c_int, newtype: *mut MPI_Datatype) {
    call("MPI_Type_create_f90_real", MPI_COMM_WORLD, move |rt| {
        let o = out_arg(newtype, "newtype")?;
        let (real, _) = real_kind(p, r)?;
        *o = handle(rt, MPI_COMBINER_F90_REAL, vec![p, r], real)?;
        Ok(())
    })
}}
crate::mpi_export! { MPI_Type_create_f90_complex, PMPI_Type_create_f90_complex, (p: c_int, r: c_int, newtype: *mut MPI_Datatype) {
    call("MPI_Type_create_f90_complex", MPI_COMM_WORLD, move |rt| {
        let o = out_arg(newtype, "newtype")?;
        let (_, complex) = real_kind(p, r)?;
        *o = handle(rt, MPI_COMBINER_F90_COMPLEX, vec![p, r], complex)?;
        Ok(())
    })
}}
crate::mpi_export! { MPI_Status_c2f, PMPI_Status_c2f, (c_status: *const MPI_Status, f_status: *mut MPI_Fint) {
    convert("MPI_Status_c2f", [check_c(c_status), check_f(f_status)], || write_f(f_status, (&read(c_status)).into()))
}}
crate::mpi_export! { MPI_Status_f2c, PMPI_Status_f2c, (f_status: *const MPI_Fint, c_status: *mut MPI_Status) {
    convert("MPI_Status_f2c", [check_f(f_status), check_c(c_status)], || write(c_status, (&read_f(f_status)).into()))
}}
crate::mpi_export! { MPI_Status_c2f08, PMPI_Status_c2f08, (c_status: *const MPI_Status, f08_status: *mut MPI_F08_status) {
    convert("MPI_Status_c2f08", [check_c(c_status), check_f08(f08_status)], || write(f08_status, (&read(c_status)).into()))
}}
crate::mpi_export! { MPI_Status_f082c, PMPI_Status_f082c, (f08_status: *const MPI_F08_status, c_status: *mut MPI_Status) {
    convert("MPI_Status_f082c", [check_f08(f08_status), check_c(c_status)], || write(c_status, (&read(f08_status)).into()))
}}
crate::mpi_export! { MPI_Status_f2f08, PMPI_Status_f2f08, (f_status: *const MPI_Fint, f08_status: *mut MPI_F08_status) {
    convert("MPI_Status_f2f08", [check_f(f_status), check_f08(f08_status)], || write(f08_status, read_f(f_status)))
}}
crate::mpi_export! { MPI_Status_f082f, PMPI_Status_f082f, (f08_status: *const MPI_F08_status, f_status: *mut MPI_Fint) {
    convert("MPI_Status_f082f", [check_f08(f08_status), check_f(f_status)], || write_f(f_status, read(f08_status)))
}}
