//! The MCAPI node, sans IO: endpoints, message queues, channels and requests of one node.
//! Calls and frames from other nodes go in; frames for other nodes (by engine rank) and
//! finished requests come out. No sockets, threads, clocks or logging: the driver
//! (`driver.rs`) moves frames between this core and the engine, and the C face turns calls
//! and results into MCAPI's.
//!
//! Messages are kept by their sender until the receiver took them (a cumulative `Ack`,
//! mostly carried by the receiver's own messages); a receiver whose endpoint queue is full
//! refuses (`Nack`), the sender holds that message and every later one for that endpoint,
//! and sends them again when the receiver says `Resume`. Epochs tell the receiver which
//! messages were sent before the sender heard the refusal, so that order is kept. Channels
//! are flow-controlled by credits: the receiver grants its free receive buffers when it
//! opens, and one more each time a packet is released or a scalar taken.

pub mod attributes;
mod channels;
mod close;
mod endpoints;
mod messages;
pub mod requests;
mod slots;
pub mod status;
#[cfg(test)]
mod tests;

use std::collections::VecDeque;

use ferry_core::fastmap::FastMap;
use std::sync::Arc;

use crate::wire::{Frame, Kind, WireError};
pub use attributes::EpAttrs;
pub use endpoints::EpInfo;
pub use messages::received;
pub use requests::{Done, Outcome, ReqId, Waits};
pub use slots::{SlotArea, SlotMemory};
pub use status::Status;

/// An engine rank: where a node runs.
pub type Rank = u32;

/// An endpoint or channel handle, as the C face hands it out (never 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ep(pub u32);

/// Limits and defaults of a node.
#[derive(Clone, Debug)]
pub struct Config {
    pub rank: Rank,
    pub domain: u32,
    pub node: u32,
    /// Largest message and packet.
    pub max_payload: usize,
    /// Lowest priority (0 is the most urgent).
    pub max_priority: u8,
    /// Messages an endpoint queues before it refuses more, and packets a channel buffers
    /// (`MCAPI_ENDP_ATTR_NUM_RECV_BUFFERS`).
    pub queue_limit: usize,
    /// Free receive slots a scalar channel grants.
    pub scalar_window: u32,
    /// Messages taken from a peer before an acknowledgement goes back on its own.
    pub ack_every: u64,
    /// Endpoints a node may create.
    pub max_endpoints: usize,
}

impl Config {
    pub fn new(rank: Rank, domain: u32, node: u32) -> Config {
        Config { rank, domain, node, max_payload: 1 << 20, max_priority: 10, queue_limit: 64, scalar_window: 1024, ack_every: 32, max_endpoints: 1024 }
    }
}

/// Bytes to send: owned, or shared with the copy a sender keeps until it is acknowledged.
#[derive(Debug, Clone)]
pub enum OutBytes {
    Owned(Vec<u8>),
    Shared(Arc<Vec<u8>>),
}

impl OutBytes {
    pub fn as_slice(&self) -> &[u8] {
        match self {
            OutBytes::Owned(v) => v,
            OutBytes::Shared(a) => a,
        }
    }
}

/// Where a node runs, as far as this node knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Whereabouts {
    At(Rank),
    /// Not (yet) known: the driver is asked to find it.
    Unknown,
    /// Not part of the job, and never will be.
    Never,
}

/// A message this node sent and keeps until the receiver took it.
struct Retained {
    seq: u64,
    /// The receiving endpoint's port.
    port: u32,
    bytes: Arc<Vec<u8>>,
    rid: Option<ReqId>,
}

/// What this node knows of another rank.
#[derive(Default)]
struct Peer {
    next_seq: u64,
    /// Messages sent and not yet acknowledged, by sequence number.
    unacked: VecDeque<Retained>,
    /// The last message taken (or refused) from the peer.
    taken: u64,
    /// The last acknowledgement sent to it.
    acked: u64,
    lost: bool,
}

/// A message this node holds back for a receiver whose endpoint is full.
struct Held {
    src_port: u32,
    prio: u8,
    payload: Vec<u8>,
    rid: Option<ReqId>,
}

/// The sender's view of one remote endpoint that refused: held messages and the epoch the
/// receiver expects.
#[derive(Default)]
struct Stop {
    epoch: u32,
    stopped: bool,
    held: VecDeque<Held>,
}

/// The addresses of the last `RELEASED` packet buffers given back, each with the number of its
/// release, so that forgetting the oldest never forgets a buffer released again since.
#[derive(Default)]
struct Released {
    by_addr: FastMap<usize, u64>,
    order: VecDeque<(usize, u64)>,
    count: u64,
}

const RELEASED: usize = 4096;

impl Released {
    fn add(&mut self, addr: usize) {
        self.count += 1;
        self.by_addr.insert(addr, self.count);
        self.order.push_back((addr, self.count));
        if self.order.len() > RELEASED {
            let (old, n) = self.order.pop_front().expect("not empty");
            if self.by_addr.get(&old) == Some(&n) {
                self.by_addr.remove(&old);
            }
        }
    }

    /// The buffer at `addr` is lent again.
    fn forget(&mut self, addr: usize) {
        self.by_addr.remove(&addr);
    }

    fn contains(&self, addr: usize) -> bool {
        self.by_addr.contains_key(&addr)
    }
}

/// One MCAPI node.
pub struct Node {
    cfg: Config,
    pub(crate) reqs: requests::Requests,
    eps: endpoints::Table,
    peers: FastMap<Rank, Peer>,
    stops: FastMap<(Rank, u32), Stop>,
    /// Where nodes run (filled by the driver).
    nodes: FastMap<u32, Whereabouts>,
    /// Nodes whose whereabouts the driver should find, and the requests waiting on them.
    wanted: FastMap<u32, Vec<(ReqId, u32)>>,
    out: VecDeque<(Rank, OutBytes)>,
    loopback: VecDeque<Vec<u8>>,
    /// Packets lent to the user, by the address of their bytes: the frame or slot, and the
    /// channel endpoint it came through.
    lent: FastMap<usize, (slots::Lent, Ep)>,
    /// Memory for the shared receive slots of packet channels (none: packets in frames).
    slot_memory: Option<Box<dyn SlotMemory>>,
    /// Slot areas this node made.
    slot_keys: u64,
    /// Frames refused (malformed): for the driver's log.
    refused: u64,
    /// Messages and packets dropped because their endpoint or channel was gone.
    gone: u64,
    pending: channels::Pending,
    /// Requests cancelled lately, newest last.
    cancelled: VecDeque<ReqId>,
    /// Packet buffers given back lately (`mcapi_pktchan_release_test`).
    released: Released,
    /// Attribute queries waiting for an answer, and the rank asked.
    attr_asked: FastMap<ReqId, Rank>,
    /// Channel endpoints that owe their sender credits.
    owing: Vec<Ep>,
    /// Frames of acknowledged messages, for the next ones (see `messages::keep_spare`).
    spare_frames: Vec<Arc<Vec<u8>>>,
}

impl Node {
    pub fn new(cfg: Config) -> Node {
        let mut nodes = FastMap::default();
        nodes.insert(cfg.node, Whereabouts::At(cfg.rank));
        Node { eps: endpoints::Table::new(cfg.max_endpoints), cfg, reqs: Default::default(), peers: FastMap::default(), stops: FastMap::default(), nodes, wanted: FastMap::default(), out: VecDeque::new(), loopback: VecDeque::new(), lent: FastMap::default(), refused: 0, gone: 0, pending: Default::default(), cancelled: VecDeque::new(), released: Released::default(), attr_asked: FastMap::default(), owing: Vec::new(), slot_memory: None, slot_keys: 0, spare_frames: Vec::new() }
    }

    pub fn config(&self) -> &Config {
        &self.cfg
    }

    // ----- output -------------------------------------------------------------------------

    fn emit(&mut self, rank: Rank, bytes: OutBytes) {
        if rank == self.cfg.rank {
            self.loopback.push_back(bytes.as_slice().to_vec());
        } else if self.peers.get(&rank).is_some_and(|p| p.lost) {
            // Nothing reaches a lost peer; the state waiting on it was failed when it was lost.
        } else {
            self.out.push_back((rank, bytes));
        }
    }

    fn emit_frame(&mut self, rank: Rank, f: Frame) {
        self.emit(rank, OutBytes::Owned(f.encode_with(&[])));
    }

    /// The next frame for another rank. Frames of this node to itself are delivered here.
    pub fn next_out(&mut self) -> Option<(Rank, OutBytes)> {
        while let Some(f) = self.loopback.pop_front() {
            let me = self.cfg.rank;
            // Our own frames are well formed.
            let _ = self.deliver(me, f);
        }
        self.out.pop_front()
    }

    pub fn has_out(&self) -> bool {
        !self.out.is_empty() || !self.loopback.is_empty()
    }

    /// Send every acknowledgement and credit still owed (before the node waits, or when
    /// the communication thread finds nothing else to do).
    pub fn flush_owed(&mut self) {
        if self.peers.values().any(|p| p.taken > p.acked && !p.lost) {
            let owed: Vec<Rank> = self.peers.iter().filter(|(_, p)| p.taken > p.acked && !p.lost).map(|(&r, _)| r).collect();
            for r in owed {
                self.send_ack(r);
            }
        }
        if !self.owing.is_empty() {
            self.flush_credits();
        }
    }

    /// Frames refused so far.
    pub fn refused(&self) -> u64 {
        self.refused
    }

    /// Messages and packets dropped so far because their endpoint or channel was gone.
    pub fn gone(&self) -> u64 {
        self.gone
    }

    // ----- whereabouts --------------------------------------------------------------------

    /// Whether some node is to be located.
    pub fn wants_nodes(&self) -> bool {
        !self.wanted.is_empty()
    }

    /// Nodes the driver should locate.
    pub fn wanted_nodes(&self) -> Vec<u32> {
        self.wanted.keys().copied().collect()
    }

    /// The driver found where `node` runs (or that it never will).
    pub fn located(&mut self, node: u32, w: Whereabouts) {
        if w == Whereabouts::Unknown {
            return;
        }
        self.nodes.insert(node, w);
        for (rid, port) in self.wanted.remove(&node).unwrap_or_default() {
            match w {
                Whereabouts::At(rank) => self.query(rid, node, port, rank),
                _ => self.reqs.complete(rid, Done::status(Status::ErrNodeInvalid)),
            }
        }
    }

    // ----- input --------------------------------------------------------------------------

    /// A frame from `from` (as the engine received it).
    pub fn deliver(&mut self, from: Rank, bytes: Vec<u8>) -> Result<(), WireError> {
        let (f, _) = match Frame::decode(&bytes, self.cfg.max_payload) {
            Ok(x) => x,
            Err(e) => {
                self.refused += 1;
                return Err(e);
            }
        };
        if f.kind == Kind::Msg {
            // Sequence numbers of messages from one peer follow each other.
            let p = self.peers.entry(from).or_default();
            if f.seq != p.taken + 1 {
                self.refused += 1;
                return Err(WireError::Sequence { expected: p.taken + 1, got: f.seq });
            }
            p.taken = f.seq;
        }
        if matches!(f.kind, Kind::Msg | Kind::Ack) {
            self.acknowledged(from, f.ack);
        }
        match f.kind {
            Kind::Msg => self.on_msg(from, f, bytes),
            Kind::Ack => {}
            Kind::Nack => self.on_nack(from, f),
            Kind::Resume => self.on_resume(from, f),
            Kind::Query => self.on_query(from, f),
            Kind::Found => self.on_found(from, f),
            Kind::Connect => self.on_connect(from, f),
            Kind::Connected => self.on_connected(from, f),
            Kind::Disconnect => self.on_disconnect(from, f),
            Kind::Open => self.on_open(from, f),
            Kind::Credit => self.on_credit(from, f),
            Kind::Packet => self.on_packet(from, f, bytes),
            Kind::SlotPacket => self.on_slot_packet(from, f),
            Kind::Scalar => self.on_scalar(from, f),
            Kind::Close => self.on_close(from, f),
            Kind::Blocked => self.on_blocked(from, f),
            Kind::AttrQuery => self.on_attr_query(from, f),
            Kind::Deleted => self.on_deleted(from, f),
            Kind::ChanState => self.on_chan_state(from, f),
            Kind::AttrReply => self.on_attr_reply(from, f, &bytes[crate::wire::HEADER_LEN..]),
        }
        Ok(())
    }

    /// `rank` is gone (its process died, or its connection broke): everything that needs it
    /// fails with `MCAPI_ERR_TRANSMISSION`.
    pub fn peer_lost(&mut self, rank: Rank) {
        let p = self.peers.entry(rank).or_default();
        if p.lost {
            return;
        }
        p.lost = true;
        let dropped: Vec<Retained> = p.unacked.drain(..).collect();
        for r in dropped {
            if let Some(rid) = r.rid {
                self.reqs.complete(rid, Done::status(Status::ErrTransmission));
            }
        }
        let stopped: Vec<(Rank, u32)> = self.stops.keys().filter(|k| k.0 == rank).copied().collect();
        for k in stopped {
            if let Some(s) = self.stops.remove(&k) {
                for h in s.held {
                    if let Some(rid) = h.rid {
                        self.reqs.complete(rid, Done::status(Status::ErrTransmission));
                    }
                }
            }
        }
        self.out.retain(|(r, _)| *r != rank);
        for (node, w) in self.nodes.iter_mut() {
            if *w == Whereabouts::At(rank) && *node != self.cfg.node {
                *w = Whereabouts::Never;
            }
        }
        self.remote_lost(rank);
        self.channels_lost(rank);
        let asked: Vec<ReqId> = self.attr_asked.iter().filter(|(_, r)| **r == rank).map(|(id, _)| *id).collect();
        for rid in asked {
            self.attr_asked.remove(&rid);
            self.reqs.complete(rid, Done::status(Status::ErrTransmission));
        }
    }

    /// Ranks this node waits on: messages not yet taken, or channels and gets open to them.
    pub fn ranks_waited_on(&self) -> Vec<Rank> {
        let mut v: Vec<Rank> = self.peers.iter().filter(|(_, p)| !p.unacked.is_empty() && !p.lost).map(|(&r, _)| r).collect();
        v.extend(self.stops.iter().filter(|(_, s)| !s.held.is_empty()).map(|(k, _)| k.0));
        v.sort_unstable();
        v.dedup();
        v
    }

    pub fn is_lost(&self, rank: Rank) -> bool {
        self.peers.get(&rank).is_some_and(|p| p.lost)
    }

    /// Messages this node still keeps for receivers (sent and not taken, or held back).
    pub fn unsettled(&self) -> usize {
        self.peers.values().map(|p| p.unacked.len()).sum::<usize>() + self.stops.values().map(|s| s.held.len()).sum::<usize>()
    }

    // ----- requests -----------------------------------------------------------------------

    pub fn is_done(&self, rid: ReqId) -> bool {
        self.reqs.is_done(rid)
    }

    pub fn request_valid(&self, rid: ReqId) -> bool {
        self.reqs.is_valid(rid)
    }

    /// Take a finished request's result (and free it).
    pub fn take(&mut self, rid: ReqId) -> Option<Done> {
        self.reqs.take(rid)
    }

    /// A finished request's result, leaving the request in place (`mcapi_test`).
    pub fn peek(&self, rid: ReqId) -> Option<&Done> {
        self.reqs.peek(rid)
    }

    pub fn user_words(&self, rid: ReqId) -> Option<[usize; 3]> {
        self.reqs.user(rid)
    }

    /// Cancel a request and release it. A pending operation is withdrawn where it can be (a
    /// receive, a get, an open, a send still held here); a send that left is delivered whole,
    /// a connect or close goes on. Of a finished request only the request goes.
    pub fn cancel(&mut self, rid: ReqId) -> Result<(), Status> {
        if !self.reqs.is_valid(rid) {
            return Err(Status::ErrRequestInvalid);
        }
        let Some(waits) = self.reqs.waits(rid) else {
            self.reqs.release(rid);
            return Ok(());
        };
        match waits {
            Waits::MsgRecv { ep, .. } => self.eps.unpost(ep, rid),
            Waits::PktRecv { ep } => self.unpost_packet(ep, rid),
            Waits::Get => {
                for v in self.wanted.values_mut() {
                    v.retain(|(r, _)| *r != rid);
                }
            }
            Waits::Open { ep } => self.cancel_open(ep, rid),
            Waits::MsgSend => {
                if !self.unhold(rid) {
                    self.forget_send(rid);
                }
            }
            Waits::ChanSend { ep } => {
                self.unhold_chan(ep, rid);
            }
            Waits::Connect => {
                if let Some(c) = self.pending.connects.get_mut(&rid) {
                    c.detached = true;
                }
            }
            Waits::Attrs => {
                self.attr_asked.remove(&rid);
            }
            Waits::Close { ep } => {
                if let Some(c) = self.local_mut(ep).and_then(|l| l.chan.as_mut()) {
                    c.close_req = None;
                }
            }
        }
        self.reqs.release(rid);
        self.cancelled.push_back(rid);
        if self.cancelled.len() > 1024 {
            self.cancelled.pop_front();
        }
        Ok(())
    }

    /// Whether `rid` was cancelled lately (a wait in another thread reports so).
    pub fn was_cancelled(&self, rid: ReqId) -> bool {
        self.cancelled.contains(&rid)
    }

    /// A send that left goes on without its request.
    fn forget_send(&mut self, rid: ReqId) {
        for p in self.peers.values_mut() {
            for r in p.unacked.iter_mut() {
                if r.rid == Some(rid) {
                    r.rid = None;
                }
            }
        }
    }
}
