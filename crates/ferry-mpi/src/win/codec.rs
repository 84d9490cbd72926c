//! The active messages of one-sided communication: what an origin asks of a target, as one
//! message on the window's context (a fixed header, the target layout, then the data).
//! Pure: no runtime, no engine; the round trip is unit-tested below.
//!
//! Layout, little-endian: kind u8, lock type u8, element type u8 u8, reply tag i32, op i32,
//! number of runs u32, offset u64, length u64 (32 bytes); then each run as offset i64 and
//! length u64; then the payload.
//!
//! The bytes come from a peer, so [`Header::decode`] refuses what no origin sends: a length
//! past `i64::MAX`, a run that ends past `i64::MAX`, runs whose lengths do not add up to the
//! length, and a second element code without a first. What it accepts encodes back to the
//! same bytes, and its [`Header::span`] cannot overflow.

use ferry_data::datatype::Primitive;
use ferry_data::reduce_op::ElemType;

/// What a request asks the target to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Write the payload.
    Put = 1,
    /// Answer with the bytes.
    Get = 2,
    /// Combine the payload into the bytes with `op`.
    Acc = 3,
    /// Answer with the bytes, then combine the payload into them (also `MPI_Fetch_and_op`).
    GetAcc = 4,
    /// Payload: the new value then the compare value; answer with the old value, and write
    /// the new one where the old equals the compare value.
    Cas = 5,
    /// Take the window's lock (`flag`: exclusive when 1); the answer grants it.
    Lock = 6,
    /// Release the lock; the answer says every earlier request was applied.
    Unlock = 7,
    /// Answer once every earlier request was applied.
    Flush = 8,
    /// End of an access epoch of `MPI_Win_start` (PSCW); no answer.
    Complete = 9,
}

impl Kind {
    fn from_u8(b: u8) -> Option<Kind> {
        use Kind::*;
        Some(match b {
            1 => Put,
            2 => Get,
            3 => Acc,
            4 => GetAcc,
            5 => Cas,
            6 => Lock,
            7 => Unlock,
            8 => Flush,
            9 => Complete,
            _ => return None,
        })
    }

    /// Whether the target answers this request (on the reply tag).
    pub fn answered(self) -> bool {
        !matches!(self, Kind::Put | Kind::Acc | Kind::Complete)
    }
}

/// A request's header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    pub kind: Kind,
    /// `Lock`: 1 for an exclusive lock, 0 for a shared one.
    pub flag: u8,
    /// What `Acc`/`GetAcc` combine element by element (`None`: bytes, for REPLACE/NO_OP).
    pub elem: Option<ElemType>,
    /// The tag of the answer on the window's reply context.
    pub reply: i32,
    /// `Acc`/`GetAcc`: the predefined operation's handle.
    pub op: i32,
    /// Byte offset from the target window's base (dynamic windows: the target address).
    pub offset: u64,
    /// Bytes the operation reads or writes at the target.
    pub len: u64,
    /// The target layout as (offset, length) byte runs from `offset`, in order; empty: `len`
    /// contiguous bytes.
    pub runs: Vec<(i64, u64)>,
}

const FIXED: usize = 32;

/// Every primitive, numbered from 1 on the wire (0: none). New primitives go last so that the
/// codes of the others stay as they were.
const PRIMS: [Primitive; 36] = {
    use Primitive::*;
    [
        Char, SignedChar, UnsignedChar, Byte, WChar, Short, UnsignedShort, Int, Unsigned, Long, UnsignedLong, LongLong, UnsignedLongLong, Float, Double, LongDouble, Packed, Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32, UInt64, CBool, Logical, Aint, Offset, Count, CFloatComplex, CDoubleComplex, CLongDoubleComplex, Float16, Float128, Float128Complex,
    ]
};

fn prim_code(p: Primitive) -> u8 {
    PRIMS.iter().position(|&q| q == p).map_or(0, |i| i as u8 + 1)
}

fn prim_of(code: u8) -> Option<Primitive> {
    PRIMS.get((code as usize).checked_sub(1)?).copied()
}

fn elem_codes(e: Option<ElemType>) -> [u8; 2] {
    match e {
        None => [0, 0],
        Some(ElemType::Prim(p)) => [prim_code(p), 0],
        Some(ElemType::Pair(v, i)) => [prim_code(v), prim_code(i)],
    }
}

fn elem_of(c: [u8; 2]) -> Result<Option<ElemType>, String> {
    match c {
        [0, 0] => Ok(None),
        [0, i] => Err(format!("pair index type {i} without a value type")),
        [v, 0] => prim_of(v).map(|p| Some(ElemType::Prim(p))).ok_or_else(|| format!("unknown element type {v}")),
        [v, i] => match (prim_of(v), prim_of(i)) {
            (Some(v), Some(i)) => Ok(Some(ElemType::Pair(v, i))),
            _ => Err(format!("unknown pair type {v}/{i}")),
        },
    }
}

impl Header {
    pub fn new(kind: Kind) -> Header {
        Header { kind, flag: 0, elem: None, reply: 0, op: 0, offset: 0, len: 0, runs: Vec::new() }
    }

    /// The message: this header followed by `payload`.
    pub fn encode(&self, payload: &[u8]) -> Vec<u8> {
        let mut v = Vec::with_capacity(FIXED + 16 * self.runs.len() + payload.len());
        v.push(self.kind as u8);
        v.push(self.flag);
        v.extend_from_slice(&elem_codes(self.elem));
        v.extend_from_slice(&self.reply.to_le_bytes());
        v.extend_from_slice(&self.op.to_le_bytes());
        v.extend_from_slice(&(self.runs.len() as u32).to_le_bytes());
        v.extend_from_slice(&self.offset.to_le_bytes());
        v.extend_from_slice(&self.len.to_le_bytes());
        for &(o, l) in &self.runs {
            v.extend_from_slice(&o.to_le_bytes());
            v.extend_from_slice(&l.to_le_bytes());
        }
        v.extend_from_slice(payload);
        v
    }

    /// A message's header and payload.
    pub fn decode(m: &[u8]) -> Result<(Header, &[u8]), String> {
        if m.len() < FIXED {
            return Err(format!("a one-sided request of {} bytes is shorter than its header", m.len()));
        }
        let u32_at = |i: usize| u32::from_le_bytes(m[i..i + 4].try_into().expect("4 bytes"));
        let u64_at = |i: usize| u64::from_le_bytes(m[i..i + 8].try_into().expect("8 bytes"));
        let kind = Kind::from_u8(m[0]).ok_or_else(|| format!("unknown one-sided request kind {}", m[0]))?;
        let elem = elem_of([m[2], m[3]])?;
        let nruns = u32_at(12) as usize;
        let end = nruns.checked_mul(16).and_then(|n| n.checked_add(FIXED)).filter(|&e| e <= m.len()).ok_or("truncated run list")?;
        let runs: Vec<(i64, u64)> = (0..nruns).map(|k| (u64_at(FIXED + 16 * k) as i64, u64_at(FIXED + 16 * k + 8))).collect();
        let len = u64_at(24);
        if i64::try_from(len).is_err() {
            return Err(format!("a one-sided request of {len} bytes"));
        }
        if !runs.is_empty() {
            let mut sum = 0u64;
            for &(o, l) in &runs {
                if i64::try_from(l).ok().and_then(|l| o.checked_add(l)).is_none() {
                    return Err(format!("a run of {l} bytes at {o} ends past the address space"));
                }
                sum = sum.saturating_add(l);
            }
            if sum != len {
                return Err(format!("runs of {sum} bytes in all for a request of {len} bytes"));
            }
        }
        let h = Header { kind, flag: m[1], elem, reply: u32_at(4) as i32, op: u32_at(8) as i32, offset: u64_at(16), len, runs };
        Ok((h, &m[end..]))
    }

    /// The byte range of the target the request touches, relative to `offset`. Exact for
    /// what [`Header::decode`] accepts; saturated at `i64::MAX` for anything else.
    pub fn span(&self) -> std::ops::Range<i64> {
        let at_most = |l: u64| i64::try_from(l).unwrap_or(i64::MAX);
        if self.runs.is_empty() {
            return 0..at_most(self.len);
        }
        let lo = self.runs.iter().map(|r| r.0).min().unwrap_or(0);
        let hi = self.runs.iter().map(|r| r.0.saturating_add(at_most(r.1))).max().unwrap_or(0);
        lo..hi
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn headers_survive_the_round_trip() {
        let mut h = Header::new(Kind::GetAcc);
        h.flag = 1;
        h.elem = Some(ElemType::Pair(Primitive::Double, Primitive::Int));
        h.reply = 77;
        h.op = 0x5800_0003;
        h.offset = 1 << 40;
        h.len = 24;
        h.runs = vec![(0, 8), (-16, 8), (32, 8)];
        let m = h.encode(b"payload");
        let (back, payload) = Header::decode(&m).unwrap();
        assert_eq!(back, h);
        assert_eq!(payload, b"payload");
        assert_eq!(back.span(), -16..40);
        // A primitive missing from the table would travel as "no element type".
        assert!(Primitive::ALL.iter().all(|p| PRIMS.contains(p)));
        for p in PRIMS {
            let mut h = Header::new(Kind::Acc);
            h.elem = Some(ElemType::Prim(p));
            assert_eq!(Header::decode(&h.encode(&[])).unwrap().0.elem, h.elem);
        }
    }

    #[test]
    fn contiguous_requests_span_their_length() {
        let mut h = Header::new(Kind::Put);
        h.len = 12;
        assert_eq!(h.span(), 0..12);
        assert!(!Kind::Put.answered() && Kind::Get.answered() && Kind::Lock.answered());
    }

    #[test]
    fn malformed_messages_are_refused() {
        assert!(Header::decode(&[1, 0, 0]).is_err());
        let mut m = Header::new(Kind::Put).encode(&[]);
        m[0] = 99;
        assert!(Header::decode(&m).is_err());
        let mut h = Header::new(Kind::Put);
        h.runs = vec![(0, 1)];
        let m = h.encode(&[]);
        assert!(Header::decode(&m[..m.len() - 1]).is_err());
        let mut m = Header::new(Kind::Acc).encode(&[]);
        m[2] = 200;
        assert!(Header::decode(&m).is_err());
    }

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    // The inputs below were found by fuzz/fuzz_targets/rma_requests.rs (its first byte, which
    // picks the window, left out).

    #[test]
    fn a_pair_index_without_a_value_type_is_refused() {
        // Decoded as "no element type", it encoded back to other bytes than it came from.
        let m = hex("0400000e000987612a404040000000000000d91b1b04000000000000000000000000");
        assert_eq!(Header::decode(&m).unwrap_err(), "pair index type 14 without a value type");
    }

    #[test]
    fn a_length_past_i64_max_is_refused() {
        // Its span was 0..-8589993050: empty, so the target located nothing and went on to
        // read 2^64 - 8589993050 bytes.
        let m = hex("041b1b042a2e4000000040000000000001000000e4e4e4e4a61bfffffdffffff0000");
        assert!(Header::decode(&m).unwrap_err().contains("a one-sided request of 18446744065119558566 bytes"));
    }

    #[test]
    fn runs_that_do_not_add_up_to_the_length_are_refused() {
        // One empty run for 3 * 10^18 bytes: an empty span, then an allocation of the length.
        let m = hex("045b04000e0987612a404080010000000000000000002a045b04000e0987612a40408001000000000000000000000000000000000000000000002a0000000000");
        let e = Header::decode(&m).unwrap_err();
        assert!(e.contains("runs of 0 bytes in all for a request of 3053870495293244507 bytes"), "{e}");
        let mut h = Header::new(Kind::Put);
        h.len = 8;
        h.runs = vec![(0, 4), (8, 3)];
        assert!(Header::decode(&h.encode(&[0; 8])).unwrap_err().contains("runs of 7 bytes"));
    }

    #[test]
    fn a_run_that_ends_past_i64_max_is_refused() {
        let mut h = Header::new(Kind::Get);
        h.len = 8;
        h.runs = vec![(i64::MAX - 3, 8)];
        assert!(Header::decode(&h.encode(&[])).unwrap_err().contains("ends past the address space"));
        h.runs = vec![(0, 1 << 63)];
        h.len = 1 << 63;
        assert!(Header::decode(&h.encode(&[])).is_err());
        // Built in the process, such a header still spans without overflow.
        h.runs = vec![(i64::MAX - 3, 8), (-4, 1)];
        assert_eq!(h.span(), -4..i64::MAX);
        h.runs.clear();
        h.len = u64::MAX;
        assert_eq!(h.span(), 0..i64::MAX);
    }

    fn kinds() -> impl Strategy<Value = Kind> {
        use Kind::*;
        prop::sample::select(vec![Put, Get, Acc, GetAcc, Cas, Lock, Unlock, Flush, Complete])
    }

    fn elems() -> impl Strategy<Value = Option<ElemType>> {
        let prim = prop::sample::select(PRIMS.to_vec());
        prop_oneof![
            Just(None),
            prim.clone().prop_map(|p| Some(ElemType::Prim(p))),
            (prim.clone(), prim).prop_map(|(v, i)| Some(ElemType::Pair(v, i))),
        ]
    }

    /// Valid headers: runs anywhere within +-2^40 whose lengths make the length.
    fn headers() -> impl Strategy<Value = Header> {
        let runs = prop::collection::vec((-(1i64 << 40)..(1 << 40), 0u64..1 << 20), 0..6);
        (kinds(), any::<u8>(), elems(), any::<i32>(), any::<i32>(), any::<u64>(), 0u64..1 << 40, runs).prop_map(
            |(kind, flag, elem, reply, op, offset, len, runs)| {
                let len = if runs.is_empty() { len } else { runs.iter().map(|r| r.1).sum() };
                Header { kind, flag, elem, reply, op, offset, len, runs }
            },
        )
    }

    proptest! {
        #[test]
        fn every_valid_header_survives_the_round_trip(h in headers(), payload in prop::collection::vec(any::<u8>(), 0..64)) {
            let m = h.encode(&payload);
            let (back, rest) = Header::decode(&m).unwrap();
            prop_assert_eq!(&back, &h);
            prop_assert_eq!(rest, &payload[..]);
            let span = back.span();
            prop_assert!(span.start <= span.end);
        }

        #[test]
        fn whatever_decodes_encodes_back_to_its_bytes(m in prop::collection::vec(any::<u8>(), 0..96), kind in 1u8..10, nruns in 0u32..3) {
            // Arbitrary bytes with a valid kind and a small run count, so some decode.
            let mut m = m;
            if m.len() >= FIXED {
                m[0] = kind;
                m[12..16].copy_from_slice(&nruns.to_le_bytes());
            }
            if let Ok((h, payload)) = Header::decode(&m) {
                prop_assert_eq!(h.encode(payload), m);
            }
        }
    }
}
