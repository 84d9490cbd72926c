//! The agreement's messages as bytes (little-endian), with the number of the agreement they
//! belong to. Bytes from peers: every length is checked before use.

use super::{Msg, Ranks, Value};

const COLLECT: u8 = 1;
const CONTRIBUTE: u8 = 2;
const DECIDE: u8 = 3;
const ACK: u8 = 4;
const COMMIT: u8 = 5;

/// `msg` of agreement number `seq`.
pub fn encode(seq: u32, msg: &Msg) -> Vec<u8> {
    let mut b = seq.to_le_bytes().to_vec();
    let (kind, epoch) = match msg {
        Msg::Collect { epoch } => (COLLECT, *epoch),
        Msg::Contribute { epoch, .. } => (CONTRIBUTE, *epoch),
        Msg::Decide { epoch, .. } => (DECIDE, *epoch),
        Msg::Ack { epoch } => (ACK, *epoch),
        Msg::Commit { .. } => (COMMIT, 0),
    };
    b.push(kind);
    b.extend_from_slice(&epoch.to_le_bytes());
    match msg {
        Msg::Contribute { value, held, .. } => {
            put_value(&mut b, value);
            match held {
                Some((e, v)) => {
                    b.push(1);
                    b.extend_from_slice(&e.to_le_bytes());
                    put_value(&mut b, v);
                }
                None => b.push(0),
            }
        }
        Msg::Decide { value, .. } | Msg::Commit { value } => put_value(&mut b, value),
        Msg::Collect { .. } | Msg::Ack { .. } => {}
    }
    b
}

/// The agreement number and message in `b`, for participants `0..n`; `None` for bytes that
/// are no such message.
pub fn decode(b: &[u8], n: usize) -> Option<(u32, Msg)> {
    let mut r = Reader { b, at: 0 };
    let seq = r.u32()?;
    let kind = r.u8()?;
    let epoch = r.u32()?;
    if epoch as usize >= n {
        return None;
    }
    let msg = match kind {
        COLLECT => Msg::Collect { epoch },
        ACK => Msg::Ack { epoch },
        CONTRIBUTE => {
            let value = r.value(n)?;
            let held = match r.u8()? {
                0 => None,
                1 => Some((r.u32()?, r.value(n)?)),
                _ => return None,
            };
            Msg::Contribute { epoch, value, held }
        }
        DECIDE => Msg::Decide { epoch, value: r.value(n)? },
        COMMIT => Msg::Commit { value: r.value(n)? },
        _ => return None,
    };
    (r.at == b.len()).then_some((seq, msg))
}

fn put_value(b: &mut Vec<u8>, v: &Value) {
    b.extend_from_slice(&v.flags.to_le_bytes());
    b.extend_from_slice(&v.floor.to_le_bytes());
    b.extend_from_slice(&(v.failed.0.len() as u32).to_le_bytes());
    for w in v.failed.0.iter().chain(&v.acked.0) {
        b.extend_from_slice(&w.to_le_bytes());
    }
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let s = self.b.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(s)
    }
    fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn value(&mut self, n: usize) -> Option<Value> {
        let (flags, floor, words) = (self.u32()?, self.u32()?, self.u32()? as usize);
        if words != n.div_ceil(64) {
            return None;
        }
        let mut set = || (0..words).map(|_| self.u64()).collect::<Option<Vec<u64>>>().map(Ranks);
        let failed = set()?;
        let acked = set()?;
        Some(Value { flags, floor, failed, acked })
    }
}
