//! Communicators (MPI-4.1 chapter 7.4 to 7.6 and 7.8): constructors, duplication and split,
//! intercommunicators, comparison, the queries, and communicator names.

use std::os::raw::{c_char, c_int};

use crate::boundary::call;
use crate::comm::*;
use crate::consts::*;
use crate::error::out;
use crate::names::*;

/// The exported dup functions: the new communicator, then its copied attributes. With
/// `request`, the idups: the duplicate is complete at once and so is the request.
pub(crate) fn dup_export(name: &'static str, comm: MPI_Comm, info: Option<MPI_Info>, newcomm: *mut MPI_Comm, request: Option<*mut MPI_Request>) -> c_int {
    let rc = call(name, comm, |rt| {
        let o = out(newcomm, "newcomm")?;
        rt.comm(comm)?;
        let hints = info.map(|i| crate::info::optional(rt, i)).transpose()?;
        match request {
            None => *o = dup(rt, comm, hints)?,
            Some(r) => {
                let r = out(r, "request")?;
                *o = idup(rt, comm, hints)?;
                *r = rt.add_req(crate::completion::ApiReq::done(comm, MPI_ANY_SOURCE));
            }
        }
        Ok(())
    });
    if rc != MPI_SUCCESS { return rc; }
    // SAFETY: checked non-null and written by the call above.
    let new = unsafe { *newcomm };
    crate::exports::caching::after_dup(name, crate::attr::Kind::Comm, comm, new, |rt| {
        rt.comms.remove(&new);
        // SAFETY: as above.
        unsafe { *newcomm = MPI_COMM_NULL };
    })
}

/// Free `*comm` for `name`: its attributes' delete callbacks, then the handle.
pub(crate) fn free_export(name: &'static str, comm: *mut MPI_Comm) -> c_int {
    // SAFETY: MPI passes a pointer to the caller's handle; checked for NULL first.
    let h = if comm.is_null() { MPI_COMM_NULL } else { unsafe { *comm } };
    let rc = crate::exports::caching::before_free(name, crate::attr::Kind::Comm, h);
    if rc != MPI_SUCCESS { return rc; }
    call(name, h, |rt| {
        let o = out(comm, "comm")?;
        freeable(rt, h)?;
        rt.comms.remove(&h);
        if rt.parent == h {
            rt.parent = MPI_COMM_NULL;
        }
        *o = MPI_COMM_NULL;
        Ok(())
    })
}

crate::mpi_export! { MPI_Comm_size, PMPI_Comm_size, (comm: MPI_Comm, size: *mut c_int) {
    if let Some(rc) = crate::op_queries::answer(|v| { *out(size, "size")? = v.comm(comm)?.1; Ok(()) }) {
        return rc;
    }
    call("MPI_Comm_size", comm, move |rt| { let s = rt.comm(comm)?.size(); *out(size, "size")? = s; Ok(()) })
}}
crate::mpi_export! { MPI_Comm_rank, PMPI_Comm_rank, (comm: MPI_Comm, rank: *mut c_int) {
    if let Some(rc) = crate::op_queries::answer(|v| { *out(rank, "rank")? = v.comm(comm)?.0; Ok(()) }) {
        return rc;
    }
    call("MPI_Comm_rank", comm, move |rt| { let r = rt.comm(comm)?.rank; *out(rank, "rank")? = r; Ok(()) })
}}
crate::mpi_export! { MPI_Comm_dup, PMPI_Comm_dup, (comm: MPI_Comm, newcomm: *mut MPI_Comm) {
    dup_export("MPI_Comm_dup", comm, None, newcomm, None)
}}
crate::mpi_export! { MPI_Comm_idup, PMPI_Comm_idup, (comm: MPI_Comm, newcomm: *mut MPI_Comm, request: *mut MPI_Request) {
    dup_export("MPI_Comm_idup", comm, None, newcomm, Some(request))
}}
crate::mpi_export! { MPI_Comm_idup_with_info, PMPI_Comm_idup_with_info, (comm: MPI_Comm, info: MPI_Info, newcomm: *mut MPI_Comm, request: *mut MPI_Request) {
    dup_export("MPI_Comm_idup_with_info", comm, Some(info), newcomm, Some(request))
}}
crate::mpi_export! { MPI_Comm_dup_with_info, PMPI_Comm_dup_with_info, (comm: MPI_Comm, info: MPI_Info, newcomm: *mut MPI_Comm) {
    dup_export("MPI_Comm_dup_with_info", comm, Some(info), newcomm, None)
}}
crate::mpi_export! { MPI_Comm_split, PMPI_Comm_split, (comm: MPI_Comm, color: c_int, key: c_int, newcomm: *mut MPI_Comm) {
    call("MPI_Comm_split", comm, move |rt| { let o = out(newcomm, "newcomm")?; rt.comm(comm)?; *o = split(rt, comm, color, key)?; Ok(()) })
}}
crate::mpi_export! { MPI_Comm_free, PMPI_Comm_free, (comm: *mut MPI_Comm) {
    free_export("MPI_Comm_free", comm)
}}
// MPI_Comm_disconnect: it waits until the pending communication of this process on the
// communicator is complete, then frees it (on every communicator, as MPI defines it); an
// intercommunicator to another job also leaves the bridge to it when nothing else uses it
// (docs/dynamic.md). The requests stay the program's to complete.
crate::mpi_export! { MPI_Comm_disconnect, PMPI_Comm_disconnect, (comm: *mut MPI_Comm) {
    // SAFETY: as in MPI_Comm_free.
    let h = if comm.is_null() { MPI_COMM_NULL } else { unsafe { *comm } };
    let rc = call("MPI_Comm_disconnect", h, move |rt| {
        out(comm, "comm")?;
        freeable(rt, h)?;
        let pending: Vec<MPI_Request> = rt.reqs.iter().filter(|(_, r)| r.comm == h).map(|(k, _)| k).filter(|&k| rt.live(k)).collect();
        rt.block_until(&pending, true)?;
        crate::dynamic::leave_bridges(rt, h)
    });
    if rc != MPI_SUCCESS { return rc; }
    free_export("MPI_Comm_disconnect", comm)
}}
crate::mpi_export! { MPI_Comm_compare, PMPI_Comm_compare, (a: MPI_Comm, b: MPI_Comm, result: *mut c_int) {
    call("MPI_Comm_compare", a, move |rt| { let o = out(result, "result")?; *o = compare(rt, a, b)?; Ok(()) })
}}
crate::mpi_export! { MPI_Comm_test_inter, PMPI_Comm_test_inter, (comm: MPI_Comm, flag: *mut c_int) {
    call("MPI_Comm_test_inter", comm, move |rt| { let o = out(flag, "flag")?; *o = rt.comm(comm)?.is_inter() as c_int; Ok(()) })
}}
// The intercommunicator to the parents of a spawned job, until it is freed or
// disconnected; MPI_COMM_NULL in a job that was not spawned.
crate::mpi_export! { MPI_Comm_get_parent, PMPI_Comm_get_parent, (parent: *mut MPI_Comm) {
    call("MPI_Comm_get_parent", MPI_COMM_WORLD, |rt| { *out(parent, "parent")? = rt.parent; Ok(()) })
}}
crate::mpi_export! { MPI_Comm_create, PMPI_Comm_create, (comm: MPI_Comm, group: MPI_Group, newcomm: *mut MPI_Comm) {
    call("MPI_Comm_create", comm, move |rt| { let o = out(newcomm, "newcomm")?; *o = create(rt, comm, group)?; Ok(()) })
}}
crate::mpi_export! { MPI_Comm_create_group, PMPI_Comm_create_group, (comm: MPI_Comm, group: MPI_Group, tag: c_int, newcomm: *mut MPI_Comm) {
    call("MPI_Comm_create_group", comm, move |rt| { let o = out(newcomm, "newcomm")?; *o = create_group(rt, comm, group, tag)?; Ok(()) })
}}
crate::mpi_export! { MPI_Comm_split_type, PMPI_Comm_split_type, (comm: MPI_Comm, split_type: c_int, key: c_int, info: MPI_Info, newcomm: *mut MPI_Comm) {
    call("MPI_Comm_split_type", comm, move |rt| { let o = out(newcomm, "newcomm")?; *o = self::split_type(rt, comm, split_type, key, info)?; Ok(()) })
}}
crate::mpi_export! { MPI_Comm_set_name, PMPI_Comm_set_name, (comm: MPI_Comm, comm_name: *const c_char) {
    call("MPI_Comm_set_name", comm, move |rt| {
        rt.comm(comm)?;
        let name = read_name(comm_name, "comm_name")?;
        rt.comms.get_mut(&comm).expect("checked above").name = Some(name);
        Ok(())
    })
}}
crate::mpi_export! { MPI_Comm_get_name, PMPI_Comm_get_name, (comm: MPI_Comm, comm_name: *mut c_char, resultlen: *mut c_int) {
    call("MPI_Comm_get_name", comm, move |rt| {
        let c = rt.comm(comm)?;
        let text = c.name.clone().unwrap_or_else(|| default_name(comm).to_string());
        write_name(&text, comm_name, resultlen, "comm_name")
    })
}}
