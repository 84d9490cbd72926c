//! The relay's frames, pure: what a proxy and its clients (ranks asking for a relayed
//! connection, launchers registering jobs) say to each other before the relayed bytes flow.
//!
//! Every frame is an 8-byte header — magic `FRLY`, version, kind, payload length (u16, little
//! endian) — and a payload of exactly the length its kind fixes, never more than
//! [`MAX_PAYLOAD`]. Decoding refuses a bad magic, an unknown version or kind and any other
//! length at the header, before a single payload byte is waited for.

use core::net::{Ipv4Addr, SocketAddrV4};

pub const MAGIC: [u8; 4] = *b"FRLY";
pub const VERSION: u8 = 1;
pub const HEADER_LEN: usize = 8;
/// No frame of this protocol is longer; a header announcing more is refused.
pub const MAX_PAYLOAD: usize = 512;
pub const NONCE_LEN: usize = 32;
pub const MAC_LEN: usize = 32;
pub const JOB_LEN: usize = 16;
pub const KEY_LEN: usize = 32;

/// A job's identity at the proxy (random, chosen by the launcher).
pub type JobId = [u8; JOB_LEN];

/// Why bytes are not a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireError {
    BadMagic,
    BadVersion(u8),
    UnknownKind(u8),
    /// A length other than the one the kind fixes (or past [`MAX_PAYLOAD`]).
    BadLength { kind: u8, len: u16 },
}

impl std::fmt::Display for WireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WireError::BadMagic => write!(f, "not a relay frame (bad magic)"),
            WireError::BadVersion(v) => write!(f, "relay protocol version {v}, expected {VERSION}"),
            WireError::UnknownKind(k) => write!(f, "unknown relay frame kind {k}"),
            WireError::BadLength { kind, len } => write!(f, "relay frame kind {kind} with a payload of {len} bytes"),
        }
    }
}

/// A relayed connection's request: rank `from` of `job` asks for rank `to`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub job: JobId,
    pub from: u32,
    pub to: u32,
    pub client_nonce: [u8; NONCE_LEN],
    pub mac: [u8; MAC_LEN],
}

/// One frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Msg {
    /// proxy -> anyone, at accept: the nonce every proof on this connection binds.
    Hello { nonce: [u8; NONCE_LEN] },
    /// rank -> proxy: open the second leg.
    Request(Request),
    /// proxy -> rank: the second leg is open; from the next byte on, bytes are relayed.
    Established,
    /// proxy -> rank: refused; the proxy closes the connection.
    Denied { reason: u8 },
    /// launcher -> proxy: proof of the site key.
    ControlAuth { nonce: [u8; NONCE_LEN], mac: [u8; MAC_LEN] },
    /// proxy -> launcher: the proxy's own proof of the site key.
    ControlWelcome { mac: [u8; MAC_LEN] },
    /// launcher -> proxy: a job, its relay key and its number of ranks.
    RegisterJob { job: JobId, key: [u8; KEY_LEN], size: u32 },
    /// launcher -> proxy: rank `rank` of `job` listens at `addr` inside this cluster.
    AddMember { job: JobId, rank: u32, addr: SocketAddrV4 },
    /// proxy -> launcher: the answer to a command, 0 when done, else why not.
    Ack { code: u8 },
}

const K_HELLO: u8 = 1;
const K_REQUEST: u8 = 2;
const K_ESTABLISHED: u8 = 3;
const K_DENIED: u8 = 4;
const K_CONTROL_AUTH: u8 = 16;
const K_CONTROL_WELCOME: u8 = 17;
const K_REGISTER_JOB: u8 = 18;
const K_ADD_MEMBER: u8 = 19;
const K_ACK: u8 = 20;

/// The payload length of each kind, or `None` for an unknown kind.
fn payload_len(kind: u8) -> Option<usize> {
    Some(match kind {
        K_HELLO => NONCE_LEN,
        K_REQUEST => JOB_LEN + 8 + NONCE_LEN + MAC_LEN,
        K_ESTABLISHED => 0,
        K_DENIED => 1,
        K_CONTROL_AUTH => NONCE_LEN + MAC_LEN,
        K_CONTROL_WELCOME => MAC_LEN,
        K_REGISTER_JOB => JOB_LEN + KEY_LEN + 4,
        K_ADD_MEMBER => JOB_LEN + 4 + 4 + 2,
        K_ACK => 1,
        _ => return None,
    })
}

impl Msg {
    fn kind(&self) -> u8 {
        match self {
            Msg::Hello { .. } => K_HELLO,
            Msg::Request(_) => K_REQUEST,
            Msg::Established => K_ESTABLISHED,
            Msg::Denied { .. } => K_DENIED,
            Msg::ControlAuth { .. } => K_CONTROL_AUTH,
            Msg::ControlWelcome { .. } => K_CONTROL_WELCOME,
            Msg::RegisterJob { .. } => K_REGISTER_JOB,
            Msg::AddMember { .. } => K_ADD_MEMBER,
            Msg::Ack { .. } => K_ACK,
        }
    }

    /// The frame's bytes: header and payload.
    pub fn encode(&self) -> Vec<u8> {
        let mut p = Vec::with_capacity(HEADER_LEN + 96);
        p.extend_from_slice(&MAGIC);
        p.push(VERSION);
        p.push(self.kind());
        p.extend_from_slice(&[0, 0]);
        match self {
            Msg::Hello { nonce } => p.extend_from_slice(nonce),
            Msg::Request(r) => {
                p.extend_from_slice(&r.job);
                p.extend_from_slice(&r.from.to_le_bytes());
                p.extend_from_slice(&r.to.to_le_bytes());
                p.extend_from_slice(&r.client_nonce);
                p.extend_from_slice(&r.mac);
            }
            Msg::Established => {}
            Msg::Denied { reason } => p.push(*reason),
            Msg::ControlAuth { nonce, mac } => {
                p.extend_from_slice(nonce);
                p.extend_from_slice(mac);
            }
            Msg::ControlWelcome { mac } => p.extend_from_slice(mac),
            Msg::RegisterJob { job, key, size } => {
                p.extend_from_slice(job);
                p.extend_from_slice(key);
                p.extend_from_slice(&size.to_le_bytes());
            }
            Msg::AddMember { job, rank, addr } => {
                p.extend_from_slice(job);
                p.extend_from_slice(&rank.to_le_bytes());
                p.extend_from_slice(&addr.ip().octets());
                p.extend_from_slice(&addr.port().to_le_bytes());
            }
            Msg::Ack { code } => p.push(*code),
        }
        let len = (p.len() - HEADER_LEN) as u16;
        p[6..8].copy_from_slice(&len.to_le_bytes());
        debug_assert_eq!(payload_len(self.kind()), Some(len as usize));
        p
    }

    /// Decode the first frame of `buf`: `Ok(None)` when more bytes are needed, else the frame
    /// and how many bytes it took. Errors are final: the stream is not this protocol.
    pub fn decode(buf: &[u8]) -> Result<Option<(Msg, usize)>, WireError> {
        // Judge what has arrived of the header at once, so garbage is refused early.
        let seen = buf.len().min(4);
        if buf[..seen] != MAGIC[..seen] {
            return Err(WireError::BadMagic);
        }
        if buf.len() > 4 && buf[4] != VERSION {
            return Err(WireError::BadVersion(buf[4]));
        }
        if buf.len() < HEADER_LEN {
            return Ok(None);
        }
        let kind = buf[5];
        let len = u16::from_le_bytes([buf[6], buf[7]]);
        let want = payload_len(kind).ok_or(WireError::UnknownKind(kind))?;
        if len as usize != want || want > MAX_PAYLOAD {
            return Err(WireError::BadLength { kind, len });
        }
        let total = HEADER_LEN + want;
        if buf.len() < total {
            return Ok(None);
        }
        let p = &buf[HEADER_LEN..total];
        let msg = match kind {
            K_HELLO => Msg::Hello { nonce: arr(p) },
            K_REQUEST => Msg::Request(Request {
                job: arr(&p[..16]),
                from: u32::from_le_bytes(arr(&p[16..20])),
                to: u32::from_le_bytes(arr(&p[20..24])),
                client_nonce: arr(&p[24..56]),
                mac: arr(&p[56..88]),
            }),
            K_ESTABLISHED => Msg::Established,
            K_DENIED => Msg::Denied { reason: p[0] },
            K_CONTROL_AUTH => Msg::ControlAuth { nonce: arr(&p[..32]), mac: arr(&p[32..64]) },
            K_CONTROL_WELCOME => Msg::ControlWelcome { mac: arr(p) },
            K_REGISTER_JOB => Msg::RegisterJob { job: arr(&p[..16]), key: arr(&p[16..48]), size: u32::from_le_bytes(arr(&p[48..52])) },
            K_ADD_MEMBER => {
                let ip: [u8; 4] = arr(&p[20..24]);
                Msg::AddMember { job: arr(&p[..16]), rank: u32::from_le_bytes(arr(&p[16..20])), addr: SocketAddrV4::new(Ipv4Addr::from(ip), u16::from_le_bytes(arr(&p[24..26]))) }
            }
            K_ACK => Msg::Ack { code: p[0] },
            _ => unreachable!("payload_len knows exactly these kinds"),
        };
        Ok(Some((msg, total)))
    }
}

/// A fixed-size array from a slice whose length the caller has checked.
fn arr<const N: usize>(s: &[u8]) -> [u8; N] {
    s.try_into().expect("slice length checked against the kind's payload length")
}

/// Why a proxy refused a relayed connection (the payload of [`Msg::Denied`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DenyReason {
    /// The request was not a valid frame.
    Malformed,
    UnknownJob,
    /// The request's MAC does not verify with the job's relay key (or was replayed).
    BadProof,
    /// `from` is not a rank of the job (or asks for itself).
    NotAMember,
    /// `to` is not a registered member at this proxy.
    TargetNotRegistered,
    /// The target's address is outside what this proxy may connect to.
    AddressNotAllowed,
    JobQuota,
    RankQuota,
    /// The second leg could not be opened.
    Unreachable,
    /// The proxy has too many connections in set-up.
    Busy,
    /// The job ended while the second leg was being opened.
    JobEnded,
    /// A code this build does not know.
    Other(u8),
}

impl DenyReason {
    pub fn code(self) -> u8 {
        match self {
            DenyReason::Malformed => 1,
            DenyReason::UnknownJob => 2,
            DenyReason::BadProof => 3,
            DenyReason::NotAMember => 4,
            DenyReason::TargetNotRegistered => 5,
            DenyReason::AddressNotAllowed => 6,
            DenyReason::JobQuota => 7,
            DenyReason::RankQuota => 8,
            DenyReason::Unreachable => 9,
            DenyReason::Busy => 10,
            DenyReason::JobEnded => 11,
            DenyReason::Other(c) => c,
        }
    }

    pub fn from_code(c: u8) -> DenyReason {
        match c {
            1 => DenyReason::Malformed,
            2 => DenyReason::UnknownJob,
            3 => DenyReason::BadProof,
            4 => DenyReason::NotAMember,
            5 => DenyReason::TargetNotRegistered,
            6 => DenyReason::AddressNotAllowed,
            7 => DenyReason::JobQuota,
            8 => DenyReason::RankQuota,
            9 => DenyReason::Unreachable,
            10 => DenyReason::Busy,
            11 => DenyReason::JobEnded,
            c => DenyReason::Other(c),
        }
    }
}

impl std::fmt::Display for DenyReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DenyReason::Malformed => write!(f, "malformed request"),
            DenyReason::UnknownJob => write!(f, "no such job registered at the proxy"),
            DenyReason::BadProof => write!(f, "request not signed with the job's relay key (or replayed)"),
            DenyReason::NotAMember => write!(f, "requesting rank is not a rank of the job"),
            DenyReason::TargetNotRegistered => write!(f, "target rank is not registered at the proxy"),
            DenyReason::AddressNotAllowed => write!(f, "target address is not one the proxy may connect to"),
            DenyReason::JobQuota => write!(f, "the job has as many relayed connections as the proxy allows"),
            DenyReason::RankQuota => write!(f, "the rank has as many relayed connections as the proxy allows"),
            DenyReason::Unreachable => write!(f, "the proxy could not connect to the target"),
            DenyReason::Busy => write!(f, "the proxy is busy"),
            DenyReason::JobEnded => write!(f, "the job ended at the proxy"),
            DenyReason::Other(c) => write!(f, "refused (code {c})"),
        }
    }
}

/// Why a proxy refused a control command (the code of a failed [`Msg::Ack`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ControlRefusal {
    /// The site key proof did not verify.
    BadProof,
    JobExists,
    /// This control connection already registered a job.
    AlreadyRegistered,
    /// A member before its job.
    NoJob,
    /// A member for a job another control connection registered.
    NotYourJob,
    BadRank,
    DuplicateRank,
    AddressNotAllowed,
    BadSize,
    TooManyJobs,
    /// A frame that is not a command.
    Unexpected,
    Other(u8),
}

impl ControlRefusal {
    pub fn code(self) -> u8 {
        match self {
            ControlRefusal::BadProof => 1,
            ControlRefusal::JobExists => 2,
            ControlRefusal::AlreadyRegistered => 3,
            ControlRefusal::NoJob => 4,
            ControlRefusal::NotYourJob => 5,
            ControlRefusal::BadRank => 6,
            ControlRefusal::DuplicateRank => 7,
            ControlRefusal::AddressNotAllowed => 8,
            ControlRefusal::BadSize => 9,
            ControlRefusal::TooManyJobs => 10,
            ControlRefusal::Unexpected => 11,
            ControlRefusal::Other(c) => c,
        }
    }

    /// `None` for 0, the success code.
    pub fn from_code(c: u8) -> Option<ControlRefusal> {
        Some(match c {
            0 => return None,
            1 => ControlRefusal::BadProof,
            2 => ControlRefusal::JobExists,
            3 => ControlRefusal::AlreadyRegistered,
            4 => ControlRefusal::NoJob,
            5 => ControlRefusal::NotYourJob,
            6 => ControlRefusal::BadRank,
            7 => ControlRefusal::DuplicateRank,
            8 => ControlRefusal::AddressNotAllowed,
            9 => ControlRefusal::BadSize,
            10 => ControlRefusal::TooManyJobs,
            11 => ControlRefusal::Unexpected,
            c => ControlRefusal::Other(c),
        })
    }
}

impl std::fmt::Display for ControlRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ControlRefusal::BadProof => write!(f, "wrong site key"),
            ControlRefusal::JobExists => write!(f, "a job with this id is already registered"),
            ControlRefusal::AlreadyRegistered => write!(f, "this control connection already registered a job"),
            ControlRefusal::NoJob => write!(f, "no job registered on this control connection"),
            ControlRefusal::NotYourJob => write!(f, "the job belongs to another control connection"),
            ControlRefusal::BadRank => write!(f, "rank outside the job"),
            ControlRefusal::DuplicateRank => write!(f, "rank already registered"),
            ControlRefusal::AddressNotAllowed => write!(f, "address is not one the proxy may connect to"),
            ControlRefusal::BadSize => write!(f, "job size out of range"),
            ControlRefusal::TooManyJobs => write!(f, "the proxy holds as many jobs as it allows"),
            ControlRefusal::Unexpected => write!(f, "unexpected frame on the control connection"),
            ControlRefusal::Other(c) => write!(f, "refused (code {c})"),
        }
    }
}

/// Lower-case hex, for job ids in log lines and keys in files.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn all() -> Vec<Msg> {
        vec![
            Msg::Hello { nonce: [1; 32] },
            Msg::Request(Request { job: [2; 16], from: 3, to: 0xdead_beef, client_nonce: [4; 32], mac: [5; 32] }),
            Msg::Established,
            Msg::Denied { reason: 7 },
            Msg::ControlAuth { nonce: [8; 32], mac: [9; 32] },
            Msg::ControlWelcome { mac: [10; 32] },
            Msg::RegisterJob { job: [11; 16], key: [12; 32], size: 64 },
            Msg::AddMember { job: [13; 16], rank: 5, addr: "10.1.0.11:4000".parse().unwrap() },
            Msg::Ack { code: 0 },
        ]
    }

    #[test]
    fn every_frame_round_trips_and_needs_all_its_bytes() {
        for m in all() {
            let b = m.encode();
            for cut in 0..b.len() {
                assert_eq!(Msg::decode(&b[..cut]), Ok(None), "{m:?} cut at {cut}");
            }
            let mut more = b.clone();
            more.extend_from_slice(b"trailing");
            assert_eq!(Msg::decode(&more), Ok(Some((m.clone(), b.len()))));
        }
    }

    #[test]
    fn bad_headers_are_refused_before_the_payload() {
        let b = Msg::Established.encode();
        assert_eq!(Msg::decode(b"GET / HTTP/1.1"), Err(WireError::BadMagic));
        assert_eq!(Msg::decode(b"FX"), Err(WireError::BadMagic));
        let mut v = b.clone();
        v[4] = 2;
        assert_eq!(Msg::decode(&v[..5]), Err(WireError::BadVersion(2)));
        let mut k = b.clone();
        k[5] = 99;
        assert_eq!(Msg::decode(&k), Err(WireError::UnknownKind(99)));
        // An oversized length is refused from the header alone, without waiting for 60 KB.
        let mut big = Msg::Hello { nonce: [0; 32] }.encode();
        big[6..8].copy_from_slice(&60_000u16.to_le_bytes());
        assert_eq!(Msg::decode(&big[..HEADER_LEN]), Err(WireError::BadLength { kind: K_HELLO, len: 60_000 }));
        let mut short = Msg::Hello { nonce: [0; 32] }.encode();
        short[6] = 31;
        assert!(matches!(Msg::decode(&short), Err(WireError::BadLength { .. })));
    }

    #[test]
    fn reason_codes_round_trip() {
        for c in 1..=255u8 {
            assert_eq!(DenyReason::from_code(c).code(), c);
            assert_eq!(ControlRefusal::from_code(c).map(|r| r.code()), Some(c));
        }
        assert_eq!(ControlRefusal::from_code(0), None);
    }

    #[test]
    fn every_kind_fits_the_limit() {
        for k in 0..=255u8 {
            if let Some(n) = payload_len(k) {
                assert!(n <= MAX_PAYLOAD, "kind {k}");
            }
        }
    }

    proptest! {
        #[test]
        fn decode_never_panics_and_never_overreads(data in proptest::collection::vec(any::<u8>(), 0..700)) {
            if let Ok(Some((m, n))) = Msg::decode(&data) {
                prop_assert!(n <= data.len());
                prop_assert_eq!(m.encode(), data[..n].to_vec());
            }
        }

        #[test]
        fn valid_frames_with_a_flipped_header_byte_are_refused_or_reread(i in 0usize..9, pos in 0usize..8, flip in 1u8..=255) {
            let mut b = all()[i].encode();
            b[pos] ^= flip;
            if let Ok(Some((m, n))) = Msg::decode(&b) {
                // Only a kind byte changed into another kind of the same length can decode.
                prop_assert_eq!(pos, 5);
                prop_assert_eq!(m.encode(), b[..n].to_vec());
            }
        }
    }
}
