//! The MPI-1 names that MPI-2 and MPI-3 replaced and MPICH still declares and exports
//! (`MPI_Address`, `MPI_Type_extent`, `MPI_Keyval_create`, `MPI_Errhandler_set`...):
//! programs built against MPICH's header call them. Each is its replacement under the old
//! name.

use std::os::raw::{c_int, c_void};

use crate::attr::{CopyFn, DeleteFn};
use crate::boundary::call;
use crate::consts::*;
use crate::errhandler::CommErrhandlerFn;
use crate::error::out_arg;

crate::mpi_export! { MPI_Address, PMPI_Address, (location: *mut c_void, address: *mut MPI_Aint) {
    crate::exports::datatypes::PMPI_Get_address(location, address)
}}

crate::mpi_export! { MPI_Type_extent, PMPI_Type_extent, (dt: MPI_Datatype, extent: *mut MPI_Aint) {
    call("MPI_Type_extent", MPI_COMM_WORLD, move |rt| {
        *out_arg(extent, "extent")? = rt.any_datatype(dt)?.extent();
        Ok(())
    })
}}

crate::mpi_export! { MPI_Type_lb, PMPI_Type_lb, (dt: MPI_Datatype, lb: *mut MPI_Aint) {
    call("MPI_Type_lb", MPI_COMM_WORLD, move |rt| {
        *out_arg(lb, "displacement")? = rt.any_datatype(dt)?.lb();
        Ok(())
    })
}}

crate::mpi_export! { MPI_Type_ub, PMPI_Type_ub, (dt: MPI_Datatype, ub: *mut MPI_Aint) {
    call("MPI_Type_ub", MPI_COMM_WORLD, move |rt| {
        *out_arg(ub, "displacement")? = rt.any_datatype(dt)?.ub();
        Ok(())
    })
}}

crate::mpi_export! { MPI_Type_hindexed, PMPI_Type_hindexed, (count: c_int, blocklens: *mut c_int, displs: *mut MPI_Aint, old: MPI_Datatype, newtype: *mut MPI_Datatype) {
    crate::exports::datatypes::PMPI_Type_create_hindexed(count, blocklens, displs, old, newtype)
}}

crate::mpi_export! { MPI_Type_hvector, PMPI_Type_hvector, (count: c_int, blocklen: c_int, stride: MPI_Aint, old: MPI_Datatype, newtype: *mut MPI_Datatype) {
    crate::exports::datatypes::PMPI_Type_create_hvector(count, blocklen, stride, old, newtype)
}}

crate::mpi_export! { MPI_Type_struct, PMPI_Type_struct, (count: c_int, blocklens: *mut c_int, displs: *mut MPI_Aint, types: *mut MPI_Datatype, newtype: *mut MPI_Datatype) {
    crate::exports::datatypes::PMPI_Type_create_struct(count, blocklens, displs, types, newtype)
}}

crate::mpi_export! { MPI_Keyval_create, PMPI_Keyval_create, (copy: Option<CopyFn>, delete: Option<DeleteFn>, keyval: *mut c_int, extra: *mut c_void) {
    crate::exports::caching::PMPI_Comm_create_keyval(copy, delete, keyval, extra)
}}

crate::mpi_export! { MPI_Keyval_free, PMPI_Keyval_free, (keyval: *mut c_int) {
    crate::exports::caching::PMPI_Comm_free_keyval(keyval)
}}

crate::mpi_export! { MPI_Attr_delete, PMPI_Attr_delete, (comm: MPI_Comm, keyval: c_int) {
    crate::exports::caching::PMPI_Comm_delete_attr(comm, keyval)
}}

crate::mpi_export! { MPI_Errhandler_create, PMPI_Errhandler_create, (f: Option<CommErrhandlerFn>, eh: *mut MPI_Errhandler) {
    crate::exports::environment::PMPI_Comm_create_errhandler(f, eh)
}}

crate::mpi_export! { MPI_Errhandler_set, PMPI_Errhandler_set, (comm: MPI_Comm, eh: MPI_Errhandler) {
    crate::exports::environment::PMPI_Comm_set_errhandler(comm, eh)
}}

crate::mpi_export! { MPI_Errhandler_get, PMPI_Errhandler_get, (comm: MPI_Comm, eh: *mut MPI_Errhandler) {
    crate::exports::environment::PMPI_Comm_get_errhandler(comm, eh)
}}
