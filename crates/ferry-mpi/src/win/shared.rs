//! Shared-memory windows (`MPI_Win_allocate_shared`): one POSIX shared-memory object per
//! window, holding every member's part back to back in rank order (contiguous, as MPI's
//! default asks), then the window's control block (`control`), mapped by every member, who
//! may then load and store in any part (`MPI_Win_shared_query` gives the addresses). Puts and
//! gets on such a window copy straight between the origin's buffer and its own mapping of the
//! target's part, accumulates are done there by the origin too (`atomic`), and locks are
//! taken in the control block: the target takes no part. `MPI_Win_allocate` uses the same
//! memory when all its members run on one host.

use std::ffi::CString;
use std::io;
use std::os::raw::{c_int, c_void};

use super::control::{self, Control};
use super::TAG_SHARED;
use crate::consts::*;
use crate::error::{err, MpiError, MpiResult};
use crate::objects::Runtime;

/// A mapping of a shared-memory object, unmapped when dropped.
pub struct Mapping {
    addr: *mut u8,
    len: usize,
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: `addr..addr+len` is a mapping this value made and nobody else unmaps.
        unsafe { libc::munmap(self.addr as *mut c_void, self.len) };
    }
}

/// The shared memory of a window: the mapping, where each member's part starts in it, and
/// the control block after the parts.
pub struct SharedMem {
    pub map: Mapping,
    pub offsets: Vec<usize>,
    control: Control,
}

impl SharedMem {
    /// The first byte of window rank `r`'s part in this process's mapping.
    pub fn part(&self, r: usize) -> *mut u8 {
        self.map.addr.wrapping_add(self.offsets[r])
    }

    /// The window's locks; valid while the window (this mapping) lives.
    pub fn control(&self) -> Control {
        self.control
    }
}

/// Create (`create`) or open the object `name` of `len` bytes and map it.
fn map(name: &str, len: usize, create: bool) -> io::Result<Mapping> {
    let cname = CString::new(name).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in name"))?;
    let flags = if create { libc::O_CREAT | libc::O_EXCL | libc::O_RDWR } else { libc::O_RDWR };
    // SAFETY: a valid C string; the descriptor is closed below.
    let fd = unsafe { libc::shm_open(cname.as_ptr(), flags, 0o600) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // Reserve the pages now (zeroed): a merely truncated object larger than what /dev/shm
    // can hold would fail later, with SIGBUS at the first store, instead of here.
    // SAFETY: `fd` is ours.
    let sized = !create || unsafe { libc::posix_fallocate(fd, 0, len as libc::off_t) } == 0;
    let addr = if sized {
        // SAFETY: a fresh shared mapping of the object's `len` bytes.
        unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, fd, 0) }
    } else {
        libc::MAP_FAILED
    };
    let e = io::Error::last_os_error();
    // SAFETY: closing our descriptor; the mapping stays.
    unsafe { libc::close(fd) };
    if addr == libc::MAP_FAILED {
        if create {
            // SAFETY: a valid C string; the object is ours.
            unsafe { libc::shm_unlink(cname.as_ptr()) };
        }
        return Err(e);
    }
    Ok(Mapping { addr: addr as *mut u8, len })
}

/// Whether every member got here without error (an exchange of one byte each).
fn all_ok(rt: &mut Runtime, h: MPI_Win, ok: bool) -> MpiResult<bool> {
    let w = rt.win(h)?;
    let (ctx, group, me) = (w.ctx, w.group.clone(), w.rank);
    let all = crate::internal::allgather_among(rt, ctx + 1, &group, me, TAG_SHARED, &[ok as u8])?;
    Ok(all.iter().all(|b| b.first() == Some(&1)))
}

/// Put the memory of window `h` (made without memory) into one shared-memory object,
/// every member's part starting at a multiple of `align` bytes; the window's base becomes
/// this member's part. Every member gets the same outcome.
pub(super) fn share(rt: &mut Runtime, h: MPI_Win, align: usize) -> MpiResult<*mut c_void> {
    let w = rt.win(h)?;
    let mut offsets = Vec::with_capacity(w.sizes.len());
    let mut total = 0usize;
    for &s in &w.sizes {
        offsets.push(total);
        total += (s as usize).next_multiple_of(align);
    }
    // The control block: one line per member, after the parts (a fresh object is zeroed: every
    // lock free).
    let lines = total.next_multiple_of(control::LINE);
    let members = w.sizes.len();
    let name = format!("/ferry-win-{}-{}", w.pids[0], w.ctx);
    let len = lines + members * control::LINE;
    let me = w.rank;
    // The first member makes the object, the others map it once it exists, then its name goes.
    let made = if me == 0 { Some(map(&name, len, true)) } else { None };
    let ok = made.as_ref().is_none_or(|m| m.is_ok());
    if !all_ok(rt, h, ok)? {
        return Err(made.and_then(|m| m.err()).map_or_else(|| MpiError::new(MPI_ERR_RMA_SHARED, "another member could not make the shared memory"), |e| MpiError::new(MPI_ERR_RMA_SHARED, format!("cannot make shared memory {name}: {e}"))));
    }
    let mapped = match made {
        Some(m) => m,
        None => map(&name, len, false),
    };
    let ok = all_ok(rt, h, mapped.is_ok())?;
    if me == 0 {
        let cname = CString::new(name.as_str()).expect("no NUL in the name");
        // SAFETY: a valid C string; everybody mapped the object (or gave up).
        unsafe { libc::shm_unlink(cname.as_ptr()) };
    }
    let map = mapped.map_err(|e| MpiError::new(MPI_ERR_RMA_SHARED, format!("cannot map shared memory {name}: {e}")))?;
    if !ok {
        return err(MPI_ERR_RMA_SHARED, "another member could not map the shared memory");
    }
    // SAFETY: the lines lie in the mapping (`len` covers them), aligned as the mapping's page
    // start is, and the mapping moves into the same `SharedMem` as the block, which the
    // window keeps until it is freed.
    let control = unsafe { Control::new(map.addr.wrapping_add(lines), members) };
    let mem = SharedMem { map, offsets, control };
    let base = mem.part(me) as *mut c_void;
    super::set_base(rt, h, base)?;
    let parts = (0..members).map(|r| mem.part(r)).collect();
    let w = rt.win_mut(h)?;
    w.lean = Some(super::lean::register(h, w, parts, control));
    w.shared_mem = Some(mem);
    Ok(base)
}

/// Whether every member of `comm` runs on this host (and there is more than one).
pub(super) fn one_host(rt: &Runtime, comm: MPI_Comm) -> MpiResult<Option<u32>> {
    let c = rt.comm(comm)?;
    let host = rt.host_ranks();
    Ok(c.group.iter().find(|w| !host.contains(w)).copied())
}

/// `MPI_Win_allocate_shared`: the window as any other, then its memory in one object.
pub(crate) fn allocate_shared(rt: &mut Runtime, size: MPI_Aint, disp_unit: c_int, info: MPI_Info, comm: MPI_Comm) -> MpiResult<(MPI_Win, *mut c_void)> {
    if let Some(w) = one_host(rt, comm)? {
        return err(MPI_ERR_RMA_SHARED, format!("world rank {w} of the communicator is on another host: its memory cannot be shared"));
    }
    let h = super::make(rt, comm, std::ptr::null_mut(), size, disp_unit, info, MPI_WIN_FLAVOR_SHARED, None)?;
    match share(rt, h, 1) {
        Ok(base) => Ok((h, base)),
        Err(e) => {
            super::discard(rt, h);
            Err(e)
        }
    }
}
