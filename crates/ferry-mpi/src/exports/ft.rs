//! Fault-tolerant MPI (the ULFM proposal as MPICH and Open MPI export it, include/mpi-ext.h):
//! revoke, shrink, agree, and the acknowledgement of failures.

use std::os::raw::c_int;

use crate::boundary::call;
use crate::completion::ApiReq;
use crate::consts::*;
use crate::error::out;

crate::mpi_export! { MPIX_Comm_revoke, PMPIX_Comm_revoke, (comm: MPI_Comm) {
    call("MPIX_Comm_revoke", comm, |rt| crate::ft::revoke(rt, comm))
}}
crate::mpi_export! { MPIX_Comm_is_revoked, PMPIX_Comm_is_revoked, (comm: MPI_Comm, flag: *mut c_int) {
    call("MPIX_Comm_is_revoked", comm, |rt| { let o = out(flag, "flag")?; *o = crate::ft::is_revoked(rt, comm)? as c_int; Ok(()) })
}}
crate::mpi_export! { MPIX_Comm_shrink, PMPIX_Comm_shrink, (comm: MPI_Comm, newcomm: *mut MPI_Comm) {
    call("MPIX_Comm_shrink", comm, |rt| { let o = out(newcomm, "newcomm")?; *o = crate::ft::shrink(rt, comm)?; Ok(()) })
}}
crate::mpi_export! { MPIX_Comm_agree, PMPIX_Comm_agree, (comm: MPI_Comm, flag: *mut c_int) {
    call("MPIX_Comm_agree", comm, |rt| { let o = out(flag, "flag")?; crate::ft::agree(rt, comm, o) })
}}
crate::mpi_export! { MPIX_Comm_iagree, PMPIX_Comm_iagree, (comm: MPI_Comm, flag: *mut c_int, request: *mut MPI_Request) {
    // The agreement runs to its end inside the call (docs/fault-tolerance.md); the request is
    // complete when it returns, with the agreement's error, if any, in its status.
    call("MPIX_Comm_iagree", comm, |rt| {
        let o = out(flag, "flag")?;
        let r = out(request, "request")?;
        crate::ft::agree(rt, comm, o)?;
        *r = rt.add_req(ApiReq::done(comm, MPI_ANY_SOURCE));
        Ok(())
    })
}}
crate::mpi_export! { MPIX_Comm_failure_ack, PMPIX_Comm_failure_ack, (comm: MPI_Comm) {
    call("MPIX_Comm_failure_ack", comm, |rt| crate::ft::failure_ack(rt, comm))
}}
crate::mpi_export! { MPIX_Comm_failure_get_acked, PMPIX_Comm_failure_get_acked, (comm: MPI_Comm, failedgrp: *mut MPI_Group) {
    call("MPIX_Comm_failure_get_acked", comm, |rt| { let o = out(failedgrp, "failedgrp")?; *o = crate::ft::failure_get_acked(rt, comm)?; Ok(()) })
}}
crate::mpi_export! { MPIX_Comm_get_failed, PMPIX_Comm_get_failed, (comm: MPI_Comm, failedgrp: *mut MPI_Group) {
    call("MPIX_Comm_get_failed", comm, |rt| { let o = out(failedgrp, "failedgrp")?; *o = crate::ft::get_failed(rt, comm)?; Ok(()) })
}}
crate::mpi_export! { MPIX_Comm_ack_failed, PMPIX_Comm_ack_failed, (comm: MPI_Comm, num_to_ack: c_int, num_acked: *mut c_int) {
    call("MPIX_Comm_ack_failed", comm, |rt| { let o = out(num_acked, "num_acked")?; *o = crate::ft::ack_failed(rt, comm, num_to_ack)?; Ok(()) })
}}
