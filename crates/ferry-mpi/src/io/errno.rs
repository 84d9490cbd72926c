//! The error class of a failed system call on a file (MPI-4.0 14.7, table 14.3). Pure.

use std::os::raw::c_int;

use crate::consts::*;
use crate::error::MpiError;

/// The class for `errno`.
pub fn class_of(errno: c_int) -> c_int {
    match errno {
        libc::ENOENT | libc::ENOTDIR => MPI_ERR_NO_SUCH_FILE,
        libc::EACCES | libc::EPERM => MPI_ERR_ACCESS,
        libc::EEXIST => MPI_ERR_FILE_EXISTS,
        libc::ENOSPC | libc::EFBIG => MPI_ERR_NO_SPACE,
        libc::EDQUOT => MPI_ERR_QUOTA,
        libc::EROFS => MPI_ERR_READ_ONLY,
        libc::ETXTBSY | libc::EBUSY => MPI_ERR_FILE_IN_USE,
        libc::ENAMETOOLONG | libc::EISDIR | libc::ELOOP | libc::EINVAL => MPI_ERR_BAD_FILE,
        libc::EIO => MPI_ERR_IO,
        _ => MPI_ERR_FILE,
    }
}

/// The error of `what` on `path`, failed with `e`.
pub fn file_error(what: &str, path: &str, e: &std::io::Error) -> MpiError {
    let class = e.raw_os_error().map_or(MPI_ERR_IO, class_of);
    MpiError::new(class, format!("{what} {path:?}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_class_from_its_errno() {
        assert_eq!(class_of(libc::ENOENT), MPI_ERR_NO_SUCH_FILE);
        assert_eq!(class_of(libc::EACCES), MPI_ERR_ACCESS);
        assert_eq!(class_of(libc::EEXIST), MPI_ERR_FILE_EXISTS);
        assert_eq!(class_of(libc::ENOSPC), MPI_ERR_NO_SPACE);
        assert_eq!(class_of(libc::EDQUOT), MPI_ERR_QUOTA);
        assert_eq!(class_of(libc::EROFS), MPI_ERR_READ_ONLY);
        assert_eq!(class_of(libc::EIO), MPI_ERR_IO);
        assert_eq!(class_of(libc::EISDIR), MPI_ERR_BAD_FILE);
        assert_eq!(class_of(libc::ETXTBSY), MPI_ERR_FILE_IN_USE);
        assert_eq!(class_of(libc::EMFILE), MPI_ERR_FILE);
    }

    #[test]
    fn an_io_error_keeps_its_class() {
        let e = std::io::Error::from_raw_os_error(libc::ENOENT);
        assert_eq!(file_error("open", "/x", &e).class, MPI_ERR_NO_SUCH_FILE);
    }
}
