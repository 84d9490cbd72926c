//! Fault-tolerant MPI at the engine (the protocol core's `fault.rs` does the work): revoking
//! a context here and at its other members, and failing the receives from any source that a
//! peer's failure leaves without a sure sender.

use super::protocol::REVOKE_CONTEXT;
use super::Engine;

impl Engine {
    /// Revoke `ctx` here and send the notice to each of `members` (world ranks; this rank and
    /// lost peers are skipped). Every operation on `ctx`, pending or later, then fails with
    /// [`EngineError::Revoked`](super::EngineError::Revoked), here and wherever the notice
    /// arrives. True the first time this rank revokes `ctx`.
    pub fn revoke(&mut self, ctx: u32, members: &[u32]) -> bool {
        let first = self.proto.revoke(ctx);
        let me = self.proto.me();
        for &m in members {
            if m == me || self.proto.is_lost(m) {
                continue;
            }
            // SAFETY: a message of no bytes reads nothing.
            if let Some(rid) = unsafe { self.isend(m, REVOKE_CONTEXT, ctx as i32, std::ptr::NonNull::<u8>::dangling().as_ptr(), 0, false) } {
                self.proto.detach(rid);
            }
        }
        first
    }

    /// Whether `ctx` is revoked at this rank.
    pub fn is_revoked(&self, ctx: u32) -> bool {
        self.proto.is_revoked(ctx)
    }

    /// The contexts a peer's notice revoked since the last call, each named once.
    pub fn take_revoked_by_peers(&mut self) -> Vec<u32> {
        self.proto.take_revoked_by_peers()
    }

    /// Fail the receives from any source posted on `ctx`: world rank `peer`, which could have
    /// sent their message, failed. Returns how many failed.
    pub fn fail_any_source(&mut self, ctx: u32, peer: u32) -> usize {
        let n = self.proto.fail_any_source(ctx, peer);
        self.pump();
        n
    }
}

impl Engine {
    /// Whether a peer's notice revoked a context since the last
    /// [`take_revoked_by_peers`](Self::take_revoked_by_peers).
    pub fn has_revoked_by_peers(&self) -> bool {
        self.proto.has_revoked_by_peers()
    }
}
