//! The blocking PMI-1 client each rank's MPI library uses to learn its rank and size and to
//! exchange business cards. It speaks over the socket a launcher hands down in `PMI_FD`,
//! as MPICH's Hydra and `ferry run` both do; without `PMI_FD` a program is a singleton.

use std::fmt;
use std::io::{ErrorKind, Read};
use std::os::fd::{AsRawFd, FromRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};

use super::pmi_wire::{check_value, Command, LineSplitter, PmiError, Response, SpawnRequest, PMI_SUBVERSION, PMI_VERSION};
use super::{generate_job_secret, is_job_secret, JOB_SECRET_FALLBACK_KEY, JOB_SECRET_KEY};

/// Set once a `PmiClient` owns the descriptor in `PMI_FD`, so a second `from_env` in the same
/// process cannot close it twice.
static PMI_FD_CLAIMED: AtomicBool = AtomicBool::new(false);

/// A rank's connection to its process manager. Calls block until the server answers; a
/// launcher that dies closes the socket, which turns into [`PmiError::Closed`].
pub struct PmiClient {
    /// The job secret came seeded: `ferry run` serves this job.
    ferry_launcher: bool,
    stream: UnixStream,
    splitter: LineSplitter,
    rank: u32,
    size: u32,
    appnum: i32,
    kvsname: String,
    keylen_max: usize,
    vallen_max: usize,
    job_secret: Option<String>,
    finalized: bool,
}

impl fmt::Debug for PmiClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never print the job secret.
        f.debug_struct("PmiClient")
            .field("fd", &self.stream.as_raw_fd())
            .field("rank", &self.rank)
            .field("size", &self.size)
            .field("appnum", &self.appnum)
            .field("kvsname", &self.kvsname)
            .field("finalized", &self.finalized)
            .finish_non_exhaustive()
    }
}

/// What a launcher put in the environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct PmiEnv {
    fd: RawFd,
    rank: u32,
    size: u32,
}

/// Read `PMI_FD`, `PMI_RANK` and `PMI_SIZE` from their values; `None` when `PMI_FD` is
/// absent or empty.
fn parse_env(fd: Option<&str>, rank: Option<&str>, size: Option<&str>) -> Result<Option<PmiEnv>, PmiError> {
    let Some(fd) = fd.filter(|v| !v.is_empty()) else { return Ok(None) };
    let number = |name: &str, v: Option<&str>| -> Result<u32, PmiError> {
        let v = v.ok_or_else(|| PmiError::Env(format!("PMI_FD is set but {name} is not")))?;
        v.parse::<u32>().map_err(|_| PmiError::Env(format!("{name}={v:?} is not a non-negative integer")))
    };
    let fd = fd
        .parse::<RawFd>()
        .ok()
        .filter(|fd| *fd >= 0)
        .ok_or_else(|| PmiError::Env(format!("PMI_FD={fd:?} is not a file descriptor number")))?;
    let rank = number("PMI_RANK", rank)?;
    let size = number("PMI_SIZE", size)?;
    if size == 0 || rank >= size {
        return Err(PmiError::Env(format!("PMI_RANK={rank} is not a rank of a job of PMI_SIZE={size}")));
    }
    Ok(Some(PmiEnv { fd, rank, size }))
}

impl PmiClient {
    /// Connect to the launcher named by the environment (`PMI_FD`, `PMI_RANK`, `PMI_SIZE`, as
    /// Hydra and `ferry run` set them) and run the PMI handshake (`init`, `get_maxes`,
    /// `get_appnum`, `get_my_kvsname`). `Ok(None)` when `PMI_FD` is absent: the program was
    /// started without a launcher and runs as a singleton of size 1.
    pub fn from_env() -> Result<Option<PmiClient>, PmiError> {
        let var = |name: &str| -> Result<Option<String>, PmiError> {
            match std::env::var_os(name) {
                None => Ok(None),
                Some(v) => v.into_string().map(Some).map_err(|v| PmiError::Env(format!("{name}={v:?} is not valid UTF-8"))),
            }
        };
        let (fd, rank, size) = (var("PMI_FD")?, var("PMI_RANK")?, var("PMI_SIZE")?);
        let Some(env) = parse_env(fd.as_deref(), rank.as_deref(), size.as_deref())? else {
            return Ok(None);
        };
        check_is_socket(env.fd)?;
        if PMI_FD_CLAIMED.swap(true, Ordering::SeqCst) {
            return Err(PmiError::Env(format!("PMI_FD={} is already owned by another PMI client in this process", env.fd)));
        }
        // SAFETY: the descriptor is open and a socket (checked above), the launcher handed it
        // to this process for PMI alone, and PMI_FD_CLAIMED makes this the only owner.
        let stream = unsafe { UnixStream::from_raw_fd(env.fd) };
        // Programs this rank starts must not inherit the job's PMI channel.
        set_cloexec(env.fd)?;
        PmiClient::from_stream(stream, env.rank, env.size).map(Some)
    }

    /// Run the PMI handshake over an already connected socket (tests, or a driver that got
    /// the channel some other way).
    pub fn from_stream(stream: UnixStream, rank: u32, size: u32) -> Result<PmiClient, PmiError> {
        let mut client = PmiClient {
            stream,
            splitter: LineSplitter::new(),
            rank,
            size,
            appnum: 0,
            kvsname: String::new(),
            keylen_max: 0,
            vallen_max: 0,
            job_secret: None,
            finalized: false,
            ferry_launcher: false,
        };
        match client.call(Command::Init { version: PMI_VERSION, subversion: PMI_SUBVERSION })? {
            Response::ResponseToInit { version: 1, .. } => {}
            Response::ResponseToInit { version, subversion } => {
                return Err(PmiError::Refused {
                    cmd: "init",
                    rc: 0,
                    msg: format!("the server speaks PMI {version}.{subversion}, not 1.x"),
                })
            }
            other => return Err(refusal("init", other)),
        }
        let (keylen_max, vallen_max) = match client.call(Command::GetMaxes)? {
            Response::Maxes { keylen_max, vallen_max, .. } => (keylen_max as usize, vallen_max as usize),
            other => return Err(refusal("get_maxes", other)),
        };
        client.appnum = match client.call(Command::GetAppnum)? {
            Response::Appnum { appnum } => appnum,
            other => return Err(refusal("get_appnum", other)),
        };
        client.kvsname = match client.call(Command::GetMyKvsname)? {
            Response::MyKvsname { kvsname } => kvsname,
            other => return Err(refusal("get_my_kvsname", other)),
        };
        // The advertised maxima count C's terminating NUL (Hydra cuts a 1024-byte value to
        // 1023 when it advertises vallen_max=1024). And whatever the server allows, a put
        // line must fit in SERVER_LINE_MAX.
        let (keylen_max, vallen_max) = limits(keylen_max, vallen_max, &client.kvsname);
        client.keylen_max = keylen_max;
        client.vallen_max = vallen_max;
        Ok(client)
    }

    pub fn rank(&self) -> u32 {
        self.rank
    }

    pub fn size(&self) -> u32 {
        self.size
    }

    pub fn appnum(&self) -> i32 {
        self.appnum
    }

    /// The job's key-value space.
    pub fn kvsname(&self) -> &str {
        &self.kvsname
    }

    /// Longest key `put` and `get` accept, in bytes (one less than the server's advertised
    /// `keylen_max`, which counts C's terminating NUL).
    pub fn keylen_max(&self) -> usize {
        self.keylen_max
    }

    /// Longest value `put` accepts, in bytes: one less than the server's advertised
    /// `vallen_max`, or less so that a put line of the longest key and value fits in
    /// [`SERVER_LINE_MAX`] (about 930 bytes under Hydra, Slurm and `ferry run`).
    pub fn vallen_max(&self) -> usize {
        self.vallen_max
    }

    /// How many processes the job may grow to; Hydra answers -1 for "no limit".
    pub fn universe_size(&mut self) -> Result<i32, PmiError> {
        match self.call(Command::GetUniverseSize)? {
            Response::UniverseSize { size } => Ok(size),
            other => Err(refusal("get_universe_size", other)),
        }
    }

    /// Store `value` under `key` in the job's key-value space. Both must be printable ASCII
    /// without spaces or backslashes, the key at most [`keylen_max`](Self::keylen_max) bytes,
    /// the value at most [`vallen_max`](Self::vallen_max); other ranks may rely on seeing it
    /// only after the next [`barrier`](Self::barrier).
    pub fn put(&mut self, key: &str, value: &str) -> Result<(), PmiError> {
        self.check_key(key)?;
        check_value("value", value)?;
        if value.len() > self.vallen_max {
            return Err(PmiError::TooLong { what: "value", len: value.len(), max: self.vallen_max });
        }
        let put = Command::Put { kvsname: Some(self.kvsname.clone()), key: key.to_owned(), value: value.to_owned() };
        match self.call(put)? {
            Response::PutResult => Ok(()),
            other => Err(refusal("put", other)),
        }
    }

    /// The value stored under `key`, or `None` when there is none (the server answered
    /// `get_result` with a non-zero `rc`, which is how PMI-1 says "not found").
    pub fn get(&mut self, key: &str) -> Result<Option<String>, PmiError> {
        self.check_key(key)?;
        match self.call(Command::Get { kvsname: Some(self.kvsname.clone()), key: key.to_owned() })? {
            Response::GetResult { value } => Ok(Some(value)),
            Response::Failed { .. } => Ok(None),
            other => Err(refusal("get", other)),
        }
    }

    /// Whether the launcher is `ferry run` (it seeded the job secret), which serves spawn
    /// and names; known once [`job_secret`](Self::job_secret) has run.
    pub fn is_ferry_launcher(&self) -> bool {
        self.ferry_launcher
    }

    /// Ask the launcher to start the children `request` describes; their job's name, or
    /// the launcher's reason why not.
    pub fn spawn(&mut self, request: &SpawnRequest) -> Result<String, PmiError> {
        match self.call(Command::Spawn { request: request.encode() })? {
            Response::SpawnResult { kvsname } => Ok(kvsname),
            other => Err(refusal("ferry_spawn", other)),
        }
    }

    /// Publish `port` under `service` in the launcher's name service.
    pub fn publish_name(&mut self, service: &str, port: &str) -> Result<(), PmiError> {
        match self.call(Command::PublishName { service: service.to_owned(), port: port.to_owned() })? {
            Response::PublishResult => Ok(()),
            other => Err(refusal("publish_name", other)),
        }
    }

    /// The port published under `service`.
    pub fn lookup_name(&mut self, service: &str) -> Result<String, PmiError> {
        match self.call(Command::LookupName { service: service.to_owned() })? {
            Response::LookupResult { port } => Ok(port),
            other => Err(refusal("lookup_name", other)),
        }
    }

    /// Withdraw what `service` published.
    pub fn unpublish_name(&mut self, service: &str) -> Result<(), PmiError> {
        match self.call(Command::UnpublishName { service: service.to_owned() })? {
            Response::UnpublishResult => Ok(()),
            other => Err(refusal("unpublish_name", other)),
        }
    }

    /// Wait until every rank of the job has entered the barrier.
    pub fn barrier(&mut self) -> Result<(), PmiError> {
        match self.call(Command::BarrierIn)? {
            Response::BarrierOut => Ok(()),
            other => Err(refusal("barrier_in", other)),
        }
    }

    /// Tell the launcher this rank is done with PMI (MPI_Finalize). Further calls fail with
    /// [`PmiError::Finalized`]; finalizing twice is harmless.
    pub fn finalize(&mut self) -> Result<(), PmiError> {
        if self.finalized {
            return Ok(());
        }
        match self.call(Command::Finalize)? {
            Response::FinalizeAck => {
                self.finalized = true;
                Ok(())
            }
            other => Err(refusal("finalize", other)),
        }
    }

    /// Ask the launcher to abort the whole job with exit code `code` (MPI_Abort). PMI sends no
    /// reply: this returns once the request is written and the caller should then exit with
    /// `code` itself (the launcher will stop every rank in any case). `message` is sent
    /// with characters PMI cannot carry replaced, and cut to fit one line.
    pub fn abort(&mut self, code: i32, message: &str) -> Result<(), PmiError> {
        let mut text: String = message
            .chars()
            .map(|c| match c {
                ' '..='~' => c,
                '\n' | '\r' | '\t' => ' ',
                _ => '?',
            })
            .collect();
        text.truncate(SERVER_LINE_MAX - 64);
        let message = Some(text.trim_end().to_owned()).filter(|m| !m.is_empty());
        let line = Command::Abort { exitcode: code, message }.to_line()?;
        self.send(&line)
    }

    /// The per-job secret that authenticates connections between ranks: 64 lowercase hex
    /// digits, handed out only through PMI.
    ///
    /// Under `ferry run` the launcher seeded it under [`JOB_SECRET_KEY`] before any rank
    /// started, so every rank just reads it. Under a launcher that does not know Ferry (Hydra,
    /// Slurm) the key is absent in every rank; then rank 0 generates a secret and puts it
    /// under [`JOB_SECRET_FALLBACK_KEY`], all ranks meet in a PMI barrier, and the others read
    /// it. In that case this call is collective: every rank must make it, at the same point.
    /// The answer is cached, so later calls are local.
    pub fn job_secret(&mut self) -> Result<String, PmiError> {
        if let Some(secret) = &self.job_secret {
            return Ok(secret.clone());
        }
        let secret = match self.get(JOB_SECRET_KEY)? {
            Some(secret) => {
                self.ferry_launcher = true;
                secret
            }
            None => {
                if self.rank == 0 {
                    let secret = generate_job_secret()?;
                    self.put(JOB_SECRET_FALLBACK_KEY, &secret)?;
                    self.barrier()?;
                    secret
                } else {
                    self.barrier()?;
                    self.get(JOB_SECRET_FALLBACK_KEY)?.ok_or_else(|| PmiError::Refused {
                        cmd: "get",
                        rc: -1,
                        msg: format!("rank 0 did not publish {JOB_SECRET_FALLBACK_KEY} before the barrier"),
                    })?
                }
            }
        };
        if !is_job_secret(&secret) {
            return Err(PmiError::InvalidArgument {
                what: "job secret",
                value: "(not shown)".into(),
                why: "expected 64 lowercase hex digits",
            });
        }
        self.job_secret = Some(secret.clone());
        Ok(secret)
    }

    fn check_key(&self, key: &str) -> Result<(), PmiError> {
        check_value("key", key)?;
        if key.len() > self.keylen_max {
            return Err(PmiError::TooLong { what: "key", len: key.len(), max: self.keylen_max });
        }
        Ok(())
    }

    /// Send `command` and read its reply, which must carry the name the command expects
    /// (possibly as a refusal with a non-zero `rc`).
    fn call(&mut self, command: Command) -> Result<Response, PmiError> {
        if self.finalized {
            return Err(PmiError::Finalized);
        }
        let expected = command.response_kind().expect("call() is never used for abort, which has no reply");
        self.send(&command.to_line()?)?;
        let response = self.read_response()?;
        match response {
            _ if response.kind() == expected => Ok(response),
            Response::Failed { rc, msg, .. } => Err(PmiError::Refused { cmd: command.name(), rc: rc.get(), msg }),
            other => Err(PmiError::UnexpectedResponse { expected: expected.name(), got: other.kind().name() }),
        }
    }

    fn send(&mut self, line: &str) -> Result<(), PmiError> {
        let mut bytes = line.as_bytes();
        while !bytes.is_empty() {
            // MSG_NOSIGNAL: a C program that loads this library has not ignored SIGPIPE, and a
            // dead launcher must be an error here, not a signal that kills the rank.
            // SAFETY: the pointer and length describe the live `bytes` slice.
            let n = unsafe { libc::send(self.stream.as_raw_fd(), bytes.as_ptr().cast(), bytes.len(), libc::MSG_NOSIGNAL) };
            if n < 0 {
                let e = std::io::Error::last_os_error();
                match e.kind() {
                    ErrorKind::Interrupted => continue,
                    ErrorKind::BrokenPipe | ErrorKind::ConnectionReset => return Err(PmiError::Closed),
                    _ => return Err(PmiError::Io(format!("sending to the PMI server: {e}"))),
                }
            }
            bytes = &bytes[n as usize..];
        }
        Ok(())
    }

    fn read_response(&mut self) -> Result<Response, PmiError> {
        let mut buf = [0u8; 1024];
        loop {
            if let Some(line) = self.splitter.next_line() {
                return Response::parse(&line?);
            }
            match self.stream.read(&mut buf) {
                Ok(0) => return Err(PmiError::Closed),
                Ok(n) => self.splitter.push(&buf[..n]),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if e.kind() == ErrorKind::ConnectionReset => return Err(PmiError::Closed),
                Err(e) => return Err(PmiError::Io(format!("reading from the PMI server: {e}"))),
            }
        }
    }
}

/// Longest request line, newline included, that every PMI-1 server reads whole. MPICH's
/// simple PMI client never writes more (its line buffer is 1024 bytes), and Slurm's pmi2
/// plugin relies on that: it reads each request with a single read of 1024 bytes, so the
/// rest of a longer `put` arrives as a request of its own, which it cannot parse, and the
/// job hangs.
pub const SERVER_LINE_MAX: usize = 1024;

/// (longest key, longest value) for a server that advertised `keylen_max` and `vallen_max`
/// (both counting C's terminating NUL) and named the job's key-value space `kvsname`: a `put`
/// of both at their longest still fits in [`SERVER_LINE_MAX`]. The value limit is 0 (every
/// put refused) when the server's names leave no room.
fn limits(keylen_max: usize, vallen_max: usize, kvsname: &str) -> (usize, usize) {
    let overhead = "cmd=put kvsname= key= value=\n".len() + kvsname.len();
    let key = keylen_max.saturating_sub(1).min(SERVER_LINE_MAX / 4);
    let value = vallen_max.saturating_sub(1).min(SERVER_LINE_MAX.saturating_sub(overhead + key));
    (key, value)
}

/// The error for a reply of the right name that refuses, or of a shape we did not expect.
fn refusal(cmd: &'static str, response: Response) -> PmiError {
    match response {
        Response::Failed { rc, msg, .. } => PmiError::Refused { cmd, rc: rc.get(), msg },
        other => PmiError::UnexpectedResponse { expected: cmd, got: other.kind().name() },
    }
}

fn check_is_socket(fd: RawFd) -> Result<(), PmiError> {
    // SAFETY: fstat only writes into the zeroed struct we pass; a bad fd yields EBADF.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        let e = std::io::Error::last_os_error();
        return Err(PmiError::Env(format!("PMI_FD={fd} is not an open file descriptor ({e})")));
    }
    if st.st_mode & libc::S_IFMT != libc::S_IFSOCK {
        return Err(PmiError::Env(format!("PMI_FD={fd} is not a socket")));
    }
    Ok(())
}

fn set_cloexec(fd: RawFd) -> Result<(), PmiError> {
    // SAFETY: fcntl on a descriptor we own; no memory is passed.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC) } < 0 {
        return Err(PmiError::Io(format!("cannot set close-on-exec on PMI_FD={fd}: {}", std::io::Error::last_os_error())));
    }
    Ok(())
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::bootstrap::pmi_server::{Action, PmiServer};
    use std::io::Write;
    use std::sync::{Arc, Mutex};
    use std::thread;

    const SECRET: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    /// Serve `size` ranks with a real `PmiServer`, one thread per connection. With
    /// `hide_secret`, gets of the launcher's secret key are answered "not found", as a
    /// foreign launcher would.
    fn serve(size: u32, hide_secret: bool) -> (Vec<UnixStream>, Vec<thread::JoinHandle<Vec<Action>>>) {
        serve_job(size, hide_secret, "kvs_test_0")
    }

    /// A PMI server for a job of `size` ranks named `kvs`, each served by a thread; the
    /// client ends of the ranks' sockets.
    pub(in crate::bootstrap) fn serve_job(size: u32, hide_secret: bool, kvs: &str) -> (Vec<UnixStream>, Vec<thread::JoinHandle<Vec<Action>>>) {
        let server = Arc::new(Mutex::new(PmiServer::new(size, kvs, SECRET).unwrap()));
        let mut clients = Vec::new();
        let mut ours = Vec::new();
        for _ in 0..size {
            let (a, b) = UnixStream::pair().unwrap();
            clients.push(a);
            ours.push(b);
        }
        let writers: Arc<Vec<UnixStream>> = Arc::new(ours.iter().map(|s| s.try_clone().unwrap()).collect());
        let mut threads = Vec::new();
        for (rank, mut stream) in ours.into_iter().enumerate() {
            let server = Arc::clone(&server);
            let writers = Arc::clone(&writers);
            threads.push(thread::spawn(move || {
                let mut seen = Vec::new();
                let mut buf = [0u8; 512];
                loop {
                    let n = match stream.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => n,
                    };
                    let mut bytes = buf[..n].to_vec();
                    let text = String::from_utf8_lossy(&bytes).to_string();
                    if hide_secret && text.contains(&format!("key={JOB_SECRET_KEY}\n")) {
                        (&writers[rank]).write_all(b"cmd=get_result rc=-1 msg=not_found\n").unwrap();
                        continue;
                    }
                    let actions = server.lock().unwrap().receive(rank as u32, &bytes);
                    for a in &actions {
                        match a {
                            Action::Reply { rank, bytes } => (&writers[*rank as usize]).write_all(bytes).unwrap(),
                            Action::ReplyAll { bytes } => writers.iter().for_each(|mut w| w.write_all(bytes).unwrap()),
                            _ => {}
                        }
                    }
                    seen.extend(actions);
                    bytes.clear();
                }
                server.lock().unwrap().rank_gone(rank as u32);
                seen
            }));
        }
        (clients, threads)
    }

    #[test]
    fn a_job_of_three_exchanges_cards_and_shares_the_secret() {
        let (streams, threads) = serve(3, false);
        let ranks: Vec<_> = streams
            .into_iter()
            .enumerate()
            .map(|(rank, stream)| {
                thread::spawn(move || {
                    let mut pmi = PmiClient::from_stream(stream, rank as u32, 3).unwrap();
                    assert_eq!((pmi.rank(), pmi.size(), pmi.appnum(), pmi.kvsname()), (rank as u32, 3, 0, "kvs_test_0"));
                    assert_eq!((pmi.keylen_max(), pmi.vallen_max()), (63, 922));
                    assert_eq!(pmi.universe_size().unwrap(), 3);
                    pmi.put(&format!("card-{rank}"), &format!("tcp:127.0.0.1:{}", 4000 + rank)).unwrap();
                    pmi.barrier().unwrap();
                    let next = (rank + 1) % 3;
                    assert_eq!(pmi.get(&format!("card-{next}")).unwrap(), Some(format!("tcp:127.0.0.1:{}", 4000 + next)));
                    assert_eq!(pmi.get("no-such-card").unwrap(), None);
                    assert_eq!(pmi.job_secret().unwrap(), SECRET);
                    pmi.finalize().unwrap();
                    pmi.finalize().unwrap();
                    assert_eq!(pmi.get("card-0"), Err(PmiError::Finalized));
                })
            })
            .collect();
        for r in ranks {
            r.join().unwrap();
        }
        for t in threads {
            let actions = t.join().unwrap();
            assert!(actions.iter().all(|a| !matches!(a, Action::Refused { .. })), "{actions:?}");
        }
    }

    #[test]
    fn without_a_seeded_secret_rank_0_makes_one_for_all() {
        let (streams, threads) = serve(3, true);
        let ranks: Vec<_> = streams
            .into_iter()
            .enumerate()
            .map(|(rank, stream)| {
                thread::spawn(move || {
                    let mut pmi = PmiClient::from_stream(stream, rank as u32, 3).unwrap();
                    let secret = pmi.job_secret().unwrap();
                    assert_eq!(pmi.job_secret().unwrap(), secret, "cached");
                    pmi.finalize().unwrap();
                    secret
                })
            })
            .collect();
        let secrets: Vec<String> = ranks.into_iter().map(|r| r.join().unwrap()).collect();
        assert!(is_job_secret(&secrets[0]));
        assert_ne!(secrets[0], SECRET);
        assert!(secrets.iter().all(|s| *s == secrets[0]));
        threads.into_iter().for_each(|t| drop(t.join().unwrap()));
    }

    #[test]
    fn refuses_bad_keys_and_values_before_sending() {
        let (mut streams, threads) = serve(1, false);
        let mut pmi = PmiClient::from_stream(streams.remove(0), 0, 1).unwrap();
        assert!(matches!(pmi.put("a key", "v"), Err(PmiError::InvalidArgument { what: "key", .. })));
        assert!(matches!(pmi.put("k", "a\\b"), Err(PmiError::InvalidArgument { what: "value", .. })));
        assert!(matches!(pmi.put("k", ""), Err(PmiError::InvalidArgument { what: "value", .. })));
        assert_eq!(pmi.put("k", &"v".repeat(923)), Err(PmiError::TooLong { what: "value", len: 923, max: 922 }));
        assert_eq!(pmi.put(&"k".repeat(64), "v"), Err(PmiError::TooLong { what: "key", len: 64, max: 63 }));
        pmi.put(&"k".repeat(63), &"v".repeat(922)).unwrap();
        assert_eq!(pmi.get(&"k".repeat(63)).unwrap().map(|v| v.len()), Some(922));
        // The server's own refusals come back as errors.
        assert!(matches!(pmi.put(JOB_SECRET_KEY, "00"), Err(PmiError::Refused { cmd: "put", rc: -1, .. })));
        pmi.finalize().unwrap();
        drop(pmi);
        let actions = threads.into_iter().next().unwrap().join().unwrap();
        assert_eq!(actions.iter().filter(|a| matches!(a, Action::Refused { .. })).count(), 1);
    }

    #[test]
    fn abort_reaches_the_server_with_a_cleaned_message() {
        let (mut streams, threads) = serve(1, false);
        let mut pmi = PmiClient::from_stream(streams.remove(0), 0, 1).unwrap();
        pmi.abort(3, "bad input\non line 2: é").unwrap();
        drop(pmi);
        let actions = threads.into_iter().next().unwrap().join().unwrap();
        assert!(actions.contains(&Action::Abort { rank: 0, code: 3, message: Some("bad input on line 2: ?".into()) }));
    }

    #[test]
    fn a_vanished_server_is_an_error_not_a_hang() {
        let (client, server) = UnixStream::pair().unwrap();
        drop(server);
        assert_eq!(PmiClient::from_stream(client, 0, 1).unwrap_err(), PmiError::Closed);

        // A server that answers with the wrong reply.
        let (client, mut server) = UnixStream::pair().unwrap();
        server.write_all(b"cmd=barrier_out\n").unwrap();
        assert_eq!(
            PmiClient::from_stream(client, 0, 1).unwrap_err(),
            PmiError::UnexpectedResponse { expected: "response_to_init", got: "barrier_out" }
        );

        // A server that refuses init.
        let (client, mut server) = UnixStream::pair().unwrap();
        server.write_all(b"cmd=response_to_init rc=-1 msg=go_away\n").unwrap();
        assert_eq!(
            PmiClient::from_stream(client, 0, 1).unwrap_err(),
            PmiError::Refused { cmd: "init", rc: -1, msg: "go_away".into() }
        );
    }

    #[test]
    fn a_put_at_the_limits_fits_one_read_of_slurms_pmi2_plugin() {
        // Slurm names the key-value space after the job step ("12.0"), Hydra "kvs_<pid>_0".
        for kvsname in ["12.0", "kvs_31337_0", "kvs_test_0", &"n".repeat(256)] {
            let (key, value) = limits(64, 1024, kvsname);
            assert_eq!(key, 63);
            let put = Command::Put { kvsname: Some(kvsname.into()), key: "k".repeat(key), value: "v".repeat(value) };
            assert_eq!(put.to_line().unwrap().len(), SERVER_LINE_MAX, "{kvsname}");
        }
        assert_eq!(limits(64, 1024, "12.0"), (63, 928));
        // A server's own smaller limits win; names that leave no room refuse every put.
        assert_eq!(limits(16, 100, "12.0"), (15, 99));
        assert_eq!(limits(0, 0, "12.0"), (0, 0));
        assert_eq!(limits(64, 1024, &"n".repeat(4000)), (63, 0));
        assert_eq!(limits(usize::MAX, usize::MAX, ""), (256, 1024 - 29 - 256));
    }

    #[test]
    fn reads_the_launchers_environment() {
        assert_eq!(parse_env(None, None, None), Ok(None));
        assert_eq!(parse_env(Some(""), None, None), Ok(None));
        assert_eq!(parse_env(Some("6"), Some("1"), Some("4")), Ok(Some(PmiEnv { fd: 6, rank: 1, size: 4 })));
        assert!(matches!(parse_env(Some("6"), None, Some("4")), Err(PmiError::Env(_))));
        assert!(matches!(parse_env(Some("x"), Some("0"), Some("4")), Err(PmiError::Env(_))));
        assert!(matches!(parse_env(Some("-1"), Some("0"), Some("4")), Err(PmiError::Env(_))));
        assert!(matches!(parse_env(Some("6"), Some("4"), Some("4")), Err(PmiError::Env(_))));
        assert!(matches!(parse_env(Some("6"), Some("0"), Some("0")), Err(PmiError::Env(_))));
        assert!(matches!(parse_env(Some("6"), Some("-1"), Some("4")), Err(PmiError::Env(_))));
    }

    #[test]
    fn only_sockets_are_accepted_as_pmi_fd() {
        assert!(check_is_socket(-1).is_err());
        let file = std::fs::File::open("/dev/null").unwrap();
        assert!(check_is_socket(file.as_raw_fd()).is_err());
        let (a, _b) = UnixStream::pair().unwrap();
        assert!(check_is_socket(a.as_raw_fd()).is_ok());
    }
}
