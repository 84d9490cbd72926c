//! Bridges: the processes of another job that became peers at run time (MPI's dynamic
//! processes: accept/connect, spawn). A bridge has an id (nonzero, chosen at random by the
//! side that accepted) and a secret of its own, which both jobs learnt when they met; its
//! peers are numbered after this job's ranks, while on the wire and in the handshake each
//! process keeps its rank in its own job (the *wire rank*).
//!
//! Pure bookkeeping: which local peer number is which (bridge, wire rank), with which secret
//! a connection authenticates, and how simultaneous connects are ordered.

/// One bridge as this process sees it.
#[derive(Clone, Debug)]
struct Bridge {
    id: u32,
    secret: Vec<u8>,
    /// This side wins simultaneous connects (the accepting side); both sides agree.
    high: bool,
    /// Local peer number of the bridge's first peer; its peers are numbered consecutively.
    first: u32,
    /// The wire rank of each peer, in local order.
    wire: Vec<u32>,
}

/// Why a bridge cannot be added.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BridgeError {
    #[error("bridge id 0 is reserved for the own job")]
    ReservedId,
    #[error("bridge {0:#010x} exists already")]
    Duplicate(u32),
    #[error("a bridge secret may not be empty")]
    EmptySecret,
    #[error("the same wire rank {0} appears twice in one bridge")]
    RepeatedRank(u32),
}

/// The bridges of one process, over local peer numbers `job_size..`.
#[derive(Clone, Debug, Default)]
pub struct Bridges {
    list: Vec<Bridge>,
}

impl Bridges {
    /// Add bridge `id` whose peers (their wire ranks, in order) get the local numbers from
    /// `first` on. `high`: whether this side is the one that accepted.
    pub fn add(&mut self, id: u32, secret: Vec<u8>, high: bool, first: u32, wire: Vec<u32>) -> Result<(), BridgeError> {
        if id == 0 {
            return Err(BridgeError::ReservedId);
        }
        if secret.is_empty() {
            return Err(BridgeError::EmptySecret);
        }
        if self.list.iter().any(|b| b.id == id) {
            return Err(BridgeError::Duplicate(id));
        }
        let mut sorted = wire.clone();
        sorted.sort_unstable();
        if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
            return Err(BridgeError::RepeatedRank(w[0]));
        }
        self.list.push(Bridge { id, secret, high, first, wire });
        Ok(())
    }

    fn of_peer(&self, peer: u32) -> Option<&Bridge> {
        self.list.iter().find(|b| peer >= b.first && ((peer - b.first) as usize) < b.wire.len())
    }

    /// (bridge id, wire rank) of local peer `peer`, when it came through a bridge.
    pub fn wire_of(&self, peer: u32) -> Option<(u32, u32)> {
        self.of_peer(peer).map(|b| (b.id, b.wire[(peer - b.first) as usize]))
    }

    /// The local numbers of bridge `id`'s peers.
    pub fn peers(&self, id: u32) -> Option<std::ops::Range<u32>> {
        self.list.iter().find(|b| b.id == id).map(|b| b.first..b.first + b.wire.len() as u32)
    }

    /// Whether this side accepted the bridge of local peer `peer`, when it came through one.
    pub fn accepted(&self, peer: u32) -> Option<bool> {
        self.of_peer(peer).map(|b| b.high)
    }

    /// The local number of the process with wire rank `wire` on bridge `id`.
    pub fn local_of(&self, id: u32, wire: u32) -> Option<u32> {
        let b = self.list.iter().find(|b| b.id == id)?;
        b.wire.iter().position(|&w| w == wire).map(|i| b.first + i as u32)
    }

    /// The secret of bridge `id`.
    pub fn secret(&self, id: u32) -> Option<&[u8]> {
        self.list.iter().find(|b| b.id == id).map(|b| b.secret.as_slice())
    }

    /// The order of this process (wire rank `me`) and of local peer `peer` for simultaneous
    /// connects, the same seen from both ends: (side, rank) across a bridge, the ranks within
    /// the job.
    pub fn order(&self, me: u32, peer: u32) -> (u64, u64) {
        match self.of_peer(peer) {
            Some(b) => {
                let side = |high: bool| (high as u64) << 32;
                (side(b.high) | me as u64, side(!b.high) | b.wire[(peer - b.first) as usize] as u64)
            }
            None => (me as u64, peer as u64),
        }
    }

    /// Forget bridge `id` (its peers are disconnected); their local numbers are not reused.
    pub fn remove(&mut self, id: u32) {
        self.list.retain(|b| b.id != id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peers_are_numbered_after_the_job_and_found_both_ways() {
        let mut b = Bridges::default();
        b.add(9, b"s".to_vec(), true, 4, vec![0, 1, 2]).unwrap();
        b.add(11, b"t".to_vec(), false, 7, vec![3, 0]).unwrap();
        assert_eq!(b.wire_of(3), None);
        assert_eq!(b.wire_of(4), Some((9, 0)));
        assert_eq!(b.wire_of(6), Some((9, 2)));
        assert_eq!(b.wire_of(7), Some((11, 3)));
        assert_eq!(b.wire_of(8), Some((11, 0)));
        assert_eq!(b.wire_of(9), None);
        assert_eq!((b.accepted(5), b.accepted(8), b.accepted(3)), (Some(true), Some(false), None));
        assert_eq!(b.local_of(11, 0), Some(8));
        assert_eq!(b.local_of(11, 1), None);
        assert_eq!(b.local_of(12, 0), None);
        assert_eq!(b.secret(9), Some(&b"s"[..]));
        assert_eq!(b.secret(10), None);
        assert_eq!((b.peers(9), b.peers(11), b.peers(1)), (Some(4..7), Some(7..9), None));
        b.remove(9);
        assert_eq!(b.wire_of(4), None);
        assert_eq!(b.local_of(11, 3), Some(7));
    }

    #[test]
    fn bad_bridges_are_refused() {
        let mut b = Bridges::default();
        assert_eq!(b.add(0, b"s".to_vec(), true, 1, vec![0]), Err(BridgeError::ReservedId));
        assert_eq!(b.add(1, Vec::new(), true, 1, vec![0]), Err(BridgeError::EmptySecret));
        assert_eq!(b.add(1, b"s".to_vec(), true, 1, vec![0, 2, 0]), Err(BridgeError::RepeatedRank(0)));
        b.add(1, b"s".to_vec(), true, 1, vec![0]).unwrap();
        assert_eq!(b.add(1, b"s".to_vec(), true, 2, vec![0]), Err(BridgeError::Duplicate(1)));
    }

    #[test]
    fn both_ends_order_a_pair_alike() {
        // Job A (2 ranks) accepted; job B (1 rank) connected. A's rank 1 sees B's rank 0 as
        // its peer 2; B's rank 0 sees A's ranks as its peers 1 and 2.
        let mut a = Bridges::default();
        a.add(5, b"k".to_vec(), true, 2, vec![0]).unwrap();
        let mut bb = Bridges::default();
        bb.add(5, b"k".to_vec(), false, 1, vec![0, 1]).unwrap();
        let (a_me, a_peer) = a.order(1, 2);
        let (b_me, b_peer) = bb.order(0, 2);
        assert_eq!((a_me, a_peer), (b_peer, b_me));
        assert!(a_me > a_peer, "the accepting side wins");
        // Within the job: the ranks.
        assert_eq!(a.order(1, 0), (1, 0));
    }
}
