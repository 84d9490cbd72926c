//! I/O (MPI-4.0 chapter 14), files and views: opening, closing, sizes, hints, error
//! handlers, views and file pointers. The reads and writes are in `io_access.rs`.

use std::os::raw::{c_char, c_int};

use crate::boundary::call;
use crate::consts::*;
use crate::error::{c_string, err, out_arg, MpiResult};
use crate::io::{self, access, open, viewing};
use crate::objects::Runtime;

/// Longest path `MPI_File_open` takes.
const MAX_PATH: c_int = 4096;

/// Run an MPI call on file `fh`: an error goes to the file's error handler (`MPI_FILE_NULL`'s
/// for the null handle, an invalid one, and `MPI_File_open`; `MPI_ERRORS_RETURN` unless the
/// program changed it).
pub(crate) fn file_call(name: &'static str, fh: MPI_File, body: impl FnOnce(&mut Runtime) -> MpiResult<()>) -> c_int {
    let mut raised = None;
    let rc = call(name, MPI_COMM_WORLD, |rt| match body(rt) {
        Ok(()) => Ok(()),
        Err(e) => {
            let eh = io::files(rt).errhandler(fh);
            if eh == MPI_ERRORS_ARE_FATAL || eh == MPI_ERRORS_ABORT {
                crate::boundary::fatal(rt, name, &e);
            }
            raised = Some((crate::errhandler::user_handler(eh), e.class));
            Ok(())
        }
    });
    match raised {
        Some((f, class)) => {
            if let Some(f) = f {
                io::invoke_handler(f, fh, class);
            }
            class
        }
        None => rc,
    }
}

crate::mpi_export! { MPI_File_open, PMPI_File_open, (comm: MPI_Comm, filename: *const c_char, amode: c_int, info: MPI_Info, fh: *mut MPI_File) {
    file_call("MPI_File_open", MPI_FILE_NULL, move |rt| {
        let o = out_arg(fh, "fh")?;
        let path = c_string(filename, "filename", MAX_PATH)?;
        let hints = crate::info::optional(rt, info)?;
        *o = open::open(rt, comm, &path, amode, hints)?;
        Ok(())
    })
}}
crate::mpi_export! { MPI_File_close, PMPI_File_close, (fh: *mut MPI_File) {
    // SAFETY: MPI passes a pointer to the caller's handle; NULL is checked.
    let Some(h) = (unsafe { fh.as_mut() }) else {
        return file_call("MPI_File_close", MPI_FILE_NULL, |_| err(MPI_ERR_ARG, "fh is NULL"));
    };
    let rc = file_call("MPI_File_close", *h, |rt| open::close(rt, *h));
    if rc == MPI_SUCCESS {
        *h = MPI_FILE_NULL;
    }
    rc
}}
crate::mpi_export! { MPI_File_delete, PMPI_File_delete, (filename: *const c_char, info: MPI_Info) {
    file_call("MPI_File_delete", MPI_FILE_NULL, move |rt| {
        let path = c_string(filename, "filename", MAX_PATH)?;
        crate::info::optional(rt, info)?;
        open::delete(&path)
    })
}}
crate::mpi_export! { MPI_File_set_size, PMPI_File_set_size, (fh: MPI_File, size: MPI_Offset) {
    file_call("MPI_File_set_size", fh, move |rt| open::set_size(rt, fh, size, false))
}}
crate::mpi_export! { MPI_File_preallocate, PMPI_File_preallocate, (fh: MPI_File, size: MPI_Offset) {
    file_call("MPI_File_preallocate", fh, move |rt| open::set_size(rt, fh, size, true))
}}
crate::mpi_export! { MPI_File_get_size, PMPI_File_get_size, (fh: MPI_File, size: *mut MPI_Offset) {
    file_call("MPI_File_get_size", fh, move |rt| {
        let o = out_arg(size, "size")?;
        *o = open::size(rt, fh)? as MPI_Offset;
        Ok(())
    })
}}
crate::mpi_export! { MPI_File_get_group, PMPI_File_get_group, (fh: MPI_File, group: *mut MPI_Group) {
    file_call("MPI_File_get_group", fh, move |rt| {
        let o = out_arg(group, "group")?;
        let g = io::file(rt, fh)?.group.clone();
        *o = rt.add_group(g);
        Ok(())
    })
}}
crate::mpi_export! { MPI_File_get_amode, PMPI_File_get_amode, (fh: MPI_File, amode: *mut c_int) {
    file_call("MPI_File_get_amode", fh, move |rt| {
        let o = out_arg(amode, "amode")?;
        *o = io::file(rt, fh)?.amode;
        Ok(())
    })
}}
crate::mpi_export! { MPI_File_set_info, PMPI_File_set_info, (fh: MPI_File, info: MPI_Info) {
    file_call("MPI_File_set_info", fh, move |rt| {
        let h = crate::info::optional(rt, info)?;
        let f = io::file(rt, fh)?;
        for (k, v) in h {
            crate::info::set(&mut f.hints, &k, &v);
        }
        Ok(())
    })
}}
crate::mpi_export! { MPI_File_get_info, PMPI_File_get_info, (fh: MPI_File, info: *mut MPI_Info) {
    file_call("MPI_File_get_info", fh, move |rt| {
        let o = out_arg(info, "info_used")?;
        let h = io::file(rt, fh)?.hints.clone();
        *o = crate::info::add(h);
        Ok(())
    })
}}
crate::mpi_export! { MPI_File_sync, PMPI_File_sync, (fh: MPI_File) {
    file_call("MPI_File_sync", fh, move |rt| open::sync(rt, fh))
}}
crate::mpi_export! { MPI_File_c2f, PMPI_File_c2f, (fh: MPI_File) {
    // Ferry's file handles are small numbers; MPI_FILE_NULL is 0 in both languages.
    fh as MPI_Fint
}}
#[no_mangle]
pub unsafe extern "C" fn PMPI_File_f2c(fh: MPI_Fint) -> MPI_File {
    fh as u32 as MPI_File
}
#[no_mangle]
pub unsafe extern "C" fn MPI_File_f2c(fh: MPI_Fint) -> MPI_File {
    PMPI_File_f2c(fh)
}

crate::mpi_export! { MPI_File_create_errhandler, PMPI_File_create_errhandler, (f: Option<io::FileErrhandlerFn>, eh: *mut MPI_Errhandler) {
    call("MPI_File_create_errhandler", MPI_COMM_WORLD, move |_| {
        let o = out_arg(eh, "errhandler")?;
        let Some(f) = f else { return err(MPI_ERR_ARG, "the error handler function is NULL") };
        *o = crate::errhandler::register(io::as_table_fn(f));
        Ok(())
    })
}}
crate::mpi_export! { MPI_File_set_errhandler, PMPI_File_set_errhandler, (fh: MPI_File, eh: MPI_Errhandler) {
    file_call("MPI_File_set_errhandler", fh, move |rt| {
        crate::errhandler::check_errhandler(eh)?;
        if fh == MPI_FILE_NULL {
            io::files(rt).null_errhandler = eh;
        } else {
            io::file(rt, fh)?.errhandler = eh;
        }
        Ok(())
    })
}}
crate::mpi_export! { MPI_File_get_errhandler, PMPI_File_get_errhandler, (fh: MPI_File, eh: *mut MPI_Errhandler) {
    file_call("MPI_File_get_errhandler", fh, move |rt| {
        let o = out_arg(eh, "errhandler")?;
        let h = if fh == MPI_FILE_NULL { io::files(rt).null_errhandler } else { io::file(rt, fh)?.errhandler };
        *o = crate::errhandler::got(h);
        Ok(())
    })
}}
crate::mpi_export! { MPI_File_call_errhandler, PMPI_File_call_errhandler, (fh: MPI_File, code: c_int) {
    let valid = file_call("MPI_File_call_errhandler", fh, move |rt| {
        if fh != MPI_FILE_NULL {
            io::file(rt, fh)?;
        }
        Ok(())
    });
    if valid != MPI_SUCCESS {
        return valid;
    }
    // The handler runs as for an error inside an MPI call on `fh`; it returned, so did we.
    file_call("MPI_File_call_errhandler", fh, |_| err(code, format!("error code {code} raised by the program")));
    MPI_SUCCESS
}}

crate::mpi_export! { MPI_File_set_view, PMPI_File_set_view, (fh: MPI_File, disp: MPI_Offset, etype: MPI_Datatype, filetype: MPI_Datatype, datarep: *const c_char, info: MPI_Info) {
    file_call("MPI_File_set_view", fh, move |rt| {
        let rep = c_string(datarep, "datarep", MPI_MAX_DATAREP_STRING)?;
        let hints = crate::info::optional(rt, info)?;
        viewing::set_view(rt, fh, disp, etype, filetype, &rep, hints)
    })
}}
crate::mpi_export! { MPI_File_get_view, PMPI_File_get_view, (fh: MPI_File, disp: *mut MPI_Offset, etype: *mut MPI_Datatype, filetype: *mut MPI_Datatype, datarep: *mut c_char) {
    file_call("MPI_File_get_view", fh, move |rt| {
        let (d, e, f) = (out_arg(disp, "disp")?, out_arg(etype, "etype")?, out_arg(filetype, "filetype")?);
        if datarep.is_null() {
            return err(MPI_ERR_ARG, "datarep is NULL");
        }
        let (dv, ev, fv, rep) = viewing::get_view(rt, fh)?;
        (*d, *e, *f) = (dv, ev, fv);
        crate::info::copy_out(&rep, datarep, MPI_MAX_DATAREP_STRING as usize);
        Ok(())
    })
}}
crate::mpi_export! { MPI_File_get_type_extent, PMPI_File_get_type_extent, (fh: MPI_File, datatype: MPI_Datatype, extent: *mut MPI_Aint) {
    file_call("MPI_File_get_type_extent", fh, move |rt| {
        let o = out_arg(extent, "extent")?;
        *o = viewing::type_extent(rt, fh, datatype)?;
        Ok(())
    })
}}
crate::mpi_export! { MPI_File_get_byte_offset, PMPI_File_get_byte_offset, (fh: MPI_File, offset: MPI_Offset, disp: *mut MPI_Offset) {
    file_call("MPI_File_get_byte_offset", fh, move |rt| {
        let o = out_arg(disp, "disp")?;
        *o = viewing::byte_offset(rt, fh, offset)?;
        Ok(())
    })
}}
crate::mpi_export! { MPI_File_seek, PMPI_File_seek, (fh: MPI_File, offset: MPI_Offset, whence: c_int) {
    file_call("MPI_File_seek", fh, move |rt| access::seek(rt, fh, offset, whence, false))
}}
crate::mpi_export! { MPI_File_seek_shared, PMPI_File_seek_shared, (fh: MPI_File, offset: MPI_Offset, whence: c_int) {
    file_call("MPI_File_seek_shared", fh, move |rt| access::seek(rt, fh, offset, whence, true))
}}
crate::mpi_export! { MPI_File_get_position, PMPI_File_get_position, (fh: MPI_File, offset: *mut MPI_Offset) {
    file_call("MPI_File_get_position", fh, move |rt| {
        let o = out_arg(offset, "offset")?;
        *o = viewing::position(rt, fh, false)?;
        Ok(())
    })
}}
crate::mpi_export! { MPI_File_get_position_shared, PMPI_File_get_position_shared, (fh: MPI_File, offset: *mut MPI_Offset) {
    file_call("MPI_File_get_position_shared", fh, move |rt| {
        let o = out_arg(offset, "offset")?;
        *o = viewing::position(rt, fh, true)?;
        Ok(())
    })
}}
crate::mpi_export! { MPI_File_set_atomicity, PMPI_File_set_atomicity, (fh: MPI_File, flag: c_int) {
    file_call("MPI_File_set_atomicity", fh, move |rt| viewing::set_atomicity(rt, fh, flag))
}}
crate::mpi_export! { MPI_File_get_atomicity, PMPI_File_get_atomicity, (fh: MPI_File, flag: *mut c_int) {
    file_call("MPI_File_get_atomicity", fh, move |rt| {
        let o = out_arg(flag, "flag")?;
        *o = io::file(rt, fh)?.atomic as c_int;
        Ok(())
    })
}}
