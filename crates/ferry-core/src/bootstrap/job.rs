//! A job from a launch: what every face (MPI, MCAPI) starts from. PMI-1 (from `ferry run`,
//! Hydra or Slurm) or nothing (a singleton) goes in; rank, size, the per-job secret, the
//! business cards, this host's shared memory and a ready [`Engine`] come out. An MCAPI node
//! starts the same way under a launcher, or from a hosts file or a same-host rendezvous
//! without one (`node.rs`).
//!
//! The faces then talk to the engine, and to the job only to meet at the end, to leave the
//! launcher in order or to tell it that the job aborts: neither touches a socket, a ring or
//! the PMI client itself.

use std::fmt;
use std::io;
use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use super::dial_plan::{parse_job_id, parse_proxies, plan, PROXIES_KEY, RELAY_JOB_KEY};
use super::node::{self, NodeState};
use super::{singleton_spawn, PmiClient, PmiError, SpawnRequest, PARENT_PORT_KEY};
use crate::config::{self, BadValue};
use crate::engine::{Engine, EngineConfig, ShmConfig};
use crate::transport::business_card::{sanitize_name, BusinessCard, CardError, GlobalId};
use crate::transport::shm::{self, HostConfig, HostShm, ShmError};
use crate::transport::tcp::{choose_address, interfaces, listen, DialPlan, Listener, TransportError};

/// Why a process could not become a rank of its job.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    #[error("PMI: {0}")]
    Pmi(#[from] PmiError),
    #[error("{0}")]
    Knob(#[from] BadValue),
    /// No address to advertise, or no port to listen on.
    #[error("{0}")]
    Listen(TransportError),
    #[error("rank {0} published no business card")]
    NoCard(u32),
    #[error("{0}")]
    BadCard(CardError),
    #[error("FERRY_SHM_RING_SIZE={0} is invalid: expected 0 or a power of two from 4096 to 2 GiB")]
    RingSize(usize),
    #[error("shared memory: {0} (FERRY_TRANSPORTS=tcp does without)")]
    Shm(ShmError),
    #[error("engine: {0}")]
    Engine(io::Error),
    /// Two processes started as the same MCAPI node.
    #[error("node {node} of domain {domain} is claimed by two processes: rank {first} and rank {second}")]
    DuplicateNode { domain: u32, node: u32, first: u32, second: u32 },
    /// The hosts file (`FERRY_MCAPI_HOSTS`) is unreadable or malformed, or does not list us.
    #[error("FERRY_MCAPI_HOSTS {path}: {why}")]
    HostsFile { path: String, why: String },
    /// The rendezvous directory (`FERRY_MCAPI_RENDEZVOUS`) cannot be used.
    #[error("MCAPI rendezvous: {0}")]
    Rendezvous(String),
}

/// This process's place in its job, and its line to the launcher (none for a singleton).
pub struct Job {
    pub(super) rank: u32,
    pub(super) size: u32,
    pub(super) pmi: Option<PmiClient>,
    pub(super) hostname: String,
    pub(super) oversubscribed: bool,
    /// The world ranks on this process's host, ascending (itself included).
    pub(super) host_ranks: Vec<u32>,
    /// For every world rank, the lowest world rank on its host (a host's number); empty for
    /// an MCAPI node, which does not learn where the others run.
    pub(super) hosts: Vec<u32>,
    /// The MCAPI node this process is, when it is one.
    pub(super) node: Option<NodeState>,
    /// The `ferry run` of each job a singleton spawned, waited for at finalize.
    pub(super) launched: Vec<std::process::Child>,
}

impl fmt::Debug for Job {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Job")
            .field("rank", &self.rank)
            .field("size", &self.size)
            .field("launched", &self.pmi.is_some())
            .field("oversubscribed", &self.oversubscribed)
            .finish()
    }
}

/// The engine's knobs, read after the business cards are exchanged (so a bad value fails
/// every rank at the same point of start-up).
pub(super) struct EngineKnobs {
    eager_limit: usize,
    spin: Duration,
    connect_timeout: Duration,
    tcp_sndbuf: usize,
    use_shm: bool,
    shm_eager_limit: usize,
    ring_size: usize,
    single_copy: Option<usize>,
}

impl EngineKnobs {
    pub(super) fn from_env() -> Result<EngineKnobs, BadValue> {
        Ok(EngineKnobs {
            eager_limit: config::EAGER_LIMIT.bytes()? as usize,
            spin: Duration::from_micros(config::SPIN_US.u64()?),
            connect_timeout: Duration::from_secs(config::CONNECT_TIMEOUT.u64()?.max(1)),
            tcp_sndbuf: config::TCP_SNDBUF.bytes()? as usize,
            use_shm: config::TRANSPORTS.transports()?,
            shm_eager_limit: config::SHM_EAGER_LIMIT.bytes()? as usize,
            ring_size: config::SHM_RING_SIZE.bytes()? as usize,
            single_copy: config::shm_single_copy()?,
        })
    }

    /// The knobs of a process whose messages each carry a header of `header` bytes in
    /// front of the user's data (an MCAPI node): the eager limits that were not set grow by
    /// it, so that data of exactly the default limit (a 32 KiB packet) still goes eagerly.
    pub(super) fn with_header(mut self, header: usize) -> EngineKnobs {
        if !config::EAGER_LIMIT.is_set() {
            self.eager_limit += header;
        }
        if !config::SHM_EAGER_LIMIT.is_set() {
            self.shm_eager_limit += header;
        }
        self
    }
}

/// Bytes an MCAPI frame puts in front of the data it carries (with room to spare).
pub(super) const MCAPI_HEADER: usize = 64;

impl Job {
    /// Become a rank of the job the environment describes: connect to the launcher if there
    /// is one (`PMI_FD`, see [`PmiClient::from_env`]), else run as a singleton; listen, publish
    /// this rank's business card and read everyone's, join this host's shared memory, and
    /// build the engine with a route to every peer. Collective over the job under PMI.
    pub fn start() -> Result<(Job, Engine), JobError> {
        Job::from_launch(PmiClient::from_env()?, None)
    }

    /// [`start`](Self::start) from `pmi`; for MCAPI node `node` of its domain, also claim
    /// the node in the key-value space, and go on when peers are lost.
    pub(super) fn from_launch(mut pmi: Option<PmiClient>, node: Option<(u32, u32)>) -> Result<(Job, Engine), JobError> {
        let (rank, size) = match &pmi {
            Some(p) => (p.rank(), p.size()),
            None => (0, 1),
        };
        crate::log::set_prefix(format!("ferry[rank {rank}]"));
        let secret = match pmi.as_mut() {
            Some(p) => p.job_secret()?.into_bytes(),
            None => {
                let mut s = vec![0u8; 32];
                getrandom::getrandom(&mut s).expect("the kernel's random source is available");
                s
            }
        };

        let listener = listen_for_peers(size)?;
        let hostname = hostname();
        let set = |k: &config::Knob| k.is_set().then(|| k.value());
        let me = BusinessCard { addr: listener.advertise, id: identity(set(&config::HOST_ID), set(&config::FRONT_NODE), &hostname) };
        crate::info!("init", "rank {rank} of {size} listening on {}", me.addr);
        let mut claimed = None;
        let cards = match pmi.as_mut() {
            None => vec![me],
            Some(p) => {
                // Claimed before the barrier, so that after it a node nobody claimed is
                // known to be absent for good.
                claimed = node.map(|(d, n)| node::claim(p, d, n));
                exchange_cards(p, &me)?
            }
        };

        let mut knobs = EngineKnobs::from_env()?;
        if node.is_some() {
            knobs = knobs.with_header(MCAPI_HEADER);
        }
        let hosts = host_numbers(&cards);
        let locals = local_of(&hosts, rank);
        // More ranks than cores on this host: waits give the core away from the start.
        let oversubscribed = is_oversubscribed(locals.len(), std::thread::available_parallelism().map_or(1, |n| n.get()));
        // Shared memory needs a job name common to the host's ranks: a singleton has no peers.
        let shm = match (knobs.use_shm, pmi.as_ref()) {
            (true, Some(p)) => join_host(p.kvsname(), rank, locals.clone(), &cards[rank as usize].id, &knobs)?,
            _ => None,
        };
        let plan = match pmi.as_mut() {
            Some(p) => Some(dial_plan(p, &cards, rank, &secret)?),
            None => None,
        };
        // With recovery enabled (fault-tolerant MPI), a lost peer is reported, not fatal.
        let recovery = config::RECOVERY.flag()?;
        let peers = Peers { rank, size, secret, cards, lost_peer_fatal: node.is_none() && !recovery, retry_refused: false };
        let mut engine = build_engine(peers, listener.socket, &knobs, shm)?;
        if let Some(plan) = plan {
            engine.set_dial_plan(&plan);
        }
        engine.set_oversubscribed(oversubscribed);
        // Checked last, so that the other ranks of this host, which do not know yet, are not
        // left waiting for this one in the shared-memory set-up.
        if let (Some((d, n)), Some(claimed), Some(p)) = (node, claimed, pmi.as_mut()) {
            node::check_claim(p, d, n, claimed)?;
        }
        let node = node.map(|(domain, node)| NodeState::launcher(domain, node));
        Ok((Job { rank, size, pmi, hostname, oversubscribed, host_ranks: locals, hosts, node, launched: Vec::new() }, engine))
    }

    pub fn rank(&self) -> u32 {
        self.rank
    }

    pub fn size(&self) -> u32 {
        self.size
    }

    /// The host's name as the system gives it (`MPI_Get_processor_name`), not the sanitised
    /// or overridden (`FERRY_HOST_ID`) one of the business card.
    pub fn processor_name(&self) -> &str {
        &self.hostname
    }

    /// More ranks share this host than it has cores (waits then tend to end in sleeps).
    pub fn is_oversubscribed(&self) -> bool {
        self.oversubscribed
    }

    /// The world ranks that share this process's host (same front node and host), ascending;
    /// `MPI_Comm_split_type` groups ranks by it whichever transport joins them.
    pub fn host_ranks(&self) -> &[u32] {
        &self.host_ranks
    }

    /// The host of world rank `r`, as the lowest world rank on it.
    pub fn host_of(&self, r: u32) -> u32 {
        self.hosts.get(r as usize).copied().unwrap_or(r)
    }

    /// Whether the job's ranks run on more than one host.
    pub fn spans_hosts(&self) -> bool {
        self.hosts.iter().any(|&h| h != 0)
    }

    /// Whether a launcher runs the job (false: a singleton started without PMI).
    pub fn is_launched(&self) -> bool {
        self.pmi.is_some()
    }

    /// The launcher that serves spawn and names, or why there is none.
    fn ferry_launcher(&mut self) -> Result<&mut PmiClient, String> {
        match self.pmi.as_mut() {
            None => Err("this process was started without a launcher (a singleton); start it with ferry run".into()),
            Some(p) if !p.is_ferry_launcher() => Err("the launcher of this job (Hydra, Slurm or another PMI-1 server) serves no spawn or name service for Ferry".into()),
            Some(p) => Ok(p),
        }
    }

    /// Whether the children of the last spawn may still come: false once the `ferry run` a
    /// singleton started for them has ended (a launcher that serves spawn reports a child
    /// that dies by stopping the run).
    pub fn spawned_alive(&mut self) -> bool {
        match self.launched.last_mut() {
            Some(child) if self.pmi.is_none() => matches!(child.try_wait(), Ok(None)),
            _ => true,
        }
    }

    /// The port name the parents left for this job when they spawned it (`None`: a job
    /// that was not spawned).
    pub fn parent_port(&mut self) -> Result<Option<String>, JobError> {
        match self.pmi.as_mut() {
            Some(p) if p.is_ferry_launcher() => Ok(p.get(PARENT_PORT_KEY)?),
            _ => Ok(None),
        }
    }

    /// How many processes the launcher can usefully run (`MPI_UNIVERSE_SIZE`): its answer,
    /// or this job's size where it sets no bound or there is no launcher.
    pub fn universe_size(&mut self) -> i32 {
        let size = i32::try_from(self.size).unwrap_or(i32::MAX);
        match self.pmi.as_mut().map(|p| p.universe_size()) {
            Some(Ok(n)) if n > 0 => n,
            Some(_) => size,
            // A singleton starts its children's launcher itself: FERRY_UNIVERSE_SIZE or the cores.
            None => {
                let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
                let n = config::UNIVERSE_SIZE.u64().ok().filter(|_| config::UNIVERSE_SIZE.is_set()).unwrap_or(cores);
                i32::try_from(n.max(1)).unwrap_or(i32::MAX)
            }
        }
    }

    /// Ask the launcher to start the children of `request`: their job's name, or why not.
    /// A singleton starts `ferry run` for them itself.
    pub fn spawn(&mut self, request: &SpawnRequest) -> Result<String, String> {
        if self.pmi.is_none() {
            let universe = u32::try_from(self.universe_size()).unwrap_or(1);
            let child = singleton_spawn::start(request, universe)?;
            let name = format!("ferry run (pid {})", child.id());
            self.launched.push(child);
            return Ok(name);
        }
        self.ferry_launcher()?.spawn(request).map_err(|e| match e {
            PmiError::Refused { msg, .. } => msg.replace('_', " "),
            other => other.to_string(),
        })
    }

    /// The launcher's name service: publish, look up, withdraw (`Err`: why not).
    pub fn publish_name(&mut self, service: &str, port: &str) -> Result<(), String> {
        self.ferry_launcher()?.publish_name(service, port).map_err(name_error)
    }

    pub fn lookup_name(&mut self, service: &str) -> Result<String, String> {
        self.ferry_launcher()?.lookup_name(service).map_err(name_error)
    }

    pub fn unpublish_name(&mut self, service: &str) -> Result<(), String> {
        self.ferry_launcher()?.unpublish_name(service).map_err(name_error)
    }

    /// Wait until every rank of the job gets here (the launcher's barrier; at once for a
    /// singleton). Faces call it at the end, after their engine has flushed its queues.
    pub fn barrier(&mut self) -> Result<(), JobError> {
        match self.pmi.as_mut() {
            Some(p) => Ok(p.barrier()?),
            None => Ok(()),
        }
    }

    /// Leave the launcher in order: this rank ends normally. A singleton first waits for
    /// the `ferry run` of each job it spawned.
    pub fn finalize(&mut self) -> Result<(), JobError> {
        for mut child in self.launched.drain(..) {
            let _ = child.wait();
        }
        match self.pmi.as_mut() {
            Some(p) => Ok(p.finalize()?),
            None => Ok(()),
        }
    }

    /// Tell the launcher that the job aborts with `code` and why, so it ends the other ranks.
    /// The caller then exits.
    pub fn abort(&mut self, code: i32, msg: &str) -> Result<(), JobError> {
        match self.pmi.as_mut() {
            Some(p) => Ok(p.abort(code, msg)?),
            None => Ok(()),
        }
    }
}

fn name_error(e: PmiError) -> String {
    match e {
        PmiError::Refused { msg, .. } => msg.replace('_', " "),
        other => other.to_string(),
    }
}

/// Who the engine talks to, and how it takes losing one of them.
pub(super) struct Peers {
    pub rank: u32,
    pub size: u32,
    pub secret: Vec<u8>,
    pub cards: Vec<BusinessCard>,
    pub lost_peer_fatal: bool,
    pub retry_refused: bool,
}

pub(super) fn build_engine(p: Peers, listener: mio::net::TcpListener, knobs: &EngineKnobs, shm: Option<ShmConfig>) -> Result<Engine, JobError> {
    Engine::new(EngineConfig {
        rank: p.rank,
        size: p.size,
        secret: p.secret,
        cards: p.cards,
        listener,
        eager_limit: knobs.eager_limit,
        spin: knobs.spin,
        connect_timeout: knobs.connect_timeout,
        tcp_sndbuf: knobs.tcp_sndbuf,
        shm,
        lost_peer_fatal: p.lost_peer_fatal,
        retry_refused: p.retry_refused,
    })
    .map_err(JobError::Engine)
}

/// Open the socket peers connect to. Alone, a rank advertises loopback (nobody else needs to
/// reach it, and a host without a network still runs); otherwise the interface `FERRY_IF`
/// names, or the first one that is not loopback.
fn listen_for_peers(size: u32) -> Result<Listener, JobError> {
    let spec = config::IFACE.value();
    let advertise = if size == 1 { Ipv4Addr::LOCALHOST } else { choose_address(&spec, &interfaces()).map_err(JobError::Listen)? };
    let (bind, advertise) = addresses(&spec, advertise);
    let range = config::PORT_RANGE.port_range()?;
    listen(IpAddr::V4(bind), IpAddr::V4(advertise), range).map_err(JobError::Listen)
}

/// (bind, advertise): without `FERRY_IF` the socket listens on every address, so peers reach
/// it whichever of this host's addresses they route to; with it, only on the one named.
fn addresses(spec: &str, advertise: Ipv4Addr) -> (Ipv4Addr, Ipv4Addr) {
    let bind = if spec.trim().is_empty() { Ipv4Addr::UNSPECIFIED } else { advertise };
    (bind, advertise)
}

/// This process's global id: the host is `FERRY_HOST_ID` or the system's name, the front
/// node `FERRY_FRONT_NODE` or the host itself (a public node), both as a card allows them.
fn identity(host_id: Option<String>, front_node: Option<String>, hostname: &str) -> GlobalId {
    let host = sanitize_name(&host_id.unwrap_or_else(|| hostname.to_string()));
    let front = match front_node {
        Some(f) => sanitize_name(&f),
        None => host.clone(),
    };
    GlobalId { front, host, pid: std::process::id() }
}

/// This rank's way to each peer, with the relays the launcher seeded (none: all direct).
fn dial_plan(p: &mut PmiClient, cards: &[BusinessCard], rank: u32, secret: &[u8]) -> Result<DialPlan, JobError> {
    let bad = |key: &str, why: String| JobError::Pmi(PmiError::Io(format!("the launcher's {key} is malformed: {why}")));
    let proxies = match p.get(PROXIES_KEY)? {
        Some(v) => parse_proxies(&v).map_err(|e| bad(PROXIES_KEY, e))?,
        None => Vec::new(),
    };
    let job = match p.get(RELAY_JOB_KEY)? {
        Some(v) => Some(parse_job_id(&v).map_err(|e| bad(RELAY_JOB_KEY, e))?),
        None => None,
    };
    let ids: Vec<GlobalId> = cards.iter().map(|c| c.id.clone()).collect();
    Ok(plan(&ids, rank, &proxies, job, secret))
}

/// Publish `me` under `ferry-card-<rank>`, meet every rank in the PMI barrier, and read all
/// the cards, in rank order.
fn exchange_cards(p: &mut PmiClient, me: &BusinessCard) -> Result<Vec<BusinessCard>, JobError> {
    p.put(&card_key(p.rank()), &me.encode())?;
    p.barrier()?;
    let size = p.size();
    let mut cards = Vec::with_capacity(size as usize);
    for r in 0..size {
        let v = p.get(&card_key(r))?.ok_or(JobError::NoCard(r))?;
        cards.push(BusinessCard::decode(&v).map_err(JobError::BadCard)?);
    }
    Ok(cards)
}

fn card_key(rank: u32) -> String {
    format!("ferry-card-{rank}")
}

/// The ranks on `me`'s host, ascending, by their host numbers (`host_numbers`: the same
/// front node and host; pids differ, and a host name alone may repeat behind two front nodes).
fn local_of(hosts: &[u32], me: u32) -> Vec<u32> {
    (0..hosts.len() as u32).filter(|&r| hosts[r as usize] == hosts[me as usize]).collect()
}

/// For every rank, the lowest rank whose global id names the same host (front node and
/// host), as [`local_ranks`] groups them.
fn host_numbers(cards: &[BusinessCard]) -> Vec<u32> {
    let mut first: std::collections::HashMap<(&str, &str), u32> = std::collections::HashMap::new();
    (0..cards.len() as u32).map(|r| *first.entry((cards[r as usize].id.front.as_str(), cards[r as usize].id.host.as_str())).or_insert(r)).collect()
}

fn is_oversubscribed(local_ranks: usize, cores: usize) -> bool {
    local_ranks > cores
}

/// Ring size when `FERRY_SHM_RING_SIZE` is 0: 256 KiB, halved while the host's rings would
/// take more than 64 MiB (down to 16 KiB).
fn auto_ring_size(local_ranks: usize) -> usize {
    let rings = local_ranks * local_ranks.saturating_sub(1);
    let mut cap = 256 << 10;
    while cap > 16 << 10 && cap * rings > 64 << 20 {
        cap /= 2;
    }
    cap
}

/// The capacity of each ring: `requested` (`FERRY_SHM_RING_SIZE`), or the automatic size
/// for `local_ranks` when it is 0.
fn ring_capacity(requested: usize, local_ranks: usize) -> Result<usize, JobError> {
    let capacity = if requested == 0 { auto_ring_size(local_ranks) } else { requested };
    if !shm::ring::valid_capacity(capacity) {
        return Err(JobError::RingSize(requested));
    }
    Ok(capacity)
}

/// Join the shared memory of `locals`, the ranks whose global id names our host (`mine`),
/// when there are others.
fn join_host(job: &str, rank: u32, locals: Vec<u32>, mine: &GlobalId, knobs: &EngineKnobs) -> Result<Option<ShmConfig>, JobError> {
    if locals.len() < 2 {
        return Ok(None);
    }
    let ring_capacity = ring_capacity(knobs.ring_size, locals.len())?;
    // Peers may read our buffers only if we let them (Yama); the probe then tells whether the
    // kernel lets us read theirs. Each side decides for itself: a receiver that may not read
    // ignores the address and asks for the data through the ring.
    let single_copy = knobs.single_copy.filter(|_| shm::permit_peer_reads().is_ok() && shm::cma_available());
    let job_id = shm::host_job_id(job, &format!("{}|{}", mine.front, mine.host));
    let (host, links) = HostShm::join(HostConfig { job_id, locals, me: rank, ring_capacity, timeout: knobs.connect_timeout }).map_err(JobError::Shm)?;
    crate::info!("init", "sharing memory with {} local ranks (rings of {} KiB, single copy up to: {single_copy:?})", host.locals.len() - 1, ring_capacity >> 10);
    Ok(Some(ShmConfig { host, links, eager_limit: knobs.shm_eager_limit, single_copy }))
}

/// The system's host name ("localhost" if it will not say).
pub(super) fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most buf.len() bytes into buf.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr() as *mut libc::c_char, buf.len()) };
    if rc != 0 {
        return "localhost".into();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::SocketAddr;

    fn card(front: &str, host: &str, pid: u32) -> BusinessCard {
        BusinessCard { addr: SocketAddr::from(([10, 0, 0, 1], 4000 + pid as u16)), id: GlobalId { front: front.into(), host: host.into(), pid } }
    }

    fn local_ranks(cards: &[BusinessCard], me: u32) -> Vec<u32> {
        local_of(&host_numbers(cards), me)
    }

    #[test]
    fn local_ranks_share_front_node_and_host() {
        let cards = vec![card("a", "a", 1), card("b", "b", 2), card("a", "a", 3), card("gw", "a", 4), card("a", "a", 5)];
        assert_eq!(local_ranks(&cards, 0), vec![0, 2, 4]);
        assert_eq!(local_ranks(&cards, 4), vec![0, 2, 4]);
        assert_eq!(local_ranks(&cards, 1), vec![1]);
        // Same host name behind another front node: another machine.
        assert_eq!(local_ranks(&cards, 3), vec![3]);
    }

    #[test]
    fn hosts_are_numbered_by_their_lowest_rank() {
        let cards = vec![card("a", "a", 1), card("b", "b", 2), card("a", "a", 3), card("gw", "a", 4), card("b", "b", 5)];
        assert_eq!(host_numbers(&cards), vec![0, 1, 0, 3, 1]);
    }

    #[test]
    fn a_singleton_is_its_own_host() {
        assert_eq!(local_ranks(&[card("h", "h", 7)], 0), vec![0]);
    }

    #[test]
    fn oversubscribed_only_past_the_cores() {
        assert!(!is_oversubscribed(2, 2));
        assert!(is_oversubscribed(3, 2));
        assert!(!is_oversubscribed(1, 1));
    }

    #[test]
    fn auto_ring_size_keeps_a_host_under_64_mib() {
        assert_eq!(auto_ring_size(1), 256 << 10);
        assert_eq!(auto_ring_size(2), 256 << 10);
        assert_eq!(auto_ring_size(16), 256 << 10); // 240 rings of 256 KiB: 60 MiB
        assert_eq!(auto_ring_size(17), 128 << 10);
        assert_eq!(auto_ring_size(64), 16 << 10); // 4032 rings of 16 KiB: 63 MiB
        assert_eq!(auto_ring_size(1000), 16 << 10);
        for n in 2..200 {
            let cap = auto_ring_size(n);
            assert!(cap.is_power_of_two() && (16 << 10..=256 << 10).contains(&cap), "{n} ranks: {cap}");
            assert!(cap == 16 << 10 || cap * n * (n - 1) <= 64 << 20, "{n} ranks: {cap}");
            assert!(shm::ring::valid_capacity(cap));
        }
    }

    #[test]
    fn ring_capacity_takes_the_knob_or_the_automatic_size() {
        assert_eq!(ring_capacity(0, 4).ok(), Some(256 << 10));
        assert_eq!(ring_capacity(4096, 4).ok(), Some(4096));
        let e = ring_capacity(1000, 4).expect_err("not a power of two");
        assert_eq!(e.to_string(), "FERRY_SHM_RING_SIZE=1000 is invalid: expected 0 or a power of two from 4096 to 2 GiB");
        assert!(ring_capacity(2048, 4).is_err());
    }

    #[test]
    fn binds_everywhere_unless_an_interface_is_named() {
        let ip = Ipv4Addr::new(192, 168, 1, 5);
        assert_eq!(addresses("", ip), (Ipv4Addr::UNSPECIFIED, ip));
        assert_eq!(addresses("  ", ip), (Ipv4Addr::UNSPECIFIED, ip));
        assert_eq!(addresses("eth0", ip), (ip, ip));
    }

    #[test]
    fn identity_from_knobs_or_the_host_name() {
        let id = identity(None, None, "node-1.example");
        assert_eq!((id.front.as_str(), id.host.as_str(), id.pid), ("node-1.example", "node-1.example", std::process::id()));
        let id = identity(Some("n 7".into()), None, "ignored");
        assert_eq!((id.front.as_str(), id.host.as_str()), ("n7", "n7"));
        let id = identity(None, Some("gw|0".into()), "c1");
        assert_eq!((id.front.as_str(), id.host.as_str()), ("gw0", "c1"));
    }

    #[test]
    fn shm_errors_name_the_way_out() {
        let e = JobError::Shm(ShmError::Layout("x".into()));
        assert!(e.to_string().starts_with("shared memory: "));
        assert!(e.to_string().ends_with("(FERRY_TRANSPORTS=tcp does without)"));
    }
}
