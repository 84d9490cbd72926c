//! Packet and scalar channels: connected FIFO streams between a send and a receive
//! endpoint. Any node may connect two endpoints (`Connect` to each owner; the request
//! finishes when both answered). The receive side opens by granting its free receive
//! buffers (`Open`); the send side's open finishes when that grant arrives. A packet or a
//! scalar leaves only on a credit; the receiver returns credits as the user releases
//! packets or takes scalars. A received packet is lent to the user in the very buffer it
//! arrived in (a frame, or the shared slot its sender wrote: `slots`), until
//! `mcapi_pktchan_release`.

use std::collections::VecDeque;

use ferry_core::fastmap::FastMap;

use super::requests::{Done, Outcome, ReqId, Waits};
use super::slots::{Pkt, Slots};
use super::{Ep, Node, OutBytes, Rank, Status};
use crate::wire::{ChanSpec, Frame, Kind, Reply};

pub(super) struct Chan {
    pub scalar: bool,
    pub sender: bool,
    /// (node, port, rank) of the other side, once connected.
    pub peer: Option<(u32, u32, Rank)>,
    pub open: bool,
    pub open_req: Option<ReqId>,
    /// Send side: the receive side has opened.
    pub peer_open: bool,
    /// The other side's node is gone.
    pub broken: bool,
    /// The other side closed.
    pub peer_closed: bool,
    /// This side's close was issued: the handle is no longer valid for data.
    pub closing: bool,
    /// This side's `Close` left.
    pub close_sent: bool,
    /// The connect raised the endpoint's get count from 0 (the close lowers it again).
    pub raised_count: bool,
    pub credits: u32,
    /// Send side: encoded frames waiting for a credit.
    pub held: VecDeque<(Vec<u8>, Option<ReqId>)>,
    pub close_req: Option<ReqId>,
    pub packets: VecDeque<Pkt>,
    pub scalars: VecDeque<(u8, u64)>,
    pub posted: VecDeque<ReqId>,
    /// Receive side: credits to give back.
    pub owed: u32,
    pub window: u32,
    /// Receive slots shared with the other side, when it can write them.
    pub slots: Option<Slots>,
}

impl Chan {
    fn new(scalar: bool, sender: bool) -> Chan {
        Chan { scalar, sender, peer: None, open: false, open_req: None, peer_open: false, broken: false, peer_closed: false, closing: false, close_sent: false, raised_count: false, credits: 0, held: VecDeque::new(), close_req: None, packets: VecDeque::new(), scalars: VecDeque::new(), posted: VecDeque::new(), owed: 0, window: 0, slots: None }
    }

    pub fn connected(&self) -> bool {
        self.peer.is_some()
    }

    pub fn is_open(&self) -> bool {
        self.open
    }
}

/// A connect waiting for the owners' answers.
pub(super) struct Connecting {
    missing: u32,
    failure: Option<Status>,
    /// The attributes the first answer carried, to compare with the second's.
    compat: Option<(u32, u64)>,
    /// Its request was cancelled: the connect goes on, nobody hears the result.
    pub detached: bool,
    /// (node, port) of both endpoints.
    ends: [(u32, u32); 2],
    /// Sides that accepted: (rank, port), undone if the other side failed.
    accepted: Vec<(Rank, u32)>,
    pub asked: Vec<Rank>,
}

/// Channel state that belongs to no endpoint yet.
#[derive(Default)]
pub(super) struct Pending {
    pub connects: FastMap<ReqId, Connecting>,
    /// `Open` grants that arrived before the send side heard of its connection: the
    /// receiver's rank and port, its window, and its slots (area key and slot size).
    pub early_opens: FastMap<u32, (Rank, u32, u32, u64, u64)>,
}

fn reply_status(r: Reply) -> Status {
    match r {
        Reply::Ok => Status::Success,
        Reply::NoEndpoint => Status::ErrEndpInvalid,
        Reply::Connected => Status::ErrChanConnected,
        Reply::Incompatible => Status::ErrAttrIncompatible,
        Reply::GetLimit => Status::ErrEndpGetLimit,
        Reply::ClosePending => Status::ErrChanClosePending,
    }
}

impl Node {
    // ----- connect ------------------------------------------------------------------------

    /// Connect endpoint `send` to endpoint `recv` as a packet (or scalar) channel.
    pub fn connect(&mut self, send: Ep, recv: Ep, scalar: bool, user: [usize; 3]) -> Result<ReqId, Status> {
        let s = self.place(send).ok_or(Status::ErrEndpInvalid)?;
        let r = self.place(recv).ok_or(Status::ErrEndpInvalid)?;
        if s == r {
            return Err(Status::ErrEndpInvalid);
        }
        for e in [send, recv] {
            if self.local(e).and_then(|l| l.chan.as_ref()).is_some_and(|c| c.closing) {
                return Err(Status::ErrChanClosePending);
            }
        }
        if self.is_lost(s.2) || self.is_lost(r.2) {
            return Err(Status::ErrTransmission);
        }
        let rid = self.reqs.start(Waits::Connect, user)?;
        self.pending.connects.insert(rid, Connecting { missing: 2, failure: None, compat: None, detached: false, ends: [(s.0, s.1), (r.0, r.1)], accepted: Vec::new(), asked: vec![s.2, r.2] });
        for (this, other, sender) in [(s, r, true), (r, s, false)] {
            let spec = ChanSpec { scalar, sender };
            if this.2 == self.cfg.rank {
                let (reply, compat) = self.accept_connect(this.1, other, spec);
                self.connect_answer(rid, this.2, this.1, reply, compat);
            } else {
                let mut f = Frame::new(Kind::Connect);
                (f.port, f.peer_port, f.peer_node, f.peer_rank, f.aux, f.seq) = (this.1, other.1, other.0, other.2, spec.to_u8(), rid.0 as u64);
                self.emit_frame(this.2, f);
            }
        }
        Ok(rid)
    }

    /// Accept (or not) a connection of our endpoint `port`; with the attributes a channel's
    /// ends must share.
    fn accept_connect(&mut self, port: u32, peer: (u32, u32, Rank), spec: ChanSpec) -> (Reply, (u32, u64)) {
        let Some(ep) = self.ep_of_port(port) else { return (Reply::NoEndpoint, (0, 0)) };
        let early = self.pending.early_opens.get(&port).copied();
        let l = self.local_mut(ep).expect("a local endpoint");
        let compat = l.attrs.compat();
        match &l.chan {
            Some(c) if c.closing => return (Reply::ClosePending, compat),
            Some(c) if c.connected() => return (Reply::Connected, compat),
            Some(c) if c.scalar != spec.scalar || c.sender != spec.sender => return (Reply::Incompatible, compat),
            _ => {}
        }
        if l.get_count > 1 {
            return (Reply::GetLimit, compat);
        }
        let raise = l.get_count == 0;
        if raise {
            l.get_count = 1;
        }
        let c = l.chan.get_or_insert_with(|| Chan::new(spec.scalar, spec.sender));
        c.raised_count = raise;
        c.peer = Some(peer);
        if let Some((rank, pport, credits, key, bytes)) = early {
            if spec.sender && rank == peer.2 && pport == peer.1 {
                c.peer_open = true;
                c.credits += credits;
                self.pending.early_opens.remove(&port);
                self.attach_slots(ep, rank, key, credits as usize, bytes as usize);
            }
        }
        self.announce_channel(ep, true);
        self.try_finish_open(ep);
        (Reply::Ok, compat)
    }

    pub(super) fn on_connect(&mut self, from: Rank, f: Frame) {
        let spec = ChanSpec::from_u8(f.aux).expect("checked by the codec");
        let (reply, compat) = self.accept_connect(f.port, (f.peer_node, f.peer_port, f.peer_rank), spec);
        let mut a = Frame::new(Kind::Connected);
        (a.peer_port, a.aux, a.seq, a.peer_rank, a.ack) = (f.port, reply as u8, f.seq, compat.0, compat.1);
        self.emit_frame(from, a);
    }

    pub(super) fn on_connected(&mut self, from: Rank, f: Frame) {
        self.connect_answer(ReqId(f.seq as u32), from, f.peer_port, f.reply(), (f.peer_rank, f.ack));
    }

    fn connect_answer(&mut self, rid: ReqId, rank: Rank, port: u32, reply: Reply, compat: (u32, u64)) {
        let Some(c) = self.pending.connects.get_mut(&rid) else { return };
        if !c.asked.contains(&rank) {
            return;
        }
        c.missing -= 1;
        match reply {
            Reply::Ok => c.accepted.push((rank, port)),
            // A close pending on either end is the reason that counts.
            Reply::ClosePending => c.failure = Some(Status::ErrChanClosePending),
            r => c.failure = c.failure.or(Some(reply_status(r))),
        }
        match c.compat {
            Some(first) if first != compat && reply != Reply::NoEndpoint => c.failure = c.failure.or(Some(Status::ErrAttrIncompatible)),
            None if reply != Reply::NoEndpoint => c.compat = Some(compat),
            _ => {}
        }
        if c.missing > 0 {
            return;
        }
        let c = self.pending.connects.remove(&rid).expect("looked up above");
        let rid = if c.detached { ReqId(0) } else { rid };
        match c.failure {
            None => {
                for (node, port) in c.ends {
                    self.eps_mark_channel(node, port, true);
                }
                self.reqs.complete(rid, Done::status(Status::Success))
            }
            Some(st) => {
                for (rank, port) in c.accepted {
                    if rank == self.cfg.rank {
                        self.disconnect(port);
                    } else {
                        let mut f = Frame::new(Kind::Disconnect);
                        f.port = port;
                        self.emit_frame(rank, f);
                    }
                }
                self.reqs.complete(rid, Done::status(st));
            }
        }
    }

    pub(super) fn on_disconnect(&mut self, _from: Rank, f: Frame) {
        self.disconnect(f.port);
    }

    fn disconnect(&mut self, port: u32) {
        let Some(ep) = self.ep_of_port(port) else { return };
        let l = self.local_mut(ep).expect("a local endpoint");
        if l.chan.as_ref().is_some_and(|c| c.raised_count) {
            l.get_count = l.get_count.saturating_sub(1);
        }
        if let Some(c) = &mut l.chan {
            c.raised_count = false;
            if c.open_req.is_some() && !c.open {
                c.peer = None;
                c.peer_open = false;
                c.credits = 0;
            } else if !c.open {
                l.chan = None;
            }
        }
    }

    // ----- open ---------------------------------------------------------------------------

    /// Open local endpoint `ep` as the send or receive side of a packet or scalar channel.
    pub fn open(&mut self, ep: Ep, scalar: bool, sender: bool, user: [usize; 3]) -> Result<ReqId, Status> {
        let l = self.local(ep).ok_or(Status::ErrEndpInvalid)?;
        if let Some(c) = &l.chan {
            if c.closing {
                return Err(Status::ErrChanClosePending);
            }
            if c.connected() && c.scalar != scalar {
                return Err(Status::ErrChanType);
            }
            if c.connected() && c.sender != sender {
                return Err(Status::ErrChanDirection);
            }
            if c.open {
                return Err(Status::ErrChanOpen);
            }
            if c.open_req.is_some() {
                return Err(Status::ErrChanOpenPending);
            }
        }
        let rid = self.reqs.start(Waits::Open { ep }, user)?;
        let l = self.local_mut(ep).expect("checked above");
        let c = l.chan.get_or_insert_with(|| Chan::new(scalar, sender));
        c.open_req = Some(rid);
        self.try_finish_open(ep);
        Ok(rid)
    }

    fn try_finish_open(&mut self, ep: Ep) {
        let swindow = self.cfg.scalar_window;
        let Some(l) = self.local_mut(ep) else { return };
        let window = l.attrs.recv_buffers.max(4);
        let max_packet = l.attrs.max_payload as usize;
        let port = l.port;
        let Some(c) = &mut l.chan else { return };
        let (Some(rid), Some(peer)) = (c.open_req, c.peer) else { return };
        if c.broken {
            c.open_req = None;
            self.reqs.complete(rid, Done::status(Status::ErrTransmission));
            return;
        }
        if c.sender {
            if !c.peer_open {
                return;
            }
            c.open = true;
            c.open_req = None;
        } else {
            c.open = true;
            c.open_req = None;
            c.window = if c.scalar { swindow } else { window };
            let mut f = Frame::new(Kind::Open);
            (f.port, f.peer_port, f.peer_rank) = (peer.1, port, c.window);
            let slots = if c.scalar { None } else { self.make_slots(peer.2, window as usize, max_packet) };
            if let Some((key, s)) = slots {
                (f.seq, f.ack) = (key, s.bytes as u64);
                self.local_mut(ep).and_then(|l| l.chan.as_mut()).expect("opened above").slots = Some(s);
            }
            self.emit_frame(peer.2, f);
        }
        self.reqs.complete(rid, Done { status: Status::Success, size: 0, out: Outcome::Handle(ep) });
    }

    pub(super) fn cancel_open(&mut self, ep: Ep, rid: ReqId) {
        if let Some(l) = self.local_mut(ep) {
            if let Some(c) = &mut l.chan {
                if c.open_req == Some(rid) {
                    c.open_req = None;
                    if !c.connected() {
                        l.chan = None;
                    }
                }
            }
        }
    }

    /// The channel of local endpoint `ep` if `from` is its peer and it is on `port` there.
    pub(super) fn chan_from(&mut self, from: Rank, f: &Frame) -> Option<Ep> {
        let ep = self.ep_of_port(f.port)?;
        let c = self.local(ep)?.chan.as_ref()?;
        let (_, pport, prank) = c.peer?;
        (prank == from && pport == f.peer_port).then_some(ep)
    }

    pub(super) fn on_open(&mut self, from: Rank, f: Frame) {
        match self.chan_from(from, &f) {
            Some(ep) => {
                let c = self.local_mut(ep).and_then(|l| l.chan.as_mut()).expect("a channel");
                if !c.sender {
                    return;
                }
                c.peer_open = true;
                c.credits += f.peer_rank;
                self.attach_slots(ep, from, f.seq, f.peer_rank as usize, f.ack as usize);
                self.try_finish_open(ep);
                self.send_held(ep);
            }
            None => {
                self.pending.early_opens.insert(f.port, (from, f.peer_port, f.peer_rank, f.seq, f.ack));
            }
        }
    }

    // ----- send ---------------------------------------------------------------------------

    fn send_side(&self, h: Ep, scalar: bool) -> Result<&Chan, Status> {
        let c = self.local(h).and_then(|l| l.chan.as_ref()).ok_or(Status::ErrChanInvalid)?;
        if c.scalar != scalar {
            return Err(Status::ErrChanInvalid);
        }
        if !c.sender {
            return Err(Status::ErrChanInvalid);
        }
        if c.broken {
            return Err(Status::ErrTransmission);
        }
        if !c.open || c.peer_closed {
            return Err(Status::ErrChanNotOpen);
        }
        if c.closing {
            return Err(Status::ErrChanInvalid);
        }
        Ok(c)
    }

    /// Send a packet on channel `h` (a send handle). `Ok(None)`: on its way; `Ok(Some)`:
    /// held until the receiver frees a buffer.
    pub fn pkt_send(&mut self, h: Ep, data: &[u8], user: [usize; 3]) -> Result<Option<ReqId>, Status> {
        self.send_side(h, false)?;
        let limit = self.local(h).map_or(0, |l| l.attrs.max_payload as usize).min(self.cfg.max_payload);
        if data.len() > limit {
            return Err(Status::ErrPktSize);
        }
        if self.slot_send(h, data) {
            return Ok(None);
        }
        let frame = self.chan_frame(h, Kind::Packet).encode_with(data);
        self.chan_send(h, frame, user)
    }

    /// Send a scalar of `width` bytes on channel `h`.
    pub fn scl_send(&mut self, h: Ep, value: u64, width: u8, user: [usize; 3]) -> Result<Option<ReqId>, Status> {
        self.send_side(h, true)?;
        let mut f = self.chan_frame(h, Kind::Scalar);
        (f.aux, f.ack) = (width, value);
        self.chan_send(h, f.encode_with(&[]), user)
    }

    fn chan_frame(&self, h: Ep, kind: Kind) -> Frame {
        let l = self.local(h).expect("checked by send_side");
        let (_, pport, _) = l.chan.as_ref().and_then(|c| c.peer).expect("open");
        let mut f = Frame::new(kind);
        (f.port, f.peer_port) = (pport, l.port);
        f
    }

    fn chan_send(&mut self, h: Ep, frame: Vec<u8>, user: [usize; 3]) -> Result<Option<ReqId>, Status> {
        let c = self.local_mut(h).and_then(|l| l.chan.as_mut()).expect("checked by send_side");
        if c.credits > 0 && c.held.is_empty() {
            c.credits -= 1;
            let rank = c.peer.expect("open").2;
            self.emit(rank, OutBytes::Owned(frame));
            return Ok(None);
        }
        let rid = self.reqs.start(Waits::ChanSend { ep: h }, user)?;
        let c = self.local_mut(h).and_then(|l| l.chan.as_mut()).expect("checked by send_side");
        c.held.push_back((frame, Some(rid)));
        Ok(Some(rid))
    }

    /// Send what credits allow of what a channel holds; finish a close waiting for it.
    fn send_held(&mut self, ep: Ep) {
        let Some(c) = self.local_mut(ep).and_then(|l| l.chan.as_mut()) else { return };
        let Some((_, _, rank)) = c.peer else { return };
        let mut out = Vec::new();
        while c.credits > 0 {
            let Some((frame, rid)) = c.held.pop_front() else { break };
            c.credits -= 1;
            out.push((frame, rid));
        }
        let close = c.held.is_empty() && c.closing && !c.close_sent;
        for (frame, rid) in out {
            // A packet held while the window was full goes into a slot now, if it can.
            if !self.held_into_slot(ep, &frame) {
                self.emit(rank, OutBytes::Owned(frame));
            }
            if let Some(rid) = rid {
                self.reqs.complete(rid, Done::status(Status::Success));
            }
        }
        if close {
            self.send_close_frame(ep);
        }
    }

    pub(super) fn on_credit(&mut self, from: Rank, f: Frame) {
        let Some(ep) = self.chan_from(from, &f) else { return };
        let c = self.local_mut(ep).and_then(|l| l.chan.as_mut()).expect("a channel");
        c.credits = c.credits.saturating_add(f.peer_rank);
        Node::slots_freed(c, f.ack);
        self.send_held(ep);
    }

    /// Whether a packet sent on `h` now would leave at once (a credit, nothing held before
    /// it), or fail: a blocking send waits for this before it hands its data over, so that
    /// it is copied once, where it goes.
    pub fn pkt_ready(&self, h: Ep) -> bool {
        match self.send_side(h, false) {
            Ok(c) => c.credits > 0 && c.held.is_empty(),
            Err(_) => true,
        }
    }

    pub(super) fn unhold_chan(&mut self, ep: Ep, rid: ReqId) -> bool {
        let Some(c) = self.local_mut(ep).and_then(|l| l.chan.as_mut()) else { return false };
        let before = c.held.len();
        c.held.retain(|(_, r)| *r != Some(rid));
        c.held.len() != before
    }

    // ----- receive ------------------------------------------------------------------------

    pub(super) fn on_packet(&mut self, from: Rank, f: Frame, bytes: Vec<u8>) {
        let Some(ep) = self.chan_from(from, &f) else {
            self.gone += 1;
            return;
        };
        let c = self.local_mut(ep).and_then(|l| l.chan.as_mut()).expect("a channel");
        if c.sender || c.scalar {
            return;
        }
        self.packet_arrived(ep, Pkt::Frame(bytes));
    }

    /// A packet for receive channel `ep`: to the oldest posted receive, else to the queue.
    pub(super) fn packet_arrived(&mut self, ep: Ep, pkt: Pkt) {
        let c = self.local_mut(ep).and_then(|l| l.chan.as_mut()).expect("a channel");
        match c.posted.pop_front() {
            Some(rid) => {
                let (addr, len) = self.lend(pkt, ep);
                self.reqs.complete(rid, Done { status: Status::Success, size: len, out: Outcome::Packet { addr, len } });
            }
            None => c.packets.push_back(pkt),
        }
    }

    pub(super) fn on_scalar(&mut self, from: Rank, f: Frame) {
        let Some(ep) = self.chan_from(from, &f) else {
            self.gone += 1;
            return;
        };
        let c = self.local_mut(ep).and_then(|l| l.chan.as_mut()).expect("a channel");
        if !c.sender && c.scalar {
            c.scalars.push_back((f.aux, f.ack));
        }
    }

    fn recv_side(&self, h: Ep, scalar: bool) -> Result<&Chan, Status> {
        let c = self.local(h).and_then(|l| l.chan.as_ref()).ok_or(Status::ErrChanInvalid)?;
        if c.scalar != scalar {
            return Err(Status::ErrChanInvalid);
        }
        if c.sender {
            return Err(Status::ErrChanInvalid);
        }
        if !c.open || c.closing {
            return Err(Status::ErrChanInvalid);
        }
        Ok(c)
    }

    /// Take the oldest packet of channel `h` (a receive handle): its address and length,
    /// lent until released. `Ok(None)`: none yet.
    pub fn pkt_try_recv(&mut self, h: Ep) -> Result<Option<(usize, usize)>, Status> {
        let c = self.recv_side(h, false)?;
        if c.packets.is_empty() {
            if c.broken {
                return Err(Status::ErrTransmission);
            }
            if c.peer_closed {
                return Err(Status::ErrChanNotOpen);
            }
            return Ok(None);
        }
        let c = self.local_mut(h).and_then(|l| l.chan.as_mut()).expect("checked above");
        let pkt = c.packets.pop_front().expect("not empty");
        Ok(Some(self.lend(pkt, h)))
    }

    /// Receive a packet on channel `h`: at once when one is there, else when it arrives.
    pub fn pkt_recv(&mut self, h: Ep, user: [usize; 3]) -> Result<ReqId, Status> {
        if self.recv_side(h, false)?.posted.is_empty() {
            if let Some((addr, len)) = self.pkt_try_recv(h)? {
                return self.reqs.done_now(Done { status: Status::Success, size: len, out: Outcome::Packet { addr, len } }, user);
            }
        }
        let rid = self.reqs.start(Waits::PktRecv { ep: h }, user)?;
        self.local_mut(h).and_then(|l| l.chan.as_mut()).expect("checked above").posted.push_back(rid);
        Ok(rid)
    }

    pub(super) fn unpost_packet(&mut self, ep: Ep, rid: ReqId) {
        if let Some(c) = self.local_mut(ep).and_then(|l| l.chan.as_mut()) {
            c.posted.retain(|r| *r != rid);
        }
    }

    /// Give a lent packet back; its channel gets a credit for it.
    pub fn pkt_release(&mut self, addr: usize) -> Result<(), Status> {
        let (lent, ep) = self.lent.remove(&addr).ok_or(Status::ErrBufInvalid)?;
        self.released.add(addr);
        if let Some(c) = self.local_mut(ep).and_then(|l| l.chan.as_mut()) {
            if !c.sender && !c.scalar && c.open {
                Node::slot_released(c, &lent);
                c.owed += 1;
                self.owe(ep);
                self.credit(ep, false);
            }
        }
        Ok(())
    }

    /// Whether `addr` is a packet lent to the user.
    pub fn pkt_is_lent(&self, addr: usize) -> bool {
        self.lent.contains_key(&addr)
    }

    /// `mcapi_pktchan_release_test`: `Ok(false)` while the packet at `addr` is held,
    /// `Ok(true)` once released; an address that never was a packet is an error.
    pub fn pkt_release_test(&self, addr: usize) -> Result<bool, Status> {
        if self.lent.contains_key(&addr) {
            Ok(false)
        } else if self.released.contains(addr) {
            Ok(true)
        } else {
            Err(Status::ErrBufInvalid)
        }
    }

    /// Packets (or scalars) waiting on channel `h`.
    pub fn chan_available(&self, h: Ep, scalar: bool) -> Result<usize, Status> {
        let c = self.recv_side(h, scalar)?;
        Ok(if scalar { c.scalars.len() } else { c.packets.len() })
    }

    /// Take the oldest scalar of channel `h` if it is `width` bytes wide.
    pub fn scl_try_recv(&mut self, h: Ep, width: u8) -> Result<Option<u64>, Status> {
        let c = self.recv_side(h, true)?;
        match c.scalars.front() {
            None if c.broken => Err(Status::ErrTransmission),
            None if c.peer_closed => Err(Status::ErrChanNotOpen),
            None => Ok(None),
            Some(&(w, _)) if w != width => Err(Status::ErrSclSize),
            Some(_) => {
                let c = self.local_mut(h).and_then(|l| l.chan.as_mut()).expect("checked above");
                let (_, v) = c.scalars.pop_front().expect("not empty");
                c.owed += 1;
                self.owe(h);
                self.credit(h, false);
                Ok(Some(v))
            }
        }
    }

    /// Remember that `ep`'s channel owes credits (for [`Node::flush_credits`]).
    fn owe(&mut self, ep: Ep) {
        if !self.owing.contains(&ep) {
            self.owing.push(ep);
        }
    }

    /// Give back the credits owed on `ep`'s channel: when half the window is owed, or `all`.
    fn credit(&mut self, ep: Ep, all: bool) {
        let Some(l) = self.local_mut(ep) else { return };
        let port = l.port;
        let Some(c) = &mut l.chan else { return };
        if c.owed == 0 || !(all || c.owed >= (c.window / 2).max(1)) || c.broken {
            return;
        }
        let Some((_, pport, rank)) = c.peer else { return };
        let mut f = Frame::new(Kind::Credit);
        (f.port, f.peer_port, f.peer_rank) = (pport, port, c.owed);
        f.ack = c.slots.as_mut().map_or(0, |s| std::mem::take(&mut s.freed));
        c.owed = 0;
        self.emit_frame(rank, f);
    }

    pub(super) fn flush_credits(&mut self) {
        for ep in std::mem::take(&mut self.owing) {
            self.credit(ep, true);
        }
    }

    fn eps_mark_channel(&mut self, node: u32, port: u32, yes: bool) {
        if node != self.cfg.node {
            self.eps.set_remote_channel(node, port, yes);
        }
    }
}
