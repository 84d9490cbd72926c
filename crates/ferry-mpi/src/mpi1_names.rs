//! The MPI-1 names that MPI-2 and MPI-3 replaced and MPICH still declares and exports
//! (`MPI_Address`, `MPI_Type_extent`, `MPI_Keyval_create`, `MPI_Errhandler_set`...), plus
//! the status conversions between C and Fortran: programs built against MPICH's header call
//! them. Each is its replacement under the old name.

use std::os::raw::{c_int, c_void};

use crate::attr::{CopyFn, DeleteFn};
use crate::boundary::call;
use crate::comm::out_arg;
use crate::consts::*;
use crate::error::{err, MpiResult};
use crate::errhandler::CommErrhandlerFn;

crate::mpi_export! { MPI_Address, PMPI_Address, (location: *mut c_void, address: *mut MPI_Aint) {
    crate::address::PMPI_Get_address(location, address)
}}

crate::mpi_export! { MPI_Type_extent, PMPI_Type_extent, (dt: MPI_Datatype, extent: *mut MPI_Aint) {
    call("MPI_Type_extent", MPI_COMM_WORLD, |rt| {
        *out_arg(extent, "extent")? = rt.any_datatype(dt)?.extent();
        Ok(())
    })
}}

crate::mpi_export! { MPI_Type_lb, PMPI_Type_lb, (dt: MPI_Datatype, lb: *mut MPI_Aint) {
    call("MPI_Type_lb", MPI_COMM_WORLD, |rt| {
        *out_arg(lb, "displacement")? = rt.any_datatype(dt)?.lb();
        Ok(())
    })
}}

crate::mpi_export! { MPI_Type_ub, PMPI_Type_ub, (dt: MPI_Datatype, ub: *mut MPI_Aint) {
    call("MPI_Type_ub", MPI_COMM_WORLD, |rt| {
        *out_arg(ub, "displacement")? = rt.any_datatype(dt)?.ub();
        Ok(())
    })
}}

crate::mpi_export! { MPI_Type_hindexed, PMPI_Type_hindexed, (count: c_int, blocklens: *mut c_int, displs: *mut MPI_Aint, old: MPI_Datatype, newtype: *mut MPI_Datatype) {
    crate::types::PMPI_Type_create_hindexed(count, blocklens, displs, old, newtype)
}}

crate::mpi_export! { MPI_Type_hvector, PMPI_Type_hvector, (count: c_int, blocklen: c_int, stride: MPI_Aint, old: MPI_Datatype, newtype: *mut MPI_Datatype) {
    crate::types::PMPI_Type_create_hvector(count, blocklen, stride, old, newtype)
}}

crate::mpi_export! { MPI_Type_struct, PMPI_Type_struct, (count: c_int, blocklens: *mut c_int, displs: *mut MPI_Aint, types: *mut MPI_Datatype, newtype: *mut MPI_Datatype) {
    crate::types::PMPI_Type_create_struct(count, blocklens, displs, types, newtype)
}}

crate::mpi_export! { MPI_Keyval_create, PMPI_Keyval_create, (copy: Option<CopyFn>, delete: Option<DeleteFn>, keyval: *mut c_int, extra: *mut c_void) {
    crate::attr::PMPI_Comm_create_keyval(copy, delete, keyval, extra)
}}

crate::mpi_export! { MPI_Keyval_free, PMPI_Keyval_free, (keyval: *mut c_int) {
    crate::attr::PMPI_Comm_free_keyval(keyval)
}}

crate::mpi_export! { MPI_Attr_delete, PMPI_Attr_delete, (comm: MPI_Comm, keyval: c_int) {
    crate::attr::PMPI_Comm_delete_attr(comm, keyval)
}}

crate::mpi_export! { MPI_Errhandler_create, PMPI_Errhandler_create, (f: Option<CommErrhandlerFn>, eh: *mut MPI_Errhandler) {
    crate::errhandler::PMPI_Comm_create_errhandler(f, eh)
}}

crate::mpi_export! { MPI_Errhandler_set, PMPI_Errhandler_set, (comm: MPI_Comm, eh: MPI_Errhandler) {
    crate::misc::PMPI_Comm_set_errhandler(comm, eh)
}}

crate::mpi_export! { MPI_Errhandler_get, PMPI_Errhandler_get, (comm: MPI_Comm, eh: *mut MPI_Errhandler) {
    crate::misc::PMPI_Comm_get_errhandler(comm, eh)
}}

/// The Fortran status (MPI_STATUS_SIZE integers) holds the C status's fields in order.
const F_STATUS_INTS: usize = std::mem::size_of::<MPI_Status>() / std::mem::size_of::<MPI_Fint>();

/// NULL is no status (MPI_ERR_ARG); MPI_STATUS_IGNORE ((MPI_Status *)1) is none to convert,
/// which MPICH calls MPI_ERR_OTHER, and so does Ferry.
fn check_c_status(p: *const MPI_Status) -> MpiResult<()> {
    match p as usize {
        0 => err(MPI_ERR_ARG, "the C status is NULL"),
        1 => err(MPI_ERR_OTHER, "MPI_STATUS_IGNORE cannot be converted"),
        _ => Ok(()),
    }
}

crate::mpi_export! { MPI_Status_c2f, PMPI_Status_c2f, (c_status: *const MPI_Status, f_status: *mut MPI_Fint) {
    call("MPI_Status_c2f", MPI_COMM_WORLD, |_| {
        check_c_status(c_status)?;
        if f_status.is_null() {
            return err(MPI_ERR_ARG, "the Fortran status is NULL");
        }
        // SAFETY: both point to a whole status (checked above; MPI's contract), and a C
        // status is F_STATUS_INTS ints.
        unsafe { std::ptr::copy_nonoverlapping(c_status as *const MPI_Fint, f_status, F_STATUS_INTS) };
        Ok(())
    })
}}

crate::mpi_export! { MPI_Status_f2c, PMPI_Status_f2c, (f_status: *const MPI_Fint, c_status: *mut MPI_Status) {
    call("MPI_Status_f2c", MPI_COMM_WORLD, |_| {
        // SAFETY: a plain read of a pointer that only a Fortran library's start-up writes.
        let f_ignore = unsafe { std::ptr::addr_of!(crate::abi_objects::MPI_F_STATUS_IGNORE).read() };
        if f_status.is_null() {
            return err(MPI_ERR_ARG, "the Fortran status is NULL");
        }
        if std::ptr::eq(f_status, f_ignore) {
            return err(MPI_ERR_OTHER, "MPI_F_STATUS_IGNORE cannot be converted");
        }
        check_c_status(c_status)?;
        // SAFETY: as in MPI_Status_c2f.
        unsafe { std::ptr::copy_nonoverlapping(f_status, c_status as *mut MPI_Fint, F_STATUS_INTS) };
        Ok(())
    })
}}
