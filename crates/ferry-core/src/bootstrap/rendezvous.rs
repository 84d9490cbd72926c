//! Same-host rendezvous of MCAPI nodes started by hand, in any order, without a launcher: a
//! private directory per domain holds the domain's secret and one slot file per running node.
//!
//! A node takes the lowest slot `slot-<k>` it can lock (`flock`, exclusive, held for the life
//! of the process: the kernel frees the slot when the process ends, however it ends, so no
//! stale file ever needs cleaning) and writes its card into it, one line:
//! `node <node> pid <pid> addr 127.0.0.1:<port>`. Its slot number is its world rank.
//!
//! Who is alive is asked of the same locks: a slot counts only while a shared lock on it is
//! refused, that is while some process holds it. Unlike a pid test (`kill(pid, 0)`) this
//! cannot mistake a recycled pid for the node, and needs no clean-up of files left behind.
//! A reader accepts only a complete line (ending in a newline), so it never takes a card
//! half written; and only the card of a process that exists, so not a dead holder's card in
//! the instant between a new holder's lock and its clearing the file.

use std::fs::{DirBuilder, File, OpenOptions};
use std::io::{self, ErrorKind, Read, Write};
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::{generate_job_secret, is_job_secret};

/// How long a node waits for the secret another node is writing.
const SECRET_WAIT: Duration = Duration::from_secs(2);

/// A running node's card, as its slot file holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotCard {
    pub node: u32,
    pub pid: u32,
    pub addr: SocketAddr,
}

impl SlotCard {
    /// The slot file's one line, newline included.
    pub fn encode(&self) -> String {
        format!("node {} pid {} addr {}\n", self.node, self.pid, self.addr)
    }

    /// The card in a slot file's text: `None` unless it is one complete, well-formed line
    /// (a card being written, or a file left by a process that died while writing, is none).
    pub fn parse(text: &str) -> Option<SlotCard> {
        let line = text.strip_suffix('\n')?;
        let f: Vec<&str> = line.split(' ').collect();
        match f.as_slice() {
            ["node", node, "pid", pid, "addr", addr] => Some(SlotCard { node: number(node)?, pid: number(pid)?, addr: addr.parse().ok()? }),
            _ => None,
        }
    }
}

fn number(s: &str) -> Option<u32> {
    s.bytes().all(|b| b.is_ascii_digit()).then(|| s.parse().ok()).flatten()
}

/// The directory of rendezvous (`FERRY_MCAPI_RENDEZVOUS` when set): `$XDG_RUNTIME_DIR/
/// ferry-mcapi`, else `/tmp/ferry-mcapi-<uid>`.
pub fn default_base(runtime_dir: Option<&str>, uid: u32) -> PathBuf {
    match runtime_dir.filter(|d| !d.is_empty()) {
        Some(d) => Path::new(d).join("ferry-mcapi"),
        None => PathBuf::from(format!("/tmp/ferry-mcapi-{uid}")),
    }
}

/// Whether a directory with this owner and mode may hold a domain's secret for `uid`:
/// ours, and closed to everybody else. `Err` says why not.
pub fn check_private(path: &Path, owner: u32, mode: u32, uid: u32) -> Result<(), String> {
    if owner != uid {
        return Err(format!("{} belongs to uid {owner}, not to this user (uid {uid})", path.display()));
    }
    if mode & 0o077 != 0 {
        return Err(format!("{} is open to other users (mode {:o}; it must be 0700)", path.display(), mode & 0o777));
    }
    Ok(())
}

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Create (0700) or open the directory of `domain` under `base`, refusing one that another
/// user owns or that others may enter, and a symbolic link.
pub fn domain_dir(base: &Path, domain: u32) -> Result<PathBuf, String> {
    let dir = base.join(format!("domain-{domain}"));
    DirBuilder::new().recursive(true).mode(0o700).create(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let uid = euid();
    for p in [base, dir.as_path()] {
        let m = std::fs::symlink_metadata(p).map_err(|e| format!("{}: {e}", p.display()))?;
        if !m.is_dir() {
            return Err(format!("{} is not a directory", p.display()));
        }
        check_private(p, m.uid(), m.mode(), uid)?;
    }
    Ok(dir)
}

/// The domain's secret: made (32 random bytes, in hex, file mode 0600) by the first node to
/// get here, read by the others, who wait a moment for one being written.
pub fn domain_secret(dir: &Path) -> Result<String, String> {
    let path = dir.join("secret");
    match OpenOptions::new().write(true).create_new(true).mode(0o600).open(&path) {
        Ok(mut f) => {
            let s = generate_job_secret().map_err(|e| e.to_string())?;
            f.write_all(format!("{s}\n").as_bytes()).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            return Ok(s);
        }
        Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
        Err(e) => return Err(format!("cannot create {}: {e}", path.display())),
    }
    let deadline = Instant::now() + SECRET_WAIT;
    loop {
        let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        if let Some(s) = text.strip_suffix('\n').filter(|s| is_job_secret(s)) {
            return Ok(s.to_string());
        }
        if Instant::now() > deadline {
            return Err(format!("{} does not hold a secret (64 lowercase hex digits and a newline); remove it to start afresh", path.display()));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Try to lock `f`: `Ok(true)` locked, `Ok(false)` held by someone else.
fn try_lock(f: &File, how: libc::c_int) -> io::Result<bool> {
    // SAFETY: flock on a descriptor we own; no memory is involved.
    if unsafe { libc::flock(f.as_raw_fd(), how | libc::LOCK_NB) } == 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    if e.kind() == ErrorKind::WouldBlock {
        Ok(false)
    } else {
        Err(e)
    }
}

/// This node's slot in its domain's directory, locked while it lives.
#[derive(Debug)]
pub struct Slots {
    dir: PathBuf,
    max: u32,
    slot: u32,
    /// The open slot file: its lock is this node's claim.
    file: File,
}

impl Slots {
    /// Take the lowest free of `max` slots in `dir`.
    pub fn claim(dir: &Path, max: u32) -> Result<Slots, String> {
        for k in 0..max {
            let path = slot_path(dir, k);
            let f = OpenOptions::new().read(true).write(true).create(true).truncate(false).mode(0o600).open(&path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
            if try_lock(&f, libc::LOCK_EX).map_err(|e| format!("cannot lock {}: {e}", path.display()))? {
                // The card of a holder that died goes at once: it would pass for ours.
                f.set_len(0).map_err(|e| format!("cannot clear {}: {e}", path.display()))?;
                return Ok(Slots { dir: dir.to_path_buf(), max, slot: k, file: f });
            }
        }
        Err(format!("all {max} slots of {} are taken (FERRY_MCAPI_MAX_NODES)", dir.display()))
    }

    /// Our slot: our world rank.
    pub fn slot(&self) -> u32 {
        self.slot
    }

    /// Write our card into our slot, over whatever a dead holder left there.
    pub fn publish(&mut self, card: &SlotCard) -> Result<(), String> {
        let path = slot_path(&self.dir, self.slot);
        let write = |f: &mut File| -> io::Result<()> {
            f.set_len(0)?;
            // One write at offset 0: a reader sees nothing, part of the line, or all of it.
            std::os::unix::fs::FileExt::write_all_at(f, card.encode().as_bytes(), 0)
        };
        write(&mut self.file).map_err(|e| format!("cannot write {}: {e}", path.display()))
    }

    /// The card in slot `k` if a live node holds it (not ours).
    pub fn read(&self, k: u32) -> Option<SlotCard> {
        if k == self.slot || k >= self.max {
            return None;
        }
        let mut f = File::open(slot_path(&self.dir, k)).ok()?;
        // A shared lock we can take means no node holds the slot. (A node claiming it at this
        // instant then moves on to the next slot: harmless.)
        if try_lock(&f, libc::LOCK_SH).ok()? {
            return None;
        }
        let mut text = String::new();
        f.read_to_string(&mut text).ok()?;
        // Between a new holder's lock and its clearing the file, the card may still be the
        // dead holder's: its process is gone.
        SlotCard::parse(&text).filter(|c| process_exists(c.pid))
    }

    /// Every live node's slot and card, ours excepted.
    pub fn live(&self) -> Vec<(u32, SlotCard)> {
        (0..self.max).filter_map(|k| self.read(k).map(|c| (k, c))).collect()
    }

    /// The live slot holding `node`, if any.
    pub fn find(&self, node: u32) -> Option<(u32, SlotCard)> {
        (0..self.max).find_map(|k| self.read(k).filter(|c| c.node == node).map(|c| (k, c)))
    }
}

fn process_exists(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else { return false };
    // SAFETY: signal 0 only asks whether the process exists; nothing is sent.
    pid > 0 && (unsafe { libc::kill(pid, 0) } == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM))
}

fn slot_path(dir: &Path, k: u32) -> PathBuf {
    dir.join(format!("slot-{k}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch() -> PathBuf {
        let mut n = [0u8; 8];
        getrandom::getrandom(&mut n).unwrap();
        let d = std::env::temp_dir().join(format!("ferry-rdv-test-{}-{:016x}", std::process::id(), u64::from_le_bytes(n)));
        DirBuilder::new().mode(0o700).create(&d).unwrap();
        d
    }

    #[test]
    fn cards_are_one_complete_line() {
        let c = SlotCard { node: 7, pid: 1234, addr: "127.0.0.1:4567".parse().unwrap() };
        assert_eq!(c.encode(), "node 7 pid 1234 addr 127.0.0.1:4567\n");
        assert_eq!(SlotCard::parse(&c.encode()), Some(c));
        let full = c.encode();
        for cut in 0..full.len() {
            assert_eq!(SlotCard::parse(&full[..cut]), None, "a card cut at {cut}");
        }
        for bad in ["", "\n", "node 7 pid 1 addr 127.0.0.1:4\nnode 8\n", "node x pid 1 addr 127.0.0.1:4\n", "node 7  pid 1 addr 127.0.0.1:4\n", "node +7 pid 1 addr 127.0.0.1:4\n", "node 7 pid 1 addr nowhere\n", "node 7 pid 1 addr 127.0.0.1:4 more\n"] {
            assert_eq!(SlotCard::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn only_existing_processes_hold_cards() {
        assert!(process_exists(std::process::id()));
        assert!(!process_exists(u32::MAX));
        assert!(!process_exists(0));
    }

    #[test]
    fn the_base_directory_follows_the_runtime_directory() {
        assert_eq!(default_base(Some("/run/user/1000"), 1000), PathBuf::from("/run/user/1000/ferry-mcapi"));
        assert_eq!(default_base(None, 1000), PathBuf::from("/tmp/ferry-mcapi-1000"));
        assert_eq!(default_base(Some(""), 7), PathBuf::from("/tmp/ferry-mcapi-7"));
    }

    #[test]
    fn only_a_private_directory_of_ours_is_accepted() {
        let p = Path::new("/x");
        assert!(check_private(p, 1000, 0o40700, 1000).is_ok());
        let e = check_private(p, 0, 0o40700, 1000).unwrap_err();
        assert!(e.contains("uid 0"), "{e}");
        for mode in [0o40750, 0o40701, 0o40777, 0o40710] {
            let e = check_private(p, 1000, mode, 1000).unwrap_err();
            assert!(e.contains("open to other users"), "{mode:o}: {e}");
        }
    }

    #[test]
    fn a_domain_directory_is_made_private_and_an_open_one_refused() {
        let base = scratch();
        let d = domain_dir(&base, 3).unwrap();
        assert_eq!(d, base.join("domain-3"));
        assert_eq!(std::fs::metadata(&d).unwrap().mode() & 0o777, 0o700);
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
        let e = domain_dir(&base, 3).unwrap_err();
        assert!(e.contains("open to other users"), "{e}");
        std::os::unix::fs::symlink(&d, base.join("domain-4")).unwrap();
        assert!(domain_dir(&base, 4).unwrap_err().contains("not a directory"));
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn the_first_node_makes_the_secret_and_the_others_read_it() {
        let dir = scratch();
        let a = domain_secret(&dir).unwrap();
        assert!(is_job_secret(&a));
        assert_eq!(domain_secret(&dir).unwrap(), a);
        assert_eq!(std::fs::metadata(dir.join("secret")).unwrap().mode() & 0o777, 0o600);
        std::fs::write(dir.join("secret"), "short\n").unwrap();
        assert!(domain_secret(&dir).unwrap_err().contains("remove it"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn slots_are_taken_lowest_first_and_freed_with_their_holder() {
        let dir = scratch();
        let mut a = Slots::claim(&dir, 3).unwrap();
        let mut b = Slots::claim(&dir, 3).unwrap();
        assert_eq!((a.slot(), b.slot()), (0, 1));
        let me = std::process::id();
        let ca = SlotCard { node: 10, pid: me, addr: "127.0.0.1:1000".parse().unwrap() };
        let cb = SlotCard { node: 11, pid: me, addr: "127.0.0.1:1001".parse().unwrap() };
        a.publish(&ca).unwrap();
        b.publish(&cb).unwrap();
        assert_eq!(a.live(), [(1, cb)]);
        assert_eq!(b.find(10), Some((0, ca)));
        assert_eq!(b.find(12), None);
        let c = Slots::claim(&dir, 3).unwrap();
        assert_eq!(c.slot(), 2);
        assert!(Slots::claim(&dir, 3).unwrap_err().contains("all 3 slots"));
        // A holder gone: its slot no longer counts, though its file and card remain, and the
        // next node takes it, writing over the old card.
        drop(a);
        assert_eq!(b.find(10), None);
        let mut d = Slots::claim(&dir, 3).unwrap();
        assert_eq!(d.slot(), 0);
        assert_eq!(b.read(0), None, "claimed, no card yet");
        let cd = SlotCard { node: 12, pid: me, addr: "127.0.0.1:9".parse().unwrap() };
        d.publish(&cd).unwrap();
        assert_eq!(b.read(0), Some(cd));
        assert_eq!(std::fs::read_to_string(dir.join("slot-0")).unwrap(), cd.encode());
        drop((b, c, d));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
