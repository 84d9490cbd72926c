//! Peers of another job, joined at run time (MPI's dynamic processes): the face learns their
//! business cards and a bridge secret when the two jobs meet (a port, a spawn) and hands
//! them here; they become peers numbered after every peer known so far, reached over TCP
//! (`transport::tcp::bridge`, `transport::renumber`), and leave again with a goodbye on both
//! sides ([`Engine::disconnect_bridge`]).

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::ops::Range;

use super::{Engine, EngineError};
use crate::transport::business_card::BusinessCard;
use crate::transport::tcp::BridgeError;

/// What this process knows of another job it has met.
#[derive(Clone, Debug)]
pub struct BridgeSpec {
    /// Nonzero, the same in both jobs (chosen by the side that accepted).
    pub id: u32,
    /// The secret both jobs prove on every connection across the bridge.
    pub secret: Vec<u8>,
    /// Whether this side accepted (the two sides must differ).
    pub accepted: bool,
    /// The other job's processes: each one's rank in its own job, and its business card.
    pub peers: Vec<(u32, BusinessCard)>,
}

impl Engine {
    /// Make the processes of `spec` peers of this engine; returns their numbers here, which
    /// follow every peer known so far. Nothing is dialled until something is sent.
    pub fn add_bridge(&mut self, spec: BridgeSpec) -> Result<Range<u32>, BridgeError> {
        let addrs: Vec<SocketAddr> = spec.peers.iter().map(|(_, c)| c.addr).collect();
        let wire = spec.peers.iter().map(|(w, _)| *w).collect();
        let first = self.connector.add_bridge(spec.id, spec.secret, spec.accepted, wire, &addrs)?;
        debug_assert_eq!(first as usize, self.routes.len(), "the connector and the engine number peers alike");
        let n = spec.peers.len() as u32;
        self.proto.add_peers(n, self.eager_limit);
        for (_, card) in spec.peers {
            self.cards.push(card);
            self.routes.push(None);
            self.waiting.push(VecDeque::new());
        }
        crate::debug!("engine", "bridge {:#010x}: peers {first}..{} joined", spec.id, first + n);
        Ok(first..first + n)
    }

    /// The business card of `peer`.
    pub fn card(&self, peer: u32) -> &BusinessCard {
        &self.cards[peer as usize]
    }

    /// Peers known to this engine, itself, its job's ranks and bridged ones included.
    pub fn peer_count(&self) -> u32 {
        self.routes.len() as u32
    }

    /// (bridge id, rank in its own job) of `peer`, when it joined through a bridge.
    pub fn bridge_of(&self, peer: u32) -> Option<(u32, u32)> {
        self.connector.bridges().wire_of(peer)
    }

    /// Whether this side accepted the bridge `peer` joined through (`None`: a peer of this
    /// job). Both sides of a bridge see the same answer the other way round, so it orders
    /// the two groups alike in both jobs (world ranks cannot: each job numbers its own first).
    pub fn bridge_accepted(&self, peer: u32) -> Option<bool> {
        self.connector.bridges().accepted(peer)
    }

    /// The peers of bridge `id` while it is open (`None` once left, or never joined).
    pub fn bridge_peers(&self, id: u32) -> Option<Range<u32>> {
        self.connector.bridges().peers(id)
    }

    /// Leave bridge `id`, whose peers are `peers`: say goodbye to those this process is
    /// connected to, write what is queued for them, wait for their goodbyes, then close.
    /// Both sides call it (MPI_Comm_disconnect is collective), after their communication
    /// across the bridge has completed. Their numbers are not given out again.
    pub fn disconnect_bridge(&mut self, id: u32, peers: Range<u32>) -> Result<(), EngineError> {
        let linked: Vec<u32> = peers.filter(|&p| !self.proto.is_lost(p) && (self.routes[p as usize].is_some() || self.connector.is_connecting(p))).collect();
        for &p in &linked {
            self.proto.bye(p);
        }
        self.pump();
        self.wait_until(|e| {
            linked.iter().all(|&p| {
                let i = p as usize;
                e.proto.is_lost(p) || (e.proto.said_bye(p) && e.waiting[i].is_empty() && e.routes[i].as_ref().is_none_or(|r| r.queued() == 0))
            })
        })?;
        for &p in &linked {
            self.peer_left(p);
        }
        self.connector.remove_bridge(id);
        Ok(())
    }
}
