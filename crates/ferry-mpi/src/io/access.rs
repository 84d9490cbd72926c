//! Reading and writing (MPI-4.0 14.4): where an access starts (an explicit offset, the
//! individual file pointer, the shared one, or the shared one in rank order), the view's
//! extents it covers, and `pread`/`pwrite` on them. Non-blocking and split collective calls
//! do their work when they start and hand back a request or an outcome that is complete from
//! the start; collective calls move each member's own data (no aggregation yet).

use std::os::raw::{c_int, c_void};
use std::os::unix::io::AsRawFd;

use super::errno::file_error;
use super::shared_fp::lock_range;
use super::sieve::{self, Sieving};
use super::{amode, file, File};
use crate::consts::*;
use crate::error::{err, MpiError, MpiResult};
use ferry_data::datatype::Datatype;
use crate::objects::comm::Ranks;
use crate::objects::request::{ApiReq, Body, Outcome};
use crate::objects::Runtime;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Dir {
    Read,
    Write,
}

/// Where an access starts.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum At {
    /// An offset in etypes of the view (`_at` calls).
    Explicit(MPI_Offset),
    /// The individual file pointer.
    Individual,
    /// The shared file pointer, in whatever order the members come (`_shared`).
    Shared,
    /// The shared file pointer, in rank order (`_ordered`, collective).
    Ordered,
}

/// The user's buffer: `count` items of datatype `dt` at `buf`.
#[derive(Clone, Copy)]
pub struct Buf {
    pub ptr: *mut c_void,
    pub count: MPI_Count,
    pub dt: MPI_Datatype,
}

/// Read or write `b` on `fh` from `at`; the outcome holds the bytes moved. `coll`: a
/// collective call (`_all`), whose explicit-offset and individual-pointer forms may go
/// through two-phase collective buffering (`collective`).
pub fn access(rt: &mut Runtime, fh: MPI_File, dir: Dir, at: At, b: Buf, coll: bool) -> MpiResult<Outcome> {
    let checked = check(rt, fh, dir, at, b);
    if coll && matches!(at, At::Explicit(_) | At::Individual) {
        return super::collective::access_all(rt, fh, dir, at, b, checked);
    }
    let esize = file(rt, fh)?.view.esize;
    let pos = match at {
        // Collective: a member whose checks failed still takes part in the exchange.
        At::Ordered => ordered_start(rt, fh, checked.as_ref().map(|c| c.1 / esize).map_err(|e| e.clone()))?,
        At::Explicit(off) => {
            checked.as_ref().map_err(|e| e.clone())?;
            off as u64
        }
        At::Individual => {
            checked.as_ref().map_err(|e| e.clone())?;
            file(rt, fh)?.pointer
        }
        At::Shared => {
            let etypes = checked.as_ref().map_err(|e| e.clone())?.1 / esize;
            file(rt, fh)?.shared.fetch_add(etypes)?
        }
    };
    let (t, total) = checked?;
    let f = file(rt, fh)?;
    let extents = f.view.extents(pos * esize, total);
    let moved = independent(f, dir, &t, b, &extents, total)?;
    if at == At::Individual {
        f.pointer = pos + moved / esize;
    }
    Ok(Outcome { bytes: moved as usize, ..Outcome::empty() })
}

/// Move `b`'s `total` bytes to or from `extents` with this process's own system calls
/// (sieving small non-contiguous pieces, `sieve`). The bytes moved.
pub fn independent(f: &File, dir: Dir, t: &Datatype, b: Buf, extents: &[(u64, u64)], total: u64) -> MpiResult<u64> {
    let contiguous = t.is_contiguous() || total == 0;
    // A contiguous access (the common case) skips the hints.
    let sieving = if extents.len() > 1 { Sieving::of(f, dir == Dir::Write) } else { Sieving::OFF };
    let moved = match dir {
        Dir::Write => {
            let packed;
            let data: &[u8] = if contiguous {
                // SAFETY: MPI's contract: `buf` holds `count` items of the (contiguous) type.
                unsafe { std::slice::from_raw_parts(b.ptr as *const u8, total as usize) }
            } else {
                let mut v = vec![0u8; total as usize];
                // SAFETY: `buf` holds `count` items of the type (MPI's contract).
                unsafe { t.pack(b.ptr as *const u8, b.count as usize, &mut v) };
                packed = v;
                &packed
            };
            with_lock(f, extents, |f| sieve::write(f, extents, data, sieving, f.atomic))?
        }
        Dir::Read => {
            let mut tmp = Vec::new();
            let room: &mut [u8] = if contiguous {
                // SAFETY: MPI's contract: `buf` has room for `count` items of the type.
                unsafe { std::slice::from_raw_parts_mut(b.ptr as *mut u8, total as usize) }
            } else {
                tmp.resize(total as usize, 0);
                &mut tmp
            };
            let n = with_lock(f, extents, |f| sieve::read(f, extents, room, sieving))?;
            if !contiguous {
                // SAFETY: `buf` has room for `count` items; `tmp` is ours.
                unsafe { t.unpack(&tmp[..n as usize], b.ptr as *mut u8, b.count as usize) };
            }
            n
        }
    };
    Ok(moved)
}

/// The checks of an access that need no other member: the access mode, the count, the
/// datatype against the view's etype, the buffer, the offset. The datatype and the bytes.
pub(super) fn check(rt: &mut Runtime, fh: MPI_File, dir: Dir, at: At, b: Buf) -> MpiResult<(Datatype, u64)> {
    let f = file(rt, fh)?;
    match dir {
        Dir::Read if !amode::can_read(f.amode) => return err(MPI_ERR_ACCESS, "the file was opened with MPI_MODE_WRONLY"),
        Dir::Write if !amode::can_write(f.amode) => return err(MPI_ERR_READ_ONLY, "the file was opened with MPI_MODE_RDONLY"),
        _ => {}
    }
    if f.amode & MPI_MODE_SEQUENTIAL != 0 && matches!(at, At::Explicit(_) | At::Individual) {
        return err(MPI_ERR_UNSUPPORTED_OPERATION, "a file opened with MPI_MODE_SEQUENTIAL is accessed through the shared file pointer only");
    }
    let esize = f.view.esize;
    if b.count < 0 {
        return err(MPI_ERR_COUNT, format!("count {} is negative", b.count));
    }
    if let At::Explicit(off) = at {
        if off < 0 {
            return err(MPI_ERR_ARG, format!("offset {off} is negative"));
        }
    }
    let t = rt.datatype(b.dt)?;
    let total = (t.size() as u64).checked_mul(b.count as u64).filter(|&n| n <= isize::MAX as u64).ok_or_else(|| MpiError::new(MPI_ERR_COUNT, "count * datatype size overflows"))?;
    if t.size() as u64 % esize != 0 {
        return err(MPI_ERR_TYPE, format!("the datatype's size {} is not a multiple of the view's etype size {esize}", t.size()));
    }
    if b.ptr.is_null() && total > 0 {
        return err(MPI_ERR_BUFFER, "buf is NULL");
    }
    Ok((t, total))
}

/// Where this member's part of an ordered access starts: the members' sizes go round, rank 0
/// advances the shared pointer by their sum, and tells everyone where it stood.
fn ordered_start(rt: &mut Runtime, fh: MPI_File, etypes: MpiResult<u64>) -> MpiResult<u64> {
    let mine = *etypes.as_ref().unwrap_or(&0);
    let all = super::checked_exchange(rt, fh, etypes.map(|_| ()), &mine.to_le_bytes())?;
    let sizes: Vec<u64> = all.iter().map(|b| u64::from_le_bytes(b[..8].try_into().expect("8 bytes"))).collect();
    let f = file(rt, fh)?;
    let me = f.rank;
    let base = if me == 0 { f.shared.fetch_add(sizes.iter().sum()) } else { Ok(0) };
    let at = *base.as_ref().unwrap_or(&0);
    let all = super::checked_exchange(rt, fh, base.map(|_| ()), &at.to_le_bytes())?;
    let base = u64::from_le_bytes(all[0][..8].try_into().expect("8 bytes"));
    Ok(base + sizes[..me].iter().sum::<u64>())
}

/// Run `op` with the extents' span locked when the file is in atomic mode.
fn with_lock(f: &File, extents: &[(u64, u64)], op: impl FnOnce(&File) -> MpiResult<u64>) -> MpiResult<u64> {
    let span = match (extents.first(), extents.last()) {
        (Some(&(a, _)), Some(&(o, l))) if f.atomic => Some((a, o + l - a)),
        _ => None,
    };
    let fd = f.fd.as_raw_fd();
    if let Some((a, n)) = span {
        lock_range(fd, a, n, true).map_err(|e| file_error("cannot lock", &f.path, &e))?;
    }
    let r = op(f);
    if let Some((a, n)) = span {
        let _ = lock_range(fd, a, n, false);
    }
    r
}

/// A request complete from the start, reporting `o` (the non-blocking calls).
pub fn done_request(rt: &mut Runtime, o: Outcome) -> MPI_Request {
    rt.add_req(ApiReq { body: Body::Finished(o), comm: MPI_COMM_WORLD, group: Ranks::None, unpack: None, keep: None })
}

/// `_begin` of a split collective: the access, kept for `_end`.
pub fn begin_split(rt: &mut Runtime, fh: MPI_File, dir: Dir, at: At, b: Buf) -> MpiResult<()> {
    if file(rt, fh)?.split.is_some() {
        return err(MPI_ERR_IO, "a split collective is active on this file already (one at a time: MPI-4.0 14.4.5)");
    }
    let o = access(rt, fh, dir, at, b, true)?;
    file(rt, fh)?.split = Some(o);
    Ok(())
}

/// `_end` of a split collective: the outcome of its `_begin`.
pub fn end_split(rt: &mut Runtime, fh: MPI_File) -> MpiResult<Outcome> {
    file(rt, fh)?.split.take().ok_or_else(|| crate::error::MpiError::new(MPI_ERR_IO, "no split collective was begun on this file"))
}

/// `MPI_File_seek` (`shared`: `MPI_File_seek_shared`, collective).
pub fn seek(rt: &mut Runtime, fh: MPI_File, offset: MPI_Offset, whence: c_int, shared: bool) -> MpiResult<()> {
    let target = seek_target(rt, fh, offset, whence, shared);
    if !shared {
        file(rt, fh)?.pointer = target?;
        return Ok(());
    }
    let mut mine = offset.to_le_bytes().to_vec();
    mine.extend_from_slice(&whence.to_le_bytes());
    let to = *target.as_ref().unwrap_or(&0);
    super::same(rt, fh, target.map(|_| ()), &mine, "the offset or whence of MPI_File_seek_shared")?;
    let f = file(rt, fh)?;
    let r = if f.rank == 0 { f.shared.set(to).map(|_| ()) } else { Ok(()) };
    super::agree(rt, fh, r, "moving the shared file pointer")
}

/// Where a seek goes, in etypes of the view.
fn seek_target(rt: &mut Runtime, fh: MPI_File, offset: MPI_Offset, whence: c_int, shared: bool) -> MpiResult<u64> {
    let f = file(rt, fh)?;
    if !shared && f.amode & MPI_MODE_SEQUENTIAL != 0 {
        return err(MPI_ERR_UNSUPPORTED_OPERATION, "a file opened with MPI_MODE_SEQUENTIAL has no individual file pointer");
    }
    let base = match whence {
        MPI_SEEK_SET => 0i128,
        MPI_SEEK_CUR if shared => f.shared.get()? as i128,
        MPI_SEEK_CUR => f.pointer as i128,
        MPI_SEEK_END => {
            let size = super::open::size(rt, fh)?;
            let f = file(rt, fh)?;
            (f.view.data_before(size) / f.view.esize) as i128
        }
        _ => return err(MPI_ERR_ARG, format!("whence {whence} is none of MPI_SEEK_SET, MPI_SEEK_CUR and MPI_SEEK_END")),
    };
    let to = base + offset as i128;
    if to < 0 {
        return err(MPI_ERR_ARG, format!("the file pointer would go to {to}, before the view's start"));
    }
    Ok(to as u64)
}
