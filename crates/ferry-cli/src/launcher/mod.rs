//! `ferry run`: start N ranks on this host and serve them PMI-1 until they are done.
//!
//! One thread, one `poll` loop over the signal pipe, every rank's PMI socket and output
//! pipes, with timers as the poll timeout: nothing spins. The PMI protocol itself lives in
//! `ferry_core::bootstrap::PmiServer`; this module only moves its bytes and watches the
//! processes.
//!
//! A job ends early, with one line on stderr naming the rank and the cause, when a rank
//! exits non-zero, is killed by a signal, exits 0 after PMI init without PMI finalize, calls
//! abort through PMI (MPI_Abort), leaves others waiting in a barrier it will never enter, or
//! when `--timeout` expires. The other ranks then get SIGTERM and, 1 s later, SIGKILL.
//! SIGINT and SIGTERM sent to the launcher are forwarded to the ranks, which get SIGKILL 5 s
//! later (or at once on a second signal).
//!
//! Exit status: 0 when every rank exits 0; otherwise that of the first failure: the rank's
//! exit code, 128 + the signal number for a rank killed by a signal (or for an interrupted
//! job), the MPI_Abort error code (modulo 256; 1 if that is 0), 1 for a missing finalize or
//! a broken barrier, 124 for `--timeout`, 127 when the program is not found and 126 when it
//! cannot be executed.

pub mod agent;
mod failure;
pub mod head;
pub mod hosts;
mod link;
mod output;
mod rank;
mod relays;
mod signals;
mod spawn;

use std::ffi::OsString;
use std::time::{Duration, Instant};

use ferry_core::bootstrap::{generate_job_secret, Action, PmiServer, RankState};

use failure::Failure;
use rank::{ExitKind, LaunchSpec, Rank};
use signals::SignalPipe;

/// Between SIGTERM and SIGKILL when the launcher stops a job.
pub(crate) const STOP_GRACE: Duration = Duration::from_secs(1);
/// Between a forwarded SIGINT/SIGTERM and SIGKILL.
pub(crate) const INTERRUPT_GRACE: Duration = Duration::from_secs(5);
/// How long to wait for output pipes after every rank has exited (a rank's child may hold
/// them open).
pub(crate) const DRAIN_GRACE: Duration = Duration::from_millis(500);

/// What `ferry run` was asked to do.
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub ranks: u32,
    pub tag_output: bool,
    pub timeout: Option<Duration>,
    pub env: Vec<(String, String)>,
    /// `--universe-size`: processes the run may hold at once, children included.
    pub universe_size: Option<u32>,
    /// The port of the singleton that spawned this run (`FERRY_PARENT_PORT`), seeded for
    /// the job to connect to; the ranks do not inherit the variable.
    pub parent_port: Option<String>,
    pub program: OsString,
    pub args: Vec<OsString>,
    /// `--enable-recovery`: a rank's death does not stop the job (fault-tolerant MPI); the
    /// launcher still exits non-zero and names the dead ranks at the end.
    pub recovery: bool,
}

/// Run the job and return the launcher's exit status.
pub fn run(opts: RunOptions) -> i32 {
    match Job::start(&opts) {
        Ok(mut job) => {
            let code = job.run();
            for sub in &job.jobs {
                remove_segments(sub.server.kvsname());
            }
            code
        }
        Err(e) => {
            eprintln!("ferry run: {e}");
            1
        }
    }
}

/// Why a descriptor is in the poll set.
#[derive(Clone, Copy)]
enum Source {
    Signals,
    Pmi(usize),
    Stdout(usize),
    Stderr(usize),
}

/// One job of the run: the first, or one that ranks spawned. Its ranks are
/// `ranks[first..first + size]` of the run.
struct SubJob {
    server: PmiServer,
    first: usize,
    /// A spawn that failed halfway: its started ranks are killed and their ends not judged.
    cancelled: bool,
}

struct Job {
    signals: SignalPipe,
    /// The first job, then the spawned ones in the order they were asked for.
    jobs: Vec<SubJob>,
    /// The processes of every job; `job_of[i]` is the job of `ranks[i]`.
    ranks: Vec<Rank>,
    job_of: Vec<usize>,
    /// The name service (`MPI_Publish_name`): service -> port name, shared by every job.
    names: std::collections::BTreeMap<String, String>,
    /// How many processes may be live at once (`MPI_UNIVERSE_SIZE`).
    universe: u32,
    tag_output: bool,
    env: Vec<(String, String)>,
    /// The first failure: it was reported and decides the exit status.
    failure: Option<Failure>,
    /// The job is being stopped: later deaths are consequences, not news.
    stopping: bool,
    kill_at: Option<Instant>,
    timeout: Option<(Instant, u64)>,
    all_exited_at: Option<Instant>,
    /// Recovery enabled, and the ranks that died meanwhile (see [`RunOptions::recovery`]).
    recovery: bool,
    dead: Vec<u32>,
}

/// Remove the shared-memory segments of job `kvsname` that are still named: the ranks remove
/// each one as soon as all of a host's ranks have mapped it, so only a job that died while
/// starting leaves any.
fn remove_segments(kvsname: &str) {
    let prefix = ferry_core::transport::shm::job_segment_prefix(kvsname);
    let Ok(dir) = std::fs::read_dir("/dev/shm") else { return };
    for entry in dir.flatten() {
        let name = entry.file_name();
        if name.to_str().is_some_and(|n| n.starts_with(&prefix)) {
            match std::fs::remove_file(entry.path()) {
                Ok(()) => ferry_core::info!("run", "removed the shared memory {} left by the job", entry.path().display()),
                Err(e) => ferry_core::warn!("run", "cannot remove {}: {e}", entry.path().display()),
            }
        }
    }
}

impl Job {
    fn start(opts: &RunOptions) -> Result<Job, String> {
        ensure_fd_limit(opts.ranks)?;
        let signals = SignalPipe::install(&[libc::SIGCHLD, libc::SIGINT, libc::SIGTERM])
            .map_err(|e| format!("cannot install signal handlers: {e}"))?;
        let secret = generate_job_secret().map_err(|e| e.to_string())?;
        let kvsname = format!("kvs_{}_0", std::process::id());
        let mut server = PmiServer::new(opts.ranks, &kvsname, &secret).map_err(|e| e.to_string())?;
        server.set_recovery(opts.recovery);
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
        let knob = ferry_core::config::UNIVERSE_SIZE;
        let from_env = if knob.is_set() { Some(knob.u64().map_err(|e| e.to_string())?.clamp(1, u32::MAX.into()) as u32) } else { None };
        let universe = opts.universe_size.or(from_env).unwrap_or(opts.ranks.max(cores)).max(opts.ranks);
        server.set_universe_size(universe);
        if let Some(port) = &opts.parent_port {
            server.seed(ferry_core::bootstrap::PARENT_PORT_KEY, port).map_err(|e| format!("FERRY_PARENT_PORT: {e}"))?;
        }
        let mut job = Job {
            signals,
            jobs: vec![SubJob { server, first: 0, cancelled: false }],
            ranks: Vec::with_capacity(opts.ranks as usize),
            job_of: Vec::with_capacity(opts.ranks as usize),
            names: Default::default(),
            universe,
            tag_output: opts.tag_output,
            env: opts.env.clone(),
            failure: None,
            stopping: false,
            kill_at: None,
            timeout: opts.timeout.map(|t| (Instant::now() + t, t.as_secs())),
            all_exited_at: None,
            recovery: opts.recovery,
            dead: Vec::new(),
        };
        let spec = LaunchSpec {
            program: &opts.program,
            args: &opts.args,
            size: opts.ranks,
            env: &opts.env,
            tag_output: opts.tag_output,
            share_stdin: true,
            cwd: None,
        };
        for index in 0..opts.ranks {
            match Rank::spawn(&spec, index, (index, opts.ranks)) {
                Ok(rank) => {
                    job.ranks.push(rank);
                    job.job_of.push(0);
                }
                Err(error) => {
                    // The ranks already started are stopped and reaped by the loop.
                    job.fail(0, Failure::LaunchFailed { rank: index, program: opts.program.clone(), error });
                    break;
                }
            }
        }
        Ok(job)
    }

    fn run(&mut self) -> i32 {
        loop {
            let now = Instant::now();
            if self.ranks.iter().all(|r| !r.is_live()) {
                let drained = self.ranks.iter().all(|r| r.stdout.is_none() && r.stderr.is_none());
                let since = *self.all_exited_at.get_or_insert(now);
                if drained || now >= since + DRAIN_GRACE {
                    break;
                }
            }
            self.fire_timers(now);
            let (mut fds, sources) = self.poll_set();
            let wake = [self.timeout.map(|(t, _)| t), self.kill_at, self.all_exited_at.map(|t| t + DRAIN_GRACE)]
                .into_iter()
                .flatten()
                .min();
            poll(&mut fds, wake.map(|w| w.saturating_duration_since(now)));
            for (pfd, source) in fds.iter().zip(sources) {
                if pfd.revents != 0 {
                    self.dispatch(source, pfd.revents);
                }
            }
        }
        for rank in &mut self.ranks {
            for out in [rank.stdout.as_mut(), rank.stderr.as_mut()].into_iter().flatten() {
                out.flush_partial();
            }
        }
        if !self.dead.is_empty() {
            eprintln!("ferry run: {}", dead_summary(&self.dead));
        }
        self.failure.as_ref().map_or(0, Failure::exit_code)
    }

    fn poll_set(&self) -> (Vec<libc::pollfd>, Vec<Source>) {
        let mut fds = vec![pollfd(self.signals.fd(), libc::POLLIN)];
        let mut sources = vec![Source::Signals];
        for (i, r) in self.ranks.iter().enumerate() {
            if let Some(pfd) = r.pmi_pollfd() {
                fds.push(pfd);
                sources.push(Source::Pmi(i));
            }
            if let Some(out) = &r.stdout {
                fds.push(pollfd(out.fd(), libc::POLLIN));
                sources.push(Source::Stdout(i));
            }
            if let Some(err) = &r.stderr {
                fds.push(pollfd(err.fd(), libc::POLLIN));
                sources.push(Source::Stderr(i));
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
                        libc::SIGINT | libc::SIGTERM => self.interrupt(sig),
                        _ => {}
                    }
                }
            }
            Source::Pmi(i) => {
                if revents & libc::POLLOUT != 0 {
                    self.ranks[i].flush_pmi();
                }
                if revents & !libc::POLLOUT != 0 {
                    if let Some(bytes) = self.ranks[i].read_pmi(false) {
                        let (j, rank) = (self.job_of[i], self.ranks[i].index);
                        let actions = self.jobs[j].server.receive(rank, &bytes);
                        self.apply(j, actions);
                    }
                }
            }
            Source::Stdout(i) => {
                if let Some(out) = self.ranks[i].stdout.as_mut() {
                    if !out.pump() {
                        self.ranks[i].stdout = None;
                    }
                }
            }
            Source::Stderr(i) => {
                if let Some(err) = self.ranks[i].stderr.as_mut() {
                    if !err.pump() {
                        self.ranks[i].stderr = None;
                    }
                }
            }
        }
    }

    fn apply(&mut self, job: usize, actions: Vec<Action>) {
        let (first, size) = (self.jobs[job].first, self.jobs[job].server.size() as usize);
        for action in actions {
            match action {
                Action::Reply { rank, bytes } => self.ranks[first + rank as usize].send_pmi(&bytes),
                Action::ReplyAll { bytes } => self.ranks[first..first + size].iter_mut().for_each(|r| r.send_pmi(&bytes)),
                Action::Abort { rank, code, message } => self.fail(job, Failure::Aborted { rank, code, message }),
                Action::BarrierBroken { gone, waiting } => self.fail(job, Failure::BarrierBroken { gone, waiting }),
                Action::Spawn { rank, request } => {
                    let reply = self.spawn_children(job, rank, &request);
                    self.apply(job, vec![reply]);
                }
                Action::Name { rank, request } => {
                    let reply = spawn::serve_name(&mut self.names, &self.jobs[job].server, rank, request);
                    self.apply(job, vec![reply]);
                }
                // The server has answered and logged the refusal; finalize needs no action.
                Action::Refused { .. } | Action::Finalized { .. } => {}
            }
        }
    }

    /// Reap every rank that has ended and judge how it ended.
    ///
    /// A dead rank's peers soon notice and complain (MPI_Abort over PMI, "connection to rank
    /// 1 lost"), and their complaints can reach us before the death does. So the ranks'
    /// own deaths are judged before anything their PMI sockets still held is applied, and
    /// deaths by signal before plain non-zero exits: the line printed names the cause, not
    /// a symptom.
    fn reap(&mut self) {
        let mut ended = Vec::new();
        let mut deferred = Vec::new();
        for i in 0..self.ranks.len() {
            let Some(kind) = self.ranks[i].try_reap() else { continue };
            ferry_core::debug!("run", "rank {i} (pid {}) ended: {kind:?}", self.ranks[i].pid);
            let (j, rank) = (self.job_of[i], self.ranks[i].index);
            // Its last words (an abort just before exiting) tell the server how it left.
            if let Some(bytes) = self.ranks[i].read_pmi(true) {
                deferred.push((j, self.jobs[j].server.receive(rank, &bytes)));
            }
            ended.push((i, kind));
        }
        ended.sort_by_key(|(i, kind)| (death_rank(*kind), self.job_of[*i], *i));
        for &(i, kind) in &ended {
            let (j, rank, pid) = (self.job_of[i], self.ranks[i].index, self.ranks[i].pid);
            let state = self.jobs[j].server.state(rank);
            if self.stopping || self.jobs[j].cancelled || state == Some(RankState::Aborted) {
                continue; // a consequence of the stop, or reported by its Abort action
            }
            if let Some(failure) = failure::judge_end(rank, pid, None, kind, state) {
                // Recovery keeps the first job's survivors; a spawned job's death stops the run.
                match failure.survivable_rank().filter(|_| self.recovery && j == 0) {
                    Some(r) => {
                        eprintln!("ferry run: {}", failure.survived_message());
                        self.dead.push(r);
                        self.failure.get_or_insert(failure);
                    }
                    None => self.fail(j, failure),
                }
            }
        }
        for (j, actions) in deferred {
            self.apply(j, actions);
        }
        for (i, _) in ended {
            let (j, rank) = (self.job_of[i], self.ranks[i].index);
            let actions = self.jobs[j].server.rank_gone(rank);
            self.apply(j, actions);
        }
    }

    fn live(&self) -> usize {
        self.ranks.iter().filter(|r| r.is_live()).count()
    }

    /// Report `failure` of job `job` (0: the first; a spawned one is named) if it is the
    /// first, and stop every job of the run.
    fn fail(&mut self, job: usize, failure: Failure) {
        if matches!(failure, Failure::Aborted { .. } | Failure::BarrierBroken { .. }) && !self.stopping {
            // Often the symptom of another rank's death: let that death speak first.
            self.reap();
        }
        if self.failure.is_none() && !self.stopping {
            let whose = if job == 0 { String::new() } else { format!("spawned job {job}: ") };
            eprintln!("ferry run: {whose}{}", failure.message());
            self.failure = Some(failure);
        }
        self.stop(libc::SIGTERM, STOP_GRACE);
    }

    /// Send `signal` to every live rank and SIGKILL whatever is left after `grace`.
    fn stop(&mut self, signal: libc::c_int, grace: Duration) {
        if self.stopping {
            return;
        }
        self.stopping = true;
        for r in &self.ranks {
            r.signal(signal);
            // A stopped process would not act on SIGTERM until continued.
            r.signal(libc::SIGCONT);
        }
        self.kill_at = Some(Instant::now() + grace);
    }

    /// SIGINT or SIGTERM for the launcher: forward it to the ranks; if the job is already
    /// being stopped (a second ^C), kill the ranks at once.
    fn interrupt(&mut self, signal: libc::c_int) {
        let live = self.live();
        if !self.stopping {
            let failure = Failure::Interrupted { signal, live };
            eprintln!("ferry run: {}", failure.message());
            self.failure.get_or_insert(failure);
            self.stop(signal, INTERRUPT_GRACE);
        } else if live > 0 {
            let name = failure::signal_name(signal).unwrap_or("a signal");
            eprintln!(
                "ferry run: received {name} while stopping the job; killing {live} {}",
                if live == 1 { "rank" } else { "ranks" }
            );
            self.kill_all();
        }
    }

    fn kill_all(&mut self) {
        self.ranks.iter().for_each(|r| r.signal(libc::SIGKILL));
        self.kill_at = None;
    }

    fn fire_timers(&mut self, now: Instant) {
        if let Some((at, seconds)) = self.timeout {
            if now >= at {
                self.timeout = None;
                if !self.stopping {
                    let live = self.live();
                    self.fail(0, Failure::TimedOut { seconds, live });
                }
            }
        }
        if self.kill_at.is_some_and(|at| now >= at) {
            self.kill_all();
        }
    }
}

/// The last line of a job that survived deaths (recovery enabled): which ranks died.
pub(crate) fn dead_summary(dead: &[u32]) -> String {
    let list: Vec<String> = dead.iter().map(u32::to_string).collect();
    let ranks = if dead.len() == 1 { "rank" } else { "ranks" };
    format!("the job went on without {ranks} {}, which died (recovery enabled); exiting with failure", list.join(","))
}

/// Which deaths explain the most, first: a signal, then a missing finalize, then an exit code.
fn death_rank(kind: ExitKind) -> u8 {
    match kind {
        ExitKind::Signaled { .. } => 0,
        ExitKind::Exited(0) => 1,
        ExitKind::Exited(_) => 2,
    }
}

pub(crate) fn pollfd(fd: i32, events: libc::c_short) -> libc::pollfd {
    libc::pollfd { fd, events, revents: 0 }
}

/// poll(2), rounding the timeout up so a timer is never polled for early in a loop.
/// EINTR (a signal) just returns: the signal pipe is then readable.
pub(crate) fn poll(fds: &mut [libc::pollfd], timeout: Option<Duration>) {
    let ms = match timeout {
        None => -1,
        Some(t) => i32::try_from(t.as_micros().div_ceil(1000)).unwrap_or(i32::MAX),
    };
    // SAFETY: `fds` is a valid, exclusively borrowed array of pollfd of the given length.
    let r = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
    if r < 0 {
        fds.iter_mut().for_each(|f| f.revents = 0);
    }
}

/// Every rank costs the launcher three descriptors (PMI socket, stdout, stderr). Raise the
/// soft limit as far as needed and allowed, or say why the job cannot start.
fn ensure_fd_limit(ranks: u32) -> Result<(), String> {
    let needed = 3 * u64::from(ranks) + 32;
    // SAFETY: getrlimit/setrlimit with a local struct.
    unsafe {
        let mut lim: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 || lim.rlim_cur >= needed {
            return Ok(());
        }
        let raised = libc::rlimit { rlim_cur: needed.min(lim.rlim_max), rlim_max: lim.rlim_max };
        if raised.rlim_cur >= needed && libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
            return Ok(());
        }
        Err(format!("-n {ranks} needs about {needed} open files but the limit is {} (see ulimit -n)", lim.rlim_max))
    }
}
