//! Access modes (`MPI_MODE_*`): which combinations MPI allows (MPI-4.0 14.2.1), and the
//! flags of the POSIX `open` that a mode asks for. Pure.

use std::os::raw::c_int;

use crate::consts::*;
use crate::error::{err, MpiResult};

const KNOWN: c_int = MPI_MODE_CREATE
    | MPI_MODE_RDONLY
    | MPI_MODE_WRONLY
    | MPI_MODE_RDWR
    | MPI_MODE_DELETE_ON_CLOSE
    | MPI_MODE_UNIQUE_OPEN
    | MPI_MODE_EXCL
    | MPI_MODE_APPEND
    | MPI_MODE_SEQUENTIAL;

/// Checks `amode`: exactly one of `RDONLY`, `RDWR` and `WRONLY`; `CREATE` and `EXCL` not with
/// `RDONLY`; `SEQUENTIAL` not with `RDWR`; no unknown bit. Refusals are `MPI_ERR_AMODE`.
pub fn check(amode: c_int) -> MpiResult<()> {
    if amode & !KNOWN != 0 {
        return err(MPI_ERR_AMODE, format!("amode {amode:#x} has bits of no MPI_MODE_* constant"));
    }
    let access = [MPI_MODE_RDONLY, MPI_MODE_WRONLY, MPI_MODE_RDWR].iter().filter(|&&m| amode & m != 0).count();
    if access != 1 {
        return err(MPI_ERR_AMODE, format!("amode {amode:#x} must have exactly one of MPI_MODE_RDONLY, MPI_MODE_RDWR and MPI_MODE_WRONLY"));
    }
    if amode & MPI_MODE_RDONLY != 0 && amode & (MPI_MODE_CREATE | MPI_MODE_EXCL) != 0 {
        return err(MPI_ERR_AMODE, "MPI_MODE_RDONLY may not be given with MPI_MODE_CREATE or MPI_MODE_EXCL");
    }
    if amode & MPI_MODE_RDWR != 0 && amode & MPI_MODE_SEQUENTIAL != 0 {
        return err(MPI_ERR_AMODE, "MPI_MODE_RDWR may not be given with MPI_MODE_SEQUENTIAL");
    }
    Ok(())
}

/// The flags of `open(2)` for a checked `amode`; `creator` is the one process that creates the
/// file (the others open what it made, so `EXCL` applies once).
pub fn open_flags(amode: c_int, creator: bool) -> c_int {
    let mut f = if amode & MPI_MODE_RDONLY != 0 {
        libc::O_RDONLY
    } else if amode & MPI_MODE_WRONLY != 0 {
        libc::O_WRONLY
    } else {
        libc::O_RDWR
    };
    if creator && amode & MPI_MODE_CREATE != 0 {
        f |= libc::O_CREAT;
        if amode & MPI_MODE_EXCL != 0 {
            f |= libc::O_EXCL;
        }
    }
    f | libc::O_CLOEXEC
}

/// Whether a mode allows reading, and writing.
pub fn can_read(amode: c_int) -> bool {
    amode & MPI_MODE_WRONLY == 0
}

pub fn can_write(amode: c_int) -> bool {
    amode & MPI_MODE_RDONLY == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(amode: c_int) -> c_int {
        check(amode).map_or_else(|e| e.class, |_| MPI_SUCCESS)
    }

    #[test]
    fn exactly_one_access_mode() {
        assert_eq!(class(MPI_MODE_RDONLY), MPI_SUCCESS);
        assert_eq!(class(MPI_MODE_WRONLY | MPI_MODE_CREATE), MPI_SUCCESS);
        assert_eq!(class(MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_DELETE_ON_CLOSE | MPI_MODE_UNIQUE_OPEN), MPI_SUCCESS);
        assert_eq!(class(0), MPI_ERR_AMODE);
        assert_eq!(class(MPI_MODE_CREATE), MPI_ERR_AMODE);
        assert_eq!(class(MPI_MODE_RDONLY | MPI_MODE_RDWR), MPI_ERR_AMODE);
        assert_eq!(class(MPI_MODE_WRONLY | MPI_MODE_RDWR), MPI_ERR_AMODE);
        assert_eq!(class(MPI_MODE_RDONLY | MPI_MODE_WRONLY | MPI_MODE_RDWR), MPI_ERR_AMODE);
    }

    #[test]
    fn illegal_combinations() {
        assert_eq!(class(MPI_MODE_RDONLY | MPI_MODE_CREATE), MPI_ERR_AMODE);
        assert_eq!(class(MPI_MODE_RDONLY | MPI_MODE_EXCL), MPI_ERR_AMODE);
        assert_eq!(class(MPI_MODE_RDWR | MPI_MODE_SEQUENTIAL), MPI_ERR_AMODE);
        assert_eq!(class(MPI_MODE_RDONLY | MPI_MODE_SEQUENTIAL), MPI_SUCCESS);
        assert_eq!(class(MPI_MODE_WRONLY | MPI_MODE_APPEND), MPI_SUCCESS);
        assert_eq!(class(MPI_MODE_RDONLY | 0x1000), MPI_ERR_AMODE);
    }

    #[test]
    fn open_flags_create_once() {
        let m = MPI_MODE_WRONLY | MPI_MODE_CREATE | MPI_MODE_EXCL;
        assert_eq!(open_flags(m, true) & (libc::O_CREAT | libc::O_EXCL), libc::O_CREAT | libc::O_EXCL);
        assert_eq!(open_flags(m, false) & (libc::O_CREAT | libc::O_EXCL), 0);
        assert_eq!(open_flags(MPI_MODE_RDONLY, true) & libc::O_ACCMODE, libc::O_RDONLY);
        assert_eq!(open_flags(MPI_MODE_RDWR, false) & libc::O_ACCMODE, libc::O_RDWR);
    }
}
