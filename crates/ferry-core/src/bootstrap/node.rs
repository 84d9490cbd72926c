//! An MCAPI node's start: the program names its node; where the other nodes of its domain
//! run is learnt one of three ways, tried in this order.
//!
//! - **Under a launcher** (PMI: `ferry run`, Hydra, Slurm): as an MPI rank, and each rank
//!   also publishes `ferry-mcapi-node-<domain>-<node>` = its rank before the barrier where
//!   the business cards meet. Shared memory between ranks of one host works as for MPI.
//! - **A hosts file** (`FERRY_MCAPI_HOSTS`, see `hosts_file`): the world is the listed
//!   nodes in file order; each listens on its line's port on every address. TCP only, no
//!   shared memory; nodes may start in any order (connects are retried until
//!   `FERRY_CONNECT_TIMEOUT`).
//! - **A same-host rendezvous** (neither of the above; see `rendezvous`): the world is
//!   `FERRY_MCAPI_MAX_NODES` slots, a node's rank its slot; nodes listen on loopback and are
//!   found when asked for ([`Job::locate`]). TCP over loopback only, no shared memory.
//!
//! In every mode the engine goes on when a node is lost (`EngineConfig::lost_peer_fatal`).

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, ToSocketAddrs};

use super::hosts_file::HostsFile;
use super::job::{build_engine, hostname, EngineKnobs, Peers};
use super::rendezvous::{self, SlotCard, Slots};
use super::{Job, JobError, PmiClient, PmiError};
use crate::config;
use crate::engine::Engine;
use crate::transport::business_card::{sanitize_name, BusinessCard, GlobalId};
use crate::transport::tcp::listen;

/// Where a node of our domain runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Locate {
    /// At this world rank (the engine can reach it).
    At(u32),
    /// Not running now; it may start later (rendezvous only).
    NotYet,
    /// Not part of this job, and never will be.
    Never,
}

/// How a node found the others.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeMode {
    /// PMI from a launcher (a job of [`Job::start`] reads so too, a singleton included).
    Launcher,
    /// `FERRY_MCAPI_HOSTS`.
    HostsFile,
    /// The same-host rendezvous directory.
    Rendezvous,
}

/// The MCAPI side of a job.
pub(super) struct NodeState {
    domain: u32,
    node: u32,
    finder: Finder,
}

enum Finder {
    /// Answers of the key-value space, kept: they never change after the barrier.
    Launcher(HashMap<u32, Locate>),
    /// The nodes in file order.
    HostsFile(Vec<u32>),
    /// Our slot, and where each node was last seen.
    Rendezvous { slots: Slots, seen: HashMap<u32, (u32, SlotCard)> },
}

impl NodeState {
    pub(super) fn launcher(domain: u32, node: u32) -> NodeState {
        NodeState { domain, node, finder: Finder::Launcher(HashMap::new()) }
    }
}

/// The key under which the rank running `node` of `domain` is published.
pub fn node_key(domain: u32, node: u32) -> String {
    format!("ferry-mcapi-node-{domain}-{node}")
}

/// Publish that this rank is `node` of `domain`; false if the launcher refused (it may
/// refuse a key another rank put first).
pub(super) fn claim(p: &mut PmiClient, domain: u32, node: u32) -> bool {
    let rank = p.rank().to_string();
    p.put(&node_key(domain, node), &rank).is_ok()
}

/// After the barrier: the claim must have stuck, else another rank is the same node.
pub(super) fn check_claim(p: &mut PmiClient, domain: u32, node: u32, claimed: bool) -> Result<(), JobError> {
    let key = node_key(domain, node);
    let me = p.rank();
    match p.get(&key)?.and_then(|v| v.parse::<u32>().ok()) {
        Some(r) if r == me && claimed => Ok(()),
        Some(r) if r != me => Err(JobError::DuplicateNode { domain, node, first: r.min(me), second: r.max(me) }),
        _ => Err(JobError::Pmi(PmiError::Env(format!("the launcher did not keep this rank's claim {key}")))),
    }
}

impl Job {
    /// Become node `node` of MCAPI domain `domain`: under a launcher if there is one, else
    /// from the hosts file `FERRY_MCAPI_HOSTS`, else through the same-host rendezvous (see
    /// the module's documentation). The engine goes on when other nodes are lost.
    pub fn start_node(domain: u32, node: u32) -> Result<(Job, Engine), JobError> {
        if let Some(pmi) = PmiClient::from_env()? {
            return Job::from_launch(Some(pmi), Some((domain, node)));
        }
        if config::MCAPI_HOSTS.is_set() {
            return start_from_hosts_file(&config::MCAPI_HOSTS.value(), domain, node);
        }
        start_by_rendezvous(domain, node)
    }

    /// The MCAPI node this process is (for a job of [`start`](Self::start): its rank).
    pub fn node(&self) -> u32 {
        self.node.as_ref().map_or(self.rank, |n| n.node)
    }

    /// The MCAPI domain of this node (0 for a job of [`start`](Self::start)).
    pub fn domain(&self) -> u32 {
        self.node.as_ref().map_or(0, |n| n.domain)
    }

    /// How this process found the others.
    pub fn mode(&self) -> NodeMode {
        match self.node.as_ref().map(|n| &n.finder) {
            None | Some(Finder::Launcher(_)) => NodeMode::Launcher,
            Some(Finder::HostsFile(_)) => NodeMode::HostsFile,
            Some(Finder::Rendezvous { .. }) => NodeMode::Rendezvous,
        }
    }

    /// Where node `node` of our domain runs, as a world rank. In a rendezvous the engine
    /// learns its address on the way; elsewhere the answer is final. Cheap enough to ask
    /// every few milliseconds while waiting for a node to start.
    pub fn locate(&mut self, engine: &mut Engine, node: u32) -> Locate {
        let (rank, size) = (self.rank, self.size);
        let Some(state) = self.node.as_mut() else {
            // A job of `start`: node ids are ranks.
            return if node < size { Locate::At(node) } else { Locate::Never };
        };
        if node == state.node {
            return Locate::At(rank);
        }
        match &mut state.finder {
            Finder::Launcher(known) => {
                if let Some(&l) = known.get(&node) {
                    return l;
                }
                let Some(p) = self.pmi.as_mut() else { return Locate::Never };
                let l = match p.get(&node_key(state.domain, node)) {
                    Ok(v) => match v.and_then(|v| v.parse::<u32>().ok()).filter(|&r| r < size) {
                        Some(r) => Locate::At(r),
                        // Every rank published before the barrier: absent now, absent for good.
                        None => Locate::Never,
                    },
                    Err(e) => {
                        crate::warn!("init", "cannot ask the launcher where node {node} runs: {e}");
                        return Locate::Never;
                    }
                };
                known.insert(node, l);
                l
            }
            Finder::HostsFile(nodes) => nodes.iter().position(|&n| n == node).map_or(Locate::Never, |i| Locate::At(i as u32)),
            Finder::Rendezvous { slots, seen } => {
                // Where it was last seen is checked first: one file instead of every slot.
                let found = match seen.get(&node) {
                    Some(&(k, card)) if slots.read(k) == Some(card) => Some((k, card)),
                    _ => slots.find(node),
                };
                match found {
                    Some((k, card)) => {
                        if seen.insert(node, (k, card)) != Some((k, card)) {
                            engine.set_peer_addr(k, card.addr);
                        }
                        Locate::At(k)
                    }
                    None => {
                        seen.remove(&node);
                        Locate::NotYet
                    }
                }
            }
        }
    }
}

/// A card for a peer known only by its address (no shared memory with it: the pid is
/// never used).
fn tcp_card(addr: SocketAddr, host: &str) -> BusinessCard {
    let host = sanitize_name(host);
    BusinessCard { addr, id: GlobalId { front: host.clone(), host, pid: 0 } }
}

fn start_from_hosts_file(path: &str, domain: u32, node: u32) -> Result<(Job, Engine), JobError> {
    let bad = |why: String| JobError::HostsFile { path: path.to_string(), why };
    let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
    let file = HostsFile::parse(&text).map_err(|e| bad(e.to_string()))?;
    let rank = file.rank_of(node).ok_or_else(|| bad(format!("node {node} is not listed")))?;
    let size = file.nodes.len() as u32;
    crate::log::set_prefix(format!("ferry[node {node}]"));
    let mut cards = Vec::with_capacity(file.nodes.len());
    for e in &file.nodes {
        let addr = resolve(&e.host, e.port).map_err(|why| bad(format!("line {}: {why}", e.line)))?;
        cards.push(tcp_card(addr, &e.host));
    }
    let port = file.nodes[rank as usize].port;
    let any = IpAddr::V4(Ipv4Addr::UNSPECIFIED);
    let listener = listen(any, cards[rank as usize].addr.ip(), Some((port, port))).map_err(JobError::Listen)?;
    crate::info!("init", "node {node} of domain {domain}: rank {rank} of {size} from {path}, listening on port {port}");
    let knobs = EngineKnobs::from_env()?.with_header(super::job::MCAPI_HEADER);
    let peers = Peers { rank, size, secret: file.secret.into_bytes(), cards, lost_peer_fatal: false, retry_refused: true };
    let engine = build_engine(peers, listener.socket, &knobs, None)?;
    let node = NodeState { domain, node, finder: Finder::HostsFile(file.nodes.iter().map(|e| e.node).collect()) };
    Ok((Job { rank, size, pmi: None, hostname: hostname(), oversubscribed: false, host_ranks: vec![rank], hosts: Vec::new(), launched: Vec::new(), node: Some(node) }, engine))
}

/// `host`'s first IPv4 address (the listening sockets are IPv4), else its first address.
fn resolve(host: &str, port: u16) -> Result<SocketAddr, String> {
    let addrs: Vec<SocketAddr> = (host, port).to_socket_addrs().map_err(|e| format!("cannot resolve {host}: {e}"))?.collect();
    addrs.iter().find(|a| a.is_ipv4()).or(addrs.first()).copied().ok_or_else(|| format!("{host} has no address"))
}

fn start_by_rendezvous(domain: u32, node: u32) -> Result<(Job, Engine), JobError> {
    let base = match config::MCAPI_RENDEZVOUS.is_set() {
        true => config::MCAPI_RENDEZVOUS.value().into(),
        // SAFETY: geteuid has no preconditions and cannot fail.
        false => rendezvous::default_base(std::env::var("XDG_RUNTIME_DIR").ok().as_deref(), unsafe { libc::geteuid() }),
    };
    let max = config::MCAPI_MAX_NODES.u64()?;
    let max = u32::try_from(max).ok().filter(|&m| (1..=1 << 20).contains(&m)).ok_or(config::BadValue {
        knob: config::MCAPI_MAX_NODES.name,
        value: max.to_string(),
        expected: "a node count from 1 to 1048576",
    })?;
    let dir = rendezvous::domain_dir(&base, domain).map_err(JobError::Rendezvous)?;
    let secret = rendezvous::domain_secret(&dir).map_err(JobError::Rendezvous)?;
    let mut slots = Slots::claim(&dir, max).map_err(JobError::Rendezvous)?;
    let rank = slots.slot();
    crate::log::set_prefix(format!("ferry[node {node}]"));
    let lo = IpAddr::V4(Ipv4Addr::LOCALHOST);
    let listener = listen(lo, lo, config::PORT_RANGE.port_range()?).map_err(JobError::Listen)?;
    let me = SlotCard { node, pid: std::process::id(), addr: listener.advertise };
    slots.publish(&me).map_err(JobError::Rendezvous)?;
    // Both of two nodes that start at once as the same node may fail, never both succeed:
    // each publishes before it looks.
    if let Some((k, _)) = slots.find(node) {
        return Err(JobError::DuplicateNode { domain, node, first: k.min(rank), second: k.max(rank) });
    }
    crate::info!("init", "node {node} of domain {domain}: slot {rank} of {}, listening on {}", dir.display(), me.addr);
    let unknown = SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), 0);
    let mut cards = vec![tcp_card(unknown, "localhost"); max as usize];
    cards[rank as usize] = BusinessCard { addr: me.addr, id: GlobalId { front: "localhost".into(), host: "localhost".into(), pid: me.pid } };
    let knobs = EngineKnobs::from_env()?.with_header(super::job::MCAPI_HEADER);
    let peers = Peers { rank, size: max, secret: secret.into_bytes(), cards, lost_peer_fatal: false, retry_refused: false };
    let engine = build_engine(peers, listener.socket, &knobs, None)?;
    let node = NodeState { domain, node, finder: Finder::Rendezvous { slots, seen: HashMap::new() } };
    Ok((Job { rank, size: max, pmi: None, hostname: hostname(), oversubscribed: false, host_ranks: vec![rank], hosts: Vec::new(), launched: Vec::new(), node: Some(node) }, engine))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_keys_name_domain_and_node() {
        assert_eq!(node_key(0, 5), "ferry-mcapi-node-0-5");
        assert_eq!(node_key(3, 4294967295), "ferry-mcapi-node-3-4294967295");
    }

    #[test]
    fn a_duplicate_names_the_node_and_both_ranks() {
        let e = JobError::DuplicateNode { domain: 1, node: 7, first: 0, second: 3 };
        assert_eq!(e.to_string(), "node 7 of domain 1 is claimed by two processes: rank 0 and rank 3");
    }

    /// Ranks of one in-process PMI job (a fresh name each, so shared memory is not shared
    /// with another test), each starting as the node `nodes[rank]` of domain 1.
    fn launch(nodes: &[u32]) -> Vec<Result<(Job, Engine), JobError>> {
        let mut n = [0u8; 8];
        getrandom::getrandom(&mut n).unwrap();
        let kvs = format!("kvs_node_{:016x}", u64::from_le_bytes(n));
        let size = nodes.len() as u32;
        let (streams, servers) = crate::bootstrap::pmi_client::tests::serve_job(size, false, &kvs);
        let ranks: Vec<_> = streams
            .into_iter()
            .zip(nodes.to_vec())
            .enumerate()
            .map(|(rank, (stream, node))| {
                std::thread::spawn(move || {
                    let pmi = PmiClient::from_stream(stream, rank as u32, size).unwrap();
                    Job::from_launch(Some(pmi), Some((1, node)))
                })
            })
            .collect();
        let out = ranks.into_iter().map(|t| t.join().unwrap()).collect();
        drop(servers);
        out
    }

    #[test]
    fn under_a_launcher_nodes_are_found_by_their_claims() {
        let mut ranks: Vec<(Job, Engine)> = launch(&[10, 30, 20]).into_iter().map(|r| r.expect("started")).collect();
        for (job, engine) in ranks.iter_mut() {
            assert_eq!(job.mode(), NodeMode::Launcher);
            assert_eq!(job.domain(), 1);
            assert_eq!(job.locate(engine, 10), Locate::At(0));
            assert_eq!(job.locate(engine, 20), Locate::At(2));
            assert_eq!(job.locate(engine, 30), Locate::At(1));
            assert_eq!(job.locate(engine, 40), Locate::Never);
            assert_eq!(job.locate(engine, 40), Locate::Never, "the answer is kept");
        }
        assert_eq!(ranks.iter().map(|(j, _)| j.node()).collect::<Vec<_>>(), [10, 30, 20]);
    }

    #[test]
    fn under_a_launcher_a_node_claimed_twice_fails_one_of_the_two() {
        let out = launch(&[5, 6, 5]);
        assert!(out[1].is_ok(), "node 6 is fine: {:?}", out[1].as_ref().err());
        let failed: Vec<String> = out.iter().filter_map(|r| r.as_ref().err()).map(|e| e.to_string()).collect();
        assert_eq!(failed, ["node 5 of domain 1 is claimed by two processes: rank 0 and rank 2"]);
    }

    #[test]
    fn literal_addresses_resolve_as_they_are() {
        assert_eq!(resolve("127.0.0.1", 17001).unwrap(), "127.0.0.1:17001".parse().unwrap());
        assert_eq!(resolve("::1", 9).unwrap(), "[::1]:9".parse().unwrap());
        assert!(resolve("no-such-host.invalid", 1).unwrap_err().contains("no-such-host.invalid"));
    }
}
