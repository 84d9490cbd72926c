//! Environmental management (MPI-4.1 chapters 9 and 11.2): init and finalize, abort, thread
//! queries, the implementation's name and version, error handlers, error classes and strings.

use std::ffi::{c_char, CStr};
use std::os::raw::c_int;

use crate::objects::runtime;
use crate::boundary::{call, call_anytime};
use crate::consts::*;
use crate::errhandler::*;
use crate::error::{die, err, MpiError, out_arg};
use crate::misc::*;

/// MPI_Init and MPI_Init_thread: the runtime starts here, before any `call`.
fn init(required: c_int, provided: *mut c_int) -> c_int {
    call_anytime("MPI_Init", || match crate::lifecycle::init(required) {
        Ok(p) => {
            if !provided.is_null() {
                // SAFETY: checked non-null.
                unsafe { *provided = p };
            }
            MPI_SUCCESS
        }
        Err(e) => die(&format!("Fatal error in MPI_Init: {e}"), 1),
    })
}

#[no_mangle]
pub extern "C" fn PMPI_Wtime() -> f64 {
    runtime::wtime()
}
#[no_mangle]
pub extern "C" fn MPI_Wtime() -> f64 {
    runtime::wtime()
}
#[no_mangle]
pub extern "C" fn PMPI_Wtick() -> f64 {
    1e-9
}
#[no_mangle]
pub extern "C" fn MPI_Wtick() -> f64 {
    1e-9
}

crate::mpi_export! { MPI_Init, PMPI_Init, (_argc: *mut c_int, _argv: *mut *mut *mut c_char) {
    init(MPI_THREAD_SINGLE, std::ptr::null_mut())
}}
crate::mpi_export! { MPI_Init_thread, PMPI_Init_thread, (_argc: *mut c_int, _argv: *mut *mut *mut c_char, required: c_int, provided: *mut c_int) {
    init(required, provided)
}}
crate::mpi_export! { MPI_Finalize, PMPI_Finalize, () {
    // Attributes go first, with MPI still usable by their delete callbacks.
    if runtime::initialized() && !runtime::finalized() {
        if let Err(e) = crate::attr::at_finalize() {
            return crate::boundary::call("MPI_Finalize", MPI_COMM_SELF, |_| Err(e));
        }
    }
    call_anytime("MPI_Finalize", || match crate::lifecycle::finalize() {
        Ok(()) => MPI_SUCCESS,
        Err(e) => die(&format!("Fatal error in MPI_Finalize: {e}"), 1),
    })
}}
crate::mpi_export! { MPI_Initialized, PMPI_Initialized, (flag: *mut c_int) {
    call_anytime("MPI_Initialized", || {
        if flag.is_null() { return MPI_ERR_ARG; }
        // SAFETY: checked non-null.
        unsafe { *flag = runtime::initialized() as c_int };
        MPI_SUCCESS
    })
}}
crate::mpi_export! { MPI_Finalized, PMPI_Finalized, (flag: *mut c_int) {
    call_anytime("MPI_Finalized", || {
        if flag.is_null() { return MPI_ERR_ARG; }
        // SAFETY: checked non-null.
        unsafe { *flag = runtime::finalized() as c_int };
        MPI_SUCCESS
    })
}}
// Any thread may ask these at any thread level, also while another thread is inside MPI:
// answered without the runtime (which calls below MPI_THREAD_MULTIPLE do not lock), except
// for the errors, which go through the runtime's error handler as any call's do.
crate::mpi_export! { MPI_Query_thread, PMPI_Query_thread, (provided: *mut c_int) {
    if let (false, Some((level, _))) = (provided.is_null(), runtime::thread_facts()) {
        // SAFETY: checked non-null; MPI's contract: it points to an int.
        unsafe { *provided = level };
        return MPI_SUCCESS;
    }
    call("MPI_Query_thread", MPI_COMM_WORLD, move |rt| { *out_arg(provided, "provided")? = rt.thread_level; Ok(()) })
}}
crate::mpi_export! { MPI_Is_thread_main, PMPI_Is_thread_main, (flag: *mut c_int) {
    if let (false, Some((_, main))) = (flag.is_null(), runtime::thread_facts()) {
        // SAFETY: as above.
        unsafe { *flag = (std::thread::current().id() == main) as c_int };
        return MPI_SUCCESS;
    }
    call("MPI_Is_thread_main", MPI_COMM_WORLD, move |rt| {
        *out_arg(flag, "flag")? = (std::thread::current().id() == rt.main_thread) as c_int;
        Ok(())
    })
}}
crate::mpi_export! { MPI_Abort, PMPI_Abort, (comm: MPI_Comm, errorcode: c_int) {
    call("MPI_Abort", comm, move |rt| {
        let msg = format!("MPI_Abort called with error code {errorcode}");
        rt.abort_job(&msg, errorcode)
    })
}}
crate::mpi_export! { MPI_Get_processor_name, PMPI_Get_processor_name, (name: *mut c_char, len: *mut c_int) {
    call("MPI_Get_processor_name", MPI_COMM_WORLD, move |rt| {
        let n = rt.processor_name().to_string();
        write_cstr(&n, name, MPI_MAX_PROCESSOR_NAME as usize, len)
    })
}}
crate::mpi_export! { MPI_Get_version, PMPI_Get_version, (version: *mut c_int, subversion: *mut c_int) {
    call_anytime("MPI_Get_version", || {
        if version.is_null() || subversion.is_null() { return MPI_ERR_ARG; }
        // SAFETY: checked non-null.
        unsafe { *version = MPI_VERSION; *subversion = MPI_SUBVERSION; }
        MPI_SUCCESS
    })
}}
// MPI_Pcontrol is variadic in C (`int MPI_Pcontrol(const int level, ...)`); on the x86-64
// and AArch64 Linux ABIs a callee that reads only its fixed arguments may be defined without
// the ellipsis. Profiling control is for tools that intercept PMPI; the library itself has
// nothing to switch, which the standard allows.
crate::mpi_export! { MPI_Pcontrol, PMPI_Pcontrol, (_level: c_int) {
    call("MPI_Pcontrol", MPI_COMM_WORLD, |_| Ok(()))
}}
crate::mpi_export! { MPI_Get_library_version, PMPI_Get_library_version, (version: *mut c_char, len: *mut c_int) {
    call_anytime("MPI_Get_library_version", || match write_cstr(&library_version(), version, MPI_MAX_LIBRARY_VERSION_STRING as usize, len) {
        Ok(()) => MPI_SUCCESS,
        Err(e) => e.class,
    })
}}
crate::mpi_export! { MPI_Comm_set_errhandler, PMPI_Comm_set_errhandler, (comm: MPI_Comm, eh: MPI_Errhandler) {
    call("MPI_Comm_set_errhandler", comm, move |rt| {
        rt.comm(comm)?;
        crate::errhandler::check_errhandler(eh)?;
        rt.comms.get_mut(&comm).expect("validated").errhandler = eh;
        Ok(())
    })
}}
crate::mpi_export! { MPI_Comm_get_errhandler, PMPI_Comm_get_errhandler, (comm: MPI_Comm, eh: *mut MPI_Errhandler) {
    call("MPI_Comm_get_errhandler", comm, move |rt| { let e = rt.comm(comm)?.errhandler; *out_arg(eh, "errhandler")? = crate::errhandler::got(e); Ok(()) })
}}
crate::mpi_export! { MPI_Errhandler_free, PMPI_Errhandler_free, (eh: *mut MPI_Errhandler) {
    call("MPI_Errhandler_free", MPI_COMM_WORLD, |_| {
        let o = out_arg(eh, "errhandler")?;
        crate::errhandler::free(*o)?;
        *o = MPI_ERRHANDLER_NULL;
        Ok(())
    })
}}
crate::mpi_export! { MPI_Error_class, PMPI_Error_class, (code: c_int, class: *mut c_int) {
    call_anytime("MPI_Error_class", || {
        let Some(c) = crate::errhandler::class_of(code) else { return MPI_ERR_ARG };
        if class.is_null() { return MPI_ERR_ARG; }
        // SAFETY: checked non-null.
        unsafe { *class = c };
        MPI_SUCCESS
    })
}}
crate::mpi_export! { MPI_Error_string, PMPI_Error_string, (code: c_int, string: *mut c_char, len: *mut c_int) {
    call_anytime("MPI_Error_string", || {
        let Some(c) = crate::errhandler::class_of(code) else { return MPI_ERR_ARG };
        let text = crate::errhandler::user_string(code).unwrap_or_else(|| crate::predefined::error_string(c).to_string());
        match write_cstr(&text, string, MPI_MAX_ERROR_STRING as usize, len) { Ok(()) => MPI_SUCCESS, Err(e) => e.class }
    })
}}
crate::mpi_export! { MPI_Comm_create_errhandler, PMPI_Comm_create_errhandler, (f: Option<CommErrhandlerFn>, eh: *mut MPI_Errhandler) {
    call("MPI_Comm_create_errhandler", MPI_COMM_WORLD, |_| {
        let o = out_arg(eh, "errhandler")?;
        let Some(f) = f else { return err(MPI_ERR_ARG, "the error handler function is NULL") };
        *o = register(f);
        Ok(())
    })
}}
crate::mpi_export! { MPI_Comm_call_errhandler, PMPI_Comm_call_errhandler, (comm: MPI_Comm, code: c_int) {
    let valid = call("MPI_Comm_call_errhandler", comm, move |rt| rt.comm(comm).map(|_| ()));
    if valid != MPI_SUCCESS {
        return valid;
    }
    // The handler runs as for an error inside an MPI call on `comm`; it returned, so did we.
    call("MPI_Comm_call_errhandler", comm, |_| Err(MpiError::new(code, format!("error code {code} raised by the program"))));
    MPI_SUCCESS
}}
crate::mpi_export! { MPI_Add_error_class, PMPI_Add_error_class, (class: *mut c_int) {
    call("MPI_Add_error_class", MPI_COMM_WORLD, |_| { *out_arg(class, "errorclass")? = add_code(None); Ok(()) })
}}
crate::mpi_export! { MPI_Add_error_code, PMPI_Add_error_code, (class: c_int, code: *mut c_int) {
    call("MPI_Add_error_code", MPI_COMM_WORLD, |_| {
        let o = out_arg(code, "errorcode")?;
        let predefined = (MPI_SUCCESS..=MPI_ERR_LASTCODE).contains(&class) && crate::predefined::error_class_name(class).is_some();
        if !predefined && user_class(class) != Some(class) {
            return err(MPI_ERR_ARG, format!("{class} is not an error class"));
        }
        *o = add_code(Some(class));
        Ok(())
    })
}}
// MPICH's calls that take back what the program added (MPI-4.1 names them MPI_Remove_error_*,
// which MPICH 4's library, whose set of functions Ferry's is, does not have).
crate::mpi_export! { MPIX_Delete_error_class, PMPIX_Delete_error_class, (class: c_int) {
    call("MPIX_Delete_error_class", MPI_COMM_WORLD, |_| remove(Added::Class, class))
}}
crate::mpi_export! { MPIX_Delete_error_code, PMPIX_Delete_error_code, (code: c_int) {
    call("MPIX_Delete_error_code", MPI_COMM_WORLD, |_| remove(Added::Code, code))
}}
crate::mpi_export! { MPIX_Delete_error_string, PMPIX_Delete_error_string, (code: c_int) {
    call("MPIX_Delete_error_string", MPI_COMM_WORLD, |_| remove(Added::String, code))
}}
crate::mpi_export! { MPI_Add_error_string, PMPI_Add_error_string, (code: c_int, string: *const c_char) {
    call("MPI_Add_error_string", MPI_COMM_WORLD, |_| {
        if string.is_null() {
            return err(MPI_ERR_ARG, "string is NULL");
        }
        // SAFETY: MPI passes a NUL-terminated string.
        let s = unsafe { CStr::from_ptr(string) }.to_string_lossy().into_owned();
        if s.len() >= MPI_MAX_ERROR_STRING as usize {
            return err(MPI_ERR_ARG, format!("the string has {} bytes; MPI_MAX_ERROR_STRING is {MPI_MAX_ERROR_STRING}", s.len()));
        }
        if user_class(code).is_none() {
            return err(MPI_ERR_ARG, format!("{code} is not an error class or code added by the program"));
        }
        with_table(|t| t.strings.insert(code, s));
        Ok(())
    })
}}
