//! Data sieving for independent access to a non-contiguous view (docs/io.md "Data
//! sieving"): the extents of an access go in groups whose span fits the sieve buffer, and a
//! group of many small extents is one large `pread` of its span, from which the extents are
//! taken (reads), or a `pread`, the extents laid over it and one `pwrite` of the span, under
//! an `fcntl` write lock of the span (writes). Other groups move extent by extent.

use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;

use super::errno::file_error;
use super::plan;
use super::shared_fp::lock_range;
use super::twophase::read_full;
use super::File;
use crate::error::MpiResult;

/// How a file sieves, from its hints (`romio_ds_read`/`romio_ds_write`: `enable`,
/// `disable`, `automatic`; `ind_rd_buffer_size`/`ind_wr_buffer_size`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sieving {
    pub on: bool,
    pub always: bool,
    pub buf: u64,
}

impl Sieving {
    /// No sieving: every extent on its own.
    pub const OFF: Sieving = Sieving { on: false, always: false, buf: 0 };

    pub fn of(f: &File, write: bool) -> Sieving {
        let (mode, size) = if write { ("romio_ds_write", "ind_wr_buffer_size") } else { ("romio_ds_read", "ind_rd_buffer_size") };
        let mode = super::hint(f, mode).unwrap_or("automatic");
        let default = if write { super::open::IND_WR_BUFFER } else { super::open::IND_RD_BUFFER };
        let buf = super::hint(f, size).and_then(|v| v.trim().parse::<u64>().ok()).filter(|&b| b > 0).unwrap_or(default);
        // A write sieves only where it may read the file too.
        let on = mode != "disable" && (!write || super::amode::can_read(f.amode));
        Sieving { on, always: mode == "enable", buf }
    }
}

/// Fill `room` from the extents; stops at the end of the file. The bytes read.
pub fn read(f: &File, extents: &[(u64, u64)], room: &mut [u8], s: Sieving) -> MpiResult<u64> {
    let mut at = 0usize;
    let mut span = Vec::new();
    let groups: Vec<std::ops::Range<usize>> = if s.on { plan::sieve_groups(extents, s.buf) } else { std::iter::once(0..extents.len()).collect() };
    for g in groups {
        let group = &extents[g];
        if !(s.on && plan::sieve(group, s.always)) {
            for &(off, len) in group {
                let got = read_full(&f.fd, &f.path, &mut room[at..at + len as usize], off)?;
                at += got;
                if got < len as usize {
                    return Ok(at as u64);
                }
            }
            continue;
        }
        let lo = group[0].0;
        let hi = group[group.len() - 1].0 + group[group.len() - 1].1;
        span.resize((hi - lo) as usize, 0);
        let there = read_full(&f.fd, &f.path, &mut span, lo)? as u64;
        for &(off, len) in group {
            let s0 = (off - lo) as usize;
            let have = (lo + there).saturating_sub(off).min(len) as usize;
            room[at..at + have].copy_from_slice(&span[s0..s0 + have]);
            at += have;
            if have < len as usize {
                return Ok(at as u64);
            }
        }
    }
    Ok(at as u64)
}

/// Write `data` to the extents. `locked`: the caller holds a lock of the whole access
/// already (atomic mode), so the groups take none of their own.
pub fn write(f: &File, extents: &[(u64, u64)], data: &[u8], s: Sieving, locked: bool) -> MpiResult<u64> {
    let mut at = 0usize;
    let mut span = Vec::new();
    let groups: Vec<std::ops::Range<usize>> = if s.on { plan::sieve_groups(extents, s.buf) } else { std::iter::once(0..extents.len()).collect() };
    for g in groups {
        let group = &extents[g];
        if !(s.on && plan::sieve(group, s.always)) {
            for &(off, len) in group {
                f.fd.write_all_at(&data[at..at + len as usize], off).map_err(|e| file_error("cannot write", &f.path, &e))?;
                at += len as usize;
            }
            continue;
        }
        let lo = group[0].0;
        let hi = group[group.len() - 1].0 + group[group.len() - 1].1;
        span.resize((hi - lo) as usize, 0);
        let fd = f.fd.as_raw_fd();
        if !locked {
            lock_range(fd, lo, hi - lo, true).map_err(|e| file_error("cannot lock", &f.path, &e))?;
        }
        let r = (|| {
            // Holes past the end of the file read as zeros, and are written so.
            read_full(&f.fd, &f.path, &mut span, lo)?;
            for &(off, len) in group {
                let s0 = (off - lo) as usize;
                span[s0..s0 + len as usize].copy_from_slice(&data[at..at + len as usize]);
                at += len as usize;
            }
            f.fd.write_all_at(&span, lo).map_err(|e| file_error("cannot write", &f.path, &e))
        })();
        if !locked {
            let _ = lock_range(fd, lo, hi - lo, false);
        }
        r?;
    }
    Ok(at as u64)
}
