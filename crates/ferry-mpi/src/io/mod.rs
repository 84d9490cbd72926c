//! Parallel files (MPI-IO, MPI-4.0 chapter 14) on POSIX files: the table of open files and
//! what one holds. A file is opened by a communicator's members together; each member holds
//! its own descriptor and moves data with `pread`/`pwrite`, so the file system must show
//! every process the same file (docs/io.md says what Ferry assumes of it).
//!
//! The submodules: [`amode`] access modes, [`errno`] error classes of system errors, [`view`]
//! views as file extents, [`open`] opening, closing and sizing files, [`access`] reading and
//! writing, [`collective`] collective access and its choice of [`twophase`] collective
//! buffering (planned by [`plan`]), [`sieve`] data sieving, [`shared_fp`] the shared file
//! pointer.

pub mod access;
pub mod amode;
pub mod collective;
pub mod errno;
pub mod open;
pub mod plan;
pub mod shared_fp;
pub mod sieve;
pub mod twophase;
pub mod view;
pub mod viewing;

use std::collections::BTreeMap;
use std::os::raw::c_int;
use std::sync::Arc;

use crate::consts::*;
use crate::error::{err, MpiError, MpiResult};
use crate::objects::records::Hints;
use crate::objects::request::Outcome;
use crate::objects::Runtime;

/// A file as this process holds it.
pub struct File {
    pub fd: std::fs::File,
    pub path: String,
    pub amode: c_int,
    /// The context of the file's own traffic among its members (agreed at open).
    pub ctx: u32,
    /// World ranks of the members, in rank order, and this process's rank.
    pub group: Arc<Vec<u32>>,
    pub rank: usize,
    pub errhandler: c_int,
    pub hints: Hints,
    pub view: view::Shape,
    pub etype: MPI_Datatype,
    pub filetype: MPI_Datatype,
    pub datarep: String,
    /// The individual file pointer, in etypes of the view.
    pub pointer: u64,
    /// Where the shared file pointer lives (`shared_fp`), and its value after open or set_view.
    pub shared: shared_fp::Place,
    pub atomic: bool,
    /// The outcome of a split collective begun and not yet ended (`_begin` / `_end`).
    pub split: Option<Outcome>,
    /// An aggregator's collective buffer, kept from one collective access to the next.
    pub cb_buffer: Vec<u8>,
}

/// The open files of a process, by handle.
pub struct Files {
    pub table: BTreeMap<MPI_File, File>,
    next: MPI_File,
    /// `MPI_FILE_NULL`'s error handler: the one of `MPI_File_open` and `MPI_File_delete`.
    pub null_errhandler: c_int,
}

impl Default for Files {
    fn default() -> Files {
        // Handles count up and are never reused, so a closed file's handle stays invalid.
        Files { table: BTreeMap::new(), next: 0x100, null_errhandler: MPI_ERRORS_RETURN }
    }
}

/// The files' state in the runtime, made on first use.
pub fn files(rt: &mut Runtime) -> &mut Files {
    if !rt.files.is::<Files>() {
        rt.files = Box::new(Files::default());
    }
    rt.files.downcast_mut().expect("made just above")
}

impl Files {
    pub fn add(&mut self, f: File) -> MPI_File {
        self.next += 1;
        let h = self.next;
        self.table.insert(h, f);
        h
    }

    /// The error handler of `fh` (`MPI_FILE_NULL`'s for the null or an unknown handle).
    pub fn errhandler(&self, fh: MPI_File) -> c_int {
        self.table.get(&fh).map_or(self.null_errhandler, |f| f.errhandler)
    }
}

/// Open file `fh`.
pub fn file(rt: &mut Runtime, fh: MPI_File) -> MpiResult<&mut File> {
    files(rt).table.get_mut(&fh).ok_or_else(|| bad_file(fh))
}

#[cold]
fn bad_file(fh: MPI_File) -> MpiError {
    if fh == MPI_FILE_NULL {
        MpiError::new(MPI_ERR_FILE, "MPI_FILE_NULL is not an open file")
    } else {
        MpiError::new(MPI_ERR_FILE, format!("invalid file handle {fh:#x} (closed, or never opened)"))
    }
}

/// The value of hint `key` of file `f`.
pub fn hint<'a>(f: &'a File, key: &str) -> Option<&'a str> {
    f.hints.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}

/// Every member's `mine`, in rank order, exchanged over `fh`'s own context.
pub fn exchange(rt: &mut Runtime, fh: MPI_File, mine: &[u8]) -> MpiResult<Vec<Vec<u8>>> {
    let f = file(rt, fh)?;
    let (ctx, group, me) = (f.ctx, f.group.clone(), f.rank);
    crate::internal::allgather_among(rt, ctx, &group, me, crate::internal::TAG_ALLGATHER, mine)
}

/// The first error class of an exchange of classes (4 bytes each), with its rank.
pub fn first_error(all: &[Vec<u8>]) -> Option<(usize, c_int)> {
    all.iter().enumerate().find_map(|(r, b)| {
        let c = c_int::from_le_bytes(b[..4].try_into().expect("4-byte class"));
        (c != MPI_SUCCESS).then_some((r, c))
    })
}

/// Agree on `result` with every member of `fh`: if any failed, all fail with the first
/// failure's class (each with its own message where it failed itself).
pub fn agree(rt: &mut Runtime, fh: MPI_File, result: MpiResult<()>, what: &str) -> MpiResult<()> {
    let class = result.as_ref().err().map_or(MPI_SUCCESS, |e| e.class);
    let all = exchange(rt, fh, &class.to_le_bytes())?;
    match (result, first_error(&all)) {
        (Err(e), _) => Err(e),
        (Ok(()), Some((r, c))) => err(c, format!("{what} failed on rank {r} of the file's group")),
        (Ok(()), None) => Ok(()),
    }
}

/// A collective step whose local checks may have failed: every member sends its outcome with
/// `mine`, so that a member that failed its checks still takes part (no other member waits
/// for it forever). Fails on every member when any failed; otherwise every member's `mine`,
/// in rank order.
pub fn checked_exchange(rt: &mut Runtime, fh: MPI_File, local: MpiResult<()>, mine: &[u8]) -> MpiResult<Vec<Vec<u8>>> {
    let class = local.as_ref().err().map_or(MPI_SUCCESS, |e| e.class);
    let mut msg = class.to_le_bytes().to_vec();
    msg.extend_from_slice(mine);
    let all = exchange(rt, fh, &msg)?;
    local?;
    if let Some((r, c)) = first_error(&all) {
        return err(c, format!("the call failed on rank {r} of the file's group"));
    }
    Ok(all.into_iter().map(|b| b[4..].to_vec()).collect())
}

/// Whether every member gave the same `mine` (after its own checks, `local`);
/// `MPI_ERR_NOT_SAME` naming `what` if not.
pub fn same(rt: &mut Runtime, fh: MPI_File, local: MpiResult<()>, mine: &[u8], what: &str) -> MpiResult<()> {
    let all = checked_exchange(rt, fh, local, mine)?;
    if all.iter().any(|b| b != mine) {
        return err(MPI_ERR_NOT_SAME, format!("{what} differs between the members of the file's group"));
    }
    Ok(())
}

/// `MPI_File_errhandler_function`: `void (MPI_File *, int *, ...)`.
pub type FileErrhandlerFn = unsafe extern "C" fn(*mut MPI_File, *mut c_int, ...);

/// Run the user's handler `f` (registered from a file's handler function) for `code` on `fh`.
pub fn invoke_handler(f: crate::errhandler::CommErrhandlerFn, fh: MPI_File, code: c_int) {
    // SAFETY: `f` was registered by MPI_File_create_errhandler from a function of
    // `FileErrhandlerFn`'s type; the two differ only in the pointee of the first argument.
    let f: FileErrhandlerFn = unsafe { std::mem::transmute::<crate::errhandler::CommErrhandlerFn, FileErrhandlerFn>(f) };
    let (mut h, mut c) = (fh, code);
    // SAFETY: MPI's signature for a file's error handler; both arguments by pointer.
    unsafe { f(&mut h, &mut c) };
}

/// The handler function of a file error handler, as the one table of user handlers keeps it.
pub fn as_table_fn(f: FileErrhandlerFn) -> crate::errhandler::CommErrhandlerFn {
    // SAFETY: only the pointee type of the first argument differs; `invoke_handler` turns it
    // back before the call.
    unsafe { std::mem::transmute::<FileErrhandlerFn, crate::errhandler::CommErrhandlerFn>(f) }
}
