//! Opening and closing files together, deleting them, and their size (MPI-4.0 14.2). Every
//! collective call here ends with the members agreeing on its outcome, so a failure on one
//! member is reported on all and none is left waiting.

use std::os::raw::c_int;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::io::AsRawFd;

use super::errno::file_error;
use super::{agree, amode, exchange, file, files, first_error, same, shared_fp, view, File};
use crate::consts::*;
use crate::error::{err, MpiResult};
use crate::objects::records::Hints;
use crate::objects::Runtime;

/// The buffer of each aggregator's round of collective buffering (hint `cb_buffer_size`).
pub const CB_BUFFER: u64 = 4 << 20;
/// The sieve buffers of independent reads and writes (`ind_rd_buffer_size`,
/// `ind_wr_buffer_size`).
pub const IND_RD_BUFFER: u64 = 4 << 20;
pub const IND_WR_BUFFER: u64 = 512 << 10;

/// The hints every file reports (`MPI_File_get_info`), with Ferry's values; a program's own
/// values replace them. docs/io.md says which change what Ferry does. `cb_nodes` is filled
/// in at the open: the number of hosts of the file's group.
pub fn default_hints(hosts: usize) -> Hints {
    [
        ("cb_buffer_size", CB_BUFFER.to_string()),
        ("cb_nodes", hosts.to_string()),
        ("romio_cb_read", "automatic".into()),
        ("romio_cb_write", "automatic".into()),
        ("romio_ds_read", "automatic".into()),
        ("romio_ds_write", "automatic".into()),
        ("ind_rd_buffer_size", IND_RD_BUFFER.to_string()),
        ("ind_wr_buffer_size", IND_WR_BUFFER.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

fn open_one(path: &str, amode: c_int, creator: bool) -> MpiResult<std::fs::File> {
    let flags = amode::open_flags(amode, creator);
    let mut o = std::fs::OpenOptions::new();
    o.read(amode::can_read(amode)).write(amode::can_write(amode));
    if flags & libc::O_CREAT != 0 {
        // `create_new` is O_CREAT | O_EXCL; `create` O_CREAT alone.
        if flags & libc::O_EXCL != 0 {
            o.create_new(true);
        } else {
            o.create(true);
        }
        o.mode(0o644);
    }
    o.open(path).map_err(|e| file_error("cannot open", path, &e))
}

/// `MPI_File_open` on the members of `comm`: rank 0 opens (and creates) first, then the
/// others open what it made.
pub fn open(rt: &mut Runtime, comm: MPI_Comm, path: &str, mode: c_int, hints: Hints) -> MpiResult<MPI_File> {
    let c = rt.comm(comm)?;
    if c.is_inter() {
        return err(MPI_ERR_COMM, "MPI_File_open takes an intracommunicator");
    }
    let (group, me) = (c.group.clone(), c.rank as usize);
    let local = amode::check(mode);
    let mut extra = mode.to_le_bytes().to_vec();
    extra.extend_from_slice(&local.as_ref().err().map_or(MPI_SUCCESS, |e| e.class).to_le_bytes());
    extra.extend_from_slice(&crate::internal::fnv1a(path.as_bytes()).to_le_bytes());
    extra.extend_from_slice(&(std::process::id() as u64).to_le_bytes());
    let (ctx, all) = crate::internal::agree_context(rt, comm, &extra)?;
    if all.iter().any(|b| b[0..4] != extra[0..4]) {
        return err(MPI_ERR_NOT_SAME, format!("the access mode differs between the members of the communicator (here {mode:#x})"));
    }
    if all.iter().any(|b| b[8..12] != extra[8..12]) {
        return err(MPI_ERR_NOT_SAME, format!("the file name differs between the members of the communicator (here {path:?})"));
    }
    local?;
    let root_pid = u64::from_le_bytes(all[0][12..20].try_into().expect("8-byte pid"));
    let tell = |rt: &mut Runtime, r: &MpiResult<std::fs::File>| -> MpiResult<Vec<Vec<u8>>> {
        let class = r.as_ref().err().map_or(MPI_SUCCESS, |e| e.class);
        crate::internal::allgather_among(rt, ctx, &group, me, crate::internal::TAG_ALLGATHER, &class.to_le_bytes())
    };
    // Rank 0 first: it alone creates, so MPI_MODE_EXCL fails only when the file was there.
    let first = if me == 0 { open_one(path, mode, true) } else { err(MPI_SUCCESS, "") };
    let said = tell(rt, &first)?;
    if let Some((_, class)) = first_error(&said) {
        return match first {
            Err(e) if me == 0 => Err(e),
            _ => err(class, format!("rank 0 of the communicator could not open {path:?}")),
        };
    }
    let mine = if me == 0 { first } else { open_one(path, mode, false) };
    let said = tell(rt, &mine)?;
    let fd = match (mine, first_error(&said)) {
        (Err(e), _) => return Err(e),
        (Ok(_), Some((r, class))) => return err(class, format!("rank {r} of the communicator could not open {path:?}")),
        (Ok(fd), None) => fd,
    };
    let size = if mode & MPI_MODE_APPEND != 0 { fd.metadata().map_err(|e| file_error("cannot stat", path, &e))?.len() } else { 0 };
    let hosts = rt.hosts_of(&group).map_or(1, |h| {
        let mut v = h.to_vec();
        v.sort_unstable();
        v.dedup();
        v.len()
    });
    let mut all_hints = default_hints(hosts);
    for (k, v) in hints {
        crate::info::set(&mut all_hints, &k, &v);
    }
    let f = File {
        fd,
        path: path.to_string(),
        amode: mode,
        ctx,
        group,
        rank: me,
        errhandler: MPI_ERRORS_RETURN,
        hints: all_hints,
        view: view::Shape::bytes(),
        etype: MPI_BYTE,
        filetype: MPI_BYTE,
        datarep: "native".into(),
        // MPI_MODE_APPEND: both pointers start at the end of the file.
        pointer: size,
        shared: shared_fp::Place::beside(path, root_pid << 20 ^ ctx as u64, size),
        atomic: false,
        split: None,
        cb_buffer: Vec::new(),
    };
    Ok(files(rt).add(f))
}

/// `MPI_File_close`: every member lets go, then rank 0 removes the shared pointer's side
/// file and, with `MPI_MODE_DELETE_ON_CLOSE`, the file.
pub fn close(rt: &mut Runtime, fh: MPI_File) -> MpiResult<()> {
    let f = file(rt, fh)?;
    let (rank, delete, shared, path) = (f.rank, f.amode & MPI_MODE_DELETE_ON_CLOSE != 0, f.shared.clone(), f.path.clone());
    // Every member must be done with the file (and its shared pointer) before it goes.
    exchange(rt, fh, &[])?;
    let mut result = Ok(());
    if rank == 0 {
        shared.remove();
        if delete {
            result = std::fs::remove_file(&path).map_err(|e| file_error("cannot delete", &path, &e));
        }
    }
    if delete {
        // No member returns before the file is gone.
        agree(rt, fh, result, "deleting the file on close")?;
    } else {
        result?;
    }
    files(rt).table.remove(&fh);
    Ok(())
}

/// `MPI_File_delete`.
pub fn delete(path: &str) -> MpiResult<()> {
    std::fs::remove_file(path).map_err(|e| file_error("cannot delete", path, &e))
}

/// `MPI_File_set_size` (`grow_only`: `MPI_File_preallocate`, which never shrinks and
/// allocates the blocks). The same size on every member; rank 0 changes the file.
pub fn set_size(rt: &mut Runtime, fh: MPI_File, size: MPI_Offset, grow_only: bool) -> MpiResult<()> {
    let mode = file(rt, fh)?.amode;
    let local = if size < 0 {
        err(MPI_ERR_ARG, format!("size {size} is negative"))
    } else if mode & MPI_MODE_SEQUENTIAL != 0 {
        err(MPI_ERR_UNSUPPORTED_OPERATION, "the file was opened with MPI_MODE_SEQUENTIAL")
    } else if !amode::can_write(mode) {
        err(MPI_ERR_READ_ONLY, "the file was opened with MPI_MODE_RDONLY")
    } else {
        Ok(())
    };
    same(rt, fh, local, &size.to_le_bytes(), "the size")?;
    let f = file(rt, fh)?;
    let result = if f.rank != 0 {
        Ok(())
    } else if grow_only {
        // SAFETY: the descriptor is open; posix_fallocate only reads its arguments.
        match unsafe { libc::posix_fallocate(f.fd.as_raw_fd(), 0, size as libc::off_t) } {
            0 => Ok(()),
            e => Err(file_error("cannot preallocate", &f.path, &std::io::Error::from_raw_os_error(e))),
        }
    } else {
        f.fd.set_len(size as u64).map_err(|e| file_error("cannot resize", &f.path, &e))
    };
    agree(rt, fh, result, "changing the file's size")
}

/// `MPI_File_get_size`.
pub fn size(rt: &mut Runtime, fh: MPI_File) -> MpiResult<u64> {
    let f = file(rt, fh)?;
    f.fd.metadata().map(|m| m.len()).map_err(|e| file_error("cannot stat", &f.path, &e))
}

/// `MPI_File_sync`: this member's writes reach the storage device.
pub fn sync(rt: &mut Runtime, fh: MPI_File) -> MpiResult<()> {
    let f = file(rt, fh)?;
    if !amode::can_write(f.amode) {
        return Ok(());
    }
    f.fd.sync_data().map_err(|e| file_error("cannot sync", &f.path, &e))
}
