//! `ferry agent`: the head's hands on one host of a job across hosts. The launcher template
//! (`ssh {host}`, `ip netns exec {host}`) starts it with its stdin and stdout joined to the
//! head; it reads which ranks to start (`ferry_wire::launch`), starts them as `ferry run`
//! does on one host, and reports their PMI requests, their output and how each one ended.
//! The PMI server itself stays with the head, which sees the whole job.
//!
//! Nothing outlives the job: when stdin ends (the head, or the connection to it, is gone) or
//! the agent is told to stop by a signal, its ranks get SIGTERM and, a second later, SIGKILL;
//! each rank also dies with the agent (PR_SET_PDEATHSIG), and the agent with the head where
//! the template execs it.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, ErrorKind, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::time::{Duration, Instant};

use ferry_wire::launch::{Ended, FrameReader, FromAgent, SpawnFailure, StartSpec, Stream, ToAgent};

use super::rank::{nonblocking_file, ExitKind, LaunchSpec, Rank};
use super::signals::SignalPipe;
use super::{poll, pollfd, DRAIN_GRACE, STOP_GRACE};

/// Run the agent; its exit status.
pub fn run() -> i32 {
    match Agent::start() {
        Ok(mut agent) => {
            agent.run();
            0
        }
        Err(e) => {
            eprintln!("ferry agent: {e}");
            1
        }
    }
}

#[derive(Clone, Copy)]
enum Source {
    Signals,
    Head,
    Pmi(usize),
    Output(usize, Stream),
}

struct Agent {
    signals: SignalPipe,
    /// Orders from the head; `None` once it is gone.
    input: Option<File>,
    reader: FrameReader,
    /// Reports to the head (blocking: the head always reads).
    output: File,
    ranks: Vec<Rank>,
    /// How many ranks the head asked for.
    expected: usize,
    stopping: bool,
    kill_at: Option<Instant>,
    all_exited_at: Option<Instant>,
}

impl Agent {
    fn start() -> Result<Agent, String> {
        let signals = SignalPipe::install(&[libc::SIGCHLD, libc::SIGINT, libc::SIGTERM, libc::SIGHUP])
            .map_err(|e| format!("cannot install signal handlers: {e}"))?;
        // SAFETY: descriptors 0 and 1 are ours for the life of the process; nothing else in
        // the agent uses them, so each File is their only owner.
        let (mut input, output) = unsafe { (File::from_raw_fd(0), File::from_raw_fd(1)) };
        let mut reader = FrameReader::new();
        let spec = read_start(&mut input, &mut reader)?;
        let input = nonblocking_file(OwnedFd::from(input));
        let mut agent = Agent {
            signals,
            input: Some(input),
            reader,
            output,
            ranks: Vec::with_capacity(spec.ranks.len()),
            expected: spec.ranks.len(),
            stopping: false,
            kill_at: None,
            all_exited_at: None,
        };
        agent.spawn_all(&spec);
        Ok(agent)
    }

    fn spawn_all(&mut self, spec: &StartSpec) {
        let program = OsStr::from_bytes(&spec.program);
        let args: Vec<OsString> = spec.args.iter().map(|a| OsString::from_vec(a.clone())).collect();
        let env: Vec<(String, String)> =
            spec.env.iter().map(|(k, v)| (String::from_utf8_lossy(k).into_owned(), String::from_utf8_lossy(v).into_owned())).collect();
        // The head's directory where this host has it too (a shared file system), else ours.
        let cwd = Some(std::path::Path::new(OsStr::from_bytes(&spec.cwd))).filter(|d| !spec.cwd.is_empty() && d.is_dir());
        let launch = LaunchSpec { program, args: &args, size: spec.size, env: &env, tag_output: false, share_stdin: false, cwd };
        let count = spec.ranks.len() as u32;
        for (local, &rank) in spec.ranks.iter().enumerate() {
            match Rank::spawn(&launch, rank, (local as u32, count)) {
                Ok(r) => {
                    let pid = r.pid as u32;
                    self.ranks.push(r);
                    self.send(&FromAgent::Started { rank, pid });
                }
                Err(e) => {
                    let why = match e.kind() {
                        ErrorKind::NotFound => SpawnFailure::NotFound,
                        ErrorKind::PermissionDenied => SpawnFailure::PermissionDenied,
                        _ => SpawnFailure::Other,
                    };
                    self.send(&FromAgent::LaunchFailed { rank, why, message: e.to_string() });
                    // The head stops the job; the ranks already started wait for its word.
                    return;
                }
            }
        }
    }

    fn run(&mut self) {
        loop {
            let now = Instant::now();
            // After a launch failure not every rank exists: the agent waits for the head's
            // word (or its loss) before it leaves.
            if self.ranks.iter().all(|r| !r.is_live()) && (self.ranks.len() == self.expected || self.stopping) {
                let drained = self.ranks.iter().all(|r| r.stdout.is_none() && r.stderr.is_none());
                let since = *self.all_exited_at.get_or_insert(now);
                if drained || now >= since + DRAIN_GRACE {
                    break;
                }
            }
            if self.kill_at.is_some_and(|at| now >= at) {
                self.kill_at = None;
                self.ranks.iter().for_each(|r| r.signal(libc::SIGKILL));
            }
            let (mut fds, sources) = self.poll_set();
            let wake = [self.kill_at, self.all_exited_at.map(|t| t + DRAIN_GRACE)].into_iter().flatten().min();
            poll(&mut fds, wake.map(|w| w.saturating_duration_since(now)));
            for (pfd, source) in fds.iter().zip(sources) {
                if pfd.revents != 0 {
                    self.dispatch(source, pfd.revents);
                }
            }
        }
    }

    fn poll_set(&self) -> (Vec<libc::pollfd>, Vec<Source>) {
        let mut fds = vec![pollfd(self.signals.fd(), libc::POLLIN)];
        let mut sources = vec![Source::Signals];
        if let Some(input) = &self.input {
            fds.push(pollfd(input.as_raw_fd(), libc::POLLIN));
            sources.push(Source::Head);
        }
        for (i, r) in self.ranks.iter().enumerate() {
            if let Some(pfd) = r.pmi_pollfd() {
                fds.push(pfd);
                sources.push(Source::Pmi(i));
            }
            for (pipe, stream) in [(&r.stdout, Stream::Stdout), (&r.stderr, Stream::Stderr)] {
                if let Some(p) = pipe {
                    fds.push(pollfd(p.fd(), libc::POLLIN));
                    sources.push(Source::Output(i, stream));
                }
            }
        }
        (fds, sources)
    }

    fn dispatch(&mut self, source: Source, revents: libc::c_short) {
        match source {
            Source::Signals => {
                for sig in self.signals.drain() {
                    match sig {
                        libc::SIGCHLD => self.reap(),
                        _ => self.stop("the agent was told to stop"),
                    }
                }
            }
            Source::Head => self.read_head(),
            Source::Pmi(i) => {
                if revents & libc::POLLOUT != 0 {
                    self.ranks[i].flush_pmi();
                }
                if revents & !libc::POLLOUT != 0 {
                    if let Some(bytes) = self.ranks[i].read_pmi(false).filter(|b| !b.is_empty()) {
                        let rank = self.ranks[i].index;
                        self.send(&FromAgent::Pmi { rank, bytes });
                    }
                }
            }
            Source::Output(i, stream) => {
                let r = &mut self.ranks[i];
                let pipe = match stream {
                    Stream::Stdout => &mut r.stdout,
                    Stream::Stderr => &mut r.stderr,
                };
                match pipe.as_mut().and_then(|p| p.read_chunk()) {
                    Some(bytes) if bytes.is_empty() => {}
                    Some(bytes) => {
                        let rank = r.index;
                        self.send(&FromAgent::Output { rank, stream, bytes });
                    }
                    None => *pipe = None,
                }
            }
        }
    }

    fn read_head(&mut self) {
        let Some(input) = self.input.as_mut() else { return };
        let mut buf = [0u8; 64 * 1024];
        match input.read(&mut buf) {
            Ok(0) => {
                self.input = None;
                self.stop("the head is gone");
                return;
            }
            Ok(n) => self.reader.push(&buf[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => return,
            Err(e) => {
                self.input = None;
                self.stop(&format!("cannot read from the head: {e}"));
                return;
            }
        }
        while let Some(msg) = self.reader.next_to_agent() {
            match msg {
                Ok(ToAgent::Pmi { rank, bytes }) => {
                    if let Some(r) = self.ranks.iter_mut().find(|r| r.index == rank) {
                        r.send_pmi(&bytes);
                    }
                }
                Ok(ToAgent::PmiAll { bytes }) => self.ranks.iter_mut().for_each(|r| r.send_pmi(&bytes)),
                Ok(ToAgent::Signal { signal }) => {
                    self.stopping = true;
                    for r in &self.ranks {
                        r.signal(signal);
                        r.signal(libc::SIGCONT);
                    }
                }
                Ok(ToAgent::Start(_)) => eprintln!("ferry agent: a second start message; ignored"),
                Err(e) => {
                    self.input = None;
                    self.stop(&format!("malformed message from the head: {e}"));
                    return;
                }
            }
        }
    }

    /// Report every rank that has ended, after the PMI bytes it left (an abort just before
    /// exiting), so the head judges its end knowing them.
    fn reap(&mut self) {
        for i in 0..self.ranks.len() {
            let Some(kind) = self.ranks[i].try_reap() else { continue };
            let rank = self.ranks[i].index;
            if let Some(bytes) = self.ranks[i].read_pmi(true).filter(|b| !b.is_empty()) {
                self.send(&FromAgent::Pmi { rank, bytes });
            }
            let how = match kind {
                ExitKind::Exited(code) => Ended::Exited(code),
                ExitKind::Signaled { signal, core_dumped } => Ended::Signaled { signal, core_dumped },
            };
            self.send(&FromAgent::Ended { rank, how });
        }
    }

    /// Stop the ranks: SIGTERM now, SIGKILL after the grace.
    fn stop(&mut self, why: &str) {
        if self.stopping && self.kill_at.is_some() {
            return;
        }
        ferry_core::debug!("agent", "stopping the ranks: {why}");
        self.stopping = true;
        for r in &self.ranks {
            r.signal(libc::SIGTERM);
            r.signal(libc::SIGCONT);
        }
        self.kill_at = Some(Instant::now() + STOP_GRACE);
    }

    fn send(&mut self, msg: &FromAgent) {
        if let Err(e) = write_all(&mut self.output, &msg.encode()) {
            // The head cannot hear us any more: it is gone.
            if self.input.take().is_some() || !self.stopping {
                self.stop(&format!("cannot write to the head: {e}"));
            }
        }
    }
}

fn write_all(out: &mut File, bytes: &[u8]) -> io::Result<()> {
    out.write_all(bytes)?;
    out.flush()
}

/// Block until the head's start message arrives.
fn read_start(input: &mut File, reader: &mut FrameReader) -> Result<StartSpec, String> {
    let deadline = Instant::now() + START_TIMEOUT;
    let mut buf = [0u8; 64 * 1024];
    loop {
        match reader.next_to_agent() {
            Some(Ok(ToAgent::Start(spec))) => return Ok(spec),
            Some(Ok(other)) => return Err(format!("expected the start message, got {other:?}")),
            Some(Err(e)) => return Err(format!("malformed start message: {e}")),
            None => {}
        }
        if Instant::now() > deadline {
            return Err("no start message from the head".into());
        }
        match input.read(&mut buf) {
            Ok(0) => return Err("the head closed the connection before starting anything".into()),
            Ok(n) => reader.push(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(format!("cannot read from the head: {e}")),
        }
    }
}

/// The head sends the start message as soon as the template has run.
const START_TIMEOUT: Duration = Duration::from_secs(60);
