//! `ferry run --hostfile/--host`: one job over several hosts. The head (this process)
//! places the ranks, starts an agent on every host through the launcher template, serves
//! PMI to the whole job and judges how each rank ended, as `ferry run` does on one host;
//! the agents (`agent.rs`) start the ranks and carry their PMI, output and exits.
//!
//! A job stops within seconds, with one line naming the rank and its host, when a rank
//! fails as on one host, or when a host is lost (its agent killed, its ssh connection cut):
//! the other agents' ranks get SIGTERM, then SIGKILL; an agent that does not leave by
//! itself is then killed, and its ranks die with it.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::time::{Duration, Instant};

use ferry_core::bootstrap::{generate_job_secret, Action, PmiServer, RankState, Response, ResponseKind, PMI_PROCESS_MAPPING_KEY};
use ferry_core::transport::business_card::BusinessCard;
use ferry_core::transport::paths;
use ferry_wire::launch::{Ended, FromAgent, SpawnFailure, StartSpec, Stream, ToAgent};

use super::failure::{self, Failure};
use super::hosts::{self, Host, HostList, RankPolicy};
use super::link::{agent_command, AgentLink};
use super::output::{Lines, Sink};
use super::relays::Relays;
use super::rank::ExitKind;
use super::signals::SignalPipe;
use super::{poll, pollfd, RunOptions, DRAIN_GRACE, INTERRUPT_GRACE, STOP_GRACE};

/// After the ranks were killed, how long an agent may take to report and leave before the
/// head kills it (and with it whatever it still runs).
const AGENT_GRACE: Duration = Duration::from_secs(2);
/// An abort is often a symptom of a death on another host whose report is still on its
/// way: it is held this long so that the death, if it comes, is named first.
const ABORT_HOLD: Duration = Duration::from_millis(300);

/// Where a job across hosts runs.
pub struct HostsOptions {
    pub list: HostList,
    pub launcher: String,
    pub policy: RankPolicy,
    pub show_paths: bool,
    /// The site key file of the relays the hostfile lists.
    pub proxy_key: Option<std::path::PathBuf>,
}

pub fn run(opts: &RunOptions, hosts: HostsOptions) -> i32 {
    match Head::start(opts, hosts) {
        Ok(mut head) => head.run(),
        Err(e) => {
            eprintln!("ferry run: {e}");
            1
        }
    }
}

#[derive(Clone, Copy)]
enum Source {
    Signals,
    Orders(usize),
    Reports(usize),
    Complaints(usize),
    Relay(usize),
}

struct RankSlot {
    agent: usize,
    pid: i32,
    ended: bool,
    stdout: Lines,
    stderr: Lines,
}

struct Head {
    signals: SignalPipe,
    server: PmiServer,
    /// The name service (`MPI_Publish_name`) of the job.
    names: BTreeMap<String, String>,
    agents: Vec<AgentLink>,
    ranks: Vec<RankSlot>,
    program: OsString,
    failure: Option<Failure>,
    held: Option<(Failure, Instant)>,
    stopping: bool,
    kill_at: Option<Instant>,
    abandon_at: Option<Instant>,
    timeout: Option<(Instant, u64)>,
    done_at: Option<Instant>,
    show_paths: bool,
    relays: Option<Relays>,
    /// Relay control connections already reported lost.
    relays_lost: Vec<bool>,
    /// `--enable-recovery`, and the ranks that died meanwhile (see `RunOptions::recovery`).
    recovery: bool,
    dead: Vec<u32>,
}

/// Variables of the head's environment that every rank gets too: Ferry's knobs and where
/// programs and libraries are found (an ssh session starts with none of them).
fn forwarded(name: &str) -> bool {
    name.starts_with("FERRY_") && !matches!(name, "FERRY_HOST_ID" | "FERRY_FRONT_NODE" | "FERRY_RANK" | "FERRY_SIZE")
        || matches!(name, "PATH" | "LD_LIBRARY_PATH")
}

impl Head {
    fn start(opts: &RunOptions, hosts: HostsOptions) -> Result<Head, String> {
        let signals = SignalPipe::install(&[libc::SIGCHLD, libc::SIGINT, libc::SIGTERM])
            .map_err(|e| format!("cannot install signal handlers: {e}"))?;
        let ferry = std::env::current_exe().map_err(|e| format!("cannot find the ferry executable: {e}"))?;
        let placement = hosts::place(&hosts.list.hosts, opts.ranks, hosts.policy);
        // The hosts that get ranks, in the order of their first rank: the agents.
        let mut used: Vec<usize> = Vec::new();
        for &h in &placement {
            if !used.contains(&h) {
                used.push(h);
            }
        }
        let agent_of = |h: usize| used.iter().position(|&u| u == h).expect("every placed host is used");
        let secret = generate_job_secret().map_err(|e| e.to_string())?;
        let kvsname = format!("kvs_{}_0", std::process::id());
        let mut server = PmiServer::new(opts.ranks, &kvsname, &secret).map_err(|e| e.to_string())?;
        server.set_recovery(opts.recovery);
        server.set_universe_size(opts.universe_size.unwrap_or(opts.ranks).max(opts.ranks));
        let nodes: Vec<usize> = placement.iter().map(|&h| agent_of(h)).collect();
        server.seed(PMI_PROCESS_MAPPING_KEY, &hosts::process_mapping(&nodes)).map_err(|e| e.to_string())?;
        let relays = if hosts.list.proxies.is_empty() {
            None
        } else {
            let key = hosts.proxy_key.as_deref().ok_or("the hostfile lists relays: --proxy-key FILE must give their site key")?;
            let fronts = placement.iter().map(|&h| hosts.list.hosts[h].front_name().to_owned()).collect();
            let relays = Relays::register(&hosts.list.proxies, key, &secret, fronts)?;
            for (k, v) in relays.seeds() {
                server.seed(k, &v).map_err(|e| e.to_string())?;
            }
            Some(relays)
        };
        let relays_lost = vec![false; relays.as_ref().map_or(0, |r| r.fds().len())];

        let program = resolve_program(&opts.program);
        let cwd = std::env::current_dir().map(|d| d.as_os_str().as_bytes().to_vec()).unwrap_or_default();
        let mut base_env: Vec<(Vec<u8>, Vec<u8>)> = std::env::vars_os()
            .filter(|(k, _)| k.to_str().is_some_and(forwarded))
            .map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec()))
            .collect();
        base_env.extend(opts.env.iter().map(|(k, v)| (k.clone().into_bytes(), v.clone().into_bytes())));

        let ranks = placement
            .iter()
            .enumerate()
            .map(|(r, &h)| {
                let tag = opts.tag_output.then(|| format!("[{r}] "));
                RankSlot { agent: agent_of(h), pid: 0, ended: false, stdout: Lines::new(Sink::Stdout, tag.clone()), stderr: Lines::new(Sink::Stderr, tag) }
            })
            .collect();
        let mut head = Head {
            signals,
            server,
            names: BTreeMap::new(),
            agents: Vec::new(),
            ranks,
            program: opts.program.clone(),
            failure: None,
            held: None,
            stopping: false,
            kill_at: None,
            abandon_at: None,
            timeout: opts.timeout.map(|t| (Instant::now() + t, t.as_secs())),
            done_at: None,
            show_paths: hosts.show_paths,
            relays,
            relays_lost,
            recovery: opts.recovery,
            dead: Vec::new(),
        };
        for &h in &used {
            let host: &Host = &hosts.list.hosts[h];
            let words = agent_command(&hosts.launcher, &host.name, &ferry)?;
            let link = AgentLink::spawn(&words, &host.name).map_err(|e| format!("cannot run the launcher {:?} for host {}: {e}", words[0], host.name))?;
            head.agents.push(link);
            let mut env = base_env.clone();
            env.push((b"FERRY_HOST_ID".to_vec(), host.name.clone().into_bytes()));
            env.push((b"FERRY_FRONT_NODE".to_vec(), host.front_name().as_bytes().to_vec()));
            let spec = StartSpec {
                size: opts.ranks,
                ranks: (0..opts.ranks).filter(|&r| placement[r as usize] == h).collect(),
                program: program.clone(),
                args: opts.args.iter().map(|a| a.as_bytes().to_vec()).collect(),
                env,
                cwd: cwd.clone(),
            };
            ferry_core::debug!("run", "host {}: ranks {:?} through {:?}", host.name, spec.ranks, words);
            head.agents.last_mut().expect("just pushed").send(&ToAgent::Start(spec));
        }
        Ok(head)
    }

    fn run(&mut self) -> i32 {
        loop {
            let now = Instant::now();
            if self.agents.iter().all(AgentLink::is_done) {
                break;
            }
            if self.agents.iter().all(|a| a.exit.is_some()) && now >= *self.done_at.get_or_insert(now) + DRAIN_GRACE {
                break; // every agent has ended; a pipe held open by something else is not waited for
            }
            self.fire_timers(now);
            let (mut fds, sources) = self.poll_set();
            let wake = [self.timeout.map(|(t, _)| t), self.kill_at, self.abandon_at, self.held.as_ref().map(|h| h.1), self.done_at.map(|t| t + DRAIN_GRACE)]
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
        for r in &mut self.ranks {
            r.stdout.flush_partial();
            r.stderr.flush_partial();
        }
        if let Some((f, _)) = self.held.take() {
            self.report(f);
        }
        if !self.dead.is_empty() {
            eprintln!("ferry run: {}", super::dead_summary(&self.dead));
        }
        self.failure.as_ref().map_or(0, Failure::exit_code)
    }

    fn poll_set(&self) -> (Vec<libc::pollfd>, Vec<Source>) {
        let mut fds = vec![pollfd(self.signals.fd(), libc::POLLIN)];
        let mut sources = vec![Source::Signals];
        for (i, a) in self.agents.iter().enumerate() {
            if let Some(fd) = a.queued_orders_fd() {
                fds.push(pollfd(fd, libc::POLLOUT));
                sources.push(Source::Orders(i));
            }
            if let Some(fd) = a.stdout_fd() {
                fds.push(pollfd(fd, libc::POLLIN));
                sources.push(Source::Reports(i));
            }
            if let Some(err) = &a.stderr {
                fds.push(pollfd(err.fd(), libc::POLLIN));
                sources.push(Source::Complaints(i));
            }
        }
        if let Some(relays) = &self.relays {
            for (i, fd) in relays.fds().into_iter().enumerate().filter(|(i, _)| !self.relays_lost[*i]) {
                fds.push(pollfd(fd, libc::POLLIN));
                sources.push(Source::Relay(i));
            }
        }
        (fds, sources)
    }

    fn dispatch(&mut self, source: Source, _revents: libc::c_short) {
        match source {
            Source::Signals => {
                for sig in self.signals.drain() {
                    match sig {
                        libc::SIGCHLD => self.reap_agents(),
                        libc::SIGINT | libc::SIGTERM => self.interrupt(sig),
                        _ => {}
                    }
                }
            }
            Source::Orders(i) => self.agents[i].flush(),
            Source::Reports(i) => match self.agents[i].read() {
                Ok(Some(msgs)) => msgs.into_iter().for_each(|m| self.on_report(i, m)),
                Ok(None) => self.agent_gone(i),
                Err(e) => {
                    let host = self.agents[i].host.clone();
                    eprintln!("ferry run: the agent on {host} sent a malformed message ({e}); dropping it");
                    self.agents[i].close();
                    self.agents[i].kill();
                    self.agent_gone(i);
                }
            },
            Source::Relay(i) => {
                // A relay says nothing unasked: readable means it closed, or broke the protocol.
                self.relays_lost[i] = true;
                if let Some(relays) = &self.relays {
                    let what = relays.describe(i);
                    self.fail(Failure::Relay(format!("lost {what}: its control connection closed")));
                }
            }
            Source::Complaints(i) => {
                if let Some(err) = self.agents[i].stderr.as_mut() {
                    if !err.pump() {
                        self.agents[i].stderr = None;
                    }
                }
            }
        }
    }

    fn on_report(&mut self, agent: usize, msg: FromAgent) {
        let rank = match &msg {
            FromAgent::Started { rank, .. }
            | FromAgent::LaunchFailed { rank, .. }
            | FromAgent::Pmi { rank, .. }
            | FromAgent::Output { rank, .. }
            | FromAgent::Ended { rank, .. } => *rank,
        };
        // Output may trail a rank's end (its pipes drain after it is reaped); nothing else.
        let trailing = matches!(msg, FromAgent::Output { .. });
        if self.ranks.get(rank as usize).is_none_or(|r| r.agent != agent || (r.ended && !trailing)) {
            let host = &self.agents[agent].host;
            ferry_core::warn!("run", "the agent on {host} reported on rank {rank}, which it does not run; ignored");
            return;
        }
        match msg {
            FromAgent::Started { pid, .. } => self.ranks[rank as usize].pid = pid as i32,
            FromAgent::LaunchFailed { why, message, .. } => {
                let kind = match why {
                    SpawnFailure::NotFound => io::ErrorKind::NotFound,
                    SpawnFailure::PermissionDenied => io::ErrorKind::PermissionDenied,
                    SpawnFailure::Other => io::ErrorKind::Other,
                };
                let error = io::Error::new(kind, format!("{message} (on {})", self.agents[agent].host));
                self.fail(Failure::LaunchFailed { rank, program: self.program.clone(), error });
            }
            FromAgent::Pmi { bytes, .. } => {
                let actions = self.server.receive(rank, &bytes);
                // Members are registered before the barrier that ends the card exchange is
                // released: no rank asks a relay for a peer the relay does not know yet.
                if let Some(Err(e)) = self.relays.as_mut().map(|r| r.add_members(&self.server)) {
                    self.fail(Failure::Relay(e));
                }
                self.apply(actions);
                self.maybe_show_paths();
            }
            FromAgent::Output { stream, bytes, .. } => {
                let r = &mut self.ranks[rank as usize];
                let lines = if stream == Stream::Stdout { &mut r.stdout } else { &mut r.stderr };
                lines.forward(&bytes);
            }
            FromAgent::Ended { how, .. } => {
                let kind = match how {
                    Ended::Exited(c) => ExitKind::Exited(c),
                    Ended::Signaled { signal, core_dumped } => ExitKind::Signaled { signal, core_dumped },
                };
                self.rank_ended(rank, Some(kind));
            }
        }
    }

    /// Rank `rank` ended as `kind` (`None`: its host was lost with it).
    fn rank_ended(&mut self, rank: u32, kind: Option<ExitKind>) {
        let slot = &mut self.ranks[rank as usize];
        // Its last output may still be on its way: partial lines are written at the end.
        slot.ended = true;
        if let Some(kind) = kind {
            if !self.stopping && self.server.state(rank) != Some(RankState::Aborted) {
                let host = Some(self.agents[slot.agent].host.clone());
                if let Some(f) = failure::judge_end(rank, slot.pid, host, kind, self.server.state(rank)) {
                    match f.survivable_rank().filter(|_| self.recovery) {
                        Some(r) => {
                            eprintln!("ferry run: {}", f.survived_message());
                            self.dead.push(r);
                            self.failure.get_or_insert(f);
                        }
                        None => self.fail(f),
                    }
                }
            }
        }
        let actions = self.server.rank_gone(rank);
        self.apply(actions);
    }

    /// The agent's reports ended: whatever of its ranks had not ended went with it.
    fn agent_gone(&mut self, agent: usize) {
        self.agents[agent].close();
        self.agents[agent].try_reap();
        let lost: Vec<u32> = (0..self.ranks.len() as u32).filter(|&r| self.ranks[r as usize].agent == agent && !self.ranks[r as usize].ended).collect();
        if lost.is_empty() {
            return;
        }
        // Its descriptors close a moment before the process can be reaped: wait that moment
        // (bounded) so that the report can say how it ended.
        let until = Instant::now() + Duration::from_millis(100);
        while self.agents[agent].exit.is_none() && self.agents[agent].try_reap().is_none() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(1));
        }
        let why = match self.agents[agent].exit {
            Some(ExitKind::Signaled { signal, .. }) => format!("its agent was killed by signal {signal}{}", signal_suffix(signal)),
            Some(ExitKind::Exited(code)) => format!("its agent's launcher exited with code {code}"),
            None => "its agent's connection closed".into(),
        };
        if !self.stopping {
            self.fail(Failure::HostLost { host: self.agents[agent].host.clone(), ranks: lost.clone(), why });
        }
        for r in lost {
            self.rank_ended(r, None);
        }
    }

    fn reap_agents(&mut self) {
        for i in 0..self.agents.len() {
            if let Some(kind) = self.agents[i].try_reap() {
                ferry_core::debug!("run", "agent on {} ended: {kind:?}", self.agents[i].host);
            }
        }
    }

    fn apply(&mut self, actions: Vec<Action>) {
        for action in actions {
            match action {
                Action::Reply { rank, bytes } => {
                    let agent = self.ranks[rank as usize].agent;
                    self.agents[agent].send(&ToAgent::Pmi { rank, bytes });
                }
                Action::ReplyAll { bytes } => self.agents.iter_mut().for_each(|a| a.send(&ToAgent::PmiAll { bytes: bytes.clone() })),
                Action::Abort { rank, code, message } => self.fail(Failure::Aborted { rank, code, message }),
                Action::BarrierBroken { gone, waiting } => self.fail(Failure::BarrierBroken { gone, waiting }),
                Action::Spawn { rank, .. } => {
                    let why = "spawn is served by ferry run on one host only, not by a job across hosts";
                    let reply = self.server.answer(rank, Response::refusal(ResponseKind::SpawnResult, why));
                    self.apply(vec![reply]);
                }
                Action::Name { rank, request } => {
                    let reply = super::spawn::serve_name(&mut self.names, &self.server, rank, request);
                    self.apply(vec![reply]);
                }
                Action::Refused { .. } | Action::Finalized { .. } => {}
            }
        }
    }

    /// `--show-paths`: once every rank has published its card, the path of every
    /// connection, as the ranks choose them.
    fn maybe_show_paths(&mut self) {
        if !self.show_paths {
            return;
        }
        let mut ids = Vec::with_capacity(self.ranks.len());
        for r in 0..self.ranks.len() {
            match self.server.value(&format!("ferry-card-{r}")).map(BusinessCard::decode) {
                Some(Ok(card)) => ids.push(card.id),
                _ => return,
            }
        }
        self.show_paths = false;
        let mut by_rank = BTreeMap::new();
        for (r, id) in ids.iter().enumerate() {
            by_rank.insert(r, format!("{}/{}", id.front, id.host));
        }
        let mut text = String::from("ferry run: ranks and their (front node/host):\n");
        for (r, where_) in by_rank {
            text.push_str(&format!("  rank {r}: {where_}\n"));
        }
        text.push_str("ferry run: connection paths (initiator -> acceptor):\n");
        for line in paths::describe(&ids).lines() {
            text.push_str(&format!("  {line}\n"));
        }
        eprint!("{text}");
    }

    /// Report `failure` (an abort is held a moment first) and stop the job.
    fn fail(&mut self, failure: Failure) {
        if matches!(failure, Failure::Aborted { .. } | Failure::BarrierBroken { .. }) && !self.stopping && self.failure.is_none() {
            if self.held.is_none() {
                self.held = Some((failure, Instant::now() + ABORT_HOLD));
            }
            return;
        }
        self.held = None;
        self.report(failure);
    }

    fn report(&mut self, failure: Failure) {
        if self.failure.is_none() && !self.stopping {
            eprintln!("ferry run: {}", failure.message());
            self.failure = Some(failure);
        }
        self.stop(libc::SIGTERM, STOP_GRACE);
    }

    fn stop(&mut self, signal: libc::c_int, grace: Duration) {
        if self.stopping {
            return;
        }
        self.stopping = true;
        self.agents.iter_mut().for_each(|a| a.send(&ToAgent::Signal { signal }));
        self.kill_at = Some(Instant::now() + grace);
    }

    fn interrupt(&mut self, signal: libc::c_int) {
        let live = self.ranks.iter().filter(|r| !r.ended).count();
        if !self.stopping {
            let failure = Failure::Interrupted { signal, live };
            eprintln!("ferry run: {}", failure.message());
            self.failure.get_or_insert(failure);
            self.held = None;
            self.stop(signal, INTERRUPT_GRACE);
        } else {
            self.kill_ranks();
        }
    }

    /// SIGKILL every rank; agents that have not left after [`AGENT_GRACE`] are killed.
    fn kill_ranks(&mut self) {
        self.kill_at = None;
        self.agents.iter_mut().for_each(|a| a.send(&ToAgent::Signal { signal: libc::SIGKILL }));
        self.abandon_at.get_or_insert(Instant::now() + AGENT_GRACE);
    }

    fn fire_timers(&mut self, now: Instant) {
        if let Some((at, seconds)) = self.timeout {
            if now >= at {
                self.timeout = None;
                if !self.stopping {
                    let live = self.ranks.iter().filter(|r| !r.ended).count();
                    self.held = None;
                    self.report(Failure::TimedOut { seconds, live });
                }
            }
        }
        if self.held.as_ref().is_some_and(|h| now >= h.1) {
            let (f, _) = self.held.take().expect("checked");
            self.report(f);
        }
        if self.kill_at.is_some_and(|at| now >= at) {
            self.kill_ranks();
        }
        if self.abandon_at.is_some_and(|at| now >= at) {
            self.abandon_at = None;
            for a in &mut self.agents {
                if !a.is_done() {
                    ferry_core::warn!("run", "the agent on {} did not leave; killing it", a.host);
                    a.kill();
                    a.hang_up();
                }
            }
        }
    }
}

fn signal_suffix(signal: i32) -> String {
    failure::signal_name(signal).map(|n| format!(" ({n})")).unwrap_or_default()
}

/// A program named by a relative path is found from the head's directory on every host.
fn resolve_program(program: &OsString) -> Vec<u8> {
    let bytes = program.as_bytes();
    if bytes.contains(&b'/') && !bytes.starts_with(b"/") {
        if let Ok(dir) = std::env::current_dir() {
            return dir.join(program).as_os_str().as_bytes().to_vec();
        }
    }
    bytes.to_vec()
}
