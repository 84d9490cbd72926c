//! Host areas: the shared segment of one communicator's ranks on one host, where the
//! shared-memory collectives (`ferry_coll::slots`) keep a flag and two slot buffers per rank,
//! and the futex word their waiters sleep on. This is the mechanism only: creating, opening,
//! mapping and naming the object, the atomics of the flags, and sleeping and waking; which
//! flag to wait for is the algorithms' business.
//!
//! Layout (from the start of the mapping):
//!
//! | area | size |
//! |---|---|
//! | header | 128 (magic, ranks, slot bytes) |
//! | doorbell | 128 (the futex word and the count of sleepers, see `doorbell`) |
//! | flags | `n` x 128: per rank a line with its flag, then the size words of its two buffers |
//! | slots | `n` x 2 x slot bytes, from a page boundary |
//!
//! The object is made by one rank ([`HostArea::create`]) and opened by the others
//! ([`HostArea::open`]) once they know it exists; its name goes ([`HostArea::unlink`]) as soon as all
//! have mapped it, so that no crash can leave it behind afterwards. The names start with the
//! host's job segment name, so the launcher's clean-up after a crash finds them too.
//! A communicator of one rank needs no name: [`HostArea::private`].

use std::ffi::CString;
use std::io;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use super::doorbell::{Doorbell, DoorbellWord, WaitOutcome};
use super::ShmError;

const MAGIC: u64 = u64::from_le_bytes(*b"FERRYCOL");
const LINE: usize = 128;
const PAGE: usize = 4096;
const DOORBELL_OFF: usize = LINE;
const FLAGS_OFF: usize = 2 * LINE;
/// Most ranks one area serves (a host's ranks: far more than any machine has cores).
pub const MAX_AREA_RANKS: usize = 4096;

#[repr(C)]
struct Header {
    magic: AtomicU64,
    ranks: u32,
    slot_bytes: u32,
}

/// Where everything lies for `ranks` ranks with slot buffers of `slot` bytes.
fn layout(ranks: usize, slot: usize) -> Result<(usize, usize), ShmError> {
    if ranks == 0 || ranks > MAX_AREA_RANKS || slot == 0 || slot % 64 != 0 || slot > 1 << 24 {
        return Err(ShmError::Layout(format!("host area of {ranks} ranks with slots of {slot} bytes")));
    }
    let slots_off = (FLAGS_OFF + ranks * LINE).next_multiple_of(PAGE);
    Ok((slots_off, slots_off + ranks * 2 * slot))
}

/// A mapping, unmapped when the last handle on it goes.
struct Mapping {
    base: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is shared memory touched through atomics (flags, doorbell) and through
// slot buffers whose use the algorithms' protocol orders.
unsafe impl Send for Mapping {}
// SAFETY: as above.
unsafe impl Sync for Mapping {}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: base/len come from a successful mmap that nothing else unmaps.
        unsafe { libc::munmap(self.base.as_ptr().cast(), self.len) };
    }
}

fn io_err(op: &'static str, name: &str) -> ShmError {
    ShmError::Io { op, name: name.to_string(), source: io::Error::last_os_error() }
}

/// Map `len` bytes of `fd` (or anonymous memory for `fd < 0`), pages in place.
fn map(fd: libc::c_int, len: usize, name: &str) -> Result<Mapping, ShmError> {
    let flags = if fd < 0 { libc::MAP_PRIVATE | libc::MAP_ANONYMOUS } else { libc::MAP_SHARED } | libc::MAP_POPULATE;
    // SAFETY: a fresh mapping of `len` bytes; the result is checked.
    let p = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, flags, fd, 0) };
    if p == libc::MAP_FAILED {
        return Err(io_err("mmap", name));
    }
    Ok(Mapping { base: NonNull::new(p.cast()).expect("mmap never returns null on success"), len })
}

fn c_name(name: &str) -> Result<CString, ShmError> {
    CString::new(name).map_err(|_| ShmError::Layout(format!("{name:?} holds a NUL")))
}

/// Remove the name of a host area (its memory stays while mapped). Whether there was one.
fn unlink(name: &str) -> Result<bool, ShmError> {
    let c = c_name(name)?;
    // SAFETY: a valid NUL-terminated string.
    if unsafe { libc::shm_unlink(c.as_ptr()) } == 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    if e.kind() == io::ErrorKind::NotFound {
        Ok(false)
    } else {
        Err(ShmError::Io { op: "shm_unlink", name: name.to_string(), source: e })
    }
}

/// One rank's mapping of a host area.
pub struct HostArea {
    map: Arc<Mapping>,
    ranks: usize,
    me: usize,
    slot_bytes: usize,
    flags: *const u8,
    slots: *mut u8,
    bell: Doorbell,
}

// SAFETY: the raw pointers point into `map`, which the area owns; see `Mapping`.
unsafe impl Send for HostArea {}
// SAFETY: as above.
unsafe impl Sync for HostArea {}

impl HostArea {
    fn at(map: Mapping, ranks: usize, me: usize, slot_bytes: usize, slots_off: usize) -> HostArea {
        let map = Arc::new(map);
        let base = map.base.as_ptr();
        let keep: Arc<dyn Send + Sync> = map.clone();
        // SAFETY: the doorbell line lies inside the mapping, which `keep` holds.
        let bell = unsafe { Doorbell::from_raw(base.wrapping_add(DOORBELL_OFF) as *mut DoorbellWord, keep) };
        HostArea { ranks, me, slot_bytes, flags: base.wrapping_add(FLAGS_OFF), slots: base.wrapping_add(slots_off), bell, map }
    }

    fn header(&self) -> &Header {
        // SAFETY: the mapping starts with the header and lives as long as `self`.
        unsafe { &*(self.map.base.as_ptr() as *const Header) }
    }

    /// Make the area `name` (a POSIX shared-memory name, `/...`) for `ranks` ranks with slot
    /// buffers of `slot_bytes`, as rank `me`. A leftover of that name (a crashed job whose id
    /// came back) is replaced.
    pub fn create(name: &str, ranks: usize, me: usize, slot_bytes: usize) -> Result<HostArea, ShmError> {
        let (slots_off, len) = layout(ranks, slot_bytes)?;
        let c = c_name(name)?;
        let open = || {
            // SAFETY: a valid C string; the result is checked.
            unsafe { libc::shm_open(c.as_ptr(), libc::O_CREAT | libc::O_EXCL | libc::O_RDWR | libc::O_CLOEXEC, 0o600) }
        };
        let mut fd = open();
        if fd < 0 && io::Error::last_os_error().kind() == io::ErrorKind::AlreadyExists {
            unlink(name)?;
            fd = open();
        }
        if fd < 0 {
            return Err(io_err("shm_open", name));
        }
        // Reserve the pages now: an object larger than /dev/shm can hold fails here, not with
        // SIGBUS at the first store.
        // SAFETY: our descriptor.
        let sized = unsafe { libc::posix_fallocate(fd, 0, len as libc::off_t) } == 0;
        let mapped = if sized { map(fd, len, name) } else { Err(io_err("posix_fallocate", name)) };
        // SAFETY: closing our descriptor; a mapping stays.
        unsafe { libc::close(fd) };
        let map = match mapped {
            Ok(m) => m,
            Err(e) => {
                let _ = unlink(name);
                return Err(e);
            }
        };
        let area = HostArea::at(map, ranks, me, slot_bytes, slots_off);
        // SAFETY: nobody else maps the object before the creator says it exists; tmpfs hands
        // out zeroed pages, so every flag and the doorbell start at 0.
        unsafe {
            let h = area.map.base.as_ptr() as *mut Header;
            (*h).ranks = ranks as u32;
            (*h).slot_bytes = slot_bytes as u32;
        }
        area.header().magic.store(MAGIC, Ordering::Release);
        Ok(area)
    }

    /// Open the area `name` that another rank made, as rank `me` of `ranks`, and check that
    /// it is what the caller expects.
    pub fn open(name: &str, ranks: usize, me: usize, slot_bytes: usize) -> Result<HostArea, ShmError> {
        let (slots_off, len) = layout(ranks, slot_bytes)?;
        let c = c_name(name)?;
        // SAFETY: a valid C string; the result is checked.
        let fd = unsafe { libc::shm_open(c.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC, 0) };
        if fd < 0 {
            return Err(io_err("shm_open", name));
        }
        // SAFETY: a zeroed stat filled by fstat on our descriptor.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        let size = if unsafe { libc::fstat(fd, &mut st) } == 0 { st.st_size as usize } else { 0 };
        let mapped = if size == len { map(fd, len, name) } else { Err(ShmError::Layout(format!("{name}: {size} bytes, expected {len}"))) };
        // SAFETY: closing our descriptor; a mapping stays.
        unsafe { libc::close(fd) };
        let area = HostArea::at(mapped?, ranks, me, slot_bytes, slots_off);
        let h = area.header();
        if h.magic.load(Ordering::Acquire) != MAGIC || h.ranks as usize != ranks || h.slot_bytes as usize != slot_bytes {
            return Err(ShmError::Layout(format!("{name}: not a host area of {ranks} ranks with slots of {slot_bytes} bytes")));
        }
        Ok(area)
    }

    /// An area of this process only, for a communicator of one rank.
    pub fn private(slot_bytes: usize) -> Result<HostArea, ShmError> {
        let (slots_off, len) = layout(1, slot_bytes)?;
        Ok(HostArea::at(map(-1, len, "(private)")?, 1, 0, slot_bytes, slots_off))
    }

    /// Remove the name `name` (the memory stays while mapped). Whether there was one.
    pub fn unlink(name: &str) -> Result<bool, ShmError> {
        unlink(name)
    }

    pub fn ranks(&self) -> usize {
        self.ranks
    }

    pub fn me(&self) -> usize {
        self.me
    }

    #[inline]
    fn flag_word(&self, r: usize) -> &AtomicU64 {
        debug_assert!(r < self.ranks);
        // SAFETY: r < ranks, so the line lies in the flags area of the live mapping, aligned
        // (128-byte lines from a page boundary).
        unsafe { &*(self.flags.add(r * LINE) as *const AtomicU64) }
    }

    /// Rank `r`'s flag (acquire).
    #[inline]
    pub fn flag(&self, r: usize) -> u64 {
        self.flag_word(r).load(Ordering::Acquire)
    }

    /// Store this rank's flag (release), then wake the sleepers, if any (a fence and a load
    /// when nobody sleeps).
    #[inline]
    pub fn publish(&self, value: u64) {
        self.flag_word(self.me).store(value, Ordering::Release);
        self.bell.notify();
    }

    /// The size word of rank `r`'s buffer `which` (0 or 1), on the line of its flag.
    #[inline]
    pub fn size_word(&self, r: usize, which: usize) -> *mut u64 {
        debug_assert!(r < self.ranks && which < 2);
        self.flags.wrapping_add(r * LINE + 8 + 8 * which) as *mut u64
    }

    /// Rank `r`'s buffer `which` (0 or 1) of slot bytes.
    #[inline]
    pub fn slot(&self, r: usize, which: usize) -> *mut u8 {
        debug_assert!(r < self.ranks && which < 2);
        self.slots.wrapping_add((2 * r + which) * self.slot_bytes)
    }

    /// Sleep until `ready()` holds or `deadline` passes, woken by [`publish`](Self::publish)
    /// (`ready` must read flags). Whether it holds.
    pub fn sleep_until(&self, deadline: Instant, ready: impl FnMut() -> bool) -> bool {
        let WaitOutcome { ready, .. } = self.bell.wait_until(0, Some(deadline), ready);
        ready
    }

    /// Processes that sleep on this area now (for tests and diagnostics).
    pub fn sleepers(&self) -> u32 {
        // SAFETY: the doorbell's second word, inside the live mapping.
        unsafe { &*(self.map.base.as_ptr().add(DOORBELL_OFF + 4) as *const AtomicU32) }.load(Ordering::Relaxed)
    }
}

/// Through a shared reference: a call that waits holds the area behind an `Arc`.
impl ferry_coll::slots::Slots for &HostArea {
    #[inline]
    fn ranks(&self) -> usize {
        self.ranks
    }
    #[inline]
    fn me(&self) -> usize {
        self.me
    }
    #[inline]
    fn flag(&self, r: usize) -> u64 {
        HostArea::flag(self, r)
    }
    #[inline]
    fn publish(&mut self, seq: u64) {
        HostArea::publish(*self, seq)
    }
    #[inline]
    fn slot(&self, r: usize, seq: u64) -> *mut u8 {
        HostArea::slot(self, r, (seq & 1) as usize)
    }
    #[inline]
    fn size_word(&self, r: usize, seq: u64) -> *mut u64 {
        HostArea::size_word(self, r, (seq & 1) as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn name(tag: &str) -> String {
        let mut b = [0u8; 8];
        getrandom::getrandom(&mut b).expect("getrandom");
        format!("/ferry-test-area-{tag}-{}-{:016x}", std::process::id(), u64::from_le_bytes(b))
    }

    fn exists(name: &str) -> bool {
        std::path::Path::new(&format!("/dev/shm{name}")).exists()
    }

    #[test]
    fn host_area_flags_and_slots_are_shared_and_the_name_goes() {
        let n = name("life");
        let a = HostArea::create(&n, 3, 0, 4096).expect("create");
        let b = HostArea::open(&n, 3, 2, 4096).expect("open");
        assert!(HostArea::open(&n, 4, 1, 4096).is_err(), "another layout is refused");
        assert!(unlink(&n).expect("unlink") && !exists(&n));
        assert!(!unlink(&n).expect("second unlink"));
        use ferry_coll::slots::Slots;
        // SAFETY: the slot holds 4096 bytes.
        unsafe { *Slots::slot(&&a, 0, 3) = 42 };
        Slots::publish(&mut &a, 3);
        assert_eq!(b.flag(0), 3);
        // SAFETY: as above, through the other mapping.
        assert_eq!(unsafe { *Slots::slot(&&b, 0, 3) }, 42);
        assert_ne!(Slots::slot(&&b, 0, 3), Slots::slot(&&b, 0, 4), "two buffers");
        assert_eq!(b.flag(1), 0);
    }

    #[test]
    fn host_area_sleepers_wake_on_publish() {
        let n = name("wake");
        let a = HostArea::create(&n, 2, 0, 64).expect("create");
        let b = HostArea::open(&n, 2, 1, 64).expect("open");
        unlink(&n).expect("unlink");
        let sleeper = std::thread::spawn(move || b.sleep_until(Instant::now() + Duration::from_secs(20), || b.flag(0) >= 1));
        while a.sleepers() == 0 {
            std::thread::yield_now();
        }
        let start = Instant::now();
        a.publish(1);
        assert!(sleeper.join().expect("sleeper"), "woken with the flag there");
        assert!(start.elapsed() < Duration::from_secs(10));
        // Nobody waits for a flag that is there, and a deadline ends a wait.
        assert!(a.sleep_until(Instant::now(), || a.flag(0) >= 1));
        assert!(!a.sleep_until(Instant::now() + Duration::from_millis(5), || a.flag(1) >= 1));
    }

    #[test]
    fn host_area_private_needs_no_name() {
        let a = HostArea::private(4096).expect("private");
        use ferry_coll::slots::Slots;
        Slots::publish(&mut &a, 1);
        assert_eq!((a.ranks(), a.me(), a.flag(0)), (1, 0, 1));
        assert!(layout(0, 4096).is_err() && layout(2, 100).is_err());
    }
}
