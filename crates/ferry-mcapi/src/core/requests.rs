//! Requests: every call that may not finish at once gets one. A handle is a slot index and a
//! generation, so a handle that was freed and reused is told apart from the new request.

use super::status::Status;
use super::Ep;

/// A request handle (never 0, so that zeroed storage is never a live request).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ReqId(pub u32);

/// Slots are numbered in the low bits of a handle, generations in the high ones.
const SLOT_BITS: u32 = 16;
/// Requests alive at once (`MCAPI_ERR_REQUEST_LIMIT` beyond).
pub const MAX_REQUESTS: usize = 1024;

/// What a completed request hands back.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    Nothing,
    /// A received message: the whole frame, payload from `offset`, of which the receive
    /// buffer takes what fits (the size says how much).
    Data { frame: Vec<u8>, offset: usize },
    /// An endpoint (endpoint_get_i) or a channel handle (open).
    Handle(Ep),
    /// A packet lent to the user: address and length of its bytes (pktchan_recv_i).
    Packet { addr: usize, len: usize },
    /// The attributes of a remote endpoint.
    Attrs(super::attributes::Snapshot),
}

/// A finished request.
#[derive(Debug, PartialEq, Eq)]
pub struct Done {
    pub status: Status,
    pub size: usize,
    pub out: Outcome,
}

impl Done {
    pub fn status(status: Status) -> Done {
        Done { status, size: 0, out: Outcome::Nothing }
    }
}

/// What a pending request waits for (the core's own bookkeeping refers to it by handle).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waits {
    /// A message send held back by a full receiver, or not yet acknowledged.
    MsgSend,
    /// A message receive posted on an endpoint, with the caller's buffer size.
    MsgRecv { ep: Ep, cap: usize },
    /// An endpoint that does not exist yet.
    Get,
    /// Replies to a connect: how many are missing.
    Connect,
    /// A channel open.
    Open { ep: Ep },
    /// A packet or scalar held back until the receiver has room.
    ChanSend { ep: Ep },
    /// A packet receive posted on a channel.
    PktRecv { ep: Ep },
    /// A send side close waiting for its packets to leave.
    Close { ep: Ep },
    /// The attributes of a remote endpoint, asked of its node.
    Attrs,
}

struct Slot {
    generation: u16,
    state: Option<State>,
}

enum State {
    Pending { waits: Waits, user: [usize; 3] },
    Done { done: Done, user: [usize; 3] },
}

/// The requests of a node.
#[derive(Default)]
pub struct Requests {
    slots: Vec<Slot>,
    free: Vec<u32>,
    live: usize,
}

impl Requests {
    /// A new pending request; `user` holds two words the caller wants back with the result
    /// (the C face keeps its output pointers there).
    pub fn start(&mut self, waits: Waits, user: [usize; 3]) -> Result<ReqId, Status> {
        let idx = match self.free.pop() {
            Some(i) => i,
            None if self.slots.len() < MAX_REQUESTS => {
                self.slots.push(Slot { generation: 0, state: None });
                self.slots.len() as u32 - 1
            }
            None => return Err(Status::ErrRequestLimit),
        };
        let slot = &mut self.slots[idx as usize];
        slot.generation = slot.generation.wrapping_add(1).max(1);
        slot.state = Some(State::Pending { waits, user });
        self.live += 1;
        Ok(ReqId((slot.generation as u32) << SLOT_BITS | (idx + 1)))
    }

    /// A request that is finished from the start.
    pub fn done_now(&mut self, done: Done, user: [usize; 3]) -> Result<ReqId, Status> {
        let rid = self.start(Waits::Get, user)?;
        self.complete(rid, done);
        Ok(rid)
    }

    fn slot(&self, rid: ReqId) -> Option<&Slot> {
        let idx = (rid.0 & ((1 << SLOT_BITS) - 1)).checked_sub(1)?;
        let s = self.slots.get(idx as usize)?;
        (s.state.is_some() && s.generation as u32 == rid.0 >> SLOT_BITS).then_some(s)
    }

    fn slot_mut(&mut self, rid: ReqId) -> Option<&mut Slot> {
        let idx = (rid.0 & ((1 << SLOT_BITS) - 1)).checked_sub(1)?;
        let s = self.slots.get_mut(idx as usize)?;
        (s.state.is_some() && s.generation as u32 == rid.0 >> SLOT_BITS).then_some(s)
    }

    pub fn is_valid(&self, rid: ReqId) -> bool {
        self.slot(rid).is_some()
    }

    /// What `rid` waits for, while it is pending.
    pub fn waits(&self, rid: ReqId) -> Option<Waits> {
        match self.slot(rid)?.state.as_ref()? {
            State::Pending { waits, .. } => Some(*waits),
            State::Done { .. } => None,
        }
    }

    pub fn is_done(&self, rid: ReqId) -> bool {
        matches!(self.slot(rid).and_then(|s| s.state.as_ref()), Some(State::Done { .. }))
    }

    pub fn user(&self, rid: ReqId) -> Option<[usize; 3]> {
        match self.slot(rid)?.state.as_ref()? {
            State::Pending { user, .. } | State::Done { user, .. } => Some(*user),
        }
    }

    /// Finish a pending request (a request already finished or gone is left alone).
    pub fn complete(&mut self, rid: ReqId, done: Done) {
        if let Some(s) = self.slot_mut(rid) {
            if let Some(State::Pending { user, .. }) = s.state {
                s.state = Some(State::Done { done, user });
            }
        }
    }

    /// The result of a finished request, left in place.
    pub fn peek(&self, rid: ReqId) -> Option<&Done> {
        match self.slot(rid)?.state.as_ref()? {
            State::Done { done, .. } => Some(done),
            State::Pending { .. } => None,
        }
    }

    /// Free a request, finished or not.
    pub fn release(&mut self, rid: ReqId) {
        if let Some(s) = self.slot_mut(rid) {
            s.state = None;
            self.free.push((rid.0 & ((1 << SLOT_BITS) - 1)) - 1);
            self.live -= 1;
        }
    }

    /// Take the result of a finished request and free it.
    pub fn take(&mut self, rid: ReqId) -> Option<Done> {
        let s = self.slot_mut(rid)?;
        if !matches!(s.state, Some(State::Done { .. })) {
            return None;
        }
        let Some(State::Done { done, .. }) = s.state.take() else { unreachable!("checked above") };
        self.free.push((rid.0 & ((1 << SLOT_BITS) - 1)) - 1);
        self.live -= 1;
        Some(done)
    }

    /// Pending requests.
    pub fn pending(&self) -> impl Iterator<Item = (ReqId, Waits)> + '_ {
        self.slots.iter().enumerate().filter_map(|(i, s)| match &s.state {
            Some(State::Pending { waits, .. }) => Some((ReqId((s.generation as u32) << SLOT_BITS | (i as u32 + 1)), *waits)),
            _ => None,
        })
    }

    pub fn live(&self) -> usize {
        self.live
    }
}
