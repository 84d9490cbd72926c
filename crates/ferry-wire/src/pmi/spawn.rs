//! The request of `cmd=ferry_spawn`: which programs to start as a new job of children, and
//! the port their root connects to. Carried in one PMI value as hex, so arguments with
//! spaces or any byte survive the line-based protocol.

use super::PmiError;

/// One program of a spawn: `nprocs` copies of `program` with `args`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpawnCommand {
    pub program: Vec<u8>,
    pub args: Vec<Vec<u8>>,
    pub nprocs: u32,
    /// The children's working directory (absolute); a relative `program` is found from it.
    pub wdir: Vec<u8>,
    /// A directory searched for `program` before the launcher's `PATH` (empty: none).
    pub path: Vec<u8>,
}

/// Everything a spawn asks of the launcher.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpawnRequest {
    /// The port name the children's root connects to.
    pub port: Vec<u8>,
    pub commands: Vec<SpawnCommand>,
}

/// Cap on the number of items (commands, arguments) a request may declare.
const MAX_ITEMS: u32 = 1 << 16;

impl SpawnRequest {
    /// Total processes asked for (saturating).
    pub fn nprocs(&self) -> u32 {
        self.commands.iter().fold(0u32, |n, c| n.saturating_add(c.nprocs))
    }

    /// The request as lowercase hex digits.
    pub fn encode(&self) -> String {
        let mut b = Vec::new();
        put(&mut b, &self.port);
        b.extend_from_slice(&(self.commands.len() as u32).to_le_bytes());
        for c in &self.commands {
            put(&mut b, &c.program);
            b.extend_from_slice(&c.nprocs.to_le_bytes());
            put(&mut b, &c.wdir);
            put(&mut b, &c.path);
            b.extend_from_slice(&(c.args.len() as u32).to_le_bytes());
            for a in &c.args {
                put(&mut b, a);
            }
        }
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    /// Parse [`encode`](Self::encode)'s output; anything else is refused.
    pub fn decode(hex: &str) -> Result<SpawnRequest, PmiError> {
        let bad = |why: &str| PmiError::BadValue { cmd: "ferry_spawn".into(), attr: "request", value: why.into(), expected: "a spawn request in hex" };
        if hex.len() % 2 != 0 {
            return Err(bad("odd length"));
        }
        let digit = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
        // By bytes, not by string slices: a character of several bytes is no hex digit.
        let bytes: Vec<u8> = hex
            .as_bytes()
            .chunks_exact(2)
            .map(|p| Some(digit(p[0])? << 4 | digit(p[1])?))
            .collect::<Option<_>>()
            .ok_or_else(|| bad("not hex"))?;
        let mut r = Reader { bytes: &bytes, at: 0 };
        let port = r.string().ok_or_else(|| bad("truncated"))?;
        let n = r.count().ok_or_else(|| bad("bad command count"))?;
        let mut commands = Vec::new();
        for _ in 0..n {
            let program = r.string().ok_or_else(|| bad("truncated"))?;
            let nprocs = r.u32().ok_or_else(|| bad("truncated"))?;
            let wdir = r.string().ok_or_else(|| bad("truncated"))?;
            let path = r.string().ok_or_else(|| bad("truncated"))?;
            let nargs = r.count().ok_or_else(|| bad("bad argument count"))?;
            let args = (0..nargs).map(|_| r.string()).collect::<Option<Vec<_>>>().ok_or_else(|| bad("truncated"))?;
            commands.push(SpawnCommand { program, args, nprocs, wdir, path });
        }
        if r.at != bytes.len() {
            return Err(bad("trailing bytes"));
        }
        Ok(SpawnRequest { port, commands })
    }
}

fn put(b: &mut Vec<u8>, s: &[u8]) {
    b.extend_from_slice(&(s.len() as u32).to_le_bytes());
    b.extend_from_slice(s);
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn u32(&mut self) -> Option<u32> {
        let b = self.bytes.get(self.at..self.at + 4)?;
        self.at += 4;
        Some(u32::from_le_bytes(b.try_into().expect("four bytes")))
    }

    fn count(&mut self) -> Option<u32> {
        self.u32().filter(|&n| n <= MAX_ITEMS)
    }

    fn string(&mut self) -> Option<Vec<u8>> {
        let n = self.u32()? as usize;
        let s = self.bytes.get(self.at..self.at.checked_add(n)?)?.to_vec();
        self.at += n;
        Some(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_survives_the_trip_and_garbage_is_refused() {
        let req = SpawnRequest {
            port: b"ferry-port:127.0.0.1:5/ab".to_vec(),
            commands: vec![
                SpawnCommand { program: b"./a".to_vec(), args: vec![b"x y".to_vec(), vec![0xff]], nprocs: 2, wdir: b"/tmp".to_vec(), path: Vec::new() },
                SpawnCommand { program: b"b".to_vec(), args: Vec::new(), nprocs: 1, wdir: b"/".to_vec(), path: b"/bin".to_vec() },
            ],
        };
        let hex = req.encode();
        assert!(hex.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_eq!(SpawnRequest::decode(&hex), Ok(req.clone()));
        assert_eq!(req.nprocs(), 3);
        assert!(SpawnRequest::decode(&hex[..hex.len() - 2]).is_err());
        assert!(SpawnRequest::decode(&format!("{hex}00")).is_err());
        assert!(SpawnRequest::decode("zz").is_err());
        assert!(SpawnRequest::decode("ffffffff").is_err());
        // Characters of several bytes (found by fuzzing: a string slice across one panicked).
        assert!(SpawnRequest::decode("\u{1a}\u{fffd}").is_err());
        assert!(SpawnRequest::decode("é0").is_err());
    }
}
