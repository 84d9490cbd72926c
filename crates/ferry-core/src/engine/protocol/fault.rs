//! What fault-tolerant MPI needs of the protocol core (part of the sans-IO core): contexts
//! revoked, so that every operation on them fails, now and later; and the receives from any
//! source that a peer's failure leaves waiting on a message that may never come.
//!
//! A revocation travels as an eager message of no bytes on [`REVOKE_CONTEXT`] whose tag is the
//! context revoked: it passes every route as any message does, and the core acts on it as it
//! arrives instead of queueing it.

use super::super::request::{EngineError, ReqId, ReqKind, RecvState};
use super::Protocol;

/// The context of revocation notices; never a communicator's (the MPI face allocates its
/// contexts upward from small numbers).
pub const REVOKE_CONTEXT: u32 = u32::MAX - 16;

impl Protocol {
    /// Whether any context was revoked (one branch on the hot paths while none was).
    #[inline]
    pub fn any_revoked(&self) -> bool {
        !self.revoked.is_empty()
    }

    #[inline]
    pub fn is_revoked(&self, ctx: u32) -> bool {
        !self.revoked.is_empty() && self.revoked.contains(&ctx)
    }

    /// Revoke `ctx`: its posted receives fail with [`EngineError::Revoked`], as will every
    /// later send and receive on it. True the first time.
    pub fn revoke(&mut self, ctx: u32) -> bool {
        if self.revoked.contains(&ctx) {
            return false;
        }
        self.revoked.push(ctx);
        let posted: Vec<ReqId> = self
            .reqs
            .iter()
            .filter(|(_, r)| r.done.is_none())
            .filter_map(|(id, r)| match &r.kind {
                ReqKind::Recv(rr) if rr.pat.ctx == ctx && matches!(rr.state, RecvState::Posted) => Some(id),
                _ => None,
            })
            .collect();
        for id in posted {
            self.queues.cancel(ctx, |x| *x == id);
            self.finish(id, Err(EngineError::Revoked(ctx)));
        }
        true
    }

    /// The contexts revoked by a peer's notice since the last call (the face forwards them).
    pub fn take_revoked_by_peers(&mut self) -> Vec<u32> {
        std::mem::take(&mut self.revoked_by_peers)
    }

    pub fn has_revoked_by_peers(&self) -> bool {
        !self.revoked_by_peers.is_empty()
    }

    /// A revocation notice from a peer: revoke the context it names.
    pub(super) fn on_revoke_notice(&mut self, tag: i32) {
        let ctx = tag as u32;
        if self.revoke(ctx) {
            self.revoked_by_peers.push(ctx);
        }
    }

    /// Fail the receives from any source posted on `ctx` with
    /// [`EngineError::AnySourceFailed`] naming `peer`, a process that failed and that could
    /// have sent the message. Returns how many failed.
    pub fn fail_any_source(&mut self, ctx: u32, peer: u32) -> usize {
        let posted: Vec<ReqId> = self
            .reqs
            .iter()
            .filter(|(_, r)| r.done.is_none())
            .filter_map(|(id, r)| match &r.kind {
                ReqKind::Recv(rr) if rr.pat.ctx == ctx && rr.pat.src.is_none() && matches!(rr.state, RecvState::Posted) => Some(id),
                _ => None,
            })
            .collect();
        for &id in &posted {
            self.queues.cancel(ctx, |x| *x == id);
            self.finish(id, Err(EngineError::AnySourceFailed(peer)));
        }
        posted.len()
    }
}

#[cfg(test)]
mod tests {
    use ferry_wire::{Header, Kind};

    use super::super::super::matching::Pattern;
    use super::super::super::request::EngineError;
    use super::*;
    use crate::transport::Deliver;

    fn notice(from: u32, to: u32, seq: u64, ctx: u32) -> Header {
        let mut h = Header::new(Kind::Eager);
        (h.src, h.dst, h.context, h.tag, h.seq) = (from, to, REVOKE_CONTEXT, ctx as i32, seq);
        h
    }

    #[test]
    fn a_revoked_context_fails_its_pending_and_later_operations_and_no_other() {
        let mut p = Protocol::new(0, 3, 64);
        let mut buf = [0u8; 8];
        // SAFETY: `buf` outlives the requests (they fail or stay posted).
        let (on, off) = unsafe { (p.irecv(Pattern { ctx: 4, src: None, tag: None }, buf.as_mut_ptr(), 8), p.irecv(Pattern { ctx: 6, src: Some(1), tag: None }, buf.as_mut_ptr(), 8)) };
        assert!(!p.any_revoked());
        assert!(p.revoke(4));
        assert!(!p.revoke(4), "once");
        assert_eq!(p.take(on), Some(Err(EngineError::Revoked(4))));
        assert!(!p.is_done(off), "another context goes on");
        // SAFETY: as above.
        let later = unsafe { p.irecv(Pattern { ctx: 4, src: Some(2), tag: Some(1) }, buf.as_mut_ptr(), 8) };
        assert_eq!(p.take(later), Some(Err(EngineError::Revoked(4))));
        // SAFETY: a send of no bytes reads nothing.
        let send = unsafe { p.isend(1, 4, 0, buf.as_ptr(), 0, false) };
        assert_eq!(p.take(send), Some(Err(EngineError::Revoked(4))));
        assert!(p.take_revoked_by_peers().is_empty(), "revoked here, not by a peer");
    }

    #[test]
    fn a_peers_notice_revokes_and_is_reported_once() {
        let mut p = Protocol::new(0, 2, 64);
        let mut buf = [0u8; 8];
        // SAFETY: `buf` outlives the request.
        let r = unsafe { p.irecv(Pattern { ctx: 9, src: Some(1), tag: Some(3) }, buf.as_mut_ptr(), 8) };
        p.whole(1, notice(1, 0, 1, 9), &[]).expect("a well-formed notice");
        assert_eq!(p.take(r), Some(Err(EngineError::Revoked(9))));
        assert!(p.has_revoked_by_peers());
        assert_eq!(p.take_revoked_by_peers(), [9]);
        p.whole(1, notice(1, 0, 2, 9), &[]).expect("a second notice");
        assert!(p.take_revoked_by_peers().is_empty(), "already revoked: nothing new to pass on");
        assert!(p.peek(&Pattern { ctx: REVOKE_CONTEXT, src: None, tag: None }).is_none(), "notices are not queued as messages");
    }

    #[test]
    fn a_failure_fails_receives_from_any_source_only() {
        let mut p = Protocol::new(0, 3, 64);
        let mut buf = [0u8; 8];
        // SAFETY: `buf` outlives the requests.
        let (any, named, other) = unsafe {
            (
                p.irecv(Pattern { ctx: 2, src: None, tag: Some(1) }, buf.as_mut_ptr(), 8),
                p.irecv(Pattern { ctx: 2, src: Some(1), tag: Some(1) }, buf.as_mut_ptr(), 8),
                p.irecv(Pattern { ctx: 4, src: None, tag: Some(1) }, buf.as_mut_ptr(), 8),
            )
        };
        assert_eq!(p.fail_any_source(2, 2), 1);
        assert_eq!(p.take(any), Some(Err(EngineError::AnySourceFailed(2))));
        assert!(!p.is_done(named) && !p.is_done(other));
    }
}
