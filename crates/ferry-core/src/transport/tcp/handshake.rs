//! Connection handshake, sans-IO: before a peer may deliver a message it proves that it holds
//! the job's secret, and so does the side it talks to (mutual HMAC-SHA256 challenge).
//!
//! ```text
//! initiator (rank i)                          acceptor (rank a)
//!   Hello     src=i dst=a  nonce_i       ->
//!                                        <-   Challenge  nonce_a, mac_a = H(K, "acc"|i|a|nonce_i|nonce_a)
//!   Auth      mac_i = H(K, "ini"|i|a|nonce_a|nonce_i) ->
//!                                        <-   Accept | Reject(reason)
//! ```
//! The acceptor decides Accept or Reject only after the proof, so a simultaneous connect
//! between two ranks is resolved the same way on both sides: the connection initiated by the
//! higher rank survives (see [`Decision`]). Nonces come from the caller, so tests are
//! deterministic.
//!
//! Between two jobs joined at run time (a *bridge*, see `bridge.rs`) the Hello carries the
//! bridge's id in its `context` field (0: the own job), the acceptor proves and checks with
//! the bridge's secret instead of the job's, the ranks are each side's rank in its own job,
//! and the id is bound into both proofs.

use ferry_wire::{Header, Kind};
use hmac::{Hmac, Mac};
use sha2::Sha256;

pub const NONCE_LEN: usize = 32;
pub const MAC_LEN: usize = 32;

type HmacSha256 = Hmac<Sha256>;

/// Why a handshake failed. Every variant means: drop the connection and log it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HandshakeError {
    UnexpectedFrame { expected: &'static str, got: Kind },
    BadLength { kind: Kind, len: u64 },
    WrongDestination { dst: u32, me: u32 },
    SelfConnection,
    BadProof,
    Rejected(RejectReason),
}

impl std::fmt::Display for HandshakeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HandshakeError::UnexpectedFrame { expected, got } => write!(f, "expected {expected}, got a {got:?} frame"),
            HandshakeError::BadLength { kind, len } => write!(f, "{kind:?} frame with a payload of {len} bytes"),
            HandshakeError::WrongDestination { dst, me } => write!(f, "hello addressed to rank {dst}, this is rank {me}"),
            HandshakeError::SelfConnection => write!(f, "peer claims to be this rank"),
            HandshakeError::BadProof => write!(f, "wrong job secret (HMAC proof does not verify)"),
            HandshakeError::Rejected(r) => write!(f, "peer refused the connection: {r:?}"),
        }
    }
}

/// Why an acceptor refuses an authenticated peer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RejectReason {
    /// Both sides connected at once and this side's connection (higher rank) wins.
    RaceLost = 1,
    /// A connection to this peer is already established.
    Duplicate = 2,
    /// The proof did not verify.
    BadProof = 3,
}

impl RejectReason {
    fn from_u8(v: u8) -> RejectReason {
        match v {
            1 => RejectReason::RaceLost,
            2 => RejectReason::Duplicate,
            _ => RejectReason::BadProof,
        }
    }
}

/// What the acceptor does with a peer that has proven membership.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Accept,
    Reject(RejectReason),
}

/// Resolve a connection attempt from `peer` at rank `me`: a connection to an already
/// connected peer is a duplicate; when `me` is itself connecting to `peer`, the connection
/// initiated by the higher rank wins.
pub fn decide(me: u32, peer: u32, have_established: bool, me_connecting: bool) -> Decision {
    decide_by_order(me as u64, peer as u64, have_established, me_connecting)
}

/// [`decide`] between processes that are ordered by `me` and `peer` (the same order seen
/// from both sides): the connection initiated by the greater wins. Across a bridge the
/// order is (side of the bridge, rank), as `bridge.rs` gives it.
pub fn decide_by_order(me: u64, peer: u64, have_established: bool, me_connecting: bool) -> Decision {
    if have_established {
        Decision::Reject(RejectReason::Duplicate)
    } else if me_connecting && me > peer {
        Decision::Reject(RejectReason::RaceLost)
    } else {
        Decision::Accept
    }
}

/// A frame to put on the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Out {
    pub header: Header,
    pub payload: Vec<u8>,
}

fn frame(kind: Kind, src: u32, dst: u32, payload: Vec<u8>) -> Out {
    let mut header = Header::new(kind);
    header.src = src;
    header.dst = dst;
    header.len = payload.len() as u64;
    Out { header, payload }
}

fn mac(secret: &[u8], label: &[u8], bridge: u32, i: u32, a: u32, n1: &[u8], n2: &[u8]) -> HmacSha256 {
    let mut m = HmacSha256::new_from_slice(secret).expect("HMAC accepts keys of any length");
    m.update(label);
    // Within a job (bridge 0) the proof is as it always was.
    if bridge != 0 {
        m.update(&bridge.to_le_bytes());
    }
    m.update(&i.to_le_bytes());
    m.update(&a.to_le_bytes());
    m.update(n1);
    m.update(n2);
    m
}

fn expect(kind: Kind, h: &Header, payload: &[u8], len: usize, name: &'static str) -> Result<(), HandshakeError> {
    if h.kind == Kind::Reject {
        return Err(HandshakeError::Rejected(RejectReason::BadProof));
    }
    if h.kind != kind {
        return Err(HandshakeError::UnexpectedFrame { expected: name, got: h.kind });
    }
    if h.len != len as u64 || payload.len() != len {
        return Err(HandshakeError::BadLength { kind: h.kind, len: h.len });
    }
    Ok(())
}

/// The initiating side.
#[derive(Debug)]
pub struct Initiator {
    me: u32,
    peer: u32,
    bridge: u32,
    nonce: [u8; NONCE_LEN],
    state: InitState,
}

#[derive(Debug, PartialEq, Eq)]
enum InitState {
    AwaitChallenge,
    AwaitVerdict,
    Done,
}

impl Initiator {
    /// Start a handshake; send the returned Hello first.
    pub fn start(me: u32, peer: u32, nonce: [u8; NONCE_LEN]) -> (Initiator, Out) {
        Initiator::start_bridged(me, peer, 0, nonce)
    }

    /// [`start`](Self::start) across bridge `bridge` (0: within the job): `me` and `peer`
    /// are each side's rank in its own job.
    pub fn start_bridged(me: u32, peer: u32, bridge: u32, nonce: [u8; NONCE_LEN]) -> (Initiator, Out) {
        let mut hello = frame(Kind::Hello, me, peer, nonce.to_vec());
        hello.header.context = bridge;
        (Initiator { me, peer, bridge, nonce, state: InitState::AwaitChallenge }, hello)
    }

    /// Feed the next frame from the acceptor. `Ok(Some(out))`: send it; `Ok(None)` after the
    /// Accept: the connection is established.
    pub fn on_frame(&mut self, secret: &[u8], h: &Header, payload: &[u8]) -> Result<Option<Out>, HandshakeError> {
        match self.state {
            InitState::AwaitChallenge => {
                expect(Kind::Challenge, h, payload, NONCE_LEN + MAC_LEN, "Challenge")?;
                let (nonce_a, mac_a) = payload.split_at(NONCE_LEN);
                mac(secret, b"acc", self.bridge, self.me, self.peer, &self.nonce, nonce_a)
                    .verify_slice(mac_a)
                    .map_err(|_| HandshakeError::BadProof)?;
                let proof = mac(secret, b"ini", self.bridge, self.me, self.peer, nonce_a, &self.nonce).finalize().into_bytes();
                self.state = InitState::AwaitVerdict;
                Ok(Some(frame(Kind::Auth, self.me, self.peer, proof.to_vec())))
            }
            InitState::AwaitVerdict => {
                if h.kind == Kind::Reject && h.len == 1 && payload.len() == 1 {
                    return Err(HandshakeError::Rejected(RejectReason::from_u8(payload[0])));
                }
                expect(Kind::Accept, h, payload, 0, "Accept")?;
                self.state = InitState::Done;
                Ok(None)
            }
            InitState::Done => Err(HandshakeError::UnexpectedFrame { expected: "data", got: h.kind }),
        }
    }

    pub fn peer(&self) -> u32 {
        self.peer
    }
}

/// The accepting side.
#[derive(Debug)]
pub struct Acceptor {
    me: u32,
    nonce: [u8; NONCE_LEN],
    state: AccState,
}

#[derive(Debug, PartialEq, Eq)]
enum AccState {
    AwaitHello,
    AwaitAuth { peer: u32, bridge: u32, nonce_i: [u8; NONCE_LEN] },
    Done,
}

/// What the acceptor wants done after a frame.
#[derive(Debug, PartialEq, Eq)]
pub enum AcceptorStep {
    /// Send this frame and wait for the next.
    Send(Out),
    /// The peer has proven membership (of this job when `bridge` is 0, else of the bridge);
    /// the caller decides ([`decide`]) and calls [`Acceptor::verdict`].
    Authenticated { peer: u32, bridge: u32 },
}

impl Acceptor {
    pub fn new(me: u32, nonce: [u8; NONCE_LEN]) -> Acceptor {
        Acceptor { me, nonce, state: AccState::AwaitHello }
    }

    /// `secret`: the job's, or for a Hello whose `context` names a bridge (see
    /// [`bridge`](Self::bridge)), that bridge's.
    pub fn on_frame(&mut self, secret: &[u8], h: &Header, payload: &[u8]) -> Result<AcceptorStep, HandshakeError> {
        match &self.state {
            AccState::AwaitHello => {
                expect(Kind::Hello, h, payload, NONCE_LEN, "Hello")?;
                if h.dst != self.me {
                    return Err(HandshakeError::WrongDestination { dst: h.dst, me: self.me });
                }
                let bridge = h.context;
                // Across a bridge the same rank number is another process.
                if h.src == self.me && bridge == 0 {
                    return Err(HandshakeError::SelfConnection);
                }
                let mut nonce_i = [0u8; NONCE_LEN];
                nonce_i.copy_from_slice(payload);
                let proof = mac(secret, b"acc", bridge, h.src, self.me, &nonce_i, &self.nonce).finalize().into_bytes();
                let mut p = self.nonce.to_vec();
                p.extend_from_slice(&proof);
                self.state = AccState::AwaitAuth { peer: h.src, bridge, nonce_i };
                Ok(AcceptorStep::Send(frame(Kind::Challenge, self.me, h.src, p)))
            }
            AccState::AwaitAuth { peer, bridge, nonce_i } => {
                expect(Kind::Auth, h, payload, MAC_LEN, "Auth")?;
                if h.src != *peer {
                    return Err(HandshakeError::UnexpectedFrame { expected: "Auth from the same rank", got: h.kind });
                }
                mac(secret, b"ini", *bridge, *peer, self.me, &self.nonce, nonce_i)
                    .verify_slice(payload)
                    .map_err(|_| HandshakeError::BadProof)?;
                let (peer, bridge) = (*peer, *bridge);
                self.state = AccState::Done;
                Ok(AcceptorStep::Authenticated { peer, bridge })
            }
            AccState::Done => Err(HandshakeError::UnexpectedFrame { expected: "data", got: h.kind }),
        }
    }

    /// Whether no valid Hello has arrived yet (the peer has not even named itself).
    pub fn awaiting_hello(&self) -> bool {
        self.state == AccState::AwaitHello
    }

    /// The bridge the peer's Hello named (0: this job), once it has arrived.
    pub fn bridge(&self) -> Option<u32> {
        match self.state {
            AccState::AwaitAuth { bridge, .. } => Some(bridge),
            _ => None,
        }
    }

    /// The frame that carries the caller's decision.
    pub fn verdict(&self, peer: u32, d: Decision) -> Out {
        match d {
            Decision::Accept => frame(Kind::Accept, self.me, peer, Vec::new()),
            Decision::Reject(r) => frame(Kind::Reject, self.me, peer, vec![r as u8]),
        }
    }

    /// A refusal for a peer whose proof failed, when the peer's rank is known to be valid.
    pub fn refusal(&self, peer: u32) -> Out {
        frame(Kind::Reject, self.me, peer, vec![RejectReason::BadProof as u8])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const K: &[u8] = b"job secret";

    fn run(init_secret: &[u8], acc_secret: &[u8]) -> Result<(), HandshakeError> {
        let (mut i, hello) = Initiator::start(3, 1, [7; 32]);
        let mut a = Acceptor::new(1, [9; 32]);
        let ch = match a.on_frame(acc_secret, &hello.header, &hello.payload)? {
            AcceptorStep::Send(o) => o,
            s => panic!("unexpected {s:?}"),
        };
        let auth = i.on_frame(init_secret, &ch.header, &ch.payload)?.expect("auth frame");
        match a.on_frame(acc_secret, &auth.header, &auth.payload)? {
            AcceptorStep::Authenticated { peer, bridge } => assert_eq!((peer, bridge), (3, 0)),
            s => panic!("unexpected {s:?}"),
        }
        let v = a.verdict(3, decide(1, 3, false, false));
        assert_eq!(i.on_frame(init_secret, &v.header, &v.payload)?, None);
        Ok(())
    }

    #[test]
    fn same_secret_connects() {
        run(K, K).unwrap();
    }

    #[test]
    fn wrong_secret_is_caught_by_both_sides() {
        // The initiator detects a fake acceptor at the challenge.
        assert_eq!(run(b"other", K), Err(HandshakeError::BadProof));
        // The acceptor detects a fake initiator who ignores the challenge's proof.
        let (_, hello) = Initiator::start(3, 1, [7; 32]);
        let mut a = Acceptor::new(1, [9; 32]);
        a.on_frame(K, &hello.header, &hello.payload).unwrap();
        let mut h = Header::new(Kind::Auth);
        h.src = 3;
        h.dst = 1;
        h.len = 32;
        assert_eq!(a.on_frame(K, &h, &[0u8; 32]), Err(HandshakeError::BadProof));
    }

    #[test]
    fn replayed_auth_from_another_session_fails() {
        // Proofs bind both nonces: an Auth recorded in one session fails in another.
        let (mut i, hello) = Initiator::start(3, 1, [7; 32]);
        let mut a1 = Acceptor::new(1, [9; 32]);
        let AcceptorStep::Send(ch) = a1.on_frame(K, &hello.header, &hello.payload).unwrap() else { panic!() };
        let auth = i.on_frame(K, &ch.header, &ch.payload).unwrap().unwrap();
        let mut a2 = Acceptor::new(1, [10; 32]);
        a2.on_frame(K, &hello.header, &hello.payload).unwrap();
        assert_eq!(a2.on_frame(K, &auth.header, &auth.payload), Err(HandshakeError::BadProof));
    }

    #[test]
    fn protocol_violations() {
        let mut a = Acceptor::new(1, [9; 32]);
        let mut h = Header::new(Kind::Eager);
        h.src = 0;
        h.dst = 1;
        assert!(matches!(a.on_frame(K, &h, &[]), Err(HandshakeError::UnexpectedFrame { .. })));
        let (_, mut hello) = Initiator::start(1, 1, [7; 32]);
        assert_eq!(Acceptor::new(1, [0; 32]).on_frame(K, &hello.header, &hello.payload), Err(HandshakeError::SelfConnection));
        hello.header.dst = 2;
        assert!(matches!(Acceptor::new(1, [0; 32]).on_frame(K, &hello.header, &hello.payload), Err(HandshakeError::WrongDestination { .. })));
        let mut short = Header::new(Kind::Hello);
        short.dst = 1;
        short.len = 3;
        assert!(matches!(Acceptor::new(1, [0; 32]).on_frame(K, &short, &[0; 3]), Err(HandshakeError::BadLength { .. })));
    }

    #[test]
    fn payload_shorter_than_its_header_is_refused() {
        let (_, hello) = Initiator::start(3, 1, [7; 32]);
        let mut a = Acceptor::new(1, [9; 32]);
        assert!(a.awaiting_hello());
        assert!(matches!(a.on_frame(K, &hello.header, &hello.payload[..5]), Err(HandshakeError::BadLength { .. })));
        assert!(a.awaiting_hello());
    }

    #[test]
    fn races_resolve_the_same_way_on_both_sides() {
        for (lo, hi) in [(0u32, 1u32), (2, 5)] {
            // Both connecting: the higher rank's connection is the one accepted.
            assert_eq!(decide(lo, hi, false, true), Decision::Accept);
            assert_eq!(decide(hi, lo, false, true), Decision::Reject(RejectReason::RaceLost));
            // Only one connecting: accepted.
            assert_eq!(decide(hi, lo, false, false), Decision::Accept);
            assert_eq!(decide(lo, hi, true, false), Decision::Reject(RejectReason::Duplicate));
        }
    }

    #[test]
    fn rejection_reaches_the_initiator() {
        let (mut i, hello) = Initiator::start(0, 1, [7; 32]);
        let mut a = Acceptor::new(1, [9; 32]);
        let AcceptorStep::Send(ch) = a.on_frame(K, &hello.header, &hello.payload).unwrap() else { panic!() };
        let auth = i.on_frame(K, &ch.header, &ch.payload).unwrap().unwrap();
        a.on_frame(K, &auth.header, &auth.payload).unwrap();
        let v = a.verdict(0, decide(1, 0, false, true));
        assert_eq!(i.on_frame(K, &v.header, &v.payload), Err(HandshakeError::Rejected(RejectReason::RaceLost)));
    }

    #[test]
    fn a_bridge_needs_its_own_secret_and_may_repeat_rank_numbers() {
        const B: &[u8] = b"bridge secret";
        // Rank 0 of one job reaches rank 0 of another: not a self-connection across a bridge.
        let (mut i, hello) = Initiator::start_bridged(0, 0, 77, [7; 32]);
        assert_eq!(hello.header.context, 77);
        let mut a = Acceptor::new(0, [9; 32]);
        let AcceptorStep::Send(ch) = a.on_frame(B, &hello.header, &hello.payload).unwrap() else { panic!() };
        assert_eq!(a.bridge(), Some(77));
        let auth = i.on_frame(B, &ch.header, &ch.payload).unwrap().unwrap();
        assert_eq!(a.on_frame(B, &auth.header, &auth.payload), Ok(AcceptorStep::Authenticated { peer: 0, bridge: 77 }));
        // The job's secret does not open a bridge.
        let (mut i, hello) = Initiator::start_bridged(2, 0, 77, [7; 32]);
        let mut a = Acceptor::new(0, [9; 32]);
        let AcceptorStep::Send(ch) = a.on_frame(K, &hello.header, &hello.payload).unwrap() else { panic!() };
        assert_eq!(i.on_frame(B, &ch.header, &ch.payload), Err(HandshakeError::BadProof));
    }

    #[test]
    fn a_proof_for_one_bridge_does_not_pass_for_another() {
        const B: &[u8] = b"bridge secret";
        let (mut i, hello) = Initiator::start_bridged(1, 0, 5, [7; 32]);
        let mut a = Acceptor::new(0, [9; 32]);
        let AcceptorStep::Send(ch) = a.on_frame(B, &hello.header, &hello.payload).unwrap() else { panic!() };
        let auth = i.on_frame(B, &ch.header, &ch.payload).unwrap().unwrap();
        // The same secret under another bridge id (the Hello rewritten on the way).
        let mut forged = hello.header;
        forged.context = 6;
        let mut a2 = Acceptor::new(0, [9; 32]);
        a2.on_frame(B, &forged, &hello.payload).unwrap();
        assert_eq!(a2.on_frame(B, &auth.header, &auth.payload), Err(HandshakeError::BadProof));
        assert!(a.on_frame(B, &auth.header, &auth.payload).is_ok());
    }

    #[test]
    fn ordered_races_follow_the_order() {
        let hi = (1u64 << 32) | 0;
        let lo = 3u64;
        assert_eq!(decide_by_order(lo, hi, false, true), Decision::Accept);
        assert_eq!(decide_by_order(hi, lo, false, true), Decision::Reject(RejectReason::RaceLost));
    }
}
