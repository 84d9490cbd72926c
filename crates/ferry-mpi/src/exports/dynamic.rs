//! Process creation and management (MPI-4.1 chapter 11), the part Ferry has: spawn under
//! `ferry run` on one host, ports and the intercommunicators of
//! `MPI_Comm_accept`/`MPI_Comm_connect`, and the name service of `ferry run`
//! (docs/dynamic.md), and `MPI_Comm_join` over a connected socket.

use std::ffi::CStr;
use std::os::raw::{c_char, c_int};

use crate::boundary::call;
use crate::consts::*;
use crate::dynamic::*;
use crate::error::{c_string, err, out, MpiResult};

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

/// The arguments of one spawned command as C gives them: `argv` is NULL (`MPI_ARGV_NULL`)
/// or a NULL-terminated array of strings.
fn spawn_args(command: *const c_char, argv: *const *const c_char, maxprocs: c_int, info: MPI_Info) -> MpiResult<SpawnArgs> {
    let program = c_string(command, "command", 4096)?;
    let mut args = Vec::new();
    if !argv.is_null() {
        for i in 0.. {
            // SAFETY: MPI's contract: a non-null argv is an array of strings ending with NULL.
            let a = unsafe { *argv.add(i) };
            if a.is_null() {
                break;
            }
            // SAFETY: a NUL-terminated string (non-null, checked above).
            args.push(unsafe { CStr::from_ptr(a) }.to_bytes().to_vec());
        }
    }
    Ok(SpawnArgs { program, args, maxprocs, info })
}

/// Write the per-process codes, unless `MPI_ERRCODES_IGNORE` (NULL): a spawn starts all of
/// its processes or none, so every code is the same. After a spawn every parent writes
/// them; after a failure only the root does (it alone knows `maxprocs`).
fn write_errcodes(errcodes: *mut c_int, n: c_int, code: c_int) {
    if !errcodes.is_null() {
        for i in 0..n.max(0) as usize {
            // SAFETY: MPI's contract: the array holds one int per process asked for.
            unsafe { *errcodes.add(i) = code };
        }
    }
}

/// The common part of `MPI_Comm_spawn` and `MPI_Comm_spawn_multiple`: spawn the root's
/// `commands` (an error found in them fails the call at every parent, after the others learn
/// of it), and fill `array_of_errcodes`: the root's `asked` codes with the error class, or
/// every parent's with `MPI_SUCCESS` for each child that came.
fn spawn_and_report(rt: &mut crate::objects::Runtime, comm: MPI_Comm, root: c_int, at_root: bool, commands: Option<MpiResult<Vec<SpawnArgs>>>, array_of_errcodes: *mut c_int, asked: c_int) -> MpiResult<MPI_Comm> {
    let (commands, bad) = match commands {
        Some(Err(e)) => (Some(Vec::new()), Some(e)),
        Some(Ok(c)) => (Some(c), None),
        None => (None, None),
    };
    let result = spawn(rt, comm, root, commands);
    let result = match bad { Some(e) => Err(e), None => result };
    match &result {
        Err(e) if at_root => write_errcodes(array_of_errcodes, asked, e.class),
        Err(_) => {}
        // Every parent learns how many children came: the remote group.
        Ok(inter) => {
            let n = rt.comm(*inter)?.remote().map_or(0, |r| r.len() as c_int);
            write_errcodes(array_of_errcodes, n, MPI_SUCCESS);
        }
    }
    result
}

crate::mpi_export! { MPI_Comm_spawn, PMPI_Comm_spawn, (command: *const c_char, argv: *const *const c_char, maxprocs: c_int, info: MPI_Info, root: c_int, comm: MPI_Comm, intercomm: *mut MPI_Comm, array_of_errcodes: *mut c_int) {
    call("MPI_Comm_spawn", comm, move |rt| {
        let o = out(intercomm, "intercomm")?;
        let at_root = rt.comm(comm)?.rank == root;
        let commands = at_root.then(|| spawn_args(command, argv, maxprocs, info).map(|a| vec![a]));
        *o = spawn_and_report(rt, comm, root, at_root, commands, array_of_errcodes, maxprocs)?;
        Ok(())
    })
}}
crate::mpi_export! { MPI_Comm_spawn_multiple, PMPI_Comm_spawn_multiple, (count: c_int, array_of_commands: *const *const c_char, array_of_argv: *const *const *const c_char, array_of_maxprocs: *const c_int, array_of_info: *const MPI_Info, root: c_int, comm: MPI_Comm, intercomm: *mut MPI_Comm, array_of_errcodes: *mut c_int) {
    call("MPI_Comm_spawn_multiple", comm, move |rt| {
        let o = out(intercomm, "intercomm")?;
        let at_root = rt.comm(comm)?.rank == root;
        let mut total = 0;
        let commands = at_root.then(|| -> MpiResult<Vec<SpawnArgs>> {
            if count < 1 || array_of_commands.is_null() || array_of_maxprocs.is_null() || array_of_info.is_null() {
                return err(MPI_ERR_ARG, "count must be positive and the arrays of commands, maxprocs and infos given");
            }
            (0..count as usize)
                .map(|i| {
                    // SAFETY: MPI's contract: each array holds `count` entries (checked non-null above);
                    // `array_of_argv` is NULL (MPI_ARGVS_NULL) or holds `count` argv arrays.
                    let (cmd, argv, n, info) = unsafe {
                        let argv = if array_of_argv.is_null() { std::ptr::null() } else { *array_of_argv.add(i) };
                        (*array_of_commands.add(i), argv, *array_of_maxprocs.add(i), *array_of_info.add(i))
                    };
                    total += n.max(0);
                    spawn_args(cmd, argv, n, info)
                })
                .collect()
        });
        *o = spawn_and_report(rt, comm, root, at_root, commands, array_of_errcodes, total)?;
        Ok(())
    })
}}
crate::mpi_export! { MPI_Publish_name, PMPI_Publish_name, (service_name: *const c_char, _info: MPI_Info, port_name: *const c_char) {
    call("MPI_Publish_name", MPI_COMM_WORLD, move |rt| {
        let service = c_string(service_name, "service_name", MAX_PORT_NAME as c_int)?;
        let port = c_string(port_name, "port_name", MAX_PORT_NAME as c_int)?;
        publish_name(rt, &service, &port)
    })
}}
crate::mpi_export! { MPI_Lookup_name, PMPI_Lookup_name, (service_name: *const c_char, _info: MPI_Info, port_name: *mut c_char) {
    call("MPI_Lookup_name", MPI_COMM_WORLD, move |rt| {
        if port_name.is_null() {
            return err(MPI_ERR_ARG, "port_name is NULL");
        }
        let service = c_string(service_name, "service_name", MAX_PORT_NAME as c_int)?;
        let port = lookup_name(rt, &service)?;
        let n = port.len().min(MAX_PORT_NAME - 1);
        // SAFETY: MPI's contract: `port_name` holds MPI_MAX_PORT_NAME bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(port.as_ptr() as *const c_char, port_name, n);
            *port_name.add(n) = 0;
        }
        Ok(())
    })
}}
crate::mpi_export! { MPI_Unpublish_name, PMPI_Unpublish_name, (service_name: *const c_char, _info: MPI_Info, _port_name: *const c_char) {
    call("MPI_Unpublish_name", MPI_COMM_WORLD, move |rt| {
        let service = c_string(service_name, "service_name", MAX_PORT_NAME as c_int)?;
        unpublish_name(rt, &service)
    })
}}
crate::mpi_export! { MPI_Comm_join, PMPI_Comm_join, (fd: c_int, intercomm: *mut MPI_Comm) {
    call("MPI_Comm_join", MPI_COMM_SELF, move |rt| {
        let o = out(intercomm, "intercomm")?;
        *o = join(rt, fd)?;
        Ok(())
    })
}}
