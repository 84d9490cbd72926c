//! What two jobs say when they meet through a port (MPI's accept/connect), sans-IO: the port
//! name, and the messages the two roots trade once the connecting one has proven it holds the
//! port's secret (`port.rs` drives them over a socket).
//!
//! A port name is a capability: `ferry-port:<ip>:<port>/<64 hex digits>`, the address of the
//! opening process's port socket and the port's secret. The accepting root then offers the
//! bridge (a fresh id and secret, see `engine::BridgeSpec`) with its side of the meeting; the
//! connecting root answers with its own side. A side is the communicator's next free context
//! id and its members as (rank in their own job, business card).

use std::net::SocketAddr;

use crate::engine::BridgeSpec;
use crate::transport::business_card::BusinessCard;

const PREFIX: &str = "ferry-port:";
/// Bytes of a port's secret.
pub const PORT_SECRET_LEN: usize = 32;
/// Members one side may bring to a meeting (a bound on what a peer can make us allocate).
pub const MAX_MEMBERS: usize = 1 << 20;

/// Why a port name or a meeting message is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MeetingError {
    #[error("not a Ferry port name: {0:?}")]
    BadName(String),
    #[error("malformed meeting message: {0}")]
    Malformed(&'static str),
}

/// A parsed port name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortName {
    pub addr: SocketAddr,
    pub secret: [u8; PORT_SECRET_LEN],
}

impl PortName {
    pub fn format(&self) -> String {
        format!("{PREFIX}{}/{}", self.addr, crate::bootstrap::job_secret_hex(&self.secret))
    }

    pub fn parse(s: &str) -> Result<PortName, MeetingError> {
        let bad = || MeetingError::BadName(s.chars().take(80).collect());
        let rest = s.trim_end_matches('\0').trim().strip_prefix(PREFIX).ok_or_else(bad)?;
        let (addr, hex) = rest.rsplit_once('/').ok_or_else(bad)?;
        let addr: SocketAddr = addr.parse().map_err(|_| bad())?;
        if addr.port() == 0 || !crate::bootstrap::is_job_secret(hex) {
            return Err(bad());
        }
        let mut secret = [0u8; PORT_SECRET_LEN];
        for (i, b) in secret.iter_mut().enumerate() {
            *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).map_err(|_| bad())?;
        }
        Ok(PortName { addr, secret })
    }
}

/// One job's side of a meeting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Side {
    /// The next context id free at every member (the intercommunicator takes the higher).
    pub ctx: u32,
    /// The members in their communicator's rank order: (rank in their own job, card).
    pub members: Vec<(u32, BusinessCard)>,
}

impl Side {
    /// The side of `members` (peer numbers of `engine`, in rank order) with context `ctx`;
    /// `None` when a member is not of this job (a bridged peer: a meeting names processes
    /// by their rank in their own job, and members of two jobs could share a rank).
    pub fn of(engine: &crate::engine::Engine, members: &[u32], ctx: u32) -> Option<Side> {
        let members = members.iter().map(|&p| (p < engine.size()).then(|| (p, engine.card(p).clone()))).collect::<Option<Vec<_>>>()?;
        Some(Side { ctx, members })
    }
}

/// What a meeting gives each side: the bridge and the other side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Meeting {
    pub bridge: u32,
    pub secret: Vec<u8>,
    /// Whether this side accepted.
    pub accepted: bool,
    pub remote: Side,
}

impl Meeting {
    /// The meeting as a root tells it to the other members of its communicator.
    pub fn encode(&self) -> Vec<u8> {
        encode_meeting(self)
    }

    pub fn decode(b: &[u8]) -> Result<Meeting, MeetingError> {
        decode_meeting(b)
    }

    /// The bridge to hand to the engine.
    pub fn spec(&self) -> BridgeSpec {
        BridgeSpec { id: self.bridge, secret: self.secret.clone(), accepted: self.accepted, peers: self.remote.members.clone() }
    }
}

struct Writer(Vec<u8>);

impl Writer {
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn bytes(&mut self, b: &[u8]) {
        self.u32(b.len() as u32);
        self.0.extend_from_slice(b);
    }
    fn side(&mut self, s: &Side) {
        self.u32(s.ctx);
        self.u32(s.members.len() as u32);
        for (rank, card) in &s.members {
            self.u32(*rank);
            self.bytes(card.encode().as_bytes());
        }
    }
}

struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn u32(&mut self) -> Result<u32, MeetingError> {
        if self.0.len() < 4 {
            return Err(MeetingError::Malformed("truncated"));
        }
        let (v, rest) = self.0.split_at(4);
        self.0 = rest;
        Ok(u32::from_le_bytes(v.try_into().expect("4 bytes")))
    }
    fn bytes(&mut self) -> Result<&[u8], MeetingError> {
        let n = self.u32()? as usize;
        if self.0.len() < n {
            return Err(MeetingError::Malformed("truncated"));
        }
        let (v, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(v)
    }
    fn side(&mut self) -> Result<Side, MeetingError> {
        let ctx = self.u32()?;
        let n = self.u32()? as usize;
        if n == 0 || n > MAX_MEMBERS {
            return Err(MeetingError::Malformed("member count"));
        }
        let mut members = Vec::with_capacity(n.min(1024));
        for _ in 0..n {
            let rank = self.u32()?;
            let text = std::str::from_utf8(self.bytes()?).map_err(|_| MeetingError::Malformed("card"))?;
            members.push((rank, BusinessCard::decode(text).map_err(|_| MeetingError::Malformed("card"))?));
        }
        Ok(Side { ctx, members })
    }
    fn end(&self) -> Result<(), MeetingError> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(MeetingError::Malformed("trailing bytes"))
        }
    }
}

/// The accepting root's message: the bridge and its side.
pub fn encode_offer(bridge: u32, secret: &[u8], side: &Side) -> Vec<u8> {
    let mut w = Writer(Vec::new());
    w.u32(bridge);
    w.bytes(secret);
    w.side(side);
    w.0
}

/// The connecting root's reading of the offer: a [`Meeting`] for the connecting side.
pub fn decode_offer(b: &[u8]) -> Result<Meeting, MeetingError> {
    let mut r = Reader(b);
    let bridge = r.u32()?;
    let secret = r.bytes()?.to_vec();
    if bridge == 0 || secret.is_empty() {
        return Err(MeetingError::Malformed("bridge"));
    }
    let remote = r.side()?;
    r.end()?;
    Ok(Meeting { bridge, secret, accepted: false, remote })
}

/// The connecting root's answer: its side.
pub fn encode_answer(side: &Side) -> Vec<u8> {
    let mut w = Writer(Vec::new());
    w.side(side);
    w.0
}

pub fn decode_answer(b: &[u8]) -> Result<Side, MeetingError> {
    let mut r = Reader(b);
    let s = r.side()?;
    r.end()?;
    Ok(s)
}

/// A meeting as a root tells it to the other members of its communicator.
pub fn encode_meeting(m: &Meeting) -> Vec<u8> {
    let mut v = encode_offer(m.bridge, &m.secret, &m.remote);
    v.push(m.accepted as u8);
    v
}

pub fn decode_meeting(b: &[u8]) -> Result<Meeting, MeetingError> {
    let (&accepted, rest) = b.split_last().ok_or(MeetingError::Malformed("empty"))?;
    let mut m = decode_offer(rest)?;
    m.accepted = accepted != 0;
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::business_card::GlobalId;

    fn side(n: u32) -> Side {
        let card = |i: u32| BusinessCard { addr: SocketAddr::from(([10, 0, 0, 1], 4000 + i as u16)), id: GlobalId { front: "f".into(), host: "h".into(), pid: 100 + i } };
        Side { ctx: 40 + n, members: (0..n).map(|i| (i, card(i))).collect() }
    }

    #[test]
    fn port_names_round_trip_and_bad_ones_are_refused() {
        let p = PortName { addr: "127.0.0.1:5555".parse().unwrap(), secret: [0xab; 32] };
        let s = p.format();
        assert!(s.starts_with("ferry-port:127.0.0.1:5555/abab"));
        assert!(s.len() < 256, "fits MPI_MAX_PORT_NAME");
        assert_eq!(PortName::parse(&s), Ok(p.clone()));
        // As a C buffer may hand it back: with its NULs.
        assert_eq!(PortName::parse(&format!("{s}\0\0")), Ok(p));
        for bad in ["", "ferry-port:", "ferry-port:127.0.0.1:5555", "ferry-port:127.0.0.1:0/".to_string().as_str(), "other:127.0.0.1:5555/ab", &s[..s.len() - 1], &s.replace("abab", "ABAB")] {
            assert!(PortName::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn offer_answer_and_meeting_round_trip() {
        let offer = encode_offer(7, b"secret", &side(3));
        let m = decode_offer(&offer).unwrap();
        assert_eq!((m.bridge, m.secret.as_slice(), m.accepted, &m.remote), (7, &b"secret"[..], false, &side(3)));
        assert_eq!(decode_answer(&encode_answer(&side(2))), Ok(side(2)));
        let mut acc = m.clone();
        acc.accepted = true;
        assert_eq!(decode_meeting(&encode_meeting(&acc)), Ok(acc.clone()));
        let spec = acc.spec();
        assert_eq!((spec.id, spec.accepted, spec.peers.len()), (7, true, 3));
    }

    #[test]
    fn malformed_messages_are_refused() {
        let offer = encode_offer(7, b"secret", &side(2));
        for n in 0..offer.len() {
            assert!(decode_offer(&offer[..n]).is_err(), "cut at {n}");
        }
        let mut long = offer.clone();
        long.push(0);
        assert!(decode_offer(&long).is_err());
        assert!(decode_offer(&encode_offer(0, b"s", &side(1))).is_err());
        assert!(decode_offer(&encode_offer(1, b"", &side(1))).is_err());
        assert!(decode_answer(&encode_answer(&Side { ctx: 1, members: vec![] })).is_err());
        assert!(decode_meeting(&[]).is_err());
    }
}
