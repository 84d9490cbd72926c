//! The target side of one-sided communication: an engine [`Service`] that takes the requests
//! arriving on every window's context, in arrival order, and applies them to the window's
//! memory, answering those that want an answer. It runs inside every progress pass, so a
//! process serves its windows whatever MPI call it waits in, and while it computes when the
//! progress thread runs.
//!
//! Requests of one origin are applied in the order it sent them (one ordered channel per
//! pair of ranks), so an answer to `Flush` or `Unlock` says that everything before it was
//! applied, and accumulates are atomic element by element: one process applies them, one
//! at a time.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use ferry_core::engine::matching::Pattern;
use ferry_core::engine::{Engine, ReqId, Service};
use ferry_core::fastmap::FastMap;
use ferry_data::reduce_op::{self, PredefinedOp};

use super::codec::{Header, Kind};

/// Tag of every request on a window's context (the kind is in the header).
pub const TAG_REQUEST: i32 = 0;

/// The memory a target exposes: one region from the base (created and allocated windows),
/// or the regions attached so far (dynamic windows, addressed by absolute address).
pub struct Memory {
    pub base: usize,
    pub size: usize,
    pub dynamic: bool,
    /// Dynamic windows: attached (address, size) regions.
    pub attached: Vec<(usize, usize)>,
}

impl Memory {
    /// The address of the byte at `offset`, when `span` (relative to it) lies in the memory.
    /// In 128 bits: `offset` is a peer's word, and no sum of it may wrap into the window.
    fn locate(&self, offset: u64, span: std::ops::Range<i64>) -> Result<*mut u8, String> {
        if span.is_empty() {
            return Ok(std::ptr::null_mut());
        }
        let (lo, hi) = (offset as i128 + span.start as i128, offset as i128 + span.end as i128);
        if self.dynamic {
            if covered(&self.attached, lo, hi) {
                return Ok(offset as usize as *mut u8);
            }
            return Err(format!("bytes {lo:#x}..{hi:#x} are not in memory attached to the window"));
        }
        if lo < 0 || hi > self.size as i128 {
            return Err(format!("bytes {lo}..{hi} of a window of {} bytes", self.size));
        }
        Ok((self.base as i64).wrapping_add(offset as i64) as usize as *mut u8)
    }

    /// Bytes the window exposes: its size, or what is attached to it.
    fn extent(&self) -> u64 {
        if self.dynamic {
            self.attached.iter().map(|&(_, s)| s as u64).sum()
        } else {
            self.size as u64
        }
    }
}

/// Whether the attached regions cover the bytes `lo..hi` (not empty): an access may run from
/// one region into another attached right after it (two halves of an array attached apart,
/// as MPICH's rma/win_dynamic_rma_flush_get does), every byte being attached.
fn covered(attached: &[(usize, usize)], lo: i128, hi: i128) -> bool {
    let mut at = lo;
    // Each pass moves past one region, so there are at most as many passes as regions.
    for _ in 0..attached.len() {
        let end = attached.iter().filter(|&&(a, s)| a as i128 <= at && at < a as i128 + s as i128).map(|&(a, s)| a as i128 + s as i128).max();
        match end {
            Some(end) if end >= hi => return true,
            Some(end) => at = end,
            None => return false,
        }
    }
    false
}

/// Who holds a window's lock, and who waits for it.
#[derive(Default)]
struct Lock {
    exclusive: Option<u32>,
    shared: usize,
    /// (origin, exclusive, reply tag), in arrival order.
    waiting: VecDeque<(u32, bool, i32)>,
}

impl Lock {
    fn grantable(&self, exclusive: bool) -> bool {
        self.exclusive.is_none() && (!exclusive || self.shared == 0)
    }

    fn take(&mut self, origin: u32, exclusive: bool) {
        if exclusive {
            self.exclusive = Some(origin);
        } else {
            self.shared += 1;
        }
    }
}

/// A message taken off the context: whole, or still arriving into its buffer.
enum Inbound {
    Ready(u32, Vec<u8>),
    Arriving(u32, ReqId, Vec<u8>),
}

/// One window as its target sees it.
pub struct Exposure {
    pub ctx: u32,
    pub mem: Memory,
    inbox: VecDeque<Inbound>,
    lock: Lock,
    /// Answers still being sent, with their bytes.
    sending: Vec<(ReqId, Vec<u8>)>,
    /// `Complete` requests counted since the last `MPI_Win_wait` (PSCW).
    pub completes: usize,
}

impl Exposure {
    pub fn new(ctx: u32, mem: Memory) -> Exposure {
        Exposure { ctx, mem, inbox: VecDeque::new(), lock: Lock::default(), sending: Vec::new(), completes: 0 }
    }

    /// Whether nothing is left to apply or to answer.
    pub fn idle(&self) -> bool {
        self.inbox.is_empty() && self.sending.is_empty()
    }

    fn answer(&mut self, e: &mut Engine, to: u32, tag: i32, data: Vec<u8>) {
        // SAFETY: `data` is kept in `sending` until the send completes.
        if let Some(rid) = unsafe { e.isend(to, self.ctx + 1, tag, data.as_ptr(), data.len(), false) } {
            self.sending.push((rid, data));
        }
    }

    /// Take every request that arrived, apply those whose bytes are all here, in order.
    fn poll(&mut self, e: &mut Engine) -> bool {
        let pat = Pattern { ctx: self.ctx, src: None, tag: Some(TAG_REQUEST) };
        let mut moved = false;
        loop {
            if let Some((st, data)) = e.take_whole(&pat) {
                self.inbox.push_back(Inbound::Ready(st.source, data));
            } else if let Some((mid, st)) = e.improbe(&pat) {
                let mut buf = vec![0u8; st.bytes];
                // SAFETY: the buffer moves with its entry (its heap block stays put) and is
                // dropped only after the receive completed.
                let rid = unsafe { e.imrecv(mid, buf.as_mut_ptr(), buf.len()) };
                self.inbox.push_back(Inbound::Arriving(st.source, rid, buf));
            } else {
                break;
            }
            moved = true;
        }
        while let Some(front) = self.inbox.front() {
            if let Inbound::Arriving(_, rid, _) = front {
                if !e.is_done(*rid) {
                    break;
                }
            }
            let (src, data) = match self.inbox.pop_front().expect("looked at above") {
                Inbound::Ready(s, d) => (s, d),
                Inbound::Arriving(s, rid, d) => {
                    if let Some(Err(err)) = e.take(rid) {
                        ferry_core::error!("rma", "a one-sided request from rank {s} failed: {err}");
                        continue;
                    }
                    (s, d)
                }
            };
            self.apply(e, src, &data);
            moved = true;
        }
        self.sending.retain(|(rid, _)| !(e.is_done(*rid) && e.take(*rid).is_some()));
        moved
    }

    fn apply(&mut self, e: &mut Engine, src: u32, m: &[u8]) {
        let (h, payload) = match Header::decode(m) {
            Ok(x) => x,
            Err(why) => {
                ferry_core::error!("rma", "malformed one-sided request from rank {src}: {why}");
                return;
            }
        };
        match h.kind {
            Kind::Lock => {
                let exclusive = h.flag == 1;
                if self.lock.grantable(exclusive) && self.lock.waiting.is_empty() {
                    self.lock.take(src, exclusive);
                    self.answer(e, src, h.reply, Vec::new());
                } else {
                    self.lock.waiting.push_back((src, exclusive, h.reply));
                }
            }
            Kind::Unlock => {
                if self.lock.exclusive == Some(src) {
                    self.lock.exclusive = None;
                } else if self.lock.shared > 0 {
                    self.lock.shared -= 1;
                }
                self.answer(e, src, h.reply, Vec::new());
                // First come, first served: grant from the front while the lock allows.
                while let Some(&(o, x, tag)) = self.lock.waiting.front() {
                    if !self.lock.grantable(x) {
                        break;
                    }
                    self.lock.waiting.pop_front();
                    self.lock.take(o, x);
                    self.answer(e, o, tag, Vec::new());
                }
            }
            Kind::Flush => self.answer(e, src, h.reply, Vec::new()),
            Kind::Complete => self.completes += 1,
            _ => {
                let answer = self.access(&h, payload).unwrap_or_else(|why| {
                    ferry_core::error!("rma", "one-sided request from rank {src} not applied: {why}");
                    self.refusal(&h)
                });
                if h.kind.answered() {
                    self.answer(e, src, h.reply, answer);
                }
            }
        }
    }

    /// The answer to a data request that was not applied: zeros where the origin waits for
    /// bytes, so it does not wait forever; none for a length past all the window's memory,
    /// which no origin asks for and would otherwise make us allocate what a peer names.
    fn refusal(&self, h: &Header) -> Vec<u8> {
        let wants = !matches!(h.kind, Kind::Put | Kind::Acc);
        vec![0u8; if wants && h.len <= self.mem.extent() { h.len as usize } else { 0 }]
    }

    /// A data request: read, write or combine the window's bytes; returns the answer's bytes.
    fn access(&mut self, h: &Header, payload: &[u8]) -> Result<Vec<u8>, String> {
        if h.len == 0 {
            return Ok(Vec::new());
        }
        let at = self.mem.locate(h.offset, h.span())?;
        let len = h.len as usize;
        let no_op = PredefinedOp::from_handle(h.op) == Some(PredefinedOp::NoOp);
        let wants = match h.kind {
            Kind::Get => 0,
            Kind::Cas => 2 * len,
            Kind::GetAcc if no_op => 0,
            _ => len,
        };
        if payload.len() != wants {
            return Err(format!("{:?} of {len} bytes carries {} bytes of data", h.kind, payload.len()));
        }
        let runs: Vec<(i64, u64)> = if h.runs.is_empty() { vec![(0, h.len)] } else { h.runs.clone() };
        // SAFETY (all calls below): `locate` checked that every run lies in the window's
        // memory, which its owner keeps valid until MPI_Win_free (or MPI_Win_detach); the
        // packed buffers are ours, so nothing overlaps.
        let gather = |out: &mut Vec<u8>| unsafe { gather(at, &runs, out) };
        let scatter = |src: &[u8]| unsafe { scatter(at, &runs, src) };
        match h.kind {
            Kind::Put => {
                scatter(payload);
                Ok(Vec::new())
            }
            Kind::Get => {
                let mut out = Vec::with_capacity(len);
                gather(&mut out);
                Ok(out)
            }
            Kind::Cas => {
                let mut old = Vec::with_capacity(len);
                gather(&mut old);
                if old[..] == payload[len..] {
                    scatter(&payload[..len]);
                }
                Ok(old)
            }
            Kind::Acc | Kind::GetAcc => {
                let op = PredefinedOp::from_handle(h.op).ok_or_else(|| format!("operation {:#x} is not predefined", h.op))?;
                let mut old = Vec::with_capacity(len);
                gather(&mut old);
                let mut new = old.clone();
                match (op, h.elem) {
                    (PredefinedOp::NoOp, _) => {}
                    (PredefinedOp::Replace, _) => new.copy_from_slice(payload),
                    (_, Some(t)) => reduce_op::apply(op, t, payload, &mut new).map_err(|e| e.to_string())?,
                    (_, None) => return Err(format!("{op} without an element type")),
                }
                if op != PredefinedOp::NoOp {
                    scatter(&new);
                }
                Ok(if h.kind == Kind::GetAcc { old } else { Vec::new() })
            }
            _ => unreachable!("synchronisation requests are handled by the caller"),
        }
    }
}

/// What a peer's request `m` does to `mem` when a window exposes exactly those bytes (a
/// dynamic window when `dynamic`: the request's offset is then an address), and the answer
/// it gets; synchronisation requests, which need the engine, are only decoded. The entry
/// the fuzz harness needs (`fuzz/fuzz_targets/rma_requests.rs`, through `crate::fuzzing`);
/// the library applies requests through [`RmaService`].
pub fn apply_to(mem: &mut [u8], dynamic: bool, m: &[u8]) -> Result<Vec<u8>, String> {
    let (h, payload) = Header::decode(m)?;
    let (base, size) = (mem.as_mut_ptr() as usize, mem.len());
    let memory = if dynamic {
        Memory { base: 0, size: 0, dynamic, attached: vec![(base, size)] }
    } else {
        Memory { base, size, dynamic, attached: Vec::new() }
    };
    match h.kind {
        Kind::Put | Kind::Get | Kind::Acc | Kind::GetAcc | Kind::Cas => Exposure::new(0, memory).access(&h, payload),
        Kind::Lock | Kind::Unlock | Kind::Flush | Kind::Complete => Ok(Vec::new()),
    }
}

/// Append the bytes of `runs` (offset, length from `at`) to `out`, in order.
///
/// # Safety
/// Every run must be readable memory.
pub unsafe fn gather(at: *const u8, runs: &[(i64, u64)], out: &mut Vec<u8>) {
    for &(o, l) in runs {
        // SAFETY: the caller vouches for the run.
        out.extend_from_slice(unsafe { std::slice::from_raw_parts(at.wrapping_offset(o as isize), l as usize) });
    }
}

/// Write `src` into `runs` (offset, length from `at`), in order; `src` holds their bytes.
///
/// # Safety
/// Every run must be writable memory that `src` does not overlap.
pub unsafe fn scatter(at: *mut u8, runs: &[(i64, u64)], src: &[u8]) {
    let mut k = 0;
    for &(o, l) in runs {
        // SAFETY: the caller vouches for the run; `k + l <= src.len()` as the runs hold
        // `src.len()` bytes in all.
        unsafe { std::ptr::copy_nonoverlapping(src[k..].as_ptr(), at.wrapping_offset(o as isize), l as usize) };
        k += l as usize;
    }
}

/// Every window of this process, by context id.
#[derive(Default)]
pub struct Targets {
    pub wins: FastMap<u32, Exposure>,
}

// SAFETY: the raw addresses inside are window memory that MPI keeps valid while the window
// exists, used only under the runtime's lock (the engine runs nowhere else).
unsafe impl Send for Targets {}

pub type Shared = Arc<Mutex<Targets>>;

pub fn lock(s: &Shared) -> MutexGuard<'_, Targets> {
    s.lock().unwrap_or_else(|p| p.into_inner())
}

/// The engine's hook: serves every window on each progress pass.
pub struct RmaService(pub Shared);

impl Service for RmaService {
    fn poll(&mut self, e: &mut Engine) -> bool {
        // Never held across a wait of the engine, so this never waits; if it were, the pass
        // simply skips the windows.
        let Ok(mut t) = self.0.try_lock() else { return false };
        let mut moved = false;
        for x in t.wins.values_mut() {
            moved |= x.poll(e);
        }
        moved
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_that_wrap_do_not_land_in_the_window() {
        // In 64 bits, offset 2^64 - 8 plus a run at 0x1008 wrapped to 0x1000, inside the
        // attached region, and the request wrote at address 2^64 - 8 + run.
        let mem = Memory { base: 0, size: 0, dynamic: true, attached: vec![(0x1000, 64)] };
        assert!(mem.locate(u64::MAX - 7, 0x1008..0x1010).is_err());
        assert!(mem.locate(0x1000, 8..16).is_ok());
        let mem = Memory { base: 0x1000, size: 64, dynamic: false, attached: Vec::new() };
        assert!(mem.locate(1 << 63, 0..8).is_err());
        // 2^63 - 2^63 is 0: the window's first bytes, whichever way the sum is written.
        assert_eq!(mem.locate(1 << 63, i64::MIN..i64::MIN + 8).unwrap().wrapping_offset(isize::MIN) as usize, 0x1000);
        assert!(mem.locate(u64::MAX, 1..9).is_err());
        assert_eq!(mem.locate(8, -8..0).unwrap() as usize, 0x1008);
    }

    #[test]
    fn an_access_may_run_across_regions_attached_side_by_side() {
        let mem = Memory { base: 0, size: 0, dynamic: true, attached: vec![(0x2000, 0x100), (0x1000, 0x1000), (0x3000, 8)] };
        assert!(mem.locate(0x1800, 0..0x900).is_ok());
        assert!(mem.locate(0x1000, 0..0x1100).is_ok());
        // A gap between them (0x2100..0x3000) is not attached.
        assert!(mem.locate(0x1000, 0..0x1200).is_err());
        assert!(mem.locate(0x20f8, 0..0x10).is_err());
        assert!(mem.locate(0x0ff8, 0..0x10).is_err());
        assert!(mem.locate(0x3000, 0..8).is_ok());
    }

    #[test]
    fn a_refused_request_is_answered_with_no_more_than_the_window_holds() {
        let x = Exposure::new(0, Memory { base: 0x1000, size: 64, dynamic: false, attached: Vec::new() });
        let mut h = Header::new(Kind::Get);
        h.len = 1 << 62;
        assert!(x.refusal(&h).is_empty());
        h.len = 64;
        assert_eq!(x.refusal(&h), vec![0; 64]);
        h.kind = Kind::Put;
        assert!(x.refusal(&h).is_empty());
    }

    #[test]
    fn requests_apply_to_the_bytes_their_runs_name() {
        let mut mem = [0u8; 16];
        let mut put = Header::new(Kind::Put);
        put.offset = 4;
        put.len = 4;
        put.runs = vec![(2, 2), (-4, 2)];
        assert_eq!(apply_to(&mut mem, false, &put.encode(&[1, 2, 3, 4])), Ok(Vec::new()));
        assert_eq!(mem, [3, 4, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0]);
        let mut get = put.clone();
        get.kind = Kind::Get;
        assert_eq!(apply_to(&mut mem, false, &get.encode(&[])), Ok(vec![1, 2, 3, 4]));
        // One byte past the window: refused, nothing written.
        put.offset = 14;
        assert!(apply_to(&mut mem, false, &put.encode(&[9; 4])).is_err());
        assert_eq!(mem, [3, 4, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0]);
        // A dynamic window is addressed by address.
        get.offset = mem.as_ptr() as u64 + 4;
        assert_eq!(apply_to(&mut mem, true, &get.encode(&[])), Ok(vec![1, 2, 3, 4]));
    }
}
