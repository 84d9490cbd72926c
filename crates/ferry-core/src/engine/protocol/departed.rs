//! Sends that can no longer complete at finalize: those waiting for an answer from a peer
//! that has said goodbye (part of the sans-IO protocol core).

use super::super::request::{EngineError, ReqId, ReqKind, SendState};
use super::Protocol;

impl Protocol {
    /// Whether every send not yet completed goes to a peer that has said goodbye. Such a
    /// send waits for the peer's answer (a synchronous send's acknowledgement, a rendezvous
    /// clear-to-send) to a receive that was never posted: a receive the peer had posted would
    /// have been answered before its goodbye, on the same route, so none will come now.
    pub fn sends_only_to_departed(&self) -> bool {
        self.reqs.iter().all(|(_, r)| match (&r.kind, &r.done) {
            (ReqKind::Send(s), None) => s.peer != self.me && self.peers[s.peer as usize].said_bye,
            _ => true,
        })
    }

    /// End every send to a peer that has said goodbye (see
    /// [`sends_only_to_departed`](Self::sends_only_to_departed)) with an error, and say
    /// which: (peer, whether it was a rendezvous waiting for the peer to receive it).
    pub fn abandon_sends_to_departed(&mut self) -> Vec<(u32, bool)> {
        let stuck: Vec<(ReqId, u32, bool)> = self
            .reqs
            .iter()
            .filter_map(|(id, r)| match (&r.kind, &r.done) {
                (ReqKind::Send(s), None) if s.peer != self.me && self.peers[s.peer as usize].said_bye => {
                    Some((id, s.peer, matches!(s.state, SendState::AwaitCts { .. })))
                }
                _ => None,
            })
            .collect();
        for &(id, peer, _) in &stuck {
            self.finish(id, Err(EngineError::Transport(format!("rank {peer} finalized without receiving this message"))));
        }
        stuck.into_iter().map(|(_, peer, rndv)| (peer, rndv)).collect()
    }
}
