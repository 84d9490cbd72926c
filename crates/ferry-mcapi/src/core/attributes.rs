//! Endpoint attributes: what each number means, which may be written and with what values,
//! and the values of an endpoint as one snapshot (also sent to other nodes that read a
//! remote endpoint's attributes).

use super::requests::{Done, Outcome, ReqId, Waits};
use super::{Ep, Node, Rank, Status};
use crate::wire::{Frame, Kind};

/// Attribute numbers of `mcapi.h`.
pub mod num {
    pub const TYPE: u32 = 0;
    pub const GET_COUNT: u32 = 1;
    pub const GET_SOURCE: u32 = 2;
    pub const MAX_PAYLOAD_SIZE: u32 = 3;
    pub const BUFFER_TYPE: u32 = 4;
    pub const MEMORY_TYPE: u32 = 5;
    pub const NUM_PRIORITIES: u32 = 6;
    pub const PRIORITY: u32 = 7;
    pub const NUM_SEND_BUFFERS: u32 = 8;
    pub const NUM_RECV_BUFFERS: u32 = 9;
    pub const ENDP_STATUS: u32 = 10;
    pub const TIMEOUT: u32 = 11;
    pub const END: u32 = 12;
}

/// Endpoint status flags of `MCAPI_ENDP_ATTR_ENDP_STATUS`.
pub mod flag {
    pub const CONNECTED: u32 = 0x1;
    pub const OPEN: u32 = 0x2;
    pub const OPEN_PENDING: u32 = 0x4;
    pub const CLOSE_PENDING: u32 = 0x8;
    pub const PKTCHAN: u32 = 0x20;
    pub const SCLCHAN: u32 = 0x40;
    pub const SEND: u32 = 0x80;
    pub const RECEIVE: u32 = 0x100;
}

/// The attributes an endpoint's owner may write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EpAttrs {
    /// 1 messages, 2 packet channel, 4 scalar channel.
    pub kind: u32,
    pub priority: u32,
    pub buffer: u32,
    pub memory: u32,
    pub max_payload: u32,
    /// Default timeout of blocking calls on it.
    pub timeout: u32,
    /// Messages queued, or packets buffered, before the sender must wait.
    pub recv_buffers: u32,
}

impl EpAttrs {
    /// The attributes two endpoints must share to be connected, packed for a `Connected`
    /// answer: (priority, buffer, memory packed in one word; maximum payload).
    pub fn compat(&self) -> (u32, u64) {
        (self.priority | self.buffer << 8 | (self.memory & 0xffff) << 16, self.max_payload as u64)
    }
}

/// Every attribute of one endpoint, as 13 words: type, get count, get source (domain,
/// node), maximum payload, buffer type, memory type, priorities, priority, send buffers,
/// receive buffers, status, timeout.
pub type Snapshot = [u32; 13];

/// Where attribute `n` lies in a snapshot, in words.
fn span(n: u32) -> (usize, usize) {
    match n {
        num::TYPE | num::GET_COUNT => (n as usize, 1),
        num::GET_SOURCE => (2, 2),
        _ => (n as usize + 1, 1),
    }
}

/// The bytes of attribute `n` of a snapshot, if the caller's `size` fits it.
pub fn read(s: &Snapshot, n: u32, size: usize) -> Result<Vec<u8>, Status> {
    if n >= num::END {
        return Err(Status::ErrAttrNum);
    }
    let (at, words) = span(n);
    if size != 4 * words {
        return Err(Status::ErrAttrSize);
    }
    Ok(s[at..at + words].iter().flat_map(|w| w.to_ne_bytes()).collect())
}

/// Check a write of attribute `n` with `size` bytes holding `v`: the attributes it gives.
pub fn write(a: EpAttrs, n: u32, size: usize, v: u32, max_payload: usize, max_priority: u32) -> Result<EpAttrs, Status> {
    if n >= num::END {
        return Err(Status::ErrAttrNum);
    }
    if matches!(n, num::GET_COUNT | num::GET_SOURCE | num::NUM_PRIORITIES | num::NUM_SEND_BUFFERS | num::NUM_RECV_BUFFERS | num::ENDP_STATUS) {
        return Err(Status::ErrAttrReadOnly);
    }
    if size != 4 {
        return Err(Status::ErrAttrSize);
    }
    let bad = Err(Status::ErrAttrValue);
    Ok(match n {
        num::TYPE if matches!(v, 1 | 2 | 4) => EpAttrs { kind: v, ..a },
        num::PRIORITY if v <= max_priority => EpAttrs { priority: v, ..a },
        num::BUFFER_TYPE if v == 0 => EpAttrs { buffer: v, ..a },
        num::MEMORY_TYPE => {
            let (locality, behaviour) = (v & 0xffff, v >> 16);
            if locality > 2 || behaviour > 1 {
                return bad;
            }
            if locality != 0 || behaviour != 0 {
                return Err(Status::ErrAttrNotSupported);
            }
            EpAttrs { memory: v, ..a }
        }
        num::MAX_PAYLOAD_SIZE if (1..=max_payload as i64).contains(&(v as i32 as i64)) => EpAttrs { max_payload: v, ..a },
        num::TIMEOUT => EpAttrs { timeout: v, ..a },
        _ => return bad,
    })
}

impl Node {
    /// Every attribute of local endpoint `ep`.
    pub fn snapshot(&self, ep: Ep) -> Option<Snapshot> {
        let l = self.local(ep)?;
        let a = l.attrs;
        let mut status = 0;
        let mut kind = a.kind;
        let mut send_buffers = 0;
        if let Some(c) = &l.chan {
            kind = if c.scalar { 4 } else { 2 };
            status |= if c.scalar { flag::SCLCHAN } else { flag::PKTCHAN };
            status |= if c.sender { flag::SEND } else { flag::RECEIVE };
            if c.connected() {
                status |= flag::CONNECTED;
            }
            if c.open {
                status |= flag::OPEN;
            }
            if c.open_req.is_some() {
                status |= flag::OPEN_PENDING;
            }
            if c.closing {
                status |= flag::CLOSE_PENDING;
            }
            send_buffers = c.credits;
        }
        let (sd, sn) = match l.get_source {
            Some(n) => (self.cfg.domain, n),
            None => (u32::MAX, u32::MAX),
        };
        Some([kind, l.get_count, sd, sn, a.max_payload, a.buffer, a.memory, self.cfg.max_priority as u32 + 1, a.priority, send_buffers, a.recv_buffers, status, a.timeout])
    }

    /// Write attribute `n` of local endpoint `ep`.
    pub fn set_attr(&mut self, ep: Ep, n: u32, size: usize, v: u32) -> Result<(), Status> {
        let (max_payload, max_priority) = (self.cfg.max_payload, self.cfg.max_priority as u32);
        if self.local(ep).is_none() {
            if n < num::END && !matches!(n, num::GET_COUNT | num::GET_SOURCE | num::NUM_PRIORITIES | num::NUM_SEND_BUFFERS | num::NUM_RECV_BUFFERS | num::ENDP_STATUS) && self.place(ep).is_some() {
                return Err(Status::ErrEndpRemote);
            }
            if self.place(ep).is_none() {
                return Err(Status::ErrEndpInvalid);
            }
        }
        let l = self.local_mut(ep);
        let connected = l.as_ref().is_some_and(|l| l.chan.as_ref().is_some_and(|c| c.connected()));
        let a = match l {
            Some(l) => l.attrs,
            None => return write(EpAttrs { kind: 1, priority: 0, buffer: 0, memory: 0, max_payload: 0, timeout: 0, recv_buffers: 0 }, n, size, v, max_payload, max_priority).map(|_| ()),
        };
        let new = write(a, n, size, v, max_payload, max_priority)?;
        if connected {
            return Err(Status::ErrChanConnected);
        }
        self.local_mut(ep).expect("checked above").attrs = new;
        Ok(())
    }
}

impl Node {
    /// Ask the node of remote endpoint `ep` for its attributes.
    pub fn attr_query(&mut self, ep: Ep) -> Result<ReqId, Status> {
        let (_, port, rank) = self.place(ep).ok_or(Status::ErrEndpInvalid)?;
        if self.is_lost(rank) {
            return Err(Status::ErrTransmission);
        }
        let rid = self.reqs.start(Waits::Attrs, [0; 3])?;
        let mut f = Frame::new(Kind::AttrQuery);
        (f.port, f.seq) = (port, rid.0 as u64);
        self.attr_asked.insert(rid, rank);
        self.emit_frame(rank, f);
        Ok(rid)
    }

    pub(super) fn on_attr_query(&mut self, from: Rank, f: Frame) {
        let mut a = Frame::new(Kind::AttrReply);
        a.seq = f.seq;
        let snap = self.ep_of_port(f.port).and_then(|ep| self.snapshot(ep));
        let payload: Vec<u8> = match snap {
            Some(s) => s.iter().flat_map(|w| w.to_le_bytes()).collect(),
            None => {
                a.aux = 1;
                Vec::new()
            }
        };
        self.emit(from, super::OutBytes::Owned(a.encode_with(&payload)));
    }

    pub(super) fn on_attr_reply(&mut self, from: Rank, f: Frame, bytes: &[u8]) {
        let rid = ReqId(f.seq as u32);
        if self.attr_asked.get(&rid) != Some(&from) {
            return;
        }
        self.attr_asked.remove(&rid);
        if f.aux == 1 {
            return self.reqs.complete(rid, Done::status(Status::ErrEndpInvalid));
        }
        let mut s: Snapshot = [0; 13];
        for (i, w) in bytes.chunks_exact(4).enumerate().take(13) {
            s[i] = u32::from_le_bytes(w.try_into().expect("4 bytes"));
        }
        self.reqs.complete(rid, Done { status: Status::Success, size: 0, out: Outcome::Attrs(s) });
    }
}
