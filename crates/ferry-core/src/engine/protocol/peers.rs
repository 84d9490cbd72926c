//! What the protocol knows of each peer: a goodbye said, a peer lost, and the requests a lost
//! peer fails.

use super::{EngineError, Header, Kind, OutFrame, Payload, Protocol, RecvState, Req, ReqId, ReqKind};

impl Protocol {
    /// `peer` said goodbye: a close that follows is orderly.
    pub fn said_bye(&self, peer: u32) -> bool {
        self.peers[peer as usize].said_bye
    }

    /// A goodbye frame for `peer`, to send at finalize.
    pub fn bye(&mut self, peer: u32) {
        let mut h = Header::new(Kind::Bye);
        h.src = self.me;
        h.dst = peer;
        self.outbox.push_back((peer, OutFrame::new(&h, Payload::None, None)));
    }

    pub fn is_lost(&self, peer: u32) -> bool {
        self.peers[peer as usize].lost
    }

    /// `peer` is gone without a goodbye: every request that depends on it fails.
    pub fn peer_lost(&mut self, peer: u32) {
        self.peers[peer as usize].lost = true;
        let lost: Vec<(ReqId, u32)> = self
            .reqs
            .iter()
            .filter(|(_, r)| r.done.is_none())
            .filter_map(|(id, r)| {
                let peer = match &r.kind {
                    ReqKind::Send(s) => Some(s.peer),
                    ReqKind::Recv(rr) => match rr.state {
                        RecvState::Posted => rr.pat.src,
                        RecvState::Rndv { .. } | RecvState::Receiving | RecvState::AwaitEager => Some(rr.status.source),
                    },
                }?;
                (peer != self.me && self.peers[peer as usize].lost).then_some((id, peer))
            })
            .collect();
        for (id, peer) in lost {
            if let Some(Req { kind: ReqKind::Recv(r), .. }) = self.reqs.get(id) {
                let ctx = r.pat.ctx;
                self.queues.cancel(ctx, |x| *x == id);
            }
            self.finish(id, Err(EngineError::PeerLost(peer)));
        }
    }
}
