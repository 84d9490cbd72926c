//! The protocol between `ferry run` on the head node and its agent on each host of a job
//! (`ferry agent`), over the pipe pair the launcher template gives them (ssh's stdin and
//! stdout, or those of `ip netns exec`). The head tells an agent which ranks to start and
//! hands their PMI replies down; the agent hands up the ranks' PMI requests, their output
//! and how each one ended. Pure: bytes in, typed messages or a typed error out.
//!
//! A frame is a little-endian `u32` body length, then the body: one kind byte and the
//! kind's fields. Integers are little-endian; a byte string is a `u32` length and the bytes.
//! A frame longer than [`MAX_FRAME`] is refused before it is buffered.

use thiserror::Error;

/// The longest frame body either side accepts (a start message with a large environment).
pub const MAX_FRAME: usize = 4 << 20;

/// Why bytes on the launch pipe could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LaunchError {
    #[error("frame of {0} bytes exceeds the limit of {MAX_FRAME}")]
    TooLong(usize),
    #[error("empty frame")]
    Empty,
    #[error("unknown message kind {0}")]
    UnknownKind(u8),
    #[error("message kind {0} is cut short")]
    Truncated(u8),
    #[error("message kind {kind} has {extra} bytes left over")]
    Trailing { kind: u8, extra: usize },
    #[error("invalid field in message kind {kind}: {why}")]
    Invalid { kind: u8, why: &'static str },
}

/// What an agent starts on its host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartSpec {
    /// The job's size.
    pub size: u32,
    /// The ranks this agent starts, ascending.
    pub ranks: Vec<u32>,
    pub program: Vec<u8>,
    pub args: Vec<Vec<u8>>,
    /// Variables set in every rank, on top of the agent's own environment.
    pub env: Vec<(Vec<u8>, Vec<u8>)>,
    /// The ranks' working directory; empty: the agent's own.
    pub cwd: Vec<u8>,
}

/// Head to agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToAgent {
    Start(StartSpec),
    /// PMI reply bytes for one rank.
    Pmi { rank: u32, bytes: Vec<u8> },
    /// PMI bytes for every rank of the agent (a barrier's release).
    PmiAll { bytes: Vec<u8> },
    /// Send `signal` to every rank of the agent (SIGKILL included).
    Signal { signal: i32 },
}

/// Which output stream of a rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout = 1,
    Stderr = 2,
}

/// How a rank's process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    Exited(i32),
    Signaled { signal: i32, core_dumped: bool },
}

/// Why a rank could not be started, as the head reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpawnFailure {
    NotFound = 1,
    PermissionDenied = 2,
    Other = 3,
}

/// Agent to head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FromAgent {
    Started { rank: u32, pid: u32 },
    LaunchFailed { rank: u32, why: SpawnFailure, message: String },
    Pmi { rank: u32, bytes: Vec<u8> },
    Output { rank: u32, stream: Stream, bytes: Vec<u8> },
    Ended { rank: u32, how: Ended },
}

mod kind {
    pub const START: u8 = 1;
    pub const PMI: u8 = 2;
    pub const PMI_ALL: u8 = 3;
    pub const SIGNAL: u8 = 4;
    pub const STARTED: u8 = 17;
    pub const LAUNCH_FAILED: u8 = 18;
    pub const PMI_UP: u8 = 19;
    pub const OUTPUT: u8 = 20;
    pub const ENDED: u8 = 21;
}

struct Writer(Vec<u8>);

impl Writer {
    fn new(kind: u8) -> Writer {
        Writer(vec![0, 0, 0, 0, kind])
    }
    fn u8(&mut self, v: u8) -> &mut Self {
        self.0.push(v);
        self
    }
    fn u32(&mut self, v: u32) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn i32(&mut self, v: i32) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn bytes(&mut self, b: &[u8]) -> &mut Self {
        self.u32(b.len() as u32);
        self.0.extend_from_slice(b);
        self
    }
    fn finish(mut self) -> Vec<u8> {
        let len = (self.0.len() - 4) as u32;
        self.0[..4].copy_from_slice(&len.to_le_bytes());
        self.0
    }
}

struct Reader<'a> {
    kind: u8,
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], LaunchError> {
        if self.rest.len() < n {
            return Err(LaunchError::Truncated(self.kind));
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Ok(head)
    }
    fn u8(&mut self) -> Result<u8, LaunchError> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> Result<u32, LaunchError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }
    fn i32(&mut self) -> Result<i32, LaunchError> {
        Ok(i32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }
    fn bytes(&mut self) -> Result<Vec<u8>, LaunchError> {
        let n = self.u32()? as usize;
        Ok(self.take(n)?.to_vec())
    }
    /// A count of items that each take at least `min` bytes: refused when the frame cannot
    /// hold that many, so a forged count never reserves memory.
    fn count(&mut self, min: usize) -> Result<usize, LaunchError> {
        let n = self.u32()? as usize;
        if n.saturating_mul(min) > self.rest.len() {
            return Err(LaunchError::Truncated(self.kind));
        }
        Ok(n)
    }
    fn done<T>(self, v: T) -> Result<T, LaunchError> {
        match self.rest.len() {
            0 => Ok(v),
            extra => Err(LaunchError::Trailing { kind: self.kind, extra }),
        }
    }
    fn invalid(&self, why: &'static str) -> LaunchError {
        LaunchError::Invalid { kind: self.kind, why }
    }
}

impl ToAgent {
    pub fn encode(&self) -> Vec<u8> {
        match self {
            ToAgent::Start(s) => {
                let mut w = Writer::new(kind::START);
                w.u32(s.size).u32(s.ranks.len() as u32);
                s.ranks.iter().for_each(|&r| {
                    w.u32(r);
                });
                w.bytes(&s.program).u32(s.args.len() as u32);
                s.args.iter().for_each(|a| {
                    w.bytes(a);
                });
                w.u32(s.env.len() as u32);
                s.env.iter().for_each(|(k, v)| {
                    w.bytes(k).bytes(v);
                });
                w.bytes(&s.cwd);
                w.finish()
            }
            ToAgent::Pmi { rank, bytes } => {
                let mut w = Writer::new(kind::PMI);
                w.u32(*rank).bytes(bytes);
                w.finish()
            }
            ToAgent::PmiAll { bytes } => {
                let mut w = Writer::new(kind::PMI_ALL);
                w.bytes(bytes);
                w.finish()
            }
            ToAgent::Signal { signal } => {
                let mut w = Writer::new(kind::SIGNAL);
                w.i32(*signal);
                w.finish()
            }
        }
    }

    fn decode(body: &[u8]) -> Result<ToAgent, LaunchError> {
        let mut r = reader(body)?;
        let msg = match r.kind {
            kind::START => {
                let size = r.u32()?;
                let n = r.count(4)?;
                let ranks = (0..n).map(|_| r.u32()).collect::<Result<Vec<_>, _>>()?;
                if size == 0 || ranks.iter().any(|&x| x >= size) || ranks.windows(2).any(|w| w[0] >= w[1]) {
                    return Err(r.invalid("ranks must ascend and lie below the job size"));
                }
                let program = r.bytes()?;
                if program.is_empty() || program.contains(&0) {
                    return Err(r.invalid("program must be a non-empty string without NUL"));
                }
                let n = r.count(4)?;
                let args = (0..n).map(|_| r.bytes()).collect::<Result<Vec<_>, _>>()?;
                let n = r.count(8)?;
                let env = (0..n).map(|_| Ok((r.bytes()?, r.bytes()?))).collect::<Result<Vec<_>, LaunchError>>()?;
                if args.iter().chain(env.iter().flat_map(|(k, v)| [k, v])).any(|s| s.contains(&0))
                    || env.iter().any(|(k, _)| k.is_empty() || k.contains(&b'='))
                {
                    return Err(r.invalid("arguments and variables must not contain NUL; names no '='"));
                }
                let cwd = r.bytes()?;
                if cwd.contains(&0) {
                    return Err(r.invalid("the working directory must not contain NUL"));
                }
                ToAgent::Start(StartSpec { size, ranks, program, args, env, cwd })
            }
            kind::PMI => ToAgent::Pmi { rank: r.u32()?, bytes: r.bytes()? },
            kind::PMI_ALL => ToAgent::PmiAll { bytes: r.bytes()? },
            kind::SIGNAL => {
                let signal = r.i32()?;
                if !(1..=64).contains(&signal) {
                    return Err(r.invalid("signal number out of range"));
                }
                ToAgent::Signal { signal }
            }
            k => return Err(LaunchError::UnknownKind(k)),
        };
        r.done(msg)
    }
}

impl FromAgent {
    pub fn encode(&self) -> Vec<u8> {
        match self {
            FromAgent::Started { rank, pid } => {
                let mut w = Writer::new(kind::STARTED);
                w.u32(*rank).u32(*pid);
                w.finish()
            }
            FromAgent::LaunchFailed { rank, why, message } => {
                let mut w = Writer::new(kind::LAUNCH_FAILED);
                w.u32(*rank).u8(*why as u8).bytes(message.as_bytes());
                w.finish()
            }
            FromAgent::Pmi { rank, bytes } => {
                let mut w = Writer::new(kind::PMI_UP);
                w.u32(*rank).bytes(bytes);
                w.finish()
            }
            FromAgent::Output { rank, stream, bytes } => {
                let mut w = Writer::new(kind::OUTPUT);
                w.u32(*rank).u8(*stream as u8).bytes(bytes);
                w.finish()
            }
            FromAgent::Ended { rank, how } => {
                let mut w = Writer::new(kind::ENDED);
                w.u32(*rank);
                match how {
                    Ended::Exited(code) => w.u8(0).i32(*code),
                    Ended::Signaled { signal, core_dumped } => w.u8(1 + *core_dumped as u8).i32(*signal),
                };
                w.finish()
            }
        }
    }

    fn decode(body: &[u8]) -> Result<FromAgent, LaunchError> {
        let mut r = reader(body)?;
        let msg = match r.kind {
            kind::STARTED => FromAgent::Started { rank: r.u32()?, pid: r.u32()? },
            kind::LAUNCH_FAILED => {
                let rank = r.u32()?;
                let why = match r.u8()? {
                    1 => SpawnFailure::NotFound,
                    2 => SpawnFailure::PermissionDenied,
                    3 => SpawnFailure::Other,
                    _ => return Err(r.invalid("unknown launch failure")),
                };
                let message = String::from_utf8_lossy(&r.bytes()?).into_owned();
                FromAgent::LaunchFailed { rank, why, message }
            }
            kind::PMI_UP => FromAgent::Pmi { rank: r.u32()?, bytes: r.bytes()? },
            kind::OUTPUT => {
                let rank = r.u32()?;
                let stream = match r.u8()? {
                    1 => Stream::Stdout,
                    2 => Stream::Stderr,
                    _ => return Err(r.invalid("unknown output stream")),
                };
                FromAgent::Output { rank, stream, bytes: r.bytes()? }
            }
            kind::ENDED => {
                let rank = r.u32()?;
                let how = match (r.u8()?, r.i32()?) {
                    (0, code) => Ended::Exited(code),
                    (t @ (1 | 2), signal) if (1..=64).contains(&signal) => Ended::Signaled { signal, core_dumped: t == 2 },
                    _ => return Err(r.invalid("unknown way of ending")),
                };
                FromAgent::Ended { rank, how }
            }
            k => return Err(LaunchError::UnknownKind(k)),
        };
        r.done(msg)
    }
}

fn reader(body: &[u8]) -> Result<Reader<'_>, LaunchError> {
    match body.split_first() {
        Some((&kind, rest)) => Ok(Reader { kind, rest }),
        None => Err(LaunchError::Empty),
    }
}

/// Splits a byte stream into frames and decodes them. After an error the stream is out of
/// step for good: every later call returns the same error.
#[derive(Debug, Default)]
pub struct FrameReader {
    buf: Vec<u8>,
    failed: Option<LaunchError>,
}

impl FrameReader {
    pub fn new() -> FrameReader {
        FrameReader::default()
    }

    pub fn push(&mut self, bytes: &[u8]) {
        if self.failed.is_none() {
            self.buf.extend_from_slice(bytes);
        }
    }

    /// Bytes of a frame not complete yet.
    pub fn pending(&self) -> usize {
        self.buf.len()
    }

    fn next_body(&mut self) -> Option<Result<Vec<u8>, LaunchError>> {
        if let Some(e) = &self.failed {
            return Some(Err(e.clone()));
        }
        if self.buf.len() < 4 {
            return None;
        }
        let len = u32::from_le_bytes(self.buf[..4].try_into().expect("4 bytes")) as usize;
        if len > MAX_FRAME {
            self.buf = Vec::new();
            self.failed = Some(LaunchError::TooLong(len));
            return self.next_body();
        }
        if self.buf.len() < 4 + len {
            return None;
        }
        let body = self.buf[4..4 + len].to_vec();
        self.buf.drain(..4 + len);
        Some(Ok(body))
    }

    fn next_with<T>(&mut self, decode: fn(&[u8]) -> Result<T, LaunchError>) -> Option<Result<T, LaunchError>> {
        let result = self.next_body()?.and_then(|b| decode(&b));
        if let Err(e) = &result {
            self.buf = Vec::new();
            self.failed = Some(e.clone());
        }
        Some(result)
    }

    /// The next message from the head, if a whole frame has arrived.
    pub fn next_to_agent(&mut self) -> Option<Result<ToAgent, LaunchError>> {
        self.next_with(ToAgent::decode)
    }

    /// The next message from an agent, if a whole frame has arrived.
    pub fn next_from_agent(&mut self) -> Option<Result<FromAgent, LaunchError>> {
        self.next_with(FromAgent::decode)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn spec() -> StartSpec {
        StartSpec {
            size: 8,
            ranks: vec![2, 3, 7],
            program: b"/bin/prog".to_vec(),
            args: vec![b"-x".to_vec(), Vec::new()],
            env: vec![(b"FERRY_HOST_ID".to_vec(), b"n1".to_vec()), (b"EMPTY".to_vec(), Vec::new())],
            cwd: b"/home/u".to_vec(),
        }
    }

    fn to_agent_all() -> Vec<ToAgent> {
        vec![
            ToAgent::Start(spec()),
            ToAgent::Pmi { rank: 3, bytes: b"cmd=barrier_out\n".to_vec() },
            ToAgent::PmiAll { bytes: Vec::new() },
            ToAgent::Signal { signal: 15 },
        ]
    }

    fn from_agent_all() -> Vec<FromAgent> {
        vec![
            FromAgent::Started { rank: 2, pid: 4242 },
            FromAgent::LaunchFailed { rank: 7, why: SpawnFailure::NotFound, message: "No such file".into() },
            FromAgent::Pmi { rank: 3, bytes: b"cmd=init pmi_version=1 pmi_subversion=1\n".to_vec() },
            FromAgent::Output { rank: 2, stream: Stream::Stderr, bytes: b"partial line".to_vec() },
            FromAgent::Ended { rank: 2, how: Ended::Exited(3) },
            FromAgent::Ended { rank: 3, how: Ended::Signaled { signal: 9, core_dumped: false } },
            FromAgent::Ended { rank: 7, how: Ended::Signaled { signal: 11, core_dumped: true } },
        ]
    }

    #[test]
    fn round_trip_in_one_stream_split_anywhere() {
        let to: Vec<u8> = to_agent_all().iter().flat_map(ToAgent::encode).collect();
        let from: Vec<u8> = from_agent_all().iter().flat_map(FromAgent::encode).collect();
        for cut in [1, 3, 4, 5, 17, 1000] {
            let mut r = FrameReader::new();
            let mut got = Vec::new();
            for piece in to.chunks(cut) {
                r.push(piece);
                while let Some(m) = r.next_to_agent() {
                    got.push(m.expect("valid"));
                }
            }
            assert_eq!(got, to_agent_all());
            assert_eq!(r.pending(), 0);
            let mut r = FrameReader::new();
            let mut got = Vec::new();
            for piece in from.chunks(cut) {
                r.push(piece);
                while let Some(m) = r.next_from_agent() {
                    got.push(m.expect("valid"));
                }
            }
            assert_eq!(got, from_agent_all());
        }
    }

    fn first_error_to_agent(bytes: &[u8]) -> LaunchError {
        let mut r = FrameReader::new();
        r.push(bytes);
        r.next_to_agent().expect("a frame").expect_err("refused")
    }

    #[test]
    fn refuses_what_does_not_fit() {
        assert_eq!(first_error_to_agent(&(MAX_FRAME as u32 + 1).to_le_bytes()), LaunchError::TooLong(MAX_FRAME + 1));
        assert_eq!(first_error_to_agent(&[0, 0, 0, 0]), LaunchError::Empty);
        assert_eq!(first_error_to_agent(&[1, 0, 0, 0, 99]), LaunchError::UnknownKind(99));
        // A PMI message whose byte string claims more than the frame holds.
        assert_eq!(first_error_to_agent(&[9, 0, 0, 0, kind::PMI, 1, 0, 0, 0, 200, 0, 0, 0]), LaunchError::Truncated(kind::PMI));
        let mut sig = ToAgent::Signal { signal: 9 }.encode();
        sig.push(0);
        sig[0] += 1;
        assert_eq!(first_error_to_agent(&sig), LaunchError::Trailing { kind: kind::SIGNAL, extra: 1 });
        let bad = ToAgent::Signal { signal: 0 }.encode();
        assert!(matches!(first_error_to_agent(&bad), LaunchError::Invalid { .. }));
        for broken in [
            StartSpec { ranks: vec![3, 2], ..spec() },
            StartSpec { ranks: vec![8], ..spec() },
            StartSpec { size: 0, ranks: vec![], ..spec() },
            StartSpec { program: Vec::new(), ..spec() },
            StartSpec { args: vec![b"a\0b".to_vec()], ..spec() },
            StartSpec { env: vec![(b"A=B".to_vec(), b"c".to_vec())], ..spec() },
            StartSpec { cwd: b"/a\0".to_vec(), ..spec() },
        ] {
            assert!(matches!(first_error_to_agent(&ToAgent::Start(broken).encode()), LaunchError::Invalid { .. }));
        }
    }

    #[test]
    fn a_forged_count_reserves_nothing() {
        let mut w = Writer::new(kind::START);
        w.u32(4).u32(u32::MAX);
        assert_eq!(first_error_to_agent(&w.finish()), LaunchError::Truncated(kind::START));
    }

    #[test]
    fn an_error_sticks() {
        let mut r = FrameReader::new();
        r.push(&[1, 0, 0, 0, 99]);
        assert!(r.next_from_agent().expect("frame").is_err());
        r.push(&FromAgent::Started { rank: 0, pid: 1 }.encode());
        assert_eq!(r.next_from_agent(), Some(Err(LaunchError::UnknownKind(99))));
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..512), cut in 1usize..64) {
            let mut a = FrameReader::new();
            let mut b = FrameReader::new();
            for piece in data.chunks(cut) {
                a.push(piece);
                b.push(piece);
                while let Some(Ok(_)) = a.next_to_agent() {}
                while let Some(Ok(_)) = b.next_from_agent() {}
            }
        }

        #[test]
        fn output_and_pmi_round_trip(rank in any::<u32>(), bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            let msgs = vec![
                FromAgent::Output { rank, stream: Stream::Stdout, bytes: bytes.clone() },
                FromAgent::Pmi { rank, bytes: bytes.clone() },
            ];
            let mut r = FrameReader::new();
            msgs.iter().for_each(|m| r.push(&m.encode()));
            prop_assert_eq!(r.next_from_agent(), Some(Ok(msgs[0].clone())));
            prop_assert_eq!(r.next_from_agent(), Some(Ok(msgs[1].clone())));
            prop_assert_eq!(r.next_from_agent(), None);
        }
    }
}
