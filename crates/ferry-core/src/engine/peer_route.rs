//! A peer's route as the engine holds it: a shared-memory ring pair, which the hot paths
//! (a small send, a receive read in place, a batch of records) call directly so that the
//! compiler sees through to the protocol core, or any other route behind the `Route` trait.
//! Everything else reaches either through `Deref` to `dyn Route`.

use std::ops::{Deref, DerefMut};

use ferry_wire::{Header, Limits};

use crate::transport::shm::ShmRoute;
use crate::transport::{Deliver, RecvOutcome, Route, RouteError, SendOutcome};

pub(super) enum PeerRoute {
    Ring(ShmRoute),
    Other(Box<dyn Route>),
}

impl PeerRoute {
    /// [`Route::try_send_eager`].
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub fn try_send_eager(&mut self, from: u32, to: u32, context: u32, tag: i32, seq: u64, payload: &[u8]) -> Result<SendOutcome, RouteError> {
        match self {
            PeerRoute::Ring(r) => r.send_eager(from, to, context, tag, seq, payload),
            PeerRoute::Other(r) => r.try_send_eager(from, to, context, tag, seq, payload),
        }
    }

    /// [`Route::take_next`].
    #[inline(always)]
    pub fn take_next(&mut self, peer: u32, limits: &Limits, mut take: impl FnMut(&Header, &[u8]) -> bool) -> bool {
        match self {
            PeerRoute::Ring(r) => r.take_next_with(peer, limits, take),
            PeerRoute::Other(r) => r.take_next(peer, limits, &mut take),
        }
    }

    /// [`Route::recv`].
    #[inline(always)]
    pub fn recv<D: Deliver>(&mut self, peer: u32, to: &mut D, limits: &Limits) -> Result<RecvOutcome, RouteError> {
        match self {
            PeerRoute::Ring(r) => r.recv_into(peer, to, limits),
            PeerRoute::Other(r) => r.recv(peer, to, limits),
        }
    }
}

impl Deref for PeerRoute {
    type Target = dyn Route;

    fn deref(&self) -> &(dyn Route + 'static) {
        match self {
            PeerRoute::Ring(r) => r,
            PeerRoute::Other(r) => r.as_ref(),
        }
    }
}

impl DerefMut for PeerRoute {
    fn deref_mut(&mut self) -> &mut (dyn Route + 'static) {
        match self {
            PeerRoute::Ring(r) => r,
            PeerRoute::Other(r) => r.as_mut(),
        }
    }
}
