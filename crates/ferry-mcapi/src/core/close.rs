//! Closing channels: each side closes its end (the handle is invalid at once) and the close
//! finishes when both sides have; a side whose peer vanished ends at once.

use super::requests::{Done, ReqId, Waits};
use super::{Ep, Node, Rank, Status};
use crate::wire::{Frame, Kind};

impl Node {
    // ----- close --------------------------------------------------------------------------

    /// Close the send (`sender`) or receive side `h` of a packet or scalar channel. The
    /// handle is invalid at once; the request finishes when both sides have closed. A send
    /// side's held packets leave first; a receive side drops what it has not received (lent
    /// packets stay valid until released).
    pub fn close(&mut self, h: Ep, scalar: bool, sender: bool, user: [usize; 3]) -> Result<ReqId, Status> {
        let c = self.local(h).and_then(|l| l.chan.as_ref()).filter(|c| c.open && !c.closing).ok_or(Status::ErrChanInvalid)?;
        if c.sender != sender {
            return Err(Status::ErrChanDirection);
        }
        if c.scalar != scalar {
            return Err(Status::ErrChanType);
        }
        let rid = self.reqs.start(Waits::Close { ep: h }, user)?;
        let c = self.local_mut(h).and_then(|l| l.chan.as_mut()).expect("checked above");
        c.closing = true;
        c.close_req = Some(rid);
        let mut failed: Vec<ReqId> = Vec::new();
        if !sender {
            c.packets.clear();
            c.scalars.clear();
            c.owed = 0;
            failed.extend(c.posted.drain(..));
        }
        let broken = c.broken;
        let ready = c.held.is_empty() || c.peer_closed;
        if c.peer_closed {
            failed.extend(c.held.drain(..).filter_map(|(_, r)| r));
        }
        for r in failed {
            self.reqs.complete(r, Done::status(Status::ErrChanNotOpen));
        }
        if broken {
            self.end_channel(h, Status::ErrTransmission);
        } else if ready {
            self.send_close_frame(h);
        }
        Ok(rid)
    }

    /// Send our `Close`; if the other side closed already, the channel ends here.
    pub(super) fn send_close_frame(&mut self, ep: Ep) {
        let Some(l) = self.local_mut(ep) else { return };
        let port = l.port;
        let Some(c) = &mut l.chan else { return };
        if c.close_sent {
            return;
        }
        c.close_sent = true;
        let peer_closed = c.peer_closed;
        if let Some((_, pport, rank)) = c.peer {
            let mut f = Frame::new(Kind::Close);
            (f.port, f.peer_port) = (pport, port);
            self.emit_frame(rank, f);
        }
        if peer_closed {
            self.end_channel(ep, Status::Success);
        }
    }

    /// Both sides closed (or the other side is gone): the endpoint is free again.
    fn end_channel(&mut self, ep: Ep, st: Status) {
        self.announce_channel(ep, false);
        let Some(l) = self.local_mut(ep) else { return };
        let Some(c) = l.chan.take() else { return };
        if c.raised_count {
            l.get_count = l.get_count.saturating_sub(1);
        }
        let mut failed: Vec<ReqId> = c.held.into_iter().filter_map(|(_, r)| r).collect();
        failed.extend(c.posted);
        failed.extend(c.open_req);
        for r in failed {
            self.reqs.complete(r, Done::status(Status::ErrChanNotOpen));
        }
        if let Some(r) = c.close_req {
            self.reqs.complete(r, Done::status(st));
        }
    }

    /// Close a channel end at once (finalize): what it holds or waits for fails.
    pub(super) fn force_close(&mut self, ep: Ep) {
        if let Some(c) = self.local_mut(ep).and_then(|l| l.chan.as_mut()) {
            c.closing = true;
            c.peer_closed = true;
        }
        self.send_close_frame(ep);
        self.end_channel(ep, Status::Success);
    }

    pub(super) fn on_close(&mut self, from: Rank, f: Frame) {
        let Some(ep) = self.chan_from(from, &f) else { return };
        let c = self.local_mut(ep).and_then(|l| l.chan.as_mut()).expect("a channel");
        c.peer_closed = true;
        let mut failed: Vec<ReqId> = c.held.drain(..).filter_map(|(_, r)| r).collect();
        if c.packets.is_empty() && c.scalars.is_empty() {
            failed.extend(c.posted.drain(..));
        }
        let (closing, sent) = (c.closing, c.close_sent);
        for rid in failed {
            self.reqs.complete(rid, Done::status(Status::ErrChanNotOpen));
        }
        if closing && sent {
            self.end_channel(ep, Status::Success);
        } else if closing {
            self.send_close_frame(ep);
        }
    }

    /// Channels to `rank` break: what waits on them fails.
    pub(super) fn channels_lost(&mut self, rank: Rank) {
        let mut failed = Vec::new();
        let mut ended = Vec::new();
        for ep in self.local_endpoints() {
            let Some(c) = self.local_mut(ep).and_then(|l| l.chan.as_mut()) else { continue };
            if c.peer.map(|p| p.2) != Some(rank) {
                continue;
            }
            c.broken = true;
            failed.extend(c.open_req.take());
            failed.extend(c.held.drain(..).filter_map(|(_, r)| r));
            failed.extend(c.posted.drain(..));
            if c.closing {
                ended.push(ep);
            }
        }
        for ep in ended {
            self.end_channel(ep, Status::ErrTransmission);
        }
        let connects: Vec<ReqId> = self.pending.connects.iter().filter(|(_, c)| c.asked.contains(&rank)).map(|(r, _)| *r).collect();
        for rid in connects {
            self.pending.connects.remove(&rid);
            failed.push(rid);
        }
        self.pending.early_opens.retain(|_, e| e.0 != rank);
        for rid in failed {
            self.reqs.complete(rid, Done::status(Status::ErrTransmission));
        }
    }
}
