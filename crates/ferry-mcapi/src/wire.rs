//! The MCAPI frame: a fixed 40-byte little-endian header, then the payload of a message or a
//! packet. One frame travels as the payload of one engine message between two nodes, so the
//! engine has already checked who sent it; this codec checks everything else before the
//! node's core looks at it. Pure: bytes in, a [`Frame`] or a [`WireError`] out.
//!
//! Layout:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 1 | version (1) |
//! | 1 | 1 | kind |
//! | 2 | 1 | aux: priority, scalar width, reply status or channel kind |
//! | 3 | 1 | zero |
//! | 4 | 4 | port: the endpoint at the receiving node |
//! | 8 | 4 | peer port: the endpoint at the other side |
//! | 12 | 4 | peer node |
//! | 16 | 4 | peer rank, epoch or count |
//! | 20 | 4 | zero |
//! | 24 | 8 | seq: sequence number or cookie |
//! | 32 | 8 | ack: the highest sequence number taken from the receiver, or a scalar's value |
//!
//! A packet channel between two nodes of one host may carry its packets in receive slots the
//! receiver shares with the sender (`Open` names them); a `SlotPacket` then says which slot
//! the sender wrote and how much, and `Credit` which slots the receiver freed.

use std::fmt;

/// The one version this build speaks.
pub const VERSION: u8 = 1;
/// Header bytes in front of every frame.
pub const HEADER_LEN: usize = 40;
/// Most shared receive slots of one packet channel (a `Credit` names them in one word).
pub const MAX_SLOTS: usize = 64;

/// What a frame says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Kind {
    /// A message for endpoint `port` from `peer_node:peer_port`; aux = priority, `peer_rank`
    /// holds the sender's epoch for that endpoint, payload = the data.
    Msg = 1,
    /// Cumulative acknowledgement: every message up to `ack` has been taken or refused.
    Ack = 2,
    /// The message `seq` was refused; aux = [`Refusal`], `peer_rank` = the epoch it carried.
    Nack = 3,
    /// Endpoint `peer_port` takes messages again, from epoch `peer_rank` on, and has room for
    /// `seq` of them.
    Resume = 4,
    /// Does endpoint `port` exist? Answer with `Found` and cookie `seq` once it does.
    Query = 5,
    /// Endpoint `peer_port` exists; `seq` echoes the query's cookie; aux 1: but it takes no
    /// more gets.
    Found = 6,
    /// Connect endpoint `port` (ours) to `peer_node:peer_port` at rank `peer_rank`; aux =
    /// channel kind and direction ([`ChanSpec`]); answer `Connected` with cookie `seq`.
    Connect = 7,
    /// The answer to `Connect`: aux = [`Reply`], `seq` echoes the cookie; `peer_rank` and
    /// `ack` carry the attributes a channel's ends must share.
    Connected = 8,
    /// Undo a connection whose other half failed.
    Disconnect = 9,
    /// The receiving side of the channel to endpoint `port` is open with `peer_rank` free
    /// receive buffers; `seq` non-zero: they are shared slots of `ack` bytes each, the
    /// receiver's area number `seq` (the sender maps it when it can).
    Open = 10,
    /// `peer_rank` more receive buffers are free on the channel to endpoint `port`; `ack`:
    /// the shared slots among them, one bit each.
    Credit = 11,
    /// A packet for the channel endpoint `port`; payload = the packet.
    Packet = 12,
    /// A scalar for the channel endpoint `port`; aux = width in bytes, `ack` = value.
    Scalar = 13,
    /// The other side closed the channel to endpoint `port`.
    Close = 14,
    /// The sender still holds messages for endpoint `peer_port` after those `Resume` made
    /// room for: tell it again when there is room.
    Blocked = 15,
    /// Send the attributes of endpoint `port`, with cookie `seq`.
    AttrQuery = 16,
    /// The attributes asked for with cookie `seq`: aux 1 if the endpoint is gone, else the
    /// payload holds 13 little-endian words.
    AttrReply = 17,
    /// Endpoint `peer_port` of node `peer_node` was deleted: forget its handle.
    Deleted = 18,
    /// Endpoint `peer_port` of node `peer_node` is (aux 1) or is no longer (aux 0) connected
    /// to a channel: messages to it are refused.
    ChanState = 19,
    /// A packet for the channel endpoint `port`, written into its shared receive slot `seq`;
    /// `ack` = its length.
    SlotPacket = 20,
}

impl Kind {
    fn from_u8(v: u8) -> Option<Kind> {
        use Kind::*;
        Some(match v {
            1 => Msg,
            2 => Ack,
            3 => Nack,
            4 => Resume,
            5 => Query,
            6 => Found,
            7 => Connect,
            8 => Connected,
            9 => Disconnect,
            10 => Open,
            11 => Credit,
            12 => Packet,
            13 => Scalar,
            14 => Close,
            15 => Blocked,
            16 => AttrQuery,
            17 => AttrReply,
            18 => Deleted,
            19 => ChanState,
            20 => SlotPacket,
            _ => return None,
        })
    }

    /// Whether frames of this kind carry a payload after the header.
    pub fn has_payload(self) -> bool {
        matches!(self, Kind::Msg | Kind::Packet | Kind::AttrReply)
    }
}

/// Why a message was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Refusal {
    /// The endpoint's queue is full: keep the message and send it again after `Resume`.
    Full = 1,
    /// No such endpoint (never created, or deleted).
    NoEndpoint = 2,
}

/// The answer to `Connect`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Reply {
    Ok = 1,
    NoEndpoint = 2,
    /// Already connected, or open for messages in a way that forbids it.
    Connected = 3,
    /// Attributes that do not allow the connection.
    Incompatible = 4,
    /// The endpoint was got more than once.
    GetLimit = 5,
    /// A close is pending on the endpoint.
    ClosePending = 6,
}

/// Channel kind and this endpoint's direction, in `Connect`'s aux byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChanSpec {
    pub scalar: bool,
    pub sender: bool,
}

impl ChanSpec {
    pub fn to_u8(self) -> u8 {
        (self.scalar as u8) | (self.sender as u8) << 1
    }

    pub fn from_u8(v: u8) -> Option<ChanSpec> {
        (v < 4).then_some(ChanSpec { scalar: v & 1 != 0, sender: v & 2 != 0 })
    }
}

/// A decoded header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame {
    pub kind: Kind,
    pub aux: u8,
    pub port: u32,
    pub peer_port: u32,
    pub peer_node: u32,
    pub peer_rank: u32,
    pub seq: u64,
    pub ack: u64,
}

impl Frame {
    pub fn new(kind: Kind) -> Frame {
        Frame { kind, aux: 0, port: 0, peer_port: 0, peer_node: 0, peer_rank: 0, seq: 0, ack: 0 }
    }

    /// The header's bytes, built in registers and written with one copy.
    #[inline]
    pub fn header(&self) -> [u8; HEADER_LEN] {
        let mut h = [0u8; HEADER_LEN];
        (h[0], h[1], h[2]) = (VERSION, self.kind as u8, self.aux);
        h[4..8].copy_from_slice(&self.port.to_le_bytes());
        h[8..12].copy_from_slice(&self.peer_port.to_le_bytes());
        h[12..16].copy_from_slice(&self.peer_node.to_le_bytes());
        h[16..20].copy_from_slice(&self.peer_rank.to_le_bytes());
        h[24..32].copy_from_slice(&self.seq.to_le_bytes());
        h[32..40].copy_from_slice(&self.ack.to_le_bytes());
        h
    }

    /// Append the header to `out`.
    #[inline]
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.header());
    }

    /// The header followed by `payload`, in one buffer.
    pub fn encode_with(&self, payload: &[u8]) -> Vec<u8> {
        let mut v = Vec::with_capacity(HEADER_LEN + payload.len());
        self.encode_into(&mut v);
        v.extend_from_slice(payload);
        v
    }

    /// The header followed by `payload` in `out`, which is cleared first: a buffer used
    /// again allocates nothing when it is large enough.
    #[inline]
    pub fn encode_over(&self, payload: &[u8], out: &mut Vec<u8>) {
        out.clear();
        out.reserve(HEADER_LEN + payload.len());
        out.extend_from_slice(&self.header());
        out.extend_from_slice(payload);
    }

    /// Rewrite the `ack` field of an encoded frame (a message sent again carries the latest).
    pub fn patch_ack(bytes: &mut [u8], ack: u64) {
        bytes[32..40].copy_from_slice(&ack.to_le_bytes());
    }

    /// Decode and check a frame; returns the header and the payload.
    pub fn decode(bytes: &[u8], max_payload: usize) -> Result<(Frame, &[u8]), WireError> {
        if bytes.len() < HEADER_LEN {
            return Err(WireError::Short(bytes.len()));
        }
        if bytes[0] != VERSION {
            return Err(WireError::Version(bytes[0]));
        }
        let kind = Kind::from_u8(bytes[1]).ok_or(WireError::Kind(bytes[1]))?;
        let u32_at = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().expect("4 bytes"));
        let u64_at = |o: usize| u64::from_le_bytes(bytes[o..o + 8].try_into().expect("8 bytes"));
        if bytes[3] != 0 || u32_at(20) != 0 {
            return Err(WireError::Reserved);
        }
        let f = Frame { kind, aux: bytes[2], port: u32_at(4), peer_port: u32_at(8), peer_node: u32_at(12), peer_rank: u32_at(16), seq: u64_at(24), ack: u64_at(32) };
        let payload = &bytes[HEADER_LEN..];
        if !kind.has_payload() && !payload.is_empty() {
            return Err(WireError::Payload(kind, payload.len()));
        }
        if payload.len() > max_payload {
            return Err(WireError::TooLong(payload.len()));
        }
        if kind == Kind::SlotPacket {
            if f.seq >= MAX_SLOTS as u64 {
                return Err(WireError::Slot(f.seq));
            }
            if f.ack > max_payload as u64 {
                return Err(WireError::TooLong(f.ack as usize));
            }
        }
        let aux_ok = match kind {
            Kind::Nack => matches!(f.aux, 1 | 2),
            Kind::Connected => (1..=6).contains(&f.aux),
            Kind::Connect => ChanSpec::from_u8(f.aux).is_some(),
            Kind::Scalar => matches!(f.aux, 1 | 2 | 4 | 8) && (f.aux == 8 || f.ack >> (8 * f.aux as u32) == 0),
            Kind::Msg => true,
            Kind::Found | Kind::ChanState => f.aux <= 1,
            Kind::AttrReply => f.aux <= 1 && (payload.len() == 52 || (f.aux == 1 && payload.is_empty())),
            _ => f.aux == 0,
        };
        if !aux_ok {
            return Err(WireError::Aux(kind, f.aux));
        }
        Ok((f, payload))
    }

    pub fn refusal(&self) -> Refusal {
        if self.aux == Refusal::NoEndpoint as u8 {
            Refusal::NoEndpoint
        } else {
            Refusal::Full
        }
    }

    pub fn reply(&self) -> Reply {
        match self.aux {
            1 => Reply::Ok,
            2 => Reply::NoEndpoint,
            3 => Reply::Connected,
            5 => Reply::GetLimit,
            6 => Reply::ClosePending,
            _ => Reply::Incompatible,
        }
    }
}

/// Why a frame was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WireError {
    Short(usize),
    Version(u8),
    Kind(u8),
    Reserved,
    Payload(Kind, usize),
    TooLong(usize),
    Aux(Kind, u8),
    /// A shared receive slot past the last one a channel can have.
    Slot(u64),
    /// A message out of sequence (the engine keeps order, so a peer that skips is broken).
    Sequence { expected: u64, got: u64 },
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WireError::Short(n) => write!(f, "frame of {n} bytes is shorter than the {HEADER_LEN}-byte header"),
            WireError::Version(v) => write!(f, "frame version {v}, this build speaks {VERSION}"),
            WireError::Kind(k) => write!(f, "unknown frame kind {k}"),
            WireError::Reserved => f.write_str("reserved header bytes are not zero"),
            WireError::Payload(k, n) => write!(f, "{k:?} frame carries {n} bytes of payload, it takes none"),
            WireError::TooLong(n) => write!(f, "payload of {n} bytes is over the limit"),
            WireError::Slot(i) => write!(f, "receive slot {i}: a channel has at most {MAX_SLOTS}"),
            WireError::Aux(k, a) => write!(f, "{k:?} frame with aux byte {a}"),
            WireError::Sequence { expected, got } => write!(f, "message {got} where {expected} was due"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(kind: Kind) -> Frame {
        Frame { kind, aux: 0, port: 7, peer_port: 9, peer_node: 3, peer_rank: 2, seq: 1 << 40, ack: 77 }
    }

    #[test]
    fn round_trip_every_kind() {
        for k in 1..=20u8 {
            let kind = Kind::from_u8(k).expect("kind");
            let mut f = sample(kind);
            f.aux = match kind {
                Kind::Nack | Kind::Connected | Kind::Connect => 1,
                Kind::Scalar => 8,
                Kind::Msg => 5,
                _ => 0,
            };
            if kind == Kind::SlotPacket {
                f.seq = 3;
            }
            let payload: &[u8] = if kind == Kind::AttrReply { &[7; 52] } else if kind.has_payload() { b"hello" } else { b"" };
            let bytes = f.encode_with(payload);
            assert_eq!(bytes.len(), HEADER_LEN + payload.len());
            let (g, p) = Frame::decode(&bytes, 1 << 20).expect("decodes");
            assert_eq!((g, p), (f, payload));
        }
    }

    #[test]
    fn refuses_slot_packets_out_of_bounds() {
        let mut f = Frame::new(Kind::SlotPacket);
        (f.seq, f.ack) = (MAX_SLOTS as u64 - 1, 100);
        assert!(Frame::decode(&f.encode_with(&[]), 100).is_ok());
        f.seq = MAX_SLOTS as u64;
        assert_eq!(Frame::decode(&f.encode_with(&[]), 100), Err(WireError::Slot(MAX_SLOTS as u64)));
        (f.seq, f.ack) = (0, 101);
        assert_eq!(Frame::decode(&f.encode_with(&[]), 100), Err(WireError::TooLong(101)));
    }

    #[test]
    fn refuses_what_is_malformed() {
        let good = sample(Kind::Ack).encode_with(&[]);
        assert_eq!(Frame::decode(&good[..39], 10), Err(WireError::Short(39)));
        let mut b = good.clone();
        b[0] = 2;
        assert_eq!(Frame::decode(&b, 10), Err(WireError::Version(2)));
        let mut b = good.clone();
        b[1] = 99;
        assert_eq!(Frame::decode(&b, 10), Err(WireError::Kind(99)));
        let mut b = good.clone();
        b[21] = 1;
        assert_eq!(Frame::decode(&b, 10), Err(WireError::Reserved));
        let mut b = good.clone();
        b.push(1);
        assert_eq!(Frame::decode(&b, 10), Err(WireError::Payload(Kind::Ack, 1)));
        let m = sample(Kind::Msg).encode_with(&[0; 11]);
        assert_eq!(Frame::decode(&m, 10), Err(WireError::TooLong(11)));
        let mut s = sample(Kind::Scalar);
        s.aux = 3;
        assert!(matches!(Frame::decode(&s.encode_with(&[]), 10), Err(WireError::Aux(..))));
        s.aux = 1;
        s.ack = 256;
        assert!(matches!(Frame::decode(&s.encode_with(&[]), 10), Err(WireError::Aux(..))));
        s.ack = 255;
        assert!(Frame::decode(&s.encode_with(&[]), 10).is_ok());
    }

    #[test]
    fn encoding_over_a_used_buffer_equals_a_fresh_one() {
        let f = sample(Kind::Msg);
        let mut used = vec![9u8; 100];
        f.encode_over(b"abc", &mut used);
        assert_eq!(used, f.encode_with(b"abc"));
    }

    #[test]
    fn patched_ack_reads_back() {
        let mut b = sample(Kind::Msg).encode_with(b"x");
        Frame::patch_ack(&mut b, 12345);
        assert_eq!(Frame::decode(&b, 10).expect("decodes").0.ack, 12345);
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..80)) {
            let _ = Frame::decode(&bytes, 16);
        }
    }
}
