//! How a rank opens (or leaves to its peer) each of its TCP connections when a job spans
//! private clusters: straight to the peer, through a relay on the peer's front node, or not
//! at all because the peer opens it (`transport::paths::reach`). On one network every peer
//! is [`Dial::Direct`] and connections are made on first use, as before.

use std::net::SocketAddr;

/// How this rank reaches one peer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Dial {
    /// Connect to the peer's own address when it is first needed.
    Direct,
    /// Connect to the relay at this address, which opens the second leg to the peer.
    Relay(SocketAddr),
    /// The peer opens the connection; frames for it wait until it has.
    Await,
    /// The peer needs a relay and none serves its cluster: the connection cannot be made.
    Unreachable(String),
}

/// What a rank proves to a relay: the job it belongs to and the key derived from the job's
/// secret for relays (which never learn the secret itself).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RelayCredentials {
    pub job: [u8; 16],
    pub key: [u8; 32],
}

/// The plan for every peer of a job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DialPlan {
    /// Per peer (this rank's own entry is unused).
    pub dial: Vec<Dial>,
    /// Peers to connect to as soon as the engine starts: those that cannot reach this rank.
    pub eager: Vec<u32>,
    pub relay: Option<RelayCredentials>,
}

impl DialPlan {
    /// Every peer reachable on first use: one network.
    pub fn direct(size: u32) -> DialPlan {
        DialPlan { dial: vec![Dial::Direct; size as usize], eager: Vec::new(), relay: None }
    }
}
