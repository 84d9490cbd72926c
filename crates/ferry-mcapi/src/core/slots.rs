//! Shared receive slots of packet channels (XMCAPI's receive path). When the sender of a
//! packet channel can write the receiver's memory (one host), the receive side keeps its
//! window of buffers as slots of the largest packet size in an area both map: the sender
//! copies a packet once, straight into a free slot, and sends only a `SlotPacket` naming it;
//! the receiver lends that slot to the user until `mcapi_pktchan_release`, and its `Credit`
//! says which slots are free again. Credits, order, close and a lost peer work as for packets
//! that travel in frames (which a channel may still carry: packets held while the window was
//! full, or every packet when no area could be shared). The memory itself is the driver's
//! business ([`SlotMemory`]); this core numbers slots and keeps their state.

use std::sync::Arc;

use super::channels::Chan;
use super::{Ep, Node, Rank};
use crate::wire::{Frame, Kind, MAX_SLOTS};

/// A channel's slots, in memory its two ends share.
pub trait SlotArea: Send + Sync {
    /// The address of slot `i`, valid while the area lives.
    fn addr(&self, i: usize) -> usize;
    /// Copy `data` (at most the slot's size) into slot `i`.
    fn write(&self, i: usize, data: &[u8]);
}

/// Makes and maps slot areas: the driver's shared memory of the host, plain memory in tests.
pub trait SlotMemory: Send {
    /// An area of `slots` slots of `slot_bytes` for a channel whose sender runs at `writer`,
    /// numbered `key` among this node's; `None` when `writer` cannot map this node's memory
    /// (or the memory cannot be had).
    fn create(&mut self, writer: Rank, key: u64, slots: usize, slot_bytes: usize) -> Option<Arc<dyn SlotArea>>;
    /// The area `key` that the receiver at `owner` made, if this node can map it.
    fn open(&mut self, owner: Rank, key: u64, slots: usize, slot_bytes: usize) -> Option<Arc<dyn SlotArea>>;
    /// Where this node's keys start: a node that initialises again in the same process must
    /// not name an area as its former life did (a late sender of that life could map it).
    fn first_key(&self) -> u64 {
        0
    }
}

/// The most memory one channel's slots may take (a window of 64 packets of 1 MiB, the
/// defaults: what the receiver would hold in frames with its window full).
pub const SLOT_BUDGET: usize = 64 << 20;

/// One channel end's view of its slots.
pub(super) struct Slots {
    pub area: Arc<dyn SlotArea>,
    pub count: usize,
    pub bytes: usize,
    /// Send side: slots free to write. Receive side: slots holding a packet, queued or lent.
    pub used: u64,
    /// Receive side: slots freed since the last credit.
    pub freed: u64,
}

fn all(count: usize) -> u64 {
    if count >= 64 {
        u64::MAX
    } else {
        (1u64 << count) - 1
    }
}

/// A packet waiting on the receive side: in the frame it came in, or in a slot.
pub(super) enum Pkt {
    Frame(Vec<u8>),
    Slot { idx: usize, len: usize },
}

/// A packet lent to the user; a slot keeps its area mapped until released.
pub(super) enum Lent {
    Frame(#[allow(dead_code)] Vec<u8>),
    Slot { area: Arc<dyn SlotArea>, idx: usize },
}

fn same_area(a: &Arc<dyn SlotArea>, b: &Arc<dyn SlotArea>) -> bool {
    Arc::as_ptr(a) as *const u8 == Arc::as_ptr(b) as *const u8
}

impl Node {
    /// Give this node the memory of shared slots (without it, packets travel in frames).
    pub fn set_slot_memory(&mut self, memory: Box<dyn SlotMemory>) {
        self.slot_keys = memory.first_key();
        self.slot_memory = Some(memory);
    }

    /// Receive side, at open: slots for a window of `count` packets of `bytes` written by
    /// `writer`, and the key that names them; `None`: the packets come in frames.
    pub(super) fn make_slots(&mut self, writer: Rank, count: usize, bytes: usize) -> Option<(u64, Slots)> {
        if count > MAX_SLOTS || count.checked_mul(bytes.max(1))? > SLOT_BUDGET {
            return None;
        }
        let key = self.slot_keys + 1;
        let area = self.slot_memory.as_mut()?.create(writer, key, count, bytes)?;
        self.slot_keys = key;
        Some((key, Slots { area, count, bytes, used: 0, freed: 0 }))
    }

    /// Send side: the receiver at `owner` opened with `count` slots of `bytes` in its area
    /// `key` (0: none); map them if this node can, else send in frames.
    pub(super) fn attach_slots(&mut self, ep: Ep, owner: Rank, key: u64, count: usize, bytes: usize) {
        if key == 0 || count == 0 || count > MAX_SLOTS || bytes > self.cfg.max_payload.max(64).next_multiple_of(64) {
            return;
        }
        let Some(area) = self.slot_memory.as_mut().and_then(|m| m.open(owner, key, count, bytes)) else { return };
        if let Some(c) = self.local_mut(ep).and_then(|l| l.chan.as_mut()) {
            c.slots = Some(Slots { area, count, bytes, used: all(count), freed: 0 });
        }
    }

    /// Send side: write `data` into a free slot and announce it, if the channel has slots,
    /// a credit and nothing held before it. `false`: send it in a frame.
    pub(super) fn slot_send(&mut self, h: Ep, data: &[u8]) -> bool {
        let Some(c) = self.local_mut(h).and_then(|l| l.chan.as_mut()) else { return false };
        if c.credits == 0 || !c.held.is_empty() {
            return false;
        }
        if !self.write_slot(h, data) {
            return false;
        }
        let c = self.local_mut(h).and_then(|l| l.chan.as_mut()).expect("checked above");
        c.credits -= 1;
        true
    }

    /// Send side: a packet frame held while the window was full, whose credit has come, goes
    /// into a free slot instead. `false`: send the frame.
    pub(super) fn held_into_slot(&mut self, h: Ep, frame: &[u8]) -> bool {
        match Frame::decode(frame, usize::MAX) {
            Ok((f, payload)) if f.kind == Kind::Packet => self.write_slot(h, payload),
            _ => false,
        }
    }

    /// Copy `data` into a free slot of `h`'s channel and send the `SlotPacket` naming it
    /// (the caller accounts for the credit). `false`: no slot, or it does not fit.
    fn write_slot(&mut self, h: Ep, data: &[u8]) -> bool {
        let Some(l) = self.local_mut(h) else { return false };
        let port = l.port;
        let Some(c) = l.chan.as_mut() else { return false };
        let Some((_, pport, rank)) = c.peer else { return false };
        let Some(s) = c.slots.as_mut() else { return false };
        let idx = s.used.trailing_zeros() as usize;
        if idx >= s.count || data.len() > s.bytes {
            return false;
        }
        s.used &= !(1u64 << idx);
        s.area.write(idx, data);
        let mut f = Frame::new(Kind::SlotPacket);
        (f.port, f.peer_port, f.seq, f.ack) = (pport, port, idx as u64, data.len() as u64);
        self.emit_frame(rank, f);
        true
    }

    /// Receive side: the sender says it wrote slot `f.seq`. A slot this channel does not
    /// have, or one still holding a packet, is refused.
    pub(super) fn on_slot_packet(&mut self, from: Rank, f: Frame) {
        let Some(ep) = self.chan_from(from, &f) else {
            self.gone += 1;
            return;
        };
        let c = self.local_mut(ep).and_then(|l| l.chan.as_mut()).expect("a channel");
        if c.sender || c.scalar {
            return;
        }
        let (idx, len) = (f.seq as usize, f.ack as usize);
        let ok = c.slots.as_mut().is_some_and(|s| {
            let fits = idx < s.count && len <= s.bytes && s.used & (1u64 << idx) == 0;
            if fits {
                s.used |= 1u64 << idx;
            }
            fits
        });
        if !ok {
            self.refused += 1;
            return;
        }
        self.packet_arrived(ep, Pkt::Slot { idx, len });
    }

    /// Lend a packet of channel `ep` to the user: the address and length of its bytes.
    pub(super) fn lend(&mut self, pkt: Pkt, ep: Ep) -> (usize, usize) {
        let (addr, len, lent) = match pkt {
            Pkt::Frame(bytes) => {
                let addr = bytes.as_ptr() as usize + crate::wire::HEADER_LEN;
                (addr, bytes.len() - crate::wire::HEADER_LEN, Lent::Frame(bytes))
            }
            Pkt::Slot { idx, len } => {
                let area = self.chan_slots(ep).map(|s| s.area.clone()).expect("a slot packet's channel has slots");
                (area.addr(idx), len, Lent::Slot { area, idx })
            }
        };
        self.released.forget(addr);
        self.lent.insert(addr, (lent, ep));
        (addr, len)
    }

    fn chan_slots(&self, ep: Ep) -> Option<&Slots> {
        self.local(ep)?.chan.as_ref()?.slots.as_ref()
    }

    /// A lent packet came back: its slot is free again if it is one of the channel's own.
    pub(super) fn slot_released(c: &mut Chan, lent: &Lent) {
        if let (Lent::Slot { area, idx }, Some(s)) = (lent, c.slots.as_mut()) {
            if same_area(area, &s.area) {
                s.used &= !(1u64 << idx);
                s.freed |= 1u64 << idx;
            }
        }
    }

    /// Send side: slots the receiver freed (the bits of its credit).
    pub(super) fn slots_freed(c: &mut Chan, bits: u64) {
        if let Some(s) = c.slots.as_mut() {
            s.used |= bits & all(s.count);
        }
    }
}
