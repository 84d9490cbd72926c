//! The frame header codec and its limits.

use thiserror::Error;

/// First four bytes of every frame.
pub const MAGIC: [u8; 4] = *b"FRY\x01";
/// The one wire version this build speaks.
pub const VERSION: u8 = 1;
/// Encoded header size in bytes.
pub const HEADER_LEN: usize = 40;
/// Hard ceiling on one frame's payload; larger messages travel as several frames.
pub const MAX_PAYLOAD: u64 = 16 << 20;

/// Flag bits of the header's `flags` field.
pub mod flags {
    /// The sender waits for a `SyncAck` when the message is matched (MPI_Ssend).
    pub const SYNC: u16 = 1 << 0;
    /// Every flag this version knows; any other bit set is a protocol error.
    pub const KNOWN: u16 = SYNC;
}

/// What a frame carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Kind {
    /// A whole message inline (below the eager limit).
    Eager = 1,
    /// Request to send: envelope plus `u64` total size and `u64` sender cookie as payload,
    /// and, between ranks of one host, the `u64` address of the send buffer (the receiver may
    /// then copy it out directly and answer `RndvFin`).
    Rts = 2,
    /// Clear to send: payload `u64` sender cookie, `u64` receiver cookie.
    Cts = 3,
    /// A chunk of a rendezvous message; `seq` holds the receiver cookie.
    RndvData = 4,
    /// A synchronous eager send was matched; `seq` echoes the sender's cookie.
    SyncAck = 5,
    /// The receiver copied a rendezvous message straight out of the sender's memory; `seq`
    /// echoes the sender's cookie, which may now complete.
    RndvFin = 6,
    /// Connection handshake: initiator introduces itself.
    Hello = 16,
    /// Connection handshake: acceptor's challenge and proof.
    Challenge = 17,
    /// Connection handshake: initiator's proof.
    Auth = 18,
    /// Connection handshake: the connection is accepted.
    Accept = 19,
    /// Connection handshake: the connection is refused (race lost or bad proof).
    Reject = 20,
    /// Orderly close at finalize.
    Bye = 21,
}

impl Kind {
    pub fn from_u8(v: u8) -> Option<Kind> {
        Some(match v {
            1 => Kind::Eager,
            2 => Kind::Rts,
            3 => Kind::Cts,
            4 => Kind::RndvData,
            5 => Kind::SyncAck,
            6 => Kind::RndvFin,
            16 => Kind::Hello,
            17 => Kind::Challenge,
            18 => Kind::Auth,
            19 => Kind::Accept,
            20 => Kind::Reject,
            21 => Kind::Bye,
            _ => return None,
        })
    }

    /// Largest payload this kind may carry under `limits`.
    fn max_payload(self, limits: &Limits) -> u64 {
        match self {
            Kind::Eager | Kind::RndvData => limits.max_payload,
            Kind::Rts => 24,
            Kind::Cts => 16,
            Kind::SyncAck | Kind::RndvFin | Kind::Accept | Kind::Bye => 0,
            Kind::Hello | Kind::Challenge | Kind::Auth | Kind::Reject => 128,
        }
    }
}

/// A decoded, validated frame header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub kind: Kind,
    pub flags: u16,
    pub src: u32,
    pub dst: u32,
    pub context: u32,
    pub tag: i32,
    pub seq: u64,
    pub len: u64,
}

/// Bounds a decoder enforces beyond the fixed format: who may appear as a rank, how much
/// payload one frame may announce.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Number of ranks in the job: `src` and `dst` must be below it.
    pub world_size: u32,
    /// Largest payload of a data frame; at most [`MAX_PAYLOAD`].
    pub max_payload: u64,
}

impl Limits {
    pub fn new(world_size: u32) -> Limits {
        Limits { world_size, max_payload: MAX_PAYLOAD }
    }
}

/// Why a header was refused.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum WireError {
    #[error("need {needed} bytes, have {have}")]
    Short { needed: usize, have: usize },
    #[error("bad magic {0:02x?}")]
    BadMagic([u8; 4]),
    #[error("unsupported wire version {0}")]
    BadVersion(u8),
    #[error("unknown frame kind {0}")]
    UnknownKind(u8),
    #[error("unknown flag bits {0:#06x}")]
    UnknownFlags(u16),
    #[error("rank {rank} out of range for a job of {world_size}")]
    RankOutOfRange { rank: u32, world_size: u32 },
    #[error("payload of {len} bytes exceeds the {max} allowed for {kind:?}")]
    TooLong { kind: Kind, len: u64, max: u64 },
}

impl Header {
    /// A header with every routing field zero; fill in what the kind needs.
    pub fn new(kind: Kind) -> Header {
        Header { kind, flags: 0, src: 0, dst: 0, context: 0, tag: 0, seq: 0, len: 0 }
    }

    /// Encode into exactly [`HEADER_LEN`] bytes.
    #[inline]
    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        b[0..4].copy_from_slice(&MAGIC);
        b[4] = VERSION;
        b[5] = self.kind as u8;
        b[6..8].copy_from_slice(&self.flags.to_le_bytes());
        b[8..12].copy_from_slice(&self.src.to_le_bytes());
        b[12..16].copy_from_slice(&self.dst.to_le_bytes());
        b[16..20].copy_from_slice(&self.context.to_le_bytes());
        b[20..24].copy_from_slice(&self.tag.to_le_bytes());
        b[24..32].copy_from_slice(&self.seq.to_le_bytes());
        b[32..40].copy_from_slice(&self.len.to_le_bytes());
        b
    }

    /// Of an encoded header (one [`encode`](Self::encode) made) of an `Eager` frame without
    /// flags: its sender, context, tag and sequence number. `None` for any other frame.
    #[inline]
    pub fn plain_eager(b: &[u8; HEADER_LEN]) -> Option<(u32, u32, i32, u64)> {
        if b[5] != Kind::Eager as u8 || b[6] != 0 || b[7] != 0 {
            return None;
        }
        let u32_at = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
        let seq = u64::from_le_bytes(b[24..32].try_into().expect("8 bytes"));
        Some((u32_at(8), u32_at(16), u32_at(20) as i32, seq))
    }

    /// Decode and validate the first [`HEADER_LEN`] bytes of `buf`.
    #[inline]
    pub fn decode(buf: &[u8], limits: &Limits) -> Result<Header, WireError> {
        if buf.len() < HEADER_LEN {
            return Err(WireError::Short { needed: HEADER_LEN, have: buf.len() });
        }
        let u32_at = |o: usize| u32::from_le_bytes([buf[o], buf[o + 1], buf[o + 2], buf[o + 3]]);
        let u64_at = |o: usize| {
            let mut a = [0u8; 8];
            a.copy_from_slice(&buf[o..o + 8]);
            u64::from_le_bytes(a)
        };
        let magic = [buf[0], buf[1], buf[2], buf[3]];
        if magic != MAGIC {
            return Err(WireError::BadMagic(magic));
        }
        if buf[4] != VERSION {
            return Err(WireError::BadVersion(buf[4]));
        }
        let kind = Kind::from_u8(buf[5]).ok_or(WireError::UnknownKind(buf[5]))?;
        let flags = u16::from_le_bytes([buf[6], buf[7]]);
        if flags & !flags::KNOWN != 0 {
            return Err(WireError::UnknownFlags(flags & !flags::KNOWN));
        }
        let src = u32_at(8);
        let dst = u32_at(12);
        for rank in [src, dst] {
            if rank >= limits.world_size {
                return Err(WireError::RankOutOfRange { rank, world_size: limits.world_size });
            }
        }
        let len = u64_at(32);
        let max = kind.max_payload(limits).min(MAX_PAYLOAD);
        if len > max {
            return Err(WireError::TooLong { kind, len, max });
        }
        Ok(Header {
            kind,
            flags,
            src,
            dst,
            context: u32_at(16),
            tag: u32_at(20) as i32,
            seq: u64_at(24),
            len,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sample() -> Header {
        Header { kind: Kind::Eager, flags: flags::SYNC, src: 3, dst: 1, context: 7, tag: -5, seq: 42, len: 100 }
    }

    #[test]
    fn round_trip() {
        let h = sample();
        assert_eq!(Header::decode(&h.encode(), &Limits::new(4)), Ok(h));
    }

    #[test]
    fn layout_is_little_endian_and_fixed() {
        let b = sample().encode();
        assert_eq!(&b[0..4], b"FRY\x01");
        assert_eq!(b[4], 1);
        assert_eq!(b[5], 1);
        assert_eq!(&b[8..12], &[3, 0, 0, 0]);
        assert_eq!(&b[20..24], &(-5i32).to_le_bytes());
        assert_eq!(&b[32..40], &[100, 0, 0, 0, 0, 0, 0, 0]);
    }

    #[test]
    fn short_input() {
        let b = sample().encode();
        assert_eq!(Header::decode(&b[..39], &Limits::new(4)), Err(WireError::Short { needed: 40, have: 39 }));
    }

    #[test]
    fn each_field_is_validated() {
        let l = Limits::new(4);
        let mut b = sample().encode();
        b[0] = b'X';
        assert!(matches!(Header::decode(&b, &l), Err(WireError::BadMagic(_))));
        let mut b = sample().encode();
        b[4] = 2;
        assert_eq!(Header::decode(&b, &l), Err(WireError::BadVersion(2)));
        let mut b = sample().encode();
        b[5] = 99;
        assert_eq!(Header::decode(&b, &l), Err(WireError::UnknownKind(99)));
        let mut b = sample().encode();
        b[7] = 0x80;
        assert_eq!(Header::decode(&b, &l), Err(WireError::UnknownFlags(0x8000)));
        let h = Header { src: 4, ..sample() };
        assert_eq!(Header::decode(&h.encode(), &l), Err(WireError::RankOutOfRange { rank: 4, world_size: 4 }));
        let h = Header { dst: u32::MAX, ..sample() };
        assert!(matches!(Header::decode(&h.encode(), &l), Err(WireError::RankOutOfRange { .. })));
        let h = Header { len: MAX_PAYLOAD + 1, ..sample() };
        assert!(matches!(Header::decode(&h.encode(), &l), Err(WireError::TooLong { .. })));
        let h = Header { kind: Kind::Cts, len: 17, ..sample() };
        assert!(matches!(Header::decode(&h.encode(), &l), Err(WireError::TooLong { .. })));
        let h = Header { kind: Kind::Accept, len: 1, ..sample() };
        assert!(matches!(Header::decode(&h.encode(), &l), Err(WireError::TooLong { .. })));
    }

    #[test]
    fn plain_eager_reads_the_envelope_of_standard_eager_frames_only() {
        let h = Header { flags: 0, ..sample() };
        assert_eq!(Header::plain_eager(&h.encode()), Some((h.src, h.context, h.tag, h.seq)));
        assert_eq!(Header::plain_eager(&sample().encode()), None, "a synchronous send's frame");
        assert_eq!(Header::plain_eager(&Header { kind: Kind::Rts, flags: 0, ..sample() }.encode()), None);
    }

    #[test]
    fn max_payload_is_accepted_and_tighter_limits_apply() {
        let h = Header { len: MAX_PAYLOAD, ..sample() };
        assert_eq!(Header::decode(&h.encode(), &Limits::new(4)), Ok(h));
        let tight = Limits { world_size: 4, max_payload: 1024 };
        let h = Header { len: 1025, ..sample() };
        assert!(matches!(Header::decode(&h.encode(), &tight), Err(WireError::TooLong { .. })));
    }

    fn any_kind() -> impl Strategy<Value = Kind> {
        (0u8..=255).prop_filter_map("known kind", Kind::from_u8)
    }

    proptest! {
        /// The decoder never panics on arbitrary bytes, and whatever it accepts re-encodes
        /// to the same bytes (no field is silently normalised).
        #[test]
        fn decode_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..64), world in 1u32..64) {
            if let Ok(h) = Header::decode(&bytes, &Limits::new(world)) {
                prop_assert_eq!(&h.encode()[..], &bytes[..HEADER_LEN]);
                prop_assert!(h.src < world && h.dst < world);
            }
        }

        #[test]
        fn encode_decode_round_trip(kind in any_kind(), fl in 0u16..=flags::KNOWN, src in 0u32..8, dst in 0u32..8,
                                    context: u32, tag: i32, seq: u64, len in 0u64..=16) {
            let h = Header { kind, flags: fl, src, dst, context, tag, seq, len: len.min(kind.max_payload(&Limits::new(8))) };
            prop_assert_eq!(Header::decode(&h.encode(), &Limits::new(8)), Ok(h));
        }

        /// Flipping any single byte of a valid header either still decodes to a header that
        /// re-encodes to the mutated bytes, or is refused with a typed error.
        #[test]
        fn single_byte_corruption(pos in 0usize..HEADER_LEN, val: u8) {
            let mut b = sample().encode();
            b[pos] = val;
            match Header::decode(&b, &Limits::new(4)) {
                Ok(h) => prop_assert_eq!(h.encode(), b),
                Err(_) => {}
            }
        }
    }
}
