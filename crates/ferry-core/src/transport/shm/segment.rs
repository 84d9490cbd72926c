//! The per-job shared-memory segment of one host: `/dev/shm/ferry-<job id>`, created by one
//! process, opened by the other local ranks, holding a doorbell and a status slot per local
//! rank and a ring per ordered pair of local ranks.
//!
//! Layout (offsets from the start; every area 128-byte aligned, ring data page-aligned):
//!
//! | area | size |
//! |---|---|
//! | header | 4096 (magic, version, rank count, ring capacity, offsets, creator pid) |
//! | doorbells | `n` x 128 |
//! | status board | `n` x 128 |
//! | ring control blocks | `n (n-1)` x 384 (`head`, `tail`, metadata: one 128-byte line each) |
//! | ring data | `n (n-1)` x capacity, starting on a page |
//!
//! The ring from local rank `s` to local rank `d` (`s != d`) has index `s (n-1) + d'` where
//! `d' = d` if `d < s`, else `d - 1`.
//!
//! Creation: `O_CREAT | O_EXCL` picks exactly one creator; it sizes the object (tmpfs hands
//! out zero pages), writes the header and the ring metadata, then stores the ready magic with
//! Release. Openers wait (bounded) for the object to exist, to have its size and for the magic
//! (Acquire), then check the header against the layout they compute themselves.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::doorbell::{Doorbell, DoorbellWord};
use super::ring::{consumer_at, producer_at, valid_capacity, Consumer, Producer, RingControl, CONTROL_LEN, MAX_CAPACITY, MIN_CAPACITY};
use super::status::{StatusBoard, StatusSlot};
use super::ShmError;

/// "FERRYSHM", stored last by the creator.
const READY_MAGIC: u64 = u64::from_le_bytes(*b"FERRYSHM");
const LAYOUT_VERSION: u32 = 1;
const HEADER_LEN: usize = 4096;
const LINE: usize = 128;
const PAGE: usize = 4096;
/// Most local ranks one segment serves.
pub const MAX_LOCAL_RANKS: usize = 1024;
/// Longest job id accepted (the object name must stay below NAME_MAX).
pub const MAX_JOB_ID_LEN: usize = 200;

#[repr(C)]
struct SegmentHeader {
    magic: AtomicU64,
    version: u32,
    local_ranks: u32,
    ring_capacity: u64,
    total_len: u64,
    doorbells_off: u64,
    board_off: u64,
    controls_off: u64,
    data_off: u64,
    creator_pid: u32,
    /// Processes that have mapped the segment (creator included); for diagnostics and for an
    /// early unlink once everybody is in.
    attached: AtomicU32,
}

/// Where everything lies in a segment for `n` local ranks and rings of `cap` bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegmentLayout {
    pub local_ranks: usize,
    pub ring_capacity: usize,
    pub doorbells_off: usize,
    pub board_off: usize,
    pub controls_off: usize,
    pub data_off: usize,
    pub total_len: usize,
}

fn round_up(x: usize, to: usize) -> Option<usize> {
    x.checked_add(to - 1).map(|v| v & !(to - 1))
}

impl SegmentLayout {
    /// The layout for `local_ranks` ranks with rings of `ring_capacity` bytes.
    pub fn new(local_ranks: usize, ring_capacity: usize) -> Result<SegmentLayout, ShmError> {
        if local_ranks == 0 || local_ranks > MAX_LOCAL_RANKS {
            return Err(ShmError::Layout(format!("{local_ranks} local ranks (1..={MAX_LOCAL_RANKS} supported)")));
        }
        if !valid_capacity(ring_capacity) {
            return Err(ShmError::Layout(format!(
                "ring capacity {ring_capacity} is not a power of two in {MIN_CAPACITY}..={MAX_CAPACITY}"
            )));
        }
        let rings = local_ranks * (local_ranks - 1);
        let too_big = || ShmError::Layout(format!("{local_ranks} ranks with {ring_capacity}-byte rings overflow"));
        let doorbells_off = HEADER_LEN;
        let board_off = doorbells_off + local_ranks * LINE;
        let controls_off = board_off + local_ranks * LINE;
        let data_off = round_up(controls_off + rings * CONTROL_LEN, PAGE).ok_or_else(too_big)?;
        let total_len = rings.checked_mul(ring_capacity).and_then(|d| d.checked_add(data_off)).ok_or_else(too_big)?;
        if total_len > isize::MAX as usize {
            return Err(too_big());
        }
        Ok(SegmentLayout { local_ranks, ring_capacity, doorbells_off, board_off, controls_off, data_off, total_len })
    }

    /// Index of the ring carrying frames from local rank `from` to local rank `to`.
    pub fn ring_index(&self, from: usize, to: usize) -> Result<usize, ShmError> {
        let n = self.local_ranks;
        if from >= n || to >= n || from == to {
            return Err(ShmError::NoSuchRing { from, to, local_ranks: n });
        }
        Ok(from * (n - 1) + if to < from { to } else { to - 1 })
    }
}

/// The shared-memory object name of a job: `/ferry-<job id>`. Job ids are 1..=200 characters
/// of `[A-Za-z0-9._-]`, so a name is always a single path component.
pub fn segment_name(job_id: &str) -> Result<String, ShmError> {
    let ok = !job_id.is_empty()
        && job_id.len() <= MAX_JOB_ID_LEN
        && job_id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'_' || b == b'-')
        && job_id != "."
        && job_id != "..";
    if !ok {
        return Err(ShmError::BadJobId(job_id.to_string()));
    }
    Ok(format!("/ferry-{job_id}"))
}

/// Remove a job's segment name (the memory goes once every process has unmapped it). Returns
/// whether there was one. Safe to call from the launcher after the job ended, crashed or was
/// killed, and more than once.
pub fn unlink(job_id: &str) -> Result<bool, ShmError> {
    let name = segment_name(job_id)?;
    let c = CString::new(name.clone()).expect("segment names hold no NUL");
    // SAFETY: `c` is a valid NUL-terminated string.
    if unsafe { libc::shm_unlink(c.as_ptr()) } == 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    if e.kind() == io::ErrorKind::NotFound {
        Ok(false)
    } else {
        Err(ShmError::Io { op: "shm_unlink", name, source: e })
    }
}

/// A mapped region, unmapped on drop (after the last handle into it is gone).
struct Mapping {
    base: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is shared memory accessed only through atomics and the ring protocol.
unsafe impl Send for Mapping {}
// SAFETY: as above.
unsafe impl Sync for Mapping {}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: base/len come from a successful mmap; no handle into it outlives this Arc.
        unsafe { libc::munmap(self.base.as_ptr() as *mut libc::c_void, self.len) };
    }
}

fn map(fd: &OwnedFd, len: usize, name: &str) -> Result<Mapping, ShmError> {
    // Mapped with its pages in place (MAP_POPULATE): else the first pass of every ring over
    // its memory takes a page fault per page on each side, which a job's first small messages
    // pay (a ring of 256 KiB is 64 pages).
    // SAFETY: a fresh shared mapping of `len` bytes of `fd`; we check the result.
    let p = unsafe {
        libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED | libc::MAP_POPULATE, fd.as_raw_fd(), 0)
    };
    if p == libc::MAP_FAILED {
        return Err(ShmError::Io { op: "mmap", name: name.into(), source: io::Error::last_os_error() });
    }
    Ok(Mapping { base: NonNull::new(p as *mut u8).expect("mmap never returns null on success"), len })
}

/// One process's mapping of its host's job segment.
pub struct Segment {
    map: Arc<Mapping>,
    layout: SegmentLayout,
    name: String,
    /// Processes attached once we were (1 for the creator).
    joined_as: u32,
    /// How to wake a local rank that sleeps outside the futex; given to every doorbell handed out.
    waker: Option<Arc<dyn Fn(usize) + Send + Sync>>,
}

impl Segment {
    /// Create and initialise the segment of `job_id` for `local_ranks` ranks with rings of
    /// `ring_capacity` bytes. Fails with [`ShmError::Exists`] if the name is taken (another
    /// creator, or a segment left by a crashed job with the same id: [`unlink`] it first).
    pub fn create(job_id: &str, local_ranks: usize, ring_capacity: usize) -> Result<Segment, ShmError> {
        let layout = SegmentLayout::new(local_ranks, ring_capacity)?;
        let name = segment_name(job_id)?;
        let c = CString::new(name.clone()).expect("segment names hold no NUL");
        // SAFETY: `c` is a valid NUL-terminated string; the result is checked.
        let fd = unsafe { libc::shm_open(c.as_ptr(), libc::O_CREAT | libc::O_EXCL | libc::O_RDWR | libc::O_CLOEXEC, 0o600) };
        if fd < 0 {
            let e = io::Error::last_os_error();
            return Err(if e.kind() == io::ErrorKind::AlreadyExists {
                ShmError::Exists(name)
            } else {
                ShmError::Io { op: "shm_open", name, source: e }
            });
        }
        // SAFETY: `fd` was just returned by shm_open and is owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: as in `unlink`; removes the half-made object we created.
        let discard = || unsafe { libc::shm_unlink(c.as_ptr()) };
        // SAFETY: plain syscall on our fd.
        if unsafe { libc::ftruncate(fd.as_raw_fd(), layout.total_len as libc::off_t) } != 0 {
            let source = io::Error::last_os_error();
            discard();
            return Err(ShmError::Io { op: "ftruncate", name, source });
        }
        let map = map(&fd, layout.total_len, &name).inspect_err(|_| {
            discard();
        })?;
        drop(fd);
        let seg = Segment { map: Arc::new(map), layout, name, joined_as: 1, waker: None };
        // SAFETY: we are the only process with a valid view until the magic is set (openers
        // wait for it); the header area is ours to write.
        unsafe {
            let hp = seg.map.base.as_ptr() as *mut SegmentHeader;
            (*hp).version = LAYOUT_VERSION;
            (*hp).local_ranks = local_ranks as u32;
            (*hp).ring_capacity = ring_capacity as u64;
            (*hp).total_len = layout.total_len as u64;
            (*hp).doorbells_off = layout.doorbells_off as u64;
            (*hp).board_off = layout.board_off as u64;
            (*hp).controls_off = layout.controls_off as u64;
            (*hp).data_off = layout.data_off as u64;
            (*hp).creator_pid = std::process::id();
        }
        for i in 0..local_ranks * (local_ranks - 1) {
            seg.control(i).init(ring_capacity);
        }
        let h = seg.header();
        h.attached.store(1, Ordering::Relaxed);
        // Everything above happens-before any opener's Acquire load that sees the magic.
        h.magic.store(READY_MAGIC, Ordering::Release);
        Ok(seg)
    }

    /// Open the segment of `job_id` that another local process creates, waiting up to
    /// `timeout` for it to exist and be initialised.
    pub fn open(job_id: &str, timeout: Duration) -> Result<Segment, ShmError> {
        let name = segment_name(job_id)?;
        let c = CString::new(name.clone()).expect("segment names hold no NUL");
        let start = Instant::now();
        let timed_out = |what: &str| ShmError::Timeout { name: name.clone(), waited: start.elapsed(), what: what.to_string() };
        let pause = || std::thread::sleep(Duration::from_millis(1));
        let fd = loop {
            // SAFETY: `c` is a valid NUL-terminated string; the result is checked.
            let fd = unsafe { libc::shm_open(c.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC, 0) };
            if fd >= 0 {
                // SAFETY: fresh fd from shm_open, owned by nobody else.
                break unsafe { OwnedFd::from_raw_fd(fd) };
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::NotFound {
                return Err(ShmError::Io { op: "shm_open", name, source: e });
            }
            if start.elapsed() >= timeout {
                return Err(timed_out("the segment to be created"));
            }
            pause();
        };
        let len = loop {
            // SAFETY: zeroed stat buffer filled by fstat on our fd.
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            // SAFETY: as above.
            if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
                return Err(ShmError::Io { op: "fstat", name, source: io::Error::last_os_error() });
            }
            if st.st_size as usize >= HEADER_LEN {
                break st.st_size as usize;
            }
            if start.elapsed() >= timeout {
                return Err(timed_out("the segment to be sized"));
            }
            pause();
        };
        let map = map(&fd, len, &name)?;
        drop(fd);
        // SAFETY: the mapping is at least HEADER_LEN bytes and page-aligned.
        let h = unsafe { &*(map.base.as_ptr() as *const SegmentHeader) };
        while h.magic.load(Ordering::Acquire) != READY_MAGIC {
            if start.elapsed() >= timeout {
                return Err(timed_out("the creator to initialise the segment"));
            }
            pause();
        }
        if h.version != LAYOUT_VERSION {
            return Err(ShmError::Layout(format!("{name}: layout version {} (we speak {LAYOUT_VERSION})", h.version)));
        }
        let layout = SegmentLayout::new(h.local_ranks as usize, h.ring_capacity as usize)?;
        let stored = (h.total_len, h.doorbells_off, h.board_off, h.controls_off, h.data_off);
        let want = (
            layout.total_len as u64,
            layout.doorbells_off as u64,
            layout.board_off as u64,
            layout.controls_off as u64,
            layout.data_off as u64,
        );
        if stored != want || len != layout.total_len {
            return Err(ShmError::Layout(format!("{name}: header does not match its own layout (object of {len} bytes)")));
        }
        let joined_as = h.attached.fetch_add(1, Ordering::AcqRel) + 1;
        Ok(Segment { map: Arc::new(map), layout, name, joined_as, waker: None })
    }

    fn header(&self) -> &SegmentHeader {
        // SAFETY: the mapping starts with the header and lives as long as `self`.
        unsafe { &*(self.map.base.as_ptr() as *const SegmentHeader) }
    }

    fn control(&self, index: usize) -> &RingControl {
        // SAFETY: index < rings (callers check), so the block lies inside the controls area.
        unsafe { &*(self.map.base.as_ptr().add(self.layout.controls_off + index * CONTROL_LEN) as *const RingControl) }
    }

    fn keep(&self) -> Arc<dyn Send + Sync> {
        self.map.clone()
    }

    /// The object name, e.g. `/ferry-1234`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Where everything lies.
    pub fn layout(&self) -> &SegmentLayout {
        &self.layout
    }

    /// Number of local ranks the segment serves.
    pub fn local_ranks(&self) -> usize {
        self.layout.local_ranks
    }

    /// Pid of the process that created the segment.
    pub fn creator_pid(&self) -> u32 {
        self.header().creator_pid
    }

    /// How many processes have mapped the segment so far (creator included).
    pub fn attached(&self) -> u32 {
        self.header().attached.load(Ordering::Relaxed)
    }

    /// How many processes had attached once this one did (1 for the creator): the process
    /// that completes the set (`== local_ranks()`) is the last to need the name.
    pub fn joined_as(&self) -> u32 {
        self.joined_as
    }

    /// Wake local rank `r` with `waker(r)` too, whenever a notifier finds it asleep (see
    /// [`Doorbell::with_kick`]); applies to the doorbells and ring ends made afterwards.
    pub fn set_waker(&mut self, waker: Arc<dyn Fn(usize) + Send + Sync>) {
        self.waker = Some(waker);
    }

    /// The doorbell local rank `rank` sleeps on.
    pub fn doorbell(&self, rank: usize) -> Result<Doorbell, ShmError> {
        if rank >= self.layout.local_ranks {
            return Err(ShmError::NoSuchRing { from: rank, to: rank, local_ranks: self.layout.local_ranks });
        }
        // SAFETY: rank < n, so the word lies inside the doorbell area of the live mapping.
        let bell = unsafe {
            Doorbell::from_raw(
                self.map.base.as_ptr().add(self.layout.doorbells_off + rank * LINE) as *mut DoorbellWord,
                self.keep(),
            )
        };
        Ok(match &self.waker {
            Some(w) => {
                let w = w.clone();
                bell.with_kick(Arc::new(move || w(rank)))
            }
            None => bell,
        })
    }

    /// The host's status board.
    pub fn status_board(&self) -> StatusBoard {
        // SAFETY: the board area holds `local_ranks` slots inside the live mapping.
        unsafe {
            StatusBoard::from_raw(
                self.map.base.as_ptr().add(self.layout.board_off) as *mut StatusSlot,
                self.layout.local_ranks,
                self.keep(),
            )
        }
    }

    fn ring_parts(&self, from: usize, to: usize) -> Result<(*mut RingControl, *mut u8), ShmError> {
        let i = self.layout.ring_index(from, to)?;
        let base = self.map.base.as_ptr();
        // SAFETY: i < n (n-1), so both lie inside the controls and data areas of the mapping.
        unsafe {
            Ok((
                base.add(self.layout.controls_off + i * CONTROL_LEN) as *mut RingControl,
                base.add(self.layout.data_off + i * self.layout.ring_capacity),
            ))
        }
    }

    /// The writing end of the ring `from -> to`, ringing `to`'s doorbell. Fails if a live
    /// handle (in any process) holds it.
    pub fn producer(&self, from: usize, to: usize) -> Result<Producer, ShmError> {
        let (ctl, data) = self.ring_parts(from, to)?;
        let bell = self.doorbell(to)?;
        // SAFETY: ctl/data are the initialised ring `from -> to` of this mapping, kept alive
        // by the Arc we pass.
        unsafe { producer_at(ctl, data, self.layout.ring_capacity, self.keep(), Some(bell)) }
    }

    /// The reading end of the ring `from -> to`, ringing `from`'s doorbell when it frees space.
    pub fn consumer(&self, from: usize, to: usize) -> Result<Consumer, ShmError> {
        let (ctl, data) = self.ring_parts(from, to)?;
        let bell = self.doorbell(from)?;
        // SAFETY: as in `producer`.
        unsafe { consumer_at(ctl, data, self.layout.ring_capacity, self.keep(), Some(bell)) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(tag: &str) -> String {
        let mut b = [0u8; 8];
        getrandom::getrandom(&mut b).expect("getrandom");
        format!("test-{tag}-{}-{:016x}", std::process::id(), u64::from_le_bytes(b))
    }

    fn in_dev_shm(job: &str) -> bool {
        std::path::Path::new(&format!("/dev/shm/ferry-{job}")).exists()
    }

    #[test]
    fn shm_segment_create_open_unlink_leaves_nothing() {
        let id = job("life");
        let seg = Segment::create(&id, 3, 8192).expect("create");
        assert!(in_dev_shm(&id));
        assert!(matches!(Segment::create(&id, 3, 8192), Err(ShmError::Exists(_))));
        let other = Segment::open(&id, Duration::from_secs(1)).expect("open");
        assert_eq!(other.layout(), seg.layout());
        assert_eq!(other.attached(), 2);
        assert_eq!(other.creator_pid(), std::process::id());
        // One process's producer is another's consumer, through the same memory.
        let mut p = seg.producer(0, 2).expect("producer");
        let mut c = other.consumer(0, 2).expect("consumer");
        assert!(matches!(other.producer(0, 2), Err(ShmError::Claimed { .. })));
        assert!(p.try_write(b"hdr", b"payload"));
        let got = c.read(|f| (f.header.to_vec(), f.payload.to_vec())).expect("well-formed").expect("a frame");
        assert_eq!(got, (b"hdr".to_vec(), b"payload".to_vec()));
        seg.status_board().begin_transfer(1);
        assert_eq!(other.status_board().busy(), vec![1]);
        assert!(unlink(&id).expect("unlink"));
        assert!(!in_dev_shm(&id));
        // Mappings outlive the name.
        assert!(p.try_write(b"", b"still"));
        assert!(c.read(|f| f.payload == b"still").expect("ok").expect("frame"));
        drop((p, c, seg, other));
        assert!(!unlink(&id).expect("second unlink"));
        assert!(!in_dev_shm(&id));
    }

    #[test]
    fn shm_segment_open_times_out_without_creator() {
        let id = job("none");
        let t = Instant::now();
        assert!(matches!(Segment::open(&id, Duration::from_millis(30)), Err(ShmError::Timeout { .. })));
        assert!(t.elapsed() >= Duration::from_millis(30));
        assert!(!in_dev_shm(&id));
    }

    #[test]
    fn shm_segment_rejects_bad_names_and_layouts() {
        for bad in ["", ".", "..", "a/b", "a b", "x\0", &"j".repeat(MAX_JOB_ID_LEN + 1)] {
            assert!(matches!(segment_name(bad), Err(ShmError::BadJobId(_))), "{bad:?}");
        }
        assert!(SegmentLayout::new(0, 4096).is_err());
        assert!(SegmentLayout::new(2, 5000).is_err());
        assert!(SegmentLayout::new(2, 1024).is_err());
        let l = SegmentLayout::new(4, 65536).expect("layout");
        assert_eq!(l.data_off % PAGE, 0);
        assert_eq!(l.total_len, l.data_off + 12 * 65536);
        let mut seen = std::collections::HashSet::new();
        for s in 0..4 {
            for d in 0..4 {
                if s != d {
                    assert!(seen.insert(l.ring_index(s, d).expect("pair")));
                }
            }
        }
        assert_eq!(seen.into_iter().max(), Some(11));
        assert!(l.ring_index(1, 1).is_err());
        assert!(l.ring_index(4, 0).is_err());
    }

    #[test]
    fn shm_segment_single_rank_has_no_rings() {
        let id = job("one");
        let seg = Segment::create(&id, 1, 4096).expect("create");
        assert!(seg.producer(0, 0).is_err());
        assert_eq!(seg.status_board().ranks(), 1);
        drop(seg);
        assert!(unlink(&id).expect("unlink"));
    }
}
