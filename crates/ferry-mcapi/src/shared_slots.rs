//! The memory of packet channels' shared receive slots (`core::slots`): one area of the host
//! per channel, made by the receiving node when its sender runs on the same host, mapped by
//! the sender, which removes its name at once. Areas are named after the host's job segment
//! (`Engine::host_area_name`), so the launcher's clean-up finds one a crash left behind.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use ferry_core::engine::{Engine, HostArea};

use crate::core::{Rank, SlotArea, SlotMemory};

/// Lives of a node in this process (`mcapi_initialize` after `mcapi_finalize` starts another).
static LIVES: AtomicU64 = AtomicU64::new(0);

/// Slot areas between the nodes that share this host's memory.
pub struct SharedSlots {
    /// The prefix of this job's areas on this host; `None`: no memory is shared here.
    prefix: Option<String>,
    me: Rank,
    /// By rank: whether it shares this host's memory.
    local: Vec<bool>,
    life: u64,
}

impl SharedSlots {
    pub fn new(engine: &Engine) -> SharedSlots {
        let local = (0..engine.size()).map(|r| engine.is_local_peer(r)).collect();
        SharedSlots { prefix: engine.host_area_name("mcapi"), me: engine.rank(), local, life: LIVES.fetch_add(1, Ordering::Relaxed) }
    }

    fn shares(&self, r: Rank) -> bool {
        r != self.me && self.local.get(r as usize).copied().unwrap_or(false)
    }

    fn name(&self, owner: Rank, key: u64) -> Option<String> {
        self.prefix.as_ref().map(|p| format!("{p}-{owner}-{key}"))
    }
}

/// A host area holds two buffers per "rank": slot `i` is buffer `i % 2` of rank `i / 2`, and
/// the buffers lie one after the other.
fn geometry(slots: usize, slot_bytes: usize) -> (usize, usize) {
    (slots.div_ceil(2), slot_bytes.max(64).next_multiple_of(64))
}

struct Area {
    area: HostArea,
    slot_bytes: usize,
    /// The maker's name of the area, removed when the maker lets go (if the sender never
    /// mapped it).
    name: Option<String>,
}

impl SlotArea for Area {
    fn addr(&self, i: usize) -> usize {
        self.area.slot(i / 2, i % 2) as usize
    }

    fn write(&self, i: usize, data: &[u8]) {
        let n = data.len().min(self.slot_bytes);
        // SAFETY: slot `i` of the live mapping holds `slot_bytes`; the channel's credits give
        // this slot to this writer alone until the receiver frees it again.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), self.area.slot(i / 2, i % 2), n) };
    }
}

impl Drop for Area {
    fn drop(&mut self) {
        if let Some(name) = &self.name {
            let _ = HostArea::unlink(name);
        }
    }
}

impl SlotMemory for SharedSlots {
    fn first_key(&self) -> u64 {
        self.life << 32
    }

    fn create(&mut self, writer: Rank, key: u64, slots: usize, slot_bytes: usize) -> Option<Arc<dyn SlotArea>> {
        if !self.shares(writer) {
            return None;
        }
        let name = self.name(self.me, key)?;
        let (ranks, bytes) = geometry(slots, slot_bytes);
        match HostArea::create(&name, ranks, 0, bytes) {
            Ok(area) => Some(Arc::new(Area { area, slot_bytes: bytes, name: Some(name) })),
            Err(e) => {
                ferry_core::warn!("mcapi", "no shared receive slots for a packet channel ({e}): its packets travel in frames");
                None
            }
        }
    }

    fn open(&mut self, owner: Rank, key: u64, slots: usize, slot_bytes: usize) -> Option<Arc<dyn SlotArea>> {
        if !self.shares(owner) {
            return None;
        }
        let name = self.name(owner, key)?;
        let (ranks, bytes) = geometry(slots, slot_bytes);
        let area = HostArea::open(&name, ranks, 0, bytes);
        let _ = HostArea::unlink(&name);
        match area {
            Ok(area) => Some(Arc::new(Area { area, slot_bytes: bytes, name: None })),
            Err(e) => {
                ferry_core::warn!("mcapi", "cannot map a packet channel's receive slots ({e}): its packets travel in frames");
                None
            }
        }
    }
}
