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
    fn locate(&self, offset: u64, span: std::ops::Range<i64>) -> Result<*mut u8, String> {
        if span.is_empty() {
            return Ok(std::ptr::null_mut());
        }
        if self.dynamic {
            let (lo, hi) = (offset as i64 + span.start, offset as i64 + span.end);
            if self.attached.iter().any(|&(a, s)| a as i64 <= lo && hi <= (a + s) as i64) {
                return Ok(offset as usize as *mut u8);
            }
            return Err(format!("bytes {lo:#x}..{hi:#x} are not in memory attached to the window"));
        }
        let (lo, hi) = (offset as i64 + span.start, offset as i64 + span.end);
        if lo < 0 || hi > self.size as i64 {
            return Err(format!("bytes {lo}..{hi} of a window of {} bytes", self.size));
        }
        Ok((self.base as i64 + offset as i64) as usize as *mut u8)
    }
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
                    vec![0u8; if h.kind == Kind::Put || h.kind == Kind::Acc { 0 } else { h.len as usize }]
                });
                if h.kind.answered() {
                    self.answer(e, src, h.reply, answer);
                }
            }
        }
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
