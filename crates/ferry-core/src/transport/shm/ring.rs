//! A lock-free single-producer/single-consumer ring of variable-size records, living in shared
//! memory (a job segment) or in private memory (tests, loopback). One ring carries frames in
//! one direction between two ranks; its two ends are separate handles so that the type system,
//! and a claim word in the ring itself, keep each end to one owner.
//!
//! # Layout
//!
//! A control block of three 128-byte lines (`head`, the producer's; `tail`, written only by
//! the consumer; read-mostly metadata), so the two writers never share a line or an
//! adjacent-line prefetch pair, then a data area of `capacity` bytes (a power of two). `head`
//! and `tail` are byte counters that only grow; `pos & (capacity - 1)` is the offset.
//!
//! A record is an 8-byte prefix (`body_len: u32`, `info: u32` = kind | FIRST | LAST |
//! header_len << 16, never zero) and a body, padded to 8 bytes. A record never wraps: when it
//! does not fit before the end of the data area, the producer fills the rest with a skip
//! record and starts again at offset 0. A frame is either one piece (FIRST|LAST: header then
//! payload, contiguous) or, through [`Producer::write_partial`], a FIRST piece carrying the
//! header and the start of the payload followed by pieces carrying the rest, so a payload
//! larger than the ring streams through it while both sides copy.
//!
//! # Ordering
//!
//! A record announces itself: the consumer polls the prefix word at its own `tail` and finds
//! a record when it is not zero. So a small frame costs the reader one cache line (prefix,
//! header and payload together), not a line for a shared index and another for the data.
//! The producer writes a record's body with plain stores, zeroes the word just after the
//! record (where the consumer will look next: it may hold bytes of an older lap), then
//! publishes the record with a Release store of its prefix; the consumer's Acquire load of
//! the prefix makes the body, and that zero, visible. One word of the ring always stays free
//! for this. Freeing goes through `tail` (Release store by the consumer, read by the producer
//! only when the ring looks full). After each publication the writer rings the other side's
//! [`Doorbell`] (see its module for the sleep protocol).

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

use super::doorbell::{Doorbell, DoorbellWord};
use crate::small_copy::copy_bytes;
use super::ShmError;

/// Bytes of the prefix in front of every record.
pub const RECORD_PREFIX: usize = 8;
/// Smallest ring capacity accepted.
pub const MIN_CAPACITY: usize = 4096;
/// Largest ring capacity accepted (record lengths are 32-bit).
pub const MAX_CAPACITY: usize = 1 << 31;

const RECORD_ALIGN: usize = 8;
/// Bytes that stay free after the last record: the zero word the consumer stops at.
const RESERVE: usize = 8;
const KIND_SKIP: u32 = 1;
const KIND_PIECE: u32 = 2;
const KIND_MASK: u32 = 0xf;
const FIRST: u32 = 0x10;
const LAST: u32 = 0x20;

#[repr(C, align(128))]
struct Line<T>(T);

#[repr(C)]
struct Meta {
    capacity: AtomicU64,
    /// Pid of the process holding the producer end, 0 when free.
    producer: AtomicU32,
    /// Pid of the process holding the consumer end, 0 when free.
    consumer: AtomicU32,
}

/// The shared control block at the start of every ring.
#[repr(C)]
pub(crate) struct RingControl {
    head: Line<AtomicU64>,
    tail: Line<AtomicU64>,
    meta: Line<Meta>,
}

/// Size of a [`RingControl`] in shared memory.
pub(crate) const CONTROL_LEN: usize = std::mem::size_of::<RingControl>();

impl RingControl {
    /// Reset a control block for a ring of `capacity` bytes; nobody else may use it yet.
    pub(crate) fn init(&self, capacity: usize) {
        self.head.0.store(0, Ordering::Relaxed);
        self.tail.0.store(0, Ordering::Relaxed);
        self.meta.0.capacity.store(capacity as u64, Ordering::Relaxed);
        self.meta.0.producer.store(0, Ordering::Relaxed);
        self.meta.0.consumer.store(0, Ordering::Relaxed);
    }
}

/// Whether `capacity` is acceptable for a ring: a power of two in `MIN_CAPACITY..=MAX_CAPACITY`.
pub fn valid_capacity(capacity: usize) -> bool {
    capacity.is_power_of_two() && (MIN_CAPACITY..=MAX_CAPACITY).contains(&capacity)
}

/// Bytes a record with a body of `body` bytes occupies.
#[inline]
fn record_len(body: usize) -> usize {
    (RECORD_PREFIX + body + RECORD_ALIGN - 1) & !(RECORD_ALIGN - 1)
}

/// Largest body whose record fits in `space` bytes.
#[inline]
fn body_fitting(space: usize) -> usize {
    (space & !(RECORD_ALIGN - 1)).saturating_sub(RECORD_PREFIX)
}

/// Where one ring lives, and what keeps that memory alive.
struct RingRef {
    ctl: NonNull<RingControl>,
    data: NonNull<u8>,
    cap: usize,
    _keep: Arc<dyn Send + Sync>,
}

impl RingRef {
    fn ctl(&self) -> &RingControl {
        // SAFETY: the constructors' contract keeps the control block mapped while `keep` lives.
        unsafe { self.ctl.as_ref() }
    }
}

#[derive(Clone, Copy)]
enum End {
    Producer,
    Consumer,
}

impl RingRef {
    fn claim_word(&self, end: End) -> &AtomicU32 {
        match end {
            End::Producer => &self.ctl().meta.0.producer,
            End::Consumer => &self.ctl().meta.0.consumer,
        }
    }

    /// Take one end for this process; fails if someone holds it.
    fn claim(&self, end: End) -> Result<(), ShmError> {
        if self.ctl().meta.0.capacity.load(Ordering::Relaxed) != self.cap as u64 {
            return Err(ShmError::Corrupt("ring capacity does not match the segment layout".into()));
        }
        let me = std::process::id();
        self.claim_word(end).compare_exchange(0, me, Ordering::AcqRel, Ordering::Acquire).map(|_| ()).map_err(|holder| {
            let end = match end {
                End::Producer => "producer",
                End::Consumer => "consumer",
            };
            ShmError::Claimed { end, holder }
        })
    }
}

/// # Safety
/// `ctl` must point to an initialised [`RingControl`] and `data` to `cap` bytes, both aligned
/// (128 and 8 bytes) and mapped while `keep` lives; only ring ends may touch that memory.
pub(crate) unsafe fn producer_at(
    ctl: *mut RingControl,
    data: *mut u8,
    cap: usize,
    keep: Arc<dyn Send + Sync>,
    peer: Option<Doorbell>,
) -> Result<Producer, ShmError> {
    let ring = RingRef { ctl: NonNull::new(ctl).expect("non-null"), data: NonNull::new(data).expect("non-null"), cap, _keep: keep };
    ring.claim(End::Producer)?;
    let head = ring.ctl().head.0.load(Ordering::Acquire);
    let tail = ring.ctl().tail.0.load(Ordering::Acquire);
    Ok(Producer { ring, head, tail_seen: tail, peer, max_piece: body_fitting(cap / 4), refused_at: tail })
}

/// # Safety
/// As for [`producer_at`].
pub(crate) unsafe fn consumer_at(
    ctl: *mut RingControl,
    data: *mut u8,
    cap: usize,
    keep: Arc<dyn Send + Sync>,
    peer: Option<Doorbell>,
) -> Result<Consumer, ShmError> {
    let ring = RingRef { ctl: NonNull::new(ctl).expect("non-null"), data: NonNull::new(data).expect("non-null"), cap, _keep: keep };
    ring.claim(End::Consumer)?;
    let tail = ring.ctl().tail.0.load(Ordering::Acquire);
    Ok(Consumer { ring, tail, released: tail, pending: 0, peer })
}

/// The writing end of a ring. Not `Clone`: there is one producer.
pub struct Producer {
    ring: RingRef,
    /// Our copy of `head` (we are its only writer).
    head: u64,
    /// The last `tail` we read; refreshed only when the ring looks full.
    tail_seen: u64,
    /// Doorbell of the consumer's rank, rung after each publication.
    peer: Option<Doorbell>,
    /// Largest body of one piece written by `write_partial`.
    max_piece: usize,
    /// The consumer position the last refused write was judged against.
    refused_at: u64,
}

// SAFETY: a Producer owns its end of the ring (claimed in shared memory); the memory is kept
// alive by `keep`, which is Send + Sync, and is only accessed through this handle's &mut methods.
unsafe impl Send for Producer {}

/// Progress of a frame written in pieces by [`Producer::write_partial`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PartialWrite {
    started: bool,
    sent: usize,
    done: bool,
}

impl PartialWrite {
    /// A frame not started yet.
    pub fn new() -> PartialWrite {
        PartialWrite::default()
    }
    /// Payload bytes already in the ring.
    pub fn sent(&self) -> usize {
        self.sent
    }
    /// Whether the whole frame (header and payload) is in the ring.
    pub fn is_done(&self) -> bool {
        self.done
    }
}

impl Producer {
    /// Bytes of the data area.
    pub fn capacity(&self) -> usize {
        self.ring.cap
    }

    /// Largest `header.len() + payload.len()` that [`try_write`](Self::try_write) accepts.
    pub fn max_frame(&self) -> usize {
        self.ring.cap - RECORD_PREFIX - RESERVE
    }

    /// Limit the size of the pieces of [`write_partial`](Self::write_partial) (default: a
    /// quarter of the ring, so the consumer drains one piece while the next is written).
    pub fn set_max_piece(&mut self, bytes: usize) {
        self.max_piece = bytes.clamp(64, self.max_frame());
    }

    /// Bytes free in the ring right now (some of it may be lost to a skip record).
    pub fn free_space(&mut self) -> usize {
        self.refresh_tail();
        self.free()
    }

    /// Bytes that may be taken by records, as far as the last `tail` seen says.
    #[inline]
    fn free(&self) -> usize {
        (self.ring.cap - (self.head - self.tail_seen) as usize).saturating_sub(RESERVE)
    }

    /// Whether the consumer freed space since the last refused write, so that retrying it may
    /// succeed: the condition a producer sleeps on (with its own rank's doorbell) when full.
    #[inline]
    pub fn space_freed(&self) -> bool {
        self.ring.ctl().tail.0.load(Ordering::Acquire) != self.refused_at
    }

    /// Whether the consumer has taken everything written so far.
    pub fn is_drained(&mut self) -> bool {
        self.refresh_tail();
        self.tail_seen == self.head
    }

    /// Append one frame, header then payload, contiguously: all of it, or nothing when the ring
    /// is too full (retry after the consumer made room). Panics if the frame can never fit
    /// (longer than [`max_frame`](Self::max_frame)) or the header exceeds 65,535 bytes.
    #[inline]
    pub fn try_write(&mut self, header: &[u8], payload: &[u8]) -> bool {
        self.try_write_with(header, payload.len(), |dst| copy_bytes(dst, payload))
    }

    /// As [`try_write`](Self::try_write), but `fill` writes the `payload_len` payload bytes
    /// straight into the ring (e.g. packing a non-contiguous datatype); it runs only on success.
    #[inline]
    pub fn try_write_with(&mut self, header: &[u8], payload_len: usize, fill: impl FnOnce(&mut [u8])) -> bool {
        let body = header.len() + payload_len;
        assert!(body <= self.max_frame(), "frame of {body} bytes can never fit a ring of {} bytes", self.ring.cap);
        assert!(header.len() <= u16::MAX as usize, "frame header longer than 65,535 bytes");
        let Some(off) = self.place(body) else {
            self.refused_at = self.tail_seen;
            return false;
        };
        // SAFETY: `place` reserved `record_len(body)` bytes at `off`, inside the data area and
        // not visible to the consumer until `publish`.
        let dst = unsafe { std::slice::from_raw_parts_mut(self.ring.data.as_ptr().add(off + RECORD_PREFIX), body) };
        copy_bytes(&mut dst[..header.len()], header);
        fill(&mut dst[header.len()..]);
        self.commit(off, body, KIND_PIECE | FIRST | LAST | ((header.len() as u32) << 16));
        true
    }

    /// Write as much of a frame as fits now, in pieces of at most the piece limit; `cursor`
    /// remembers how far it got. Returns true once the whole frame is in the ring. Call again
    /// with the same `header`, `payload` and `cursor` after the consumer made room. The
    /// consumer sees a FIRST piece with the header, then pieces up to one marked LAST.
    pub fn write_partial(&mut self, header: &[u8], payload: &[u8], cursor: &mut PartialWrite) -> bool {
        assert!(header.len() + 64 <= self.max_piece, "frame header too long for the piece limit");
        while !cursor.done {
            let hdr = if cursor.started { 0 } else { header.len() };
            let remaining = payload.len() - cursor.sent;
            let want = (hdr + remaining).min(self.max_piece);
            // Refuse tiny pieces: wait until a useful fraction of a piece is free.
            let least = want.min(hdr + self.max_piece / 4);
            let room = self.room();
            if room < least {
                self.refused_at = self.tail_seen;
                return false;
            }
            let body = want.min(room);
            let off = self.place(body).expect("room() said the piece fits");
            let part = body - hdr;
            let chunk = &payload[cursor.sent..cursor.sent + part];
            // SAFETY: `place` reserved `record_len(body)` bytes at `off`, not yet published.
            let dst = unsafe { std::slice::from_raw_parts_mut(self.ring.data.as_ptr().add(off + RECORD_PREFIX), body) };
            dst[..hdr].copy_from_slice(&header[..hdr]);
            dst[hdr..].copy_from_slice(chunk);
            let last = cursor.sent + part == payload.len();
            let mut info = KIND_PIECE | ((hdr as u32) << 16);
            if !cursor.started {
                info |= FIRST;
            }
            if last {
                info |= LAST;
            }
            self.commit(off, body, info);
            cursor.started = true;
            cursor.sent += part;
            cursor.done = last;
        }
        true
    }

    /// Read the consumer's `tail`, refusing values that would break our arithmetic.
    fn refresh_tail(&mut self) {
        let t = self.ring.ctl().tail.0.load(Ordering::Acquire);
        // A tail behind what we saw or ahead of head can only come from a broken peer; keep the
        // old value, which stalls this ring instead of overwriting unread data.
        if t >= self.tail_seen && t <= self.head {
            self.tail_seen = t;
        }
    }

    /// Largest body that can be placed now, at the current offset or after a skip.
    fn room(&mut self) -> usize {
        self.refresh_tail();
        let cap = self.ring.cap;
        let free = self.free();
        let contig = cap - (self.head as usize & (cap - 1));
        if free <= contig {
            body_fitting(free)
        } else {
            body_fitting(contig).max(body_fitting(free - contig))
        }
    }

    /// Reserve a record of `body` bytes; returns its offset. May publish a skip record to move
    /// to offset 0 (also when the record does not fit yet, so that the consumer can free the
    /// start of the ring for it).
    #[inline]
    fn place(&mut self, body: usize) -> Option<usize> {
        let cap = self.ring.cap;
        let rec = record_len(body);
        for attempt in 0..2 {
            if attempt == 1 {
                self.refresh_tail();
            }
            let free = self.free();
            let off = self.head as usize & (cap - 1);
            let contig = cap - off;
            if rec <= contig {
                if rec <= free {
                    return Some(off);
                }
            } else if free >= contig {
                self.skip(off, contig);
                if rec <= free - contig {
                    return Some(0);
                }
            }
        }
        None
    }

    fn skip(&mut self, off: usize, len: usize) {
        self.publish(off, len, (len - RECORD_PREFIX) as u32, KIND_SKIP);
    }

    #[inline]
    fn commit(&mut self, off: usize, body: usize, info: u32) {
        self.publish(off, record_len(body), body as u32, info);
    }

    /// Publish the record of `len` bytes at `off` whose body is written: zero the word after
    /// it, then store its prefix.
    #[inline]
    fn publish(&mut self, off: usize, len: usize, body_len: u32, info: u32) {
        let cap = self.ring.cap;
        let next = (off + len) & (cap - 1);
        // SAFETY: `off` and `next` are 8-aligned words inside the data area; `next` is free
        // (one word always stays free after the last record); only ring ends use this memory.
        unsafe {
            word(self.ring.data.as_ptr(), next).store(0, Ordering::Relaxed);
            word(self.ring.data.as_ptr(), off).store(u64::from(body_len) | (u64::from(info) << 32), Ordering::Release);
        }
        self.head += len as u64;
        // Nobody polls `head` (it stays in this core's cache); a producer end claimed again
        // starts from it.
        self.ring.ctl().head.0.store(self.head, Ordering::Relaxed);
        if let Some(bell) = &self.peer {
            bell.notify();
        }
    }
}

impl Drop for Producer {
    fn drop(&mut self) {
        self.ring.claim_word(End::Producer).store(0, Ordering::Release);
    }
}

/// One record as the consumer sees it: a frame, or a piece of one.
#[derive(Debug, PartialEq, Eq)]
pub struct Piece<'a> {
    /// The frame header (empty in continuation pieces).
    pub header: &'a [u8],
    /// Payload bytes carried by this piece.
    pub payload: &'a [u8],
    /// This piece starts a frame (it carries the header).
    pub first: bool,
    /// This piece ends a frame.
    pub last: bool,
}

impl Piece<'_> {
    /// A whole frame in one piece.
    pub fn is_whole(&self) -> bool {
        self.first && self.last
    }
}

/// The reading end of a ring. Not `Clone`: there is one consumer.
pub struct Consumer {
    ring: RingRef,
    /// Our copy of `tail` (we are its only writer).
    tail: u64,
    /// The `tail` last stored for the producer.
    released: u64,
    /// Length of the record returned by the last `peek`, not yet consumed.
    pending: usize,
    /// Doorbell of the producer's rank, rung after freeing space.
    peer: Option<Doorbell>,
}

// SAFETY: as for Producer: one owner of this end, memory kept alive by `keep`.
unsafe impl Send for Consumer {}

impl Consumer {
    /// Bytes of the data area.
    pub fn capacity(&self) -> usize {
        self.ring.cap
    }

    /// Whether something (a record, or a skip before one) waits in the ring. Cheap enough to
    /// poll and to use as the condition of [`Doorbell::wait_until`].
    #[inline]
    pub fn has_data(&self) -> bool {
        self.prefix() != 0
    }

    /// The prefix word at `tail`: zero until the producer publishes a record there.
    #[inline]
    fn prefix(&self) -> u64 {
        // SAFETY: `tail` is 8-aligned and inside the data area (masked); only ring ends use it.
        unsafe { word(self.ring.data.as_ptr(), self.tail as usize & (self.ring.cap - 1)).load(Ordering::Acquire) }
    }

    /// The next record, without taking it: copy from the returned slices, then call
    /// [`consume`](Self::consume). Returns the same record again until it is consumed.
    /// An error means the shared memory does not hold a well-formed ring (a broken peer).
    #[inline(always)]
    pub fn peek(&mut self) -> Result<Option<Piece<'_>>, ShmError> {
        let cap = self.ring.cap;
        loop {
            let prefix = self.prefix();
            if prefix == 0 {
                return Ok(None);
            }
            let (body_len, info) = (prefix as u32 as usize, (prefix >> 32) as u32);
            let off = self.tail as usize & (cap - 1);
            let contig = cap - off;
            // A record leaves at least one free word behind it.
            let avail = cap - RESERVE;
            match info & KIND_MASK {
                KIND_SKIP => {
                    if body_len + RECORD_PREFIX != contig || contig > avail {
                        return Err(ShmError::Corrupt("malformed skip record".into()));
                    }
                    self.pending = contig;
                    self.consume();
                }
                KIND_PIECE => {
                    let rec = record_len(body_len);
                    let hdr = (info >> 16) as usize;
                    if rec > contig || rec > avail || hdr > body_len {
                        return Err(ShmError::Corrupt(format!("record of {body_len} bytes at offset {off} overruns the ring")));
                    }
                    self.pending = rec;
                    // SAFETY: the body lies inside the data area (checked above) and was
                    // published with the prefix; the producer does not touch it again until we
                    // advance tail past it.
                    let body = unsafe { std::slice::from_raw_parts(self.ring.data.as_ptr().add(off + RECORD_PREFIX), body_len) };
                    let (header, payload) = body.split_at(hdr);
                    return Ok(Some(Piece { header, payload, first: info & FIRST != 0, last: info & LAST != 0 }));
                }
                k => return Err(ShmError::Corrupt(format!("unknown record kind {k}"))),
            }
        }
    }

    /// The next record when it is a whole frame (one piece, header and payload), well
    /// formed: its header and payload, without taking it (then [`step`](Self::step) or
    /// [`consume`](Self::consume)). `None` for anything else (nothing there, a skip record,
    /// a piece of a larger frame, a malformed record), which [`peek`](Self::peek) handles.
    #[inline(always)]
    pub fn peek_whole(&mut self) -> Option<(&[u8], &[u8])> {
        let prefix = self.prefix();
        let (body_len, info) = (prefix as u32 as usize, (prefix >> 32) as u32);
        if info & (KIND_MASK | FIRST | LAST) != KIND_PIECE | FIRST | LAST {
            return None;
        }
        let cap = self.ring.cap;
        let off = self.tail as usize & (cap - 1);
        let rec = record_len(body_len);
        let hdr = (info >> 16) as usize;
        if rec > cap - off || rec > cap - RESERVE || hdr > body_len {
            return None;
        }
        self.pending = rec;
        // SAFETY: as in `peek`: inside the data area (checked above), published with the
        // prefix, untouched by the producer until we advance past it.
        let body = unsafe { std::slice::from_raw_parts(self.ring.data.as_ptr().add(off + RECORD_PREFIX), body_len) };
        Some(body.split_at(hdr))
    }

    /// Release the record returned by the last [`peek`](Self::peek) to the producer.
    /// Does nothing if there is none.
    pub fn consume(&mut self) {
        self.step();
        self.release();
    }

    /// Move past the record returned by the last [`peek`](Self::peek) without telling the
    /// producer yet: a reader taking a batch of records tells it once, with
    /// [`release`](Self::release), and fences once.
    #[inline]
    pub fn step(&mut self) {
        self.tail += self.pending as u64;
        self.pending = 0;
    }

    /// Hand the space of every record stepped over to the producer (and wake it if it waits
    /// for room).
    pub fn release(&mut self) {
        if self.tail == self.released {
            return;
        }
        self.released = self.tail;
        self.ring.ctl().tail.0.store(self.tail, Ordering::Release);
        if let Some(bell) = &self.peer {
            bell.notify();
        }
    }

    /// Whether records stepped over have not been handed back to the producer yet.
    #[inline]
    pub fn holds_room(&self) -> bool {
        self.tail != self.released
    }

    /// [`release`](Self::release) once the records stepped over since the last release
    /// fill an eighth of the ring; until then their room stays ours. A reader that takes
    /// records one at a time (and calls this after each) pays the store and the fence of
    /// a release once per many records, never lets its held room keep a frame of at most
    /// a quarter of the ring out, and must [`release`](Self::release) before it waits.
    #[inline]
    pub fn release_some(&mut self) {
        if self.tail - self.released >= (self.ring.cap / 8) as u64 {
            self.release();
        }
    }

    /// Peek, hand the record to `f`, consume it.
    pub fn read<R>(&mut self, f: impl FnOnce(Piece<'_>) -> R) -> Result<Option<R>, ShmError> {
        let r = match self.peek()? {
            Some(p) => f(p),
            None => return Ok(None),
        };
        self.consume();
        Ok(Some(r))
    }
}

impl Drop for Consumer {
    fn drop(&mut self) {
        self.ring.claim_word(End::Consumer).store(0, Ordering::Release);
    }
}

/// The 8-byte word at `off` of a data area, as an atomic.
///
/// # Safety
/// `off` must be 8-aligned and at least 8 bytes before the end of the data area at `data`.
#[inline]
unsafe fn word<'a>(data: *mut u8, off: usize) -> &'a AtomicU64 {
    // SAFETY: the caller's contract; the data area is 8-aligned.
    unsafe { &*(data.add(off) as *const AtomicU64) }
}

/// Private memory holding one ring and two doorbells.
struct HeapBlock {
    ptr: NonNull<u8>,
    layout: Layout,
}

// SAFETY: the block is plain memory accessed only through atomics and the ring protocol.
unsafe impl Send for HeapBlock {}
// SAFETY: as above.
unsafe impl Sync for HeapBlock {}

impl Drop for HeapBlock {
    fn drop(&mut self) {
        // SAFETY: allocated in `heap_ring` with this layout; every handle holding an Arc is gone.
        unsafe { dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

/// Both ends of a ring in private memory, with the doorbells each end waits on.
pub struct RingPair {
    pub producer: Producer,
    pub consumer: Consumer,
    /// Rung when the consumer frees space: the producer waits on it when the ring is full.
    pub producer_doorbell: Doorbell,
    /// Rung when the producer publishes: the consumer waits on it when the ring is empty.
    pub consumer_doorbell: Doorbell,
}

/// A ring of `capacity` bytes in private memory, for threads of one process.
pub fn heap_ring(capacity: usize) -> Result<RingPair, ShmError> {
    if !valid_capacity(capacity) {
        return Err(ShmError::Layout(format!("ring capacity {capacity} is not a power of two in {MIN_CAPACITY}..={MAX_CAPACITY}")));
    }
    let bell_len = std::mem::size_of::<DoorbellWord>();
    let data_off = 4096;
    debug_assert!(CONTROL_LEN + 2 * bell_len <= data_off);
    let layout = Layout::from_size_align(data_off + capacity, 4096).map_err(|e| ShmError::Layout(e.to_string()))?;
    // SAFETY: the layout has a non-zero size.
    let ptr = NonNull::new(unsafe { alloc_zeroed(layout) }).ok_or_else(|| ShmError::Layout("out of memory".into()))?;
    let base = ptr.as_ptr();
    let keep: Arc<dyn Send + Sync> = Arc::new(HeapBlock { ptr, layout });
    // SAFETY: the block is zeroed, 4096-aligned and large enough for the control block at 0,
    // two doorbells after it and the data area at `data_off`; `keep` owns it.
    unsafe {
        let ctl = base as *mut RingControl;
        (*ctl).init(capacity);
        let pbell = Doorbell::from_raw(base.add(CONTROL_LEN) as *mut DoorbellWord, keep.clone());
        let cbell = Doorbell::from_raw(base.add(CONTROL_LEN + bell_len) as *mut DoorbellWord, keep.clone());
        let data = base.add(data_off);
        let producer = producer_at(ctl, data, capacity, keep.clone(), Some(cbell.clone()))?;
        let consumer = consumer_at(ctl, data, capacity, keep, Some(pbell.clone()))?;
        Ok(RingPair { producer, consumer, producer_doorbell: pbell, consumer_doorbell: cbell })
    }
}

#[cfg(test)]
#[path = "ring_tests.rs"]
pub(crate) mod tests;
