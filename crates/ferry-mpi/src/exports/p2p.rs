//! Point-to-point communication (MPI-4.1 chapter 3): the send modes and receives, probes and
//! cancel, buffered-send buffers, persistent requests, and the Wait/Test families.

use std::os::raw::{c_int, c_void};

use crate::boundary::call;
use crate::completion::*;
use crate::consts::*;
use crate::error::{MpiError, out_arg};
use crate::p2p::*;
use crate::p2p::isendrecv::*;
use crate::p2p::persistent::*;

crate::mpi_export! { MPI_Send, PMPI_Send, (buf: *const c_void, count: c_int, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) {
    call("MPI_Send", comm, move |rt| send(rt, buf, count, dt, dest, tag, comm, Mode::Standard))
}}
crate::mpi_export! { MPI_Ssend, PMPI_Ssend, (buf: *const c_void, count: c_int, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) {
    call("MPI_Ssend", comm, move |rt| send(rt, buf, count, dt, dest, tag, comm, Mode::Synchronous))
}}
crate::mpi_export! { MPI_Rsend, PMPI_Rsend, (buf: *const c_void, count: c_int, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) {
    call("MPI_Rsend", comm, move |rt| send(rt, buf, count, dt, dest, tag, comm, Mode::Ready))
}}
crate::mpi_export! { MPI_Bsend, PMPI_Bsend, (buf: *const c_void, count: c_int, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) {
    call("MPI_Bsend", comm, move |rt| send(rt, buf, count, dt, dest, tag, comm, Mode::Buffered))
}}
crate::mpi_export! { MPI_Isend, PMPI_Isend, (buf: *const c_void, count: c_int, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, req: *mut MPI_Request) {
    call("MPI_Isend", comm, move |rt| isend(rt, buf, count, dt, dest, tag, comm, Mode::Standard, req))
}}
crate::mpi_export! { MPI_Issend, PMPI_Issend, (buf: *const c_void, count: c_int, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, req: *mut MPI_Request) {
    call("MPI_Issend", comm, move |rt| isend(rt, buf, count, dt, dest, tag, comm, Mode::Synchronous, req))
}}
crate::mpi_export! { MPI_Irsend, PMPI_Irsend, (buf: *const c_void, count: c_int, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, req: *mut MPI_Request) {
    call("MPI_Irsend", comm, move |rt| isend(rt, buf, count, dt, dest, tag, comm, Mode::Ready, req))
}}
crate::mpi_export! { MPI_Ibsend, PMPI_Ibsend, (buf: *const c_void, count: c_int, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, req: *mut MPI_Request) {
    call("MPI_Ibsend", comm, move |rt| isend(rt, buf, count, dt, dest, tag, comm, Mode::Buffered, req))
}}
crate::mpi_export! { MPI_Recv, PMPI_Recv, (buf: *mut c_void, count: c_int, dt: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, status: *mut MPI_Status) {
    call("MPI_Recv", comm, move |rt| recv(rt, buf, count, dt, source, tag, comm, status))
}}
crate::mpi_export! { MPI_Irecv, PMPI_Irecv, (buf: *mut c_void, count: c_int, dt: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, req: *mut MPI_Request) {
    call("MPI_Irecv", comm, move |rt| { let o = out_arg(req, "request")?; *o = start_recv(rt, buf, count, dt, source, tag, comm)?; Ok(()) })
}}
crate::mpi_export! { MPI_Sendrecv, PMPI_Sendrecv, (sbuf: *const c_void, scount: c_int, sdt: MPI_Datatype, dest: c_int, stag: c_int,
        rbuf: *mut c_void, rcount: c_int, rdt: MPI_Datatype, source: c_int, rtag: c_int, comm: MPI_Comm, status: *mut MPI_Status) {
    call("MPI_Sendrecv", comm, move |rt| sendrecv(rt, sbuf, scount, sdt, dest, stag, rbuf, rcount, rdt, source, rtag, comm, status))
}}
crate::mpi_export! { MPI_Sendrecv_replace, PMPI_Sendrecv_replace, (buf: *mut c_void, count: c_int, dt: MPI_Datatype, dest: c_int, stag: c_int,
        source: c_int, rtag: c_int, comm: MPI_Comm, status: *mut MPI_Status) {
    call("MPI_Sendrecv_replace", comm, move |rt| sendrecv_replace(rt, buf, count, dt, dest, stag, source, rtag, comm, status))
}}
crate::mpi_export! { MPI_Probe, PMPI_Probe, (source: c_int, tag: c_int, comm: MPI_Comm, status: *mut MPI_Status) {
    call("MPI_Probe", comm, move |rt| probe(rt, source, tag, comm, status))
}}
crate::mpi_export! { MPI_Iprobe, PMPI_Iprobe, (source: c_int, tag: c_int, comm: MPI_Comm, flag: *mut c_int, status: *mut MPI_Status) {
    call("MPI_Iprobe", comm, move |rt| iprobe(rt, source, tag, comm, flag, status))
}}
crate::mpi_export! { MPI_Mprobe, PMPI_Mprobe, (source: c_int, tag: c_int, comm: MPI_Comm, message: *mut MPI_Message, status: *mut MPI_Status) {
    call("MPI_Mprobe", comm, move |rt| improbe(rt, source, tag, comm, std::ptr::null_mut(), message, status, true))
}}
crate::mpi_export! { MPI_Improbe, PMPI_Improbe, (source: c_int, tag: c_int, comm: MPI_Comm, flag: *mut c_int, message: *mut MPI_Message, status: *mut MPI_Status) {
    call("MPI_Improbe", comm, move |rt| { out_arg(flag, "flag")?; improbe(rt, source, tag, comm, flag, message, status, false) })
}}
crate::mpi_export! { MPI_Mrecv, PMPI_Mrecv, (buf: *mut c_void, count: c_int, dt: MPI_Datatype, message: *mut MPI_Message, status: *mut MPI_Status) {
    call("MPI_Mrecv", MPI_COMM_WORLD, move |rt| {
        let h = imrecv(rt, buf, count, dt, message)?;
        let (o, comm) = rt.wait_raw(h)?;
        write_status(status, &o, o.error != MPI_SUCCESS);
        check(o, comm).map(|_| ())
    })
}}
crate::mpi_export! { MPI_Imrecv, PMPI_Imrecv, (buf: *mut c_void, count: c_int, dt: MPI_Datatype, message: *mut MPI_Message, req: *mut MPI_Request) {
    call("MPI_Imrecv", MPI_COMM_WORLD, move |rt| { let o = out_arg(req, "request")?; *o = imrecv(rt, buf, count, dt, message)?; Ok(()) })
}}
crate::mpi_export! { MPI_Cancel, PMPI_Cancel, (req: *mut MPI_Request) {
    call("MPI_Cancel", MPI_COMM_WORLD, move |rt| cancel(rt, req))
}}
crate::mpi_export! { MPI_Test_cancelled, PMPI_Test_cancelled, (status: *const MPI_Status, flag: *mut c_int) {
    call("MPI_Test_cancelled", MPI_COMM_WORLD, |_| {
        // SAFETY: MPI passes a status filled by a completion call.
        let st = unsafe { status.as_ref() }.ok_or_else(|| MpiError::new(MPI_ERR_ARG, "status is NULL"))?;
        *out_arg(flag, "flag")? = st.count_hi_and_cancelled & 1;
        Ok(())
    })
}}
crate::mpi_export! { MPI_Buffer_attach, PMPI_Buffer_attach, (buf: *mut c_void, size: c_int) {
    call("MPI_Buffer_attach", MPI_COMM_WORLD, move |rt| buffer_attach(rt, buf, size))
}}
crate::mpi_export! { MPI_Buffer_detach, PMPI_Buffer_detach, (buf: *mut c_void, size: *mut c_int) {
    call("MPI_Buffer_detach", MPI_COMM_WORLD, move |rt| buffer_detach(rt, buf, size))
}}
crate::mpi_export! { MPI_Get_count, PMPI_Get_count, (status: *const MPI_Status, dt: MPI_Datatype, count: *mut c_int) {
    call("MPI_Get_count", MPI_COMM_WORLD, move |rt| { let o = out_arg(count, "count")?; *o = get_count(rt, status, dt)?; Ok(()) })
}}
crate::mpi_export! { MPI_Get_elements, PMPI_Get_elements, (status: *const MPI_Status, dt: MPI_Datatype, count: *mut c_int) {
    call("MPI_Get_elements", MPI_COMM_WORLD, move |rt| {
        let o = out_arg(count, "count")?;
        *o = match get_elements(rt, status, dt)? { Some(n) if n <= c_int::MAX as usize => n as c_int, _ => MPI_UNDEFINED };
        Ok(())
    })
}}
crate::mpi_export! { MPI_Get_elements_x, PMPI_Get_elements_x, (status: *const MPI_Status, dt: MPI_Datatype, count: *mut MPI_Count) {
    call("MPI_Get_elements_x", MPI_COMM_WORLD, move |rt| {
        let o = out_arg(count, "count")?;
        *o = match get_elements(rt, status, dt)? { Some(n) => n as MPI_Count, None => MPI_UNDEFINED as MPI_Count };
        Ok(())
    })
}}
crate::mpi_export! { MPI_Isendrecv, PMPI_Isendrecv, (sbuf: *const c_void, scount: c_int, sdt: MPI_Datatype, dest: c_int, stag: c_int,
        rbuf: *mut c_void, rcount: c_int, rdt: MPI_Datatype, source: c_int, rtag: c_int, comm: MPI_Comm, req: *mut MPI_Request) {
    call("MPI_Isendrecv", comm, move |rt| isendrecv(rt, sbuf, scount, sdt, dest, stag, rbuf, rcount, rdt, source, rtag, comm, req))
}}
crate::mpi_export! { MPI_Isendrecv_replace, PMPI_Isendrecv_replace, (buf: *mut c_void, count: c_int, dt: MPI_Datatype, dest: c_int, stag: c_int,
        source: c_int, rtag: c_int, comm: MPI_Comm, req: *mut MPI_Request) {
    call("MPI_Isendrecv_replace", comm, move |rt| isendrecv_replace(rt, buf, count, dt, dest, stag, source, rtag, comm, req))
}}
crate::mpi_export! { MPI_Send_init, PMPI_Send_init, (buf: *const c_void, count: c_int, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, req: *mut MPI_Request) {
    call("MPI_Send_init", comm, move |rt| send_init(rt, buf, count, dt, dest, tag, comm, Mode::Standard, req))
}}
crate::mpi_export! { MPI_Ssend_init, PMPI_Ssend_init, (buf: *const c_void, count: c_int, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, req: *mut MPI_Request) {
    call("MPI_Ssend_init", comm, move |rt| send_init(rt, buf, count, dt, dest, tag, comm, Mode::Synchronous, req))
}}
crate::mpi_export! { MPI_Rsend_init, PMPI_Rsend_init, (buf: *const c_void, count: c_int, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, req: *mut MPI_Request) {
    call("MPI_Rsend_init", comm, move |rt| send_init(rt, buf, count, dt, dest, tag, comm, Mode::Ready, req))
}}
crate::mpi_export! { MPI_Bsend_init, PMPI_Bsend_init, (buf: *const c_void, count: c_int, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, req: *mut MPI_Request) {
    call("MPI_Bsend_init", comm, move |rt| send_init(rt, buf, count, dt, dest, tag, comm, Mode::Buffered, req))
}}
crate::mpi_export! { MPI_Recv_init, PMPI_Recv_init, (buf: *mut c_void, count: c_int, dt: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, req: *mut MPI_Request) {
    call("MPI_Recv_init", comm, move |rt| recv_init(rt, buf, count, dt, source, tag, comm, req))
}}
crate::mpi_export! { MPI_Start, PMPI_Start, (req: *mut MPI_Request) {
    call("MPI_Start", MPI_COMM_WORLD, move |rt| start(rt, req))
}}
crate::mpi_export! { MPI_Startall, PMPI_Startall, (count: c_int, reqs: *mut MPI_Request) {
    call("MPI_Startall", MPI_COMM_WORLD, move |rt| startall(rt, count, reqs))
}}
crate::mpi_export! { MPI_Wait, PMPI_Wait, (req: *mut MPI_Request, status: *mut MPI_Status) {
    call("MPI_Wait", MPI_COMM_WORLD, move |rt| wait_one(rt, req, status))
}}
crate::mpi_export! { MPI_Test, PMPI_Test, (req: *mut MPI_Request, flag: *mut c_int, status: *mut MPI_Status) {
    call("MPI_Test", MPI_COMM_WORLD, move |rt| test_one(rt, req, flag, status))
}}
crate::mpi_export! { MPI_Waitall, PMPI_Waitall, (count: c_int, reqs: *mut MPI_Request, sts: *mut MPI_Status) {
    call("MPI_Waitall", MPI_COMM_WORLD, move |rt| waitall(rt, count, reqs, sts))
}}
crate::mpi_export! { MPI_Testall, PMPI_Testall, (count: c_int, reqs: *mut MPI_Request, flag: *mut c_int, sts: *mut MPI_Status) {
    call("MPI_Testall", MPI_COMM_WORLD, move |rt| testall(rt, count, reqs, flag, sts))
}}
crate::mpi_export! { MPI_Waitany, PMPI_Waitany, (count: c_int, reqs: *mut MPI_Request, index: *mut c_int, status: *mut MPI_Status) {
    call("MPI_Waitany", MPI_COMM_WORLD, move |rt| waitany(rt, count, reqs, index, status))
}}
crate::mpi_export! { MPI_Testany, PMPI_Testany, (count: c_int, reqs: *mut MPI_Request, index: *mut c_int, flag: *mut c_int, status: *mut MPI_Status) {
    call("MPI_Testany", MPI_COMM_WORLD, move |rt| testany(rt, count, reqs, index, flag, status))
}}
crate::mpi_export! { MPI_Waitsome, PMPI_Waitsome, (count: c_int, reqs: *mut MPI_Request, outcount: *mut c_int, indices: *mut c_int, sts: *mut MPI_Status) {
    call("MPI_Waitsome", MPI_COMM_WORLD, move |rt| some_of(rt, count, reqs, outcount, indices, sts, true))
}}
crate::mpi_export! { MPI_Testsome, PMPI_Testsome, (count: c_int, reqs: *mut MPI_Request, outcount: *mut c_int, indices: *mut c_int, sts: *mut MPI_Status) {
    call("MPI_Testsome", MPI_COMM_WORLD, move |rt| some_of(rt, count, reqs, outcount, indices, sts, false))
}}
crate::mpi_export! { MPI_Request_free, PMPI_Request_free, (req: *mut MPI_Request) {
    call("MPI_Request_free", MPI_COMM_WORLD, move |rt| request_free(rt, req))
}}
crate::mpi_export! { MPI_Request_get_status, PMPI_Request_get_status, (req: MPI_Request, flag: *mut c_int, status: *mut MPI_Status) {
    call("MPI_Request_get_status", MPI_COMM_WORLD, move |rt| request_get_status(rt, req, flag, status))
}}
