//! Unexpected messages taken out of the queue by the receive side: at once by a receive
//! (without a request), by a probe, by a matched probe; and the pool of their buffers (part
//! of the sans-IO protocol core).

use crate::small_copy::copy_bytes;
use ferry_wire::{flags, Header, Kind};

use super::super::matching::{Envelope, Pattern};
use super::super::request::{RecvReq, RecvState, Req, ReqId, ReqKind, Status};
use super::{msg_len, InKind, InMsg, Protocol, SPARE_COUNT, SPARE_MAX};

impl Protocol {
    /// Receive at once, without a request, when the oldest unexpected message matching `pat`
    /// is an eager one whose payload is all here: copied into `buf`, its status returned.
    /// `None` leaves everything as it was (post the receive with [`irecv`](Self::irecv)).
    ///
    /// # Safety
    /// `buf..buf+cap` must be valid for writes.
    pub unsafe fn recv_now(&mut self, pat: &Pattern, buf: *mut u8, cap: usize) -> Option<Status> {
        let inmsgs = &self.inmsgs;
        let (env, mid) = self.queues.take_if(pat, |&mid| matches!(inmsgs.get(mid), Some(InMsg { kind: InKind::Eager { complete: true, .. }, .. })))?;
        let m = self.inmsgs.remove(mid).expect("checked by take_if");
        let InKind::Eager { data, len, .. } = m.kind else { unreachable!("checked above") };
        let n = data.len().min(cap);
        if n > 0 {
            // SAFETY: the caller's buffer holds `cap` bytes.
            copy_bytes(unsafe { std::slice::from_raw_parts_mut(buf, n) }, &data[..n]);
        }
        self.ack_sync(env.src, m.sync);
        self.recycle(data);
        Some(Status { source: env.src, tag: env.tag, bytes: n, cancelled: false, truncated: len > cap as u64 })
    }

    /// Whether a receive of `pat` may take its message straight from a route
    /// ([`recv_in_place`](Self::recv_in_place)): nothing queued here could be its match or
    /// an earlier receive's.
    #[inline]
    pub fn may_recv_in_place(&self, pat: &Pattern) -> bool {
        self.queues.is_clear(pat)
    }

    /// Receive, without a request, the whole frame `h` + `payload` at the front of `peer`'s
    /// route, read in place, when it is the next eager message from `peer` and matches `pat`
    /// (call only when [`may_recv_in_place`](Self::may_recv_in_place) said yes). `None`: the
    /// frame was not taken, and reaches the protocol the usual way.
    ///
    /// # Safety
    /// `buf..buf+cap` must be valid for writes.
    #[inline]
    pub unsafe fn recv_in_place(&mut self, peer: u32, pat: &Pattern, h: &Header, payload: &[u8], buf: *mut u8, cap: usize) -> Option<Status> {
        let p = self.peers.get_mut(peer as usize)?;
        if h.kind != Kind::Eager || h.src != peer || h.dst != self.me || h.seq != p.recv_seq + 1 {
            return None;
        }
        let env = Envelope { ctx: h.context, src: peer, tag: h.tag };
        if !pat.matches(&env) {
            return None;
        }
        p.recv_seq = h.seq;
        let n = payload.len().min(cap);
        if n > 0 {
            // SAFETY: the caller's buffer holds `cap` bytes.
            copy_bytes(unsafe { std::slice::from_raw_parts_mut(buf, n) }, &payload[..n]);
        }
        self.ack_sync(peer, (h.flags & flags::SYNC != 0).then_some(h.seq));
        Some(Status { source: peer, tag: h.tag, bytes: n, cancelled: false, truncated: h.len > cap as u64 })
    }

    /// [`recv_in_place`](Self::recv_in_place) for a frame with a short header (a standard
    /// send's eager frame from `peer`, which `pat` names as its source): its context, tag
    /// and sequence number.
    ///
    /// # Safety
    /// `buf..buf+cap` must be valid for writes.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn recv_short_in_place(&mut self, peer: u32, pat: &Pattern, ctx: u32, tag: i32, seq: u64, payload: &[u8], buf: *mut u8, cap: usize) -> Option<Status> {
        let p = self.peers.get_mut(peer as usize)?;
        if seq != p.recv_seq + 1 || ctx != pat.ctx || pat.tag.is_some_and(|t| t != tag) {
            return None;
        }
        p.recv_seq = seq;
        let n = payload.len().min(cap);
        if n > 0 {
            // SAFETY: the caller's buffer holds `cap` bytes.
            copy_bytes(unsafe { std::slice::from_raw_parts_mut(buf, n) }, &payload[..n]);
        }
        Some(Status { source: peer, tag, bytes: n, cancelled: false, truncated: payload.len() > cap })
    }

    /// A copy of `payload` in a buffer of the spare pool when one is there.
    pub(super) fn held_copy(&mut self, payload: &[u8]) -> Vec<u8> {
        match self.spare.pop() {
            Some(mut v) if payload.len() <= SPARE_MAX => {
                v.clear();
                v.extend_from_slice(payload);
                v
            }
            Some(v) => {
                self.spare.push(v);
                payload.to_vec()
            }
            None => payload.to_vec(),
        }
    }

    /// Keep the buffer of a delivered message for the next unexpected one, if it is small.
    pub(crate) fn recycle(&mut self, v: Vec<u8>) {
        if v.capacity() <= SPARE_MAX && self.spare.len() < SPARE_COUNT {
            self.spare.push(v);
        }
    }

    // ----- probe, cancel, matched probe ---------------------------------------------------

    /// The envelope and size of the oldest unexpected message matching `pat` (MPI_Iprobe).
    pub fn peek(&self, pat: &Pattern) -> Option<Status> {
        let (env, mid) = self.queues.peek(pat)?;
        let m = self.inmsgs.get(*mid)?;
        Some(Status { source: env.src, tag: env.tag, bytes: msg_len(m), cancelled: false, truncated: false })
    }

    /// Remove the oldest matching unexpected message and hand over its bytes, if it is a whole
    /// eager message that wants no acknowledgement (no copy: the buffer it arrived in).
    /// `None` when there is none, or when the oldest must be received with
    /// [`improbe`](Self::improbe) and [`imrecv`](Self::imrecv).
    pub fn take_whole(&mut self, pat: &Pattern) -> Option<(Status, Vec<u8>)> {
        let (_, mid) = self.queues.peek(pat)?;
        let whole = matches!(self.inmsgs.get(*mid), Some(InMsg { kind: InKind::Eager { complete: true, bound: None, .. }, sync: None, .. }));
        if !whole {
            return None;
        }
        let (env, mid) = self.queues.take(pat)?;
        let m = self.inmsgs.remove(mid)?;
        let InKind::Eager { data, .. } = m.kind else { unreachable!("checked above") };
        Some((Status { source: env.src, tag: env.tag, bytes: data.len(), cancelled: false, truncated: false }, data))
    }

    /// Remove the oldest matching unexpected message; receive it later with
    /// [`imrecv`](Self::imrecv).
    pub fn improbe(&mut self, pat: &Pattern) -> Option<(u64, Status)> {
        let (env, mid) = self.queues.take(pat)?;
        let m = self.inmsgs.get(mid)?;
        Some((mid, Status { source: env.src, tag: env.tag, bytes: msg_len(m), cancelled: false, truncated: false }))
    }

    /// Receive a message taken by [`improbe`](Self::improbe).
    ///
    /// # Safety
    /// As for [`irecv`](Self::irecv).
    pub unsafe fn imrecv(&mut self, mid: u64, buf: *mut u8, cap: usize) -> ReqId {
        let env = self.inmsgs.get(mid).map(|m| m.env).unwrap_or(Envelope { ctx: 0, src: self.me, tag: 0 });
        let pat = Pattern { ctx: env.ctx, src: Some(env.src), tag: Some(env.tag) };
        let rid = self.reqs.insert(Req { kind: ReqKind::Recv(RecvReq { buf, cap, pat, state: RecvState::Posted, status: Status::default() }), done: None, detached: false, busy: false });
        self.matched_unexpected(rid, env, mid);
        rid
    }

    /// Cancel a receive that has not matched. True when it was cancelled.
    pub fn cancel(&mut self, rid: ReqId) -> bool {
        let ctx = match self.reqs.get(rid) {
            Some(Req { kind: ReqKind::Recv(r), done: None, .. }) if matches!(r.state, RecvState::Posted) => r.pat.ctx,
            _ => return false,
        };
        if self.queues.cancel(ctx, |r| *r == rid).is_some() {
            self.finish(rid, Ok(Status { cancelled: true, ..Status::default() }));
            true
        } else {
            false
        }
    }
}
