//! Process creation and management (MPI-4.1 chapter 11), the part Ferry has: ports and the
//! intercommunicators of `MPI_Comm_accept`/`MPI_Comm_connect` (docs/dynamic.md). Spawn and
//! the name service are not built.

use std::os::raw::{c_char, c_int};

use crate::boundary::call;
use crate::consts::*;
use crate::dynamic::*;
use crate::error::{c_string, err, out};

crate::mpi_export! { MPI_Open_port, PMPI_Open_port, (_info: MPI_Info, port_name: *mut c_char) {
    call("MPI_Open_port", MPI_COMM_WORLD, move |rt| {
        if port_name.is_null() {
            return err(MPI_ERR_ARG, "port_name is NULL");
        }
        let name = open_port(rt)?;
        debug_assert!(name.len() < MAX_PORT_NAME);
        // SAFETY: MPI's contract: `port_name` holds MPI_MAX_PORT_NAME bytes; a name is shorter.
        unsafe {
            std::ptr::copy_nonoverlapping(name.as_ptr() as *const c_char, port_name, name.len());
            *port_name.add(name.len()) = 0;
        }
        Ok(())
    })
}}
crate::mpi_export! { MPI_Close_port, PMPI_Close_port, (port_name: *const c_char) {
    call("MPI_Close_port", MPI_COMM_WORLD, move |rt| {
        let name = c_string(port_name, "port_name", MAX_PORT_NAME as c_int)?;
        close_port(rt, &name)
    })
}}
crate::mpi_export! { MPI_Comm_accept, PMPI_Comm_accept, (port_name: *const c_char, _info: MPI_Info, root: c_int, comm: MPI_Comm, newcomm: *mut MPI_Comm) {
    call("MPI_Comm_accept", comm, move |rt| {
        let o = out(newcomm, "newcomm")?;
        // The port name is significant at the root only.
        let name = if rt.comm(comm)?.rank == root { c_string(port_name, "port_name", MAX_PORT_NAME as c_int)? } else { String::new() };
        *o = meet(rt, comm, root, Role::Accept(&name))?;
        Ok(())
    })
}}
crate::mpi_export! { MPI_Comm_connect, PMPI_Comm_connect, (port_name: *const c_char, _info: MPI_Info, root: c_int, comm: MPI_Comm, newcomm: *mut MPI_Comm) {
    call("MPI_Comm_connect", comm, move |rt| {
        let o = out(newcomm, "newcomm")?;
        let name = if rt.comm(comm)?.rank == root { c_string(port_name, "port_name", MAX_PORT_NAME as c_int)? } else { String::new() };
        *o = meet(rt, comm, root, Role::Connect(&name))?;
        Ok(())
    })
}}
