//! Intercommunicators (MPI-4.1 chapter 7.6): creation from two communicators or from two
//! groups, merge, and the remote group.

use std::os::raw::{c_char, c_int};

use crate::boundary::call;
use crate::consts::*;
use crate::error::out_arg;
use crate::exports::sessions::call_creating;
use crate::comm::intercomm::*;
use crate::comm::from_group::FromGroups;

crate::mpi_export! { MPI_Intercomm_create, PMPI_Intercomm_create, (local_comm: MPI_Comm, local_leader: c_int, peer_comm: MPI_Comm,
        remote_leader: c_int, tag: c_int, newcomm: *mut MPI_Comm) {
    call("MPI_Intercomm_create", local_comm, move |rt| {
        let o = out_arg(newcomm, "newintercomm")?;
        *o = create(rt, local_comm, local_leader, peer_comm, remote_leader, tag)?;
        Ok(())
    })
}}
crate::mpi_export! { MPI_Intercomm_merge, PMPI_Intercomm_merge, (comm: MPI_Comm, high: c_int, newcomm: *mut MPI_Comm) {
    call("MPI_Intercomm_merge", comm, move |rt| { let o = out_arg(newcomm, "newintracomm")?; *o = merge(rt, comm, high != 0)?; Ok(()) })
}}
crate::mpi_export! { MPI_Comm_remote_size, PMPI_Comm_remote_size, (comm: MPI_Comm, size: *mut c_int) {
    call("MPI_Comm_remote_size", comm, move |rt| { let o = out_arg(size, "size")?; *o = inter(rt, comm)?.peer_size(); Ok(()) })
}}
crate::mpi_export! { MPI_Comm_remote_group, PMPI_Comm_remote_group, (comm: MPI_Comm, group: *mut MPI_Group) {
    call("MPI_Comm_remote_group", comm, move |rt| {
        let o = out_arg(group, "group")?;
        let g = inter(rt, comm)?.peers().clone();
        *o = rt.add_group(g);
        Ok(())
    })
}}
crate::mpi_export! { MPI_Intercomm_create_from_groups, PMPI_Intercomm_create_from_groups, (local_group: MPI_Group, local_leader: c_int,
        remote_group: MPI_Group, remote_leader: c_int, stringtag: *const c_char, info: MPI_Info, errhandler: MPI_Errhandler,
        newintercomm: *mut MPI_Comm) {
    call_creating("MPI_Intercomm_create_from_groups", errhandler, newintercomm, |rt| {
        let args = FromGroups::new(rt, stringtag, info, errhandler)?;
        from_groups::create(rt, local_group, local_leader, remote_group, remote_leader, args)
    })
}}
