//! The active messages of one-sided communication: what an origin asks of a target, as one
//! message on the window's context (a fixed header, the target layout, then the data).
//! Pure: no runtime, no engine; the round trip is unit-tested below.
//!
//! Layout, little-endian: kind u8, lock type u8, element type u8 u8, reply tag i32, op i32,
//! number of runs u32, offset u64, length u64 (32 bytes); then each run as offset i64 and
//! length u64; then the payload.

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
        [0, _] => Ok(None),
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
        let runs = (0..nruns).map(|k| (u64_at(FIXED + 16 * k) as i64, u64_at(FIXED + 16 * k + 8))).collect();
        let h = Header { kind, flag: m[1], elem, reply: u32_at(4) as i32, op: u32_at(8) as i32, offset: u64_at(16), len: u64_at(24), runs };
        Ok((h, &m[end..]))
    }

    /// The byte range of the target the request touches, relative to `offset`.
    pub fn span(&self) -> std::ops::Range<i64> {
        if self.runs.is_empty() {
            return 0..self.len as i64;
        }
        let lo = self.runs.iter().map(|r| r.0).min().unwrap_or(0);
        let hi = self.runs.iter().map(|r| r.0 + r.1 as i64).max().unwrap_or(0);
        lo..hi
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
