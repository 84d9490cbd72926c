//! Messages: connectionless, one destination endpoint per send, with a priority.
//!
//! The sender keeps every message until a cumulative `Ack` says the receiver took it. A
//! receiver whose queue is full refuses (`Nack`) and remembers the sender as blocked; the
//! sender then holds that message and every later one for the endpoint (a blocking send
//! waits) until `Resume`, which names the epoch of messages the receiver takes again (older
//! ones were sent before the sender heard the refusal) and how many it has room for. The
//! receiver resumes its blocked senders once its queue is down to half.

use super::endpoints::{Incoming, Refusing};
use super::requests::{Done, Outcome, ReqId, Waits};
use super::{Ep, Held, Node, OutBytes, Rank, Retained, Status};
use crate::wire::{Frame, Kind, Refusal, HEADER_LEN};
use std::sync::Arc;

impl Node {
    /// Send `data` from local endpoint `from` to endpoint `to`. `Ok(None)`: on its way, and
    /// kept until taken; `Ok(Some(rid))`: held back by a full receiver until it takes it.
    pub fn msg_send(&mut self, from: Ep, to: Ep, data: &[u8], prio: u32, user: [usize; 3]) -> Result<Option<ReqId>, Status> {
        let l = self.local(from).ok_or(Status::ErrEndpInvalid)?;
        let (src_port, limit, chan) = (l.port, (l.attrs.max_payload as usize).min(self.cfg.max_payload), l.chan.is_some());
        let (_, port, rank) = self.place(to).ok_or(Status::ErrEndpInvalid)?;
        if data.len() > limit {
            return Err(Status::ErrMsgSize);
        }
        if chan || self.in_channel(to) {
            // Endpoints of a channel take no messages (the code the standard recommends).
            return Err(Status::ErrGeneral);
        }
        if prio > self.cfg.max_priority as u32 {
            return Err(Status::ErrPriority);
        }
        if self.is_lost(rank) {
            return Err(Status::ErrTransmission);
        }
        let prio = prio as u8;
        // No receiver refused lately (the usual case): no lookup.
        let stop = if self.stops.is_empty() { None } else { self.stops.get(&(rank, port)) };
        if stop.is_some_and(|s| s.stopped || !s.held.is_empty()) {
            let rid = self.reqs.start(Waits::MsgSend, user)?;
            let s = self.stops.get_mut(&(rank, port)).expect("looked up above");
            s.held.push_back(Held { src_port, prio, payload: data.to_vec(), rid: Some(rid) });
            return Ok(Some(rid));
        }
        let epoch = stop.map_or(0, |s| s.epoch);
        self.transmit(rank, port, src_port, prio, epoch, data, None);
        Ok(None)
    }

    fn transmit(&mut self, rank: Rank, port: u32, src_port: u32, prio: u8, epoch: u32, data: &[u8], rid: Option<ReqId>) {
        let node = self.cfg.node;
        // A frame an acknowledgement gave back, when there is one: no allocation.
        let mut bytes = self.spare_frames.pop().unwrap_or_default();
        let p = self.peers.entry(rank).or_default();
        p.next_seq += 1;
        let mut f = Frame::new(Kind::Msg);
        (f.port, f.peer_port, f.peer_node, f.peer_rank, f.aux, f.seq, f.ack) = (port, src_port, node, epoch, prio, p.next_seq, p.taken);
        p.acked = p.taken;
        f.encode_over(data, Arc::get_mut(&mut bytes).expect("a spare frame is shared with nobody"));
        p.unacked.push_back(Retained { seq: f.seq, port, bytes: bytes.clone(), rid });
        // As `emit`, with the peer's entry at hand.
        if rank == self.cfg.rank {
            self.loopback.push_back(bytes.to_vec());
        } else if !p.lost {
            self.out.push_back((rank, OutBytes::Shared(bytes)));
        }
    }

    pub(super) fn send_ack(&mut self, rank: Rank) {
        let p = self.peers.entry(rank).or_default();
        let mut f = Frame::new(Kind::Ack);
        f.ack = p.taken;
        p.acked = p.taken;
        self.emit_frame(rank, f);
    }

    /// The peer took (or refused) every message up to `ack`.
    pub(super) fn acknowledged(&mut self, from: Rank, ack: u64) {
        let Some(p) = self.peers.get_mut(&from) else { return };
        while p.unacked.front().is_some_and(|r| r.seq <= ack) {
            let r = p.unacked.pop_front().expect("looked at");
            keep_spare(&mut self.spare_frames, r.bytes);
            if let Some(rid) = r.rid {
                self.reqs.complete(rid, Done::status(Status::Success));
            }
        }
    }

    pub(super) fn on_msg(&mut self, from: Rank, f: Frame, bytes: Vec<u8>) {
        let refuse = |node: &mut Node, why: Refusal| {
            let mut n = Frame::new(Kind::Nack);
            (n.peer_port, n.seq, n.peer_rank, n.aux) = (f.port, f.seq, f.peer_rank, why as u8);
            node.emit_frame(from, n);
        };
        let Some(ep) = self.ep_of_port(f.port) else {
            refuse(self, Refusal::NoEndpoint);
            return self.maybe_ack(from);
        };
        let prio = (f.aux as usize).min(self.cfg.max_priority as usize);
        let l = self.local_mut(ep).expect("a port names a local endpoint");
        let r = l.refusing.entry(from).or_insert(Refusing { expected: 0, blocked: false });
        if f.peer_rank < r.expected {
            // Sent before the sender heard that we refused: it holds this one already.
            refuse(self, Refusal::Full);
        } else if r.blocked {
            // The sender said it holds more, and we have not made room yet: everything it
            // sends from here on waits for our `Resume`.
            r.expected = f.peer_rank + 1;
            refuse(self, Refusal::Full);
        } else if let Some(rid) = l.posted.pop_front() {
            let cap = match self.reqs.waits(rid) {
                Some(Waits::MsgRecv { cap, .. }) => cap,
                _ => 0,
            };
            let len = bytes.len() - HEADER_LEN;
            if len > cap {
                // Too long for the buffer: the receive fails, the message stays for another.
                let l = self.local_mut(ep).expect("a local endpoint");
                l.queue[prio].push_back(Incoming { frame: bytes });
                l.queued += 1;
                self.reqs.complete(rid, Done { status: Status::ErrMsgTruncated, size: len, out: Outcome::Nothing });
            } else {
                self.reqs.complete(rid, received(bytes, cap));
            }
        } else if l.queued < l.attrs.recv_buffers.max(1) as usize {
            l.queue[prio].push_back(Incoming { frame: bytes });
            l.queued += 1;
        } else {
            r.expected = f.peer_rank + 1;
            r.blocked = true;
            l.blocked += 1;
            refuse(self, Refusal::Full);
        }
        self.maybe_ack(from);
    }

    fn maybe_ack(&mut self, from: Rank) {
        let p = self.peers.entry(from).or_default();
        if p.taken - p.acked >= self.cfg.ack_every {
            self.send_ack(from);
        }
    }

    pub(super) fn on_nack(&mut self, from: Rank, f: Frame) {
        let Some(p) = self.peers.get_mut(&from) else { return };
        let Some(at) = p.unacked.iter().position(|r| r.seq == f.seq) else { return };
        let port = f.peer_port;
        if f.refusal() == Refusal::NoEndpoint {
            if let Some(rid) = p.unacked.remove(at).and_then(|r| r.rid) {
                self.reqs.complete(rid, Done::status(Status::ErrEndpInvalid));
            }
            self.gone += 1;
            return;
        }
        // Hold this message and every later one for the same endpoint, in order.
        let mut moved = Vec::new();
        let mut i = at;
        while i < p.unacked.len() {
            if p.unacked[i].port == port {
                moved.push(p.unacked.remove(i).expect("in range"));
            } else {
                i += 1;
            }
        }
        let stop = self.stops.entry((from, port)).or_default();
        stop.stopped = true;
        for (k, r) in moved.into_iter().enumerate() {
            let (h, payload) = Frame::decode(&r.bytes, usize::MAX).expect("our own frame");
            stop.held.insert(k, Held { src_port: h.peer_port, prio: h.aux, payload: payload.to_vec(), rid: r.rid });
        }
    }

    pub(super) fn on_resume(&mut self, from: Rank, f: Frame) {
        let key = (from, f.peer_port);
        let Some(stop) = self.stops.get_mut(&key) else { return };
        stop.stopped = false;
        stop.epoch = f.peer_rank;
        let room = (f.seq as usize).max(1);
        let batch: Vec<Held> = (0..room).map_while(|_| stop.held.pop_front()).collect();
        let more = !stop.held.is_empty();
        let epoch = stop.epoch;
        if more {
            stop.stopped = true;
        }
        for h in batch {
            self.transmit(from, f.peer_port, h.src_port, h.prio, epoch, &h.payload, h.rid);
        }
        if more {
            let mut b = Frame::new(Kind::Blocked);
            b.peer_port = f.peer_port;
            self.emit_frame(from, b);
        }
    }

    /// A sender still holds messages for one of our endpoints.
    pub(super) fn on_blocked(&mut self, from: Rank, f: Frame) {
        let Some(ep) = self.ep_of_port(f.peer_port) else {
            // Gone: let it send and hear so.
            let mut r = Frame::new(Kind::Resume);
            (r.peer_port, r.seq) = (f.peer_port, 1);
            return self.emit_frame(from, r);
        };
        let l = self.local_mut(ep).expect("a local endpoint");
        let r = l.refusing.entry(from).or_insert(Refusing { expected: 0, blocked: false });
        if !r.blocked {
            r.blocked = true;
            l.blocked += 1;
        }
        self.resume_blocked(ep);
    }

    /// Resume the senders an endpoint refused, once its queue is down to half.
    fn resume_blocked(&mut self, ep: Ep) {
        let Some(l) = self.local_mut(ep) else { return };
        let limit = l.attrs.recv_buffers.max(1) as usize;
        // The common case, no sender refused: nothing to collect.
        if l.queued > limit / 2 || l.blocked == 0 {
            return;
        }
        let blocked: Vec<Rank> = l.refusing.iter().filter(|(_, r)| r.blocked).map(|(&k, _)| k).collect();
        if blocked.is_empty() {
            return;
        }
        let room = ((limit - l.queued) / blocked.len()).max(1) as u64;
        let port = l.port;
        let mut frames = Vec::new();
        for rank in blocked {
            let r = l.refusing.get_mut(&rank).expect("listed above");
            r.blocked = false;
            l.blocked -= 1;
            let mut f = Frame::new(Kind::Resume);
            (f.peer_port, f.peer_rank, f.seq) = (port, r.expected, room);
            frames.push((rank, f));
        }
        for (rank, f) in frames {
            self.emit_frame(rank, f);
        }
    }

    /// Take the most urgent queued message of local endpoint `ep`, if any.
    pub fn msg_try_recv(&mut self, ep: Ep) -> Result<Option<Vec<u8>>, Status> {
        self.msg_take(ep, usize::MAX).map(|d| d.map(|d| match d.out {
            Outcome::Data { frame, .. } => frame,
            _ => unreachable!("a message that fits"),
        }))
    }

    /// The most urgent queued message of `ep` as a finished receive of `cap` bytes; one too
    /// long stays queued and the receive fails with `MCAPI_ERR_MSG_TRUNCATED` and its size.
    pub fn msg_take(&mut self, ep: Ep, cap: usize) -> Result<Option<Done>, Status> {
        let l = self.local_mut(ep).ok_or(Status::ErrEndpInvalid)?;
        if l.queued == 0 {
            return Ok(None);
        }
        let q = l.queue.iter_mut().find(|q| !q.is_empty()).expect("a message is queued");
        let len = q.front().expect("not empty").frame.len() - HEADER_LEN;
        if len > cap {
            return Ok(Some(Done { status: Status::ErrMsgTruncated, size: len, out: Outcome::Nothing }));
        }
        let m = q.pop_front().expect("not empty");
        l.queued -= 1;
        self.resume_blocked(ep);
        Ok(Some(received(m.frame, cap)))
    }

    /// Receive on local endpoint `ep` into a buffer of `cap` bytes: at once when a message
    /// is queued, else when one arrives.
    pub fn msg_recv(&mut self, ep: Ep, cap: usize, user: [usize; 3]) -> Result<ReqId, Status> {
        let l = self.local(ep).ok_or(Status::ErrEndpInvalid)?;
        if l.posted.is_empty() {
            if let Some(done) = self.msg_take(ep, cap)? {
                return self.reqs.done_now(done, user);
            }
        }
        let rid = self.reqs.start(Waits::MsgRecv { ep, cap }, user)?;
        self.local_mut(ep).expect("checked above").posted.push_back(rid);
        Ok(rid)
    }

    /// Like [`Node::msg_take`], but only when no receive is posted before this one.
    pub fn msg_take_first(&mut self, ep: Ep, cap: usize) -> Result<Option<Done>, Status> {
        if !self.local(ep).ok_or(Status::ErrEndpInvalid)?.posted.is_empty() {
            return Ok(None);
        }
        self.msg_take(ep, cap)
    }

    /// Messages queued at local endpoint `ep`.
    pub fn msg_available(&self, ep: Ep) -> Result<usize, Status> {
        Ok(self.local(ep).ok_or(Status::ErrEndpInvalid)?.queued)
    }

    /// Take a held message back (its send was cancelled before it left).
    pub(super) fn unhold(&mut self, rid: ReqId) -> bool {
        for s in self.stops.values_mut() {
            if let Some(i) = s.held.iter().position(|h| h.rid == Some(rid)) {
                s.held.remove(i);
                return true;
            }
        }
        false
    }
}

/// Frames kept for messages to come, and the largest one kept.
const SPARE_FRAMES: usize = 64;
const SPARE_FRAME_MAX: usize = 4096;

/// Keep an acknowledged frame for the next message, when nothing else holds it (the engine
/// may still be reading it) and it is small.
fn keep_spare(spare: &mut Vec<Arc<Vec<u8>>>, bytes: Arc<Vec<u8>>) {
    if spare.len() < SPARE_FRAMES && bytes.capacity() <= SPARE_FRAME_MAX && Arc::strong_count(&bytes) == 1 && Arc::weak_count(&bytes) == 0 {
        spare.push(bytes);
    }
}

/// A received message as a finished receive of `cap` bytes: truncated when longer.
pub fn received(frame: Vec<u8>, cap: usize) -> Done {
    let len = frame.len() - HEADER_LEN;
    let status = if len > cap { Status::ErrMsgTruncated } else { Status::Success };
    Done { status, size: len.min(cap), out: Outcome::Data { frame, offset: HEADER_LEN } }
}
