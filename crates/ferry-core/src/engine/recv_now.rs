//! Receives that complete without a request: the message is in the unexpected queue, or
//! whole at the front of its source's ring (read there, in place), or, for a blocking
//! receive from a local peer, arrives there within a few microseconds.

use super::matching::Pattern;
use super::peer_route::PeerRoute;
use super::request::{ReqId, Status};
use super::Engine;

/// Passes a blocking receive spends watching its source's ring before it posts itself
/// (`Engine::recv_now_or_soon`): a few microseconds at most.
const RING_WATCH: u32 = 64;
/// The largest receive buffer for which a blocking receive watches the ring.
const RING_WATCH_BYTES: usize = 32;

impl Engine {
    /// Receive at once when the message is here already (see
    /// [`Protocol::recv_now`](super::protocol::Protocol::recv_now)): its status, and no
    /// request; else post the receive and return its request.
    ///
    /// # Safety
    /// As for [`Engine::irecv`].
    #[inline]
    pub unsafe fn irecv_now(&mut self, pat: Pattern, buf: *mut u8, cap: usize) -> Result<Status, ReqId> {
        if self.proto.any_revoked() {
            // SAFETY: passed on from our caller; a revoked context fails there.
            return Err(unsafe { self.irecv(pat, buf, cap) });
        }
        // SAFETY (both): passed on from our caller.
        match unsafe { self.proto.recv_now(&pat, buf, cap) }.or_else(|| unsafe { self.recv_in_place(&pat, buf, cap) }) {
            Some(st) => {
                // A synchronous sender's acknowledgement may wait in the outbox.
                self.pump();
                Ok(st)
            }
            // SAFETY: passed on from our caller.
            None => Err(unsafe { self.irecv(pat, buf, cap) }),
        }
    }

    /// [`irecv_now`](Self::irecv_now) for a receive that will wait (a blocking one): when the
    /// message is not here and its source is a local peer whose ring is empty, watch that ring
    /// for a short while first and take the message where it lies when it comes (a
    /// ping-pong's answer comes within a microsecond); only then post the receive.
    ///
    /// # Safety
    /// As for [`Engine::irecv`].
    #[inline]
    pub unsafe fn recv_now_or_soon(&mut self, pat: Pattern, buf: *mut u8, cap: usize) -> Result<Status, ReqId> {
        if self.proto.any_revoked() {
            // SAFETY: passed on from our caller; a revoked context fails there.
            return Err(unsafe { self.irecv(pat, buf, cap) });
        }
        // SAFETY (all three): passed on from our caller.
        let here = unsafe { self.proto.recv_now(&pat, buf, cap) }.or_else(|| unsafe { self.recv_in_place(&pat, buf, cap) });
        match here.or_else(|| unsafe { self.watch_ring(&pat, buf, cap) }) {
            Some(st) => {
                self.pump();
                Ok(st)
            }
            // SAFETY: passed on from our caller.
            None => Err(unsafe { self.irecv(pat, buf, cap) }),
        }
    }

    /// Spin on the ring of `pat`'s source until something arrives there, then receive it in
    /// place if it is the message. `None` at once when the source is not a local peer, the
    /// protocol core has frames to send or ranks outnumber cores, and after [`RING_WATCH`]
    /// spins.
    ///
    /// # Safety
    /// As for [`Engine::irecv`].
    #[inline(never)]
    unsafe fn watch_ring(&mut self, pat: &Pattern, buf: *mut u8, cap: usize) -> Option<Status> {
        let src = pat.src? as usize;
        // Not when ranks outnumber cores (no tight spinning then): the peer may need this core.
        // Not for receives of more than a few words: measured on 2 cores, watching takes
        // 0.02-0.04 us off the half round trip of messages up to 32 bytes but adds 0.05 us to
        // one of 64 bytes.
        if cap > RING_WATCH_BYTES || self.tight_spin.is_zero() || self.proto.has_output() || !matches!(self.routes.get(src), Some(Some(PeerRoute::Ring(_)))) {
            return None;
        }
        for _ in 0..RING_WATCH {
            if let Some(Some(PeerRoute::Ring(r))) = self.routes.get(src) {
                if r.has_record() {
                    // SAFETY: passed on from our caller.
                    return unsafe { self.recv_in_place(pat, buf, cap) };
                }
            }
            std::hint::spin_loop();
        }
        None
    }

    /// Receive straight from the route of `pat`'s source when the next frame there is the
    /// message (an eager one, here whole) and nothing queued could take it first: copied from
    /// where it lies into `buf`, never through the unexpected queue.
    ///
    /// # Safety
    /// `buf..buf+cap` must be valid for writes.
    #[inline]
    unsafe fn recv_in_place(&mut self, pat: &Pattern, buf: *mut u8, cap: usize) -> Option<Status> {
        let src = pat.src?;
        let Engine { proto, routes, limits, .. } = self;
        let route = routes.get_mut(src as usize)?.as_mut()?;
        if !proto.may_recv_in_place(pat) {
            return None;
        }
        let mut got = None;
        if let PeerRoute::Ring(r) = route {
            // The commonest frame, told by its short header.
            // SAFETY: passed on from our caller.
            let short = r.take_short_eager(limits, |ctx, tag, seq, payload| {
                got = unsafe { proto.recv_short_in_place(src, pat, ctx, tag, seq, payload, buf, cap) };
                got.is_some()
            });
            if short.is_some() {
                if got.is_some() {
                    self.activity += 1;
                }
                return got;
            }
        }
        // SAFETY: passed on from our caller.
        route.take_next(src, limits, |h: &ferry_wire::Header, payload: &[u8]| {
            got = unsafe { proto.recv_in_place(src, pat, h, payload, buf, cap) };
            got.is_some()
        });
        if got.is_some() {
            self.activity += 1;
        }
        got
    }
}
