//! Caching (MPI-4.1 chapter 7.7): keyvals and attributes of communicators, windows and
//! datatypes.

use std::os::raw::{c_int, c_void};

use crate::attr::*;
use crate::consts::*;

crate::mpi_export! { MPI_Comm_create_keyval, PMPI_Comm_create_keyval, (copy: Option<CopyFn>, delete: Option<DeleteFn>, keyval: *mut c_int, extra: *mut c_void) {
    create_keyval(Kind::Comm, copy, delete, keyval, extra, "MPI_Comm_create_keyval")
}}
crate::mpi_export! { MPI_Type_create_keyval, PMPI_Type_create_keyval, (copy: Option<CopyFn>, delete: Option<DeleteFn>, keyval: *mut c_int, extra: *mut c_void) {
    create_keyval(Kind::Type, copy, delete, keyval, extra, "MPI_Type_create_keyval")
}}
crate::mpi_export! { MPI_Comm_free_keyval, PMPI_Comm_free_keyval, (keyval: *mut c_int) {
    free_keyval(Kind::Comm, keyval, "MPI_Comm_free_keyval")
}}
crate::mpi_export! { MPI_Type_free_keyval, PMPI_Type_free_keyval, (keyval: *mut c_int) {
    free_keyval(Kind::Type, keyval, "MPI_Type_free_keyval")
}}
crate::mpi_export! { MPI_Comm_set_attr, PMPI_Comm_set_attr, (comm: MPI_Comm, key: c_int, val: *mut c_void) {
    set_attr(Kind::Comm, comm, key, val, "MPI_Comm_set_attr")
}}
crate::mpi_export! { MPI_Type_set_attr, PMPI_Type_set_attr, (dt: MPI_Datatype, key: c_int, val: *mut c_void) {
    set_attr(Kind::Type, dt, key, val, "MPI_Type_set_attr")
}}
crate::mpi_export! { MPI_Attr_put, PMPI_Attr_put, (comm: MPI_Comm, key: c_int, val: *mut c_void) {
    set_attr(Kind::Comm, comm, key, val, "MPI_Attr_put")
}}
crate::mpi_export! { MPI_Comm_get_attr, PMPI_Comm_get_attr, (comm: MPI_Comm, key: c_int, val: *mut c_void, flag: *mut c_int) {
    get_attr(Kind::Comm, comm, key, val, flag, "MPI_Comm_get_attr")
}}
crate::mpi_export! { MPI_Type_get_attr, PMPI_Type_get_attr, (dt: MPI_Datatype, key: c_int, val: *mut c_void, flag: *mut c_int) {
    get_attr(Kind::Type, dt, key, val, flag, "MPI_Type_get_attr")
}}
crate::mpi_export! { MPI_Attr_get, PMPI_Attr_get, (comm: MPI_Comm, key: c_int, val: *mut c_void, flag: *mut c_int) {
    get_attr(Kind::Comm, comm, key, val, flag, "MPI_Attr_get")
}}
crate::mpi_export! { MPI_Comm_delete_attr, PMPI_Comm_delete_attr, (comm: MPI_Comm, key: c_int) {
    delete_attr(Kind::Comm, comm, key, "MPI_Comm_delete_attr")
}}
crate::mpi_export! { MPI_Type_delete_attr, PMPI_Type_delete_attr, (dt: MPI_Datatype, key: c_int) {
    delete_attr(Kind::Type, dt, key, "MPI_Type_delete_attr")
}}
crate::mpi_export! { MPI_Win_create_keyval, PMPI_Win_create_keyval, (copy: Option<CopyFn>, delete: Option<DeleteFn>, keyval: *mut c_int, extra: *mut c_void) {
    // Windows are never duplicated: the copy callback is kept but never called.
    create_keyval(Kind::Win, copy, delete, keyval, extra, "MPI_Win_create_keyval")
}}
crate::mpi_export! { MPI_Win_free_keyval, PMPI_Win_free_keyval, (keyval: *mut c_int) {
    free_keyval(Kind::Win, keyval, "MPI_Win_free_keyval")
}}
crate::mpi_export! { MPI_Win_set_attr, PMPI_Win_set_attr, (win: MPI_Win, key: c_int, val: *mut c_void) {
    set_attr(Kind::Win, win, key, val, "MPI_Win_set_attr")
}}
crate::mpi_export! { MPI_Win_get_attr, PMPI_Win_get_attr, (win: MPI_Win, key: c_int, val: *mut c_void, flag: *mut c_int) {
    get_attr(Kind::Win, win, key, val, flag, "MPI_Win_get_attr")
}}
crate::mpi_export! { MPI_Win_delete_attr, PMPI_Win_delete_attr, (win: MPI_Win, key: c_int) {
    delete_attr(Kind::Win, win, key, "MPI_Win_delete_attr")
}}
