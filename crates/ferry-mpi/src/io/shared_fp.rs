//! The shared file pointer (MPI-4.0 14.4.4): one position, in etypes of the view, that every
//! member of a file's group moves. It lives in a small side file beside the data file, read
//! and advanced under a POSIX record lock, so it works wherever the members share a file
//! system with working `fcntl` locks (processes on other hosts included). The side file is
//! made on first use and removed when the file is closed.

use std::fs::OpenOptions;
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;

use super::errno::file_error;
use crate::error::MpiResult;

/// Where a file's shared pointer lives, and its value before any member moved it.
#[derive(Clone, Debug)]
pub struct Place {
    pub path: String,
    pub initial: u64,
}

impl Place {
    /// The side file of data file `path`, named by what all members agreed at open (`key`),
    /// so two opens of one file never share a pointer.
    pub fn beside(path: &str, key: u64, initial: u64) -> Place {
        let p = std::path::Path::new(path);
        let name = p.file_name().map_or_else(|| "file".into(), |n| n.to_string_lossy().into_owned());
        let dir = p.parent().filter(|d| !d.as_os_str().is_empty()).map_or_else(|| ".".into(), |d| d.to_string_lossy().into_owned());
        Place { path: format!("{dir}/.{name}.ferry-sfp-{key:x}"), initial }
    }

    /// Advance the pointer by `n` etypes; the value before.
    pub fn fetch_add(&self, n: u64) -> MpiResult<u64> {
        self.locked(|old| old + n)
    }

    /// Set the pointer to `v`; the value before.
    pub fn set(&self, v: u64) -> MpiResult<u64> {
        self.locked(|_| v)
    }

    /// The pointer's value.
    pub fn get(&self) -> MpiResult<u64> {
        self.locked(|old| old)
    }

    /// Remove the side file (the last close); it may never have been made.
    pub fn remove(&self) {
        let _ = std::fs::remove_file(&self.path);
    }

    fn locked(&self, f: impl FnOnce(u64) -> u64) -> MpiResult<u64> {
        let file = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(&self.path).map_err(|e| file_error("shared file pointer", &self.path, &e))?;
        let fd = file.as_raw_fd();
        lock_range(fd, 0, 0, true).map_err(|e| file_error("locking the shared file pointer", &self.path, &e))?;
        let mut b = [0u8; 8];
        let result = (|| {
            let got = file.read_at(&mut b, 0)?;
            let old = if got == 8 { u64::from_le_bytes(b) } else { self.initial };
            let new = f(old);
            if new != old || got != 8 {
                file.write_all_at(&new.to_le_bytes(), 0)?;
            }
            Ok(old)
        })();
        let _ = lock_range(fd, 0, 0, false);
        result.map_err(|e: std::io::Error| file_error("the shared file pointer", &self.path, &e))
    }
}

/// Lock (blocking) or unlock bytes `[off, off + len)` of `fd` for writing (`len` 0: to the
/// end, whatever it becomes): the shared pointer's updates and atomic mode's accesses.
pub fn lock_range(fd: i32, off: u64, len: u64, take: bool) -> std::io::Result<()> {
    // SAFETY: as in `lock`.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = if take { libc::F_WRLCK } else { libc::F_UNLCK } as i16;
    fl.l_whence = libc::SEEK_SET as i16;
    fl.l_start = off as libc::off_t;
    fl.l_len = len as libc::off_t;
    loop {
        // SAFETY: `fl` is a valid flock that outlives the call.
        if unsafe { libc::fcntl(fd, libc::F_SETLKW, &fl) } == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pointer_starts_at_its_initial_value_and_moves() {
        let dir = std::env::temp_dir().join(format!("ferry-sfp-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let data = dir.join("data.bin");
        let p = Place::beside(data.to_str().expect("utf-8 path"), 0x2a, 7);
        assert!(p.path.ends_with("/.data.bin.ferry-sfp-2a"), "{}", p.path);
        assert_eq!(p.get().expect("get"), 7);
        assert_eq!(p.fetch_add(5).expect("add"), 7);
        assert_eq!(p.fetch_add(1).expect("add"), 12);
        assert_eq!(p.set(0).expect("set"), 13);
        assert_eq!(p.get().expect("get"), 0);
        p.remove();
        assert!(!std::path::Path::new(&p.path).exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
