//! Endpoints: the table of handles (this node's endpoints and the remote ones it got), port
//! numbers, and finding an endpoint of another node (`Query`, answered by `Found` once it
//! exists).

use std::collections::VecDeque;

use ferry_core::fastmap::FastMap;

use super::attributes::EpAttrs;
use super::channels::Chan;
use super::requests::{Done, Outcome, ReqId, Waits};
use super::{Ep, Node, Rank, Status, Whereabouts};
use crate::wire::{Frame, Kind};

/// First port handed out for `MCAPI_PORT_ANY`.
pub const FIRST_ANY_PORT: u32 = 1 << 16;

/// What a handle names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EpInfo {
    Local { port: u32, attrs: EpAttrs, connected: bool, open: bool },
    Remote { node: u32, port: u32 },
}

/// A message waiting in an endpoint's queue: the whole frame and its sender's node.
pub(super) struct Incoming {
    pub frame: Vec<u8>,
}

/// A sender whose messages this endpoint refuses until it says `Resume`.
pub(super) struct Refusing {
    /// Messages of an older epoch were sent before the sender heard the refusal.
    pub expected: u32,
    pub blocked: bool,
}

pub(super) struct LocalEp {
    pub port: u32,
    /// Queued messages by priority (index 0 most urgent).
    pub queue: Vec<VecDeque<Incoming>>,
    pub queued: usize,
    /// Posted receives (`msg_recv_i`), oldest first.
    pub posted: VecDeque<ReqId>,
    pub refusing: FastMap<Rank, Refusing>,
    /// The senders of `refusing` that are blocked (so that a receive need not look).
    pub blocked: usize,
    pub attrs: EpAttrs,
    pub chan: Option<Chan>,
    /// Successful gets of this endpoint, and the node of the last getter.
    pub get_count: u32,
    pub get_source: Option<u32>,
    /// Other ranks that got this endpoint: they hear when it is deleted.
    pub getters: Vec<Rank>,
}

enum Entry {
    Local(Box<LocalEp>),
    /// `chan`: the endpoint is connected to a channel (as far as this node heard).
    Remote { node: u32, port: u32, rank: Rank, chan: bool },
}

struct Slot {
    generation: u16,
    entry: Option<Entry>,
}

pub(super) struct Table {
    slots: Vec<Slot>,
    free: Vec<u32>,
    ports: FastMap<u32, Ep>,
    remotes: FastMap<(u32, u32), Ep>,
    locals: usize,
    max_locals: usize,
    next_any: u32,
    /// Gets of our own ports that do not exist yet.
    local_gets: FastMap<u32, Vec<ReqId>>,
    /// Queries of other nodes for ports that do not exist yet: (rank, cookie, node).
    queries: FastMap<u32, Vec<(Rank, u64, u32)>>,
    /// Gets waiting for an answer, and the rank asked.
    asked: FastMap<ReqId, Rank>,
}

impl Table {
    pub fn new(max_locals: usize) -> Table {
        Table { slots: Vec::new(), free: Vec::new(), ports: FastMap::default(), remotes: FastMap::default(), locals: 0, max_locals, next_any: FIRST_ANY_PORT, local_gets: FastMap::default(), queries: FastMap::default(), asked: FastMap::default() }
    }

    fn add(&mut self, e: Entry) -> Ep {
        let idx = self.free.pop().unwrap_or_else(|| {
            self.slots.push(Slot { generation: 0, entry: None });
            self.slots.len() as u32 - 1
        });
        let s = &mut self.slots[idx as usize];
        s.generation = s.generation.wrapping_add(1).max(1);
        s.entry = Some(e);
        Ep((s.generation as u32) << 16 | (idx + 1))
    }

    fn index(&self, ep: Ep) -> Option<usize> {
        let idx = (ep.0 & 0xffff).checked_sub(1)? as usize;
        let s = self.slots.get(idx)?;
        (s.entry.is_some() && s.generation as u32 == ep.0 >> 16).then_some(idx)
    }

    pub fn local(&self, ep: Ep) -> Option<&LocalEp> {
        match self.slots[self.index(ep)?].entry.as_ref()? {
            Entry::Local(l) => Some(l),
            Entry::Remote { .. } => None,
        }
    }

    pub fn local_mut(&mut self, ep: Ep) -> Option<&mut LocalEp> {
        let i = self.index(ep)?;
        match self.slots[i].entry.as_mut()? {
            Entry::Local(l) => Some(l),
            Entry::Remote { .. } => None,
        }
    }

    /// (node, port, rank) of a remote handle.
    pub fn remote(&self, ep: Ep) -> Option<(u32, u32, Rank)> {
        match self.slots[self.index(ep)?].entry.as_ref()? {
            Entry::Remote { node, port, rank, .. } => Some((*node, *port, *rank)),
            Entry::Local(_) => None,
        }
    }

    /// Whether remote handle `ep` names an endpoint connected to a channel.
    pub fn remote_in_channel(&self, ep: Ep) -> bool {
        let Some(i) = self.index(ep) else { return false };
        matches!(self.slots[i].entry, Some(Entry::Remote { chan: true, .. }))
    }

    /// Note that remote endpoint (node, port) is, or is no longer, connected to a channel.
    pub fn set_remote_channel(&mut self, node: u32, port: u32, yes: bool) {
        let Some(&ep) = self.remotes.get(&(node, port)) else { return };
        let Some(i) = self.index(ep) else { return };
        if let Some(Entry::Remote { chan, .. }) = &mut self.slots[i].entry {
            *chan = yes;
        }
    }

    pub fn by_port(&self, port: u32) -> Option<Ep> {
        self.ports.get(&port).copied()
    }

    pub fn unpost(&mut self, ep: Ep, rid: ReqId) {
        if let Some(l) = self.local_mut(ep) {
            l.posted.retain(|r| *r != rid);
        }
    }

    /// Local endpoints' handles.
    pub fn locals(&self) -> Vec<Ep> {
        self.ports.values().copied().collect()
    }
}

impl Node {
    /// A handle's meaning, if it is one.
    pub fn endpoint_info(&self, ep: Ep) -> Option<EpInfo> {
        if let Some(l) = self.eps.local(ep) {
            let (connected, open) = l.chan.as_ref().map_or((false, false), |c| (c.connected(), c.is_open()));
            return Some(EpInfo::Local { port: l.port, attrs: l.attrs, connected, open });
        }
        self.eps.remote(ep).map(|(node, port, _)| EpInfo::Remote { node, port })
    }

    /// The timeout of blocking calls on a local endpoint (infinite for other handles).
    pub fn endpoint_timeout(&self, ep: Ep) -> u32 {
        self.local(ep).map_or(u32::MAX, |l| l.attrs.timeout)
    }

    /// `Some(scalar)` when a channel is connected or being opened on local endpoint `ep`.
    pub fn channel_kind(&self, ep: Ep) -> Option<bool> {
        self.local(ep)?.chan.as_ref().map(|c| c.scalar)
    }

    /// A local endpoint's attributes.
    pub fn endpoint_attrs(&self, ep: Ep) -> Option<EpAttrs> {
        self.local(ep).map(|l| l.attrs)
    }

    /// Set a local endpoint's attributes.
    pub fn set_attrs(&mut self, ep: Ep, attrs: EpAttrs) -> Result<(), Status> {
        let l = self.eps.local_mut(ep).ok_or(Status::ErrEndpInvalid)?;
        l.attrs = attrs;
        Ok(())
    }

    /// Create endpoint `port` (`None`: the next free port).
    pub fn create_endpoint(&mut self, port: Option<u32>) -> Result<Ep, Status> {
        if self.eps.locals >= self.eps.max_locals {
            return Err(Status::ErrPortInvalid);
        }
        let port = match port {
            Some(p) if self.eps.ports.contains_key(&p) => return Err(Status::ErrEndpExists),
            Some(p) => p,
            None => {
                while self.eps.ports.contains_key(&self.eps.next_any) {
                    self.eps.next_any = self.eps.next_any.wrapping_add(1).max(FIRST_ANY_PORT);
                }
                self.eps.next_any
            }
        };
        let attrs = EpAttrs { kind: 1, priority: 0, buffer: 0, memory: 0, max_payload: self.cfg.max_payload as u32, timeout: u32::MAX, recv_buffers: self.cfg.queue_limit as u32 };
        let queue = (0..=self.cfg.max_priority).map(|_| VecDeque::new()).collect();
        let l = LocalEp { port, queue, queued: 0, posted: VecDeque::new(), refusing: FastMap::default(), blocked: 0, attrs, chan: None, get_count: 0, get_source: None, getters: Vec::new() };
        let ep = self.eps.add(super::endpoints::Entry::Local(Box::new(l)));
        self.eps.ports.insert(port, ep);
        self.eps.locals += 1;
        let me = self.cfg.node;
        for rid in self.eps.local_gets.remove(&port).unwrap_or_default() {
            let st = self.count_get(ep, me);
            self.reqs.complete(rid, Done { status: st, size: 0, out: if st == Status::Success { Outcome::Handle(ep) } else { Outcome::Nothing } });
        }
        for (rank, cookie, node) in self.eps.queries.remove(&port).unwrap_or_default() {
            self.answer_query(rank, port, cookie, node);
        }
        Ok(ep)
    }

    /// Delete one of this node's endpoints. Its queued messages go; senders it refused hear
    /// that it is gone when they try again.
    pub fn delete_endpoint(&mut self, ep: Ep) -> Result<(), Status> {
        if self.eps.remote(ep).is_some() {
            return Err(Status::ErrEndpNotOwner);
        }
        let l = self.eps.local(ep).ok_or(Status::ErrEndpInvalid)?;
        if l.chan.as_ref().is_some_and(|c| c.connected()) {
            return Err(Status::ErrChanConnected);
        }
        if l.chan.as_ref().is_some_and(|c| c.is_open()) {
            return Err(Status::ErrChanOpen);
        }
        let idx = self.eps.index(ep).expect("checked above");
        let Some(Entry::Local(l)) = self.eps.slots[idx].entry.take() else { unreachable!("a local endpoint") };
        self.eps.free.push(idx as u32);
        self.eps.ports.remove(&l.port);
        self.eps.locals -= 1;
        for rid in l.posted {
            self.reqs.complete(rid, Done::status(Status::ErrEndpInvalid));
        }
        if let Some(rid) = l.chan.as_ref().and_then(|c| c.open_req) {
            self.reqs.complete(rid, Done::status(Status::ErrEndpDeleted));
        }
        let me = self.cfg.node;
        for rank in l.getters {
            let mut f = Frame::new(Kind::Deleted);
            (f.peer_port, f.peer_node) = (l.port, me);
            self.emit_frame(rank, f);
        }
        for (rank, r) in l.refusing {
            if r.blocked {
                let mut f = Frame::new(Kind::Resume);
                (f.peer_port, f.peer_node, f.peer_rank) = (l.port, me, r.expected);
                self.emit_frame(rank, f);
            }
        }
        Ok(())
    }

    /// Get endpoint `port` of `node`: at once when known, else a pending request that
    /// finishes when the endpoint exists.
    pub fn get_endpoint(&mut self, domain: u32, node: u32, port: u32, user: [usize; 3]) -> Result<ReqId, Status> {
        if domain != self.cfg.domain {
            return Err(Status::ErrDomainInvalid);
        }
        if node == self.cfg.node {
            if let Some(ep) = self.eps.by_port(port) {
                let st = self.count_get(ep, node);
                if st != Status::Success {
                    return Err(st);
                }
                return self.reqs.done_now(Done { status: Status::Success, size: 0, out: Outcome::Handle(ep) }, user);
            }
            let rid = self.reqs.start(Waits::Get, user)?;
            self.eps.local_gets.entry(port).or_default().push(rid);
            return Ok(rid);
        }
        match self.nodes.get(&node).copied().unwrap_or(Whereabouts::Unknown) {
            Whereabouts::Never => Err(Status::ErrNodeInvalid),
            Whereabouts::At(rank) => {
                let rid = self.reqs.start(Waits::Get, user)?;
                self.query(rid, node, port, rank);
                Ok(rid)
            }
            Whereabouts::Unknown => {
                let rid = self.reqs.start(Waits::Get, user)?;
                self.wanted.entry(node).or_default().push((rid, port));
                Ok(rid)
            }
        }
    }

    pub(super) fn query(&mut self, rid: ReqId, _node: u32, port: u32, rank: Rank) {
        if self.is_lost(rank) {
            self.reqs.complete(rid, Done::status(Status::ErrTransmission));
            return;
        }
        self.eps.asked.insert(rid, rank);
        let mut f = Frame::new(Kind::Query);
        (f.port, f.peer_node, f.seq) = (port, self.cfg.node, rid.0 as u64);
        self.emit_frame(rank, f);
    }

    pub(super) fn on_query(&mut self, from: Rank, f: Frame) {
        match self.eps.by_port(f.port) {
            Some(_) => self.answer_query(from, f.port, f.seq, f.peer_node),
            None => self.eps.queries.entry(f.port).or_default().push((from, f.seq, f.peer_node)),
        }
    }

    /// Count a get of local endpoint `ep` by `node`: a channel-type endpoint takes one.
    fn count_get(&mut self, ep: Ep, node: u32) -> Status {
        let l = self.local_mut(ep).expect("a local endpoint");
        if l.attrs.kind != 1 && l.get_count >= 1 {
            return Status::ErrEndpGetLimit;
        }
        l.get_count += 1;
        l.get_source = Some(node);
        Status::Success
    }

    fn answer_query(&mut self, rank: Rank, port: u32, cookie: u64, node: u32) {
        let Some(ep) = self.eps.by_port(port) else { return };
        let st = self.count_get(ep, node);
        let l = self.local_mut(ep).expect("a local endpoint");
        if st == Status::Success && !l.getters.contains(&rank) {
            l.getters.push(rank);
        }
        let mut a = Frame::new(Kind::Found);
        (a.peer_port, a.peer_node, a.seq, a.aux) = (port, self.cfg.node, cookie, (st != Status::Success) as u8);
        self.emit_frame(rank, a);
    }

    pub(super) fn on_found(&mut self, from: Rank, f: Frame) {
        let rid = ReqId(f.seq as u32);
        if self.eps.asked.get(&rid) != Some(&from) || self.reqs.waits(rid) != Some(Waits::Get) {
            self.eps.asked.remove(&rid);
            return; // a get that timed out and was cancelled
        }
        self.eps.asked.remove(&rid);
        if f.aux != 0 {
            return self.reqs.complete(rid, Done::status(Status::ErrEndpGetLimit));
        }
        let ep = self.remote_handle(f.peer_node, f.peer_port, from);
        self.reqs.complete(rid, Done { status: Status::Success, size: 0, out: Outcome::Handle(ep) });
    }

    /// A remote endpoint was connected to a channel, or its channel ended.
    pub(super) fn on_chan_state(&mut self, _from: Rank, f: Frame) {
        self.eps.set_remote_channel(f.peer_node, f.peer_port, f.aux == 1);
    }

    /// Tell the nodes that got local endpoint `ep` whether it is in a channel now.
    pub(super) fn announce_channel(&mut self, ep: Ep, yes: bool) {
        let Some(l) = self.local(ep) else { return };
        let (port, getters) = (l.port, l.getters.clone());
        let me = self.cfg.node;
        for rank in getters {
            let mut f = Frame::new(Kind::ChanState);
            (f.peer_port, f.peer_node, f.aux) = (port, me, yes as u8);
            self.emit_frame(rank, f);
        }
    }

    /// Whether handle `ep` (local or remote) is an endpoint of a channel.
    pub(super) fn in_channel(&self, ep: Ep) -> bool {
        match self.local(ep) {
            Some(l) => l.chan.as_ref().is_some_and(|c| c.connected() || c.open_req.is_some()),
            None => self.eps.remote_in_channel(ep),
        }
    }

    /// A remote endpoint was deleted: its handle goes.
    pub(super) fn on_deleted(&mut self, _from: Rank, f: Frame) {
        if let Some(ep) = self.eps.remotes.remove(&(f.peer_node, f.peer_port)) {
            if let Some(i) = self.eps.index(ep) {
                self.eps.slots[i].entry = None;
                self.eps.free.push(i as u32);
            }
        }
    }

    /// The handle of a remote endpoint, made on first use.
    pub(super) fn remote_handle(&mut self, node: u32, port: u32, rank: Rank) -> Ep {
        if let Some(&ep) = self.eps.remotes.get(&(node, port)) {
            return ep;
        }
        let ep = self.eps.add(Entry::Remote { node, port, rank, chan: false });
        self.eps.remotes.insert((node, port), ep);
        self.nodes.insert(node, Whereabouts::At(rank));
        ep
    }

    /// Where a handle's endpoint lives: (node, port, rank).
    pub(super) fn place(&self, ep: Ep) -> Option<(u32, u32, Rank)> {
        if let Some(l) = self.eps.local(ep) {
            return Some((self.cfg.node, l.port, self.cfg.rank));
        }
        self.eps.remote(ep)
    }

    /// Forget what waits on `rank`: its queries, and our gets it was asked.
    pub(super) fn remote_lost(&mut self, rank: Rank) {
        for v in self.eps.queries.values_mut() {
            v.retain(|(r, _, _)| *r != rank);
        }
        let failed: Vec<ReqId> = self.eps.asked.iter().filter(|(_, r)| **r == rank).map(|(id, _)| *id).collect();
        for rid in failed {
            self.eps.asked.remove(&rid);
            self.reqs.complete(rid, Done::status(Status::ErrTransmission));
        }
    }

    /// Delete every endpoint of this node, closing its channels first (finalize).
    pub fn delete_all(&mut self) {
        for ep in self.local_endpoints() {
            if self.local(ep).is_some_and(|l| l.chan.as_ref().is_some_and(|c| c.is_open())) {
                self.force_close(ep);
            }
            if let Some(l) = self.local_mut(ep) {
                l.chan = None;
            }
            let _ = self.delete_endpoint(ep);
        }
    }

    /// Handles of this node's endpoints (finalize deletes them).
    pub fn local_endpoints(&self) -> Vec<Ep> {
        self.eps.locals()
    }

    pub(super) fn local_mut(&mut self, ep: Ep) -> Option<&mut LocalEp> {
        self.eps.local_mut(ep)
    }

    pub(super) fn local(&self, ep: Ep) -> Option<&LocalEp> {
        self.eps.local(ep)
    }

    pub(super) fn ep_of_port(&self, port: u32) -> Option<Ep> {
        self.eps.by_port(port)
    }
}
