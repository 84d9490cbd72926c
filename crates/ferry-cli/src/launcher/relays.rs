//! The head's side of the relays (`ferry proxy`) a job across private clusters uses: it
//! registers the job with every relay the hostfile lists, over a control connection proved
//! with the site key, and registers each rank of a relay's cluster as a member as soon as
//! the rank has published where it listens (before the ranks can ask for it: the card
//! exchange ends in a barrier the head releases). The registration lives as long as the
//! control connection, so the job's allocations at the relays end with the head.

use std::net::SocketAddr;
use std::os::fd::{AsRawFd, RawFd};
use std::path::Path;
use std::time::Duration;

use ferry_core::bootstrap::dial_plan::{encode_job_id, encode_proxies, Proxies, PROXIES_KEY, RELAY_JOB_KEY};
use ferry_core::bootstrap::PmiServer;
use ferry_core::transport::business_card::BusinessCard;
use ferry_core::transport::relay::{read_site_key, relay_key, ControlClient, JobId};

use super::hosts::Proxy;

/// How long a relay may take to answer the head.
const CONTROL_TIMEOUT: Duration = Duration::from_secs(5);

pub struct Relays {
    job: JobId,
    links: Vec<(Proxy, ControlClient)>,
    /// The front node of every rank.
    fronts: Vec<String>,
    /// Whether each rank is registered with the relays of its front (or needs none).
    registered: Vec<bool>,
    pending: usize,
}

impl Relays {
    /// Register the job (`secret`: its secret as the ranks hold it) with every relay.
    pub fn register(proxies: &[Proxy], key_file: &Path, secret: &str, fronts: Vec<String>) -> Result<Relays, String> {
        let site_key = read_site_key(key_file).map_err(|e| format!("{}: {e}", key_file.display()))?;
        let mut job = JobId::default();
        getrandom::getrandom(&mut job).map_err(|e| format!("cannot make a job id: {e}"))?;
        let key = relay_key(secret.as_bytes());
        let size = fronts.len() as u32;
        let mut links = Vec::with_capacity(proxies.len());
        for p in proxies {
            let mut c = ControlClient::connect(p.addr, &site_key, CONTROL_TIMEOUT).map_err(|e| format!("cannot reach the relay at {} (front {}): {e}", p.addr, p.front))?;
            c.register_job(job, key, size).map_err(|e| format!("the relay at {} refused the job: {e}", p.addr))?;
            ferry_core::info!("run", "job {} registered with the relay at {} (front {})", encode_job_id(&job), p.addr, p.front);
            links.push((p.clone(), c));
        }
        let registered: Vec<bool> = fronts.iter().map(|f| !proxies.iter().any(|p| p.front == *f)).collect();
        let pending = registered.iter().filter(|r| !**r).count();
        Ok(Relays { job, links, fronts, registered, pending })
    }

    /// The keys the ranks read to find the relays and name the job to them.
    pub fn seeds(&self) -> Vec<(&'static str, String)> {
        let mut by_front: Proxies = Vec::new();
        for (p, _) in &self.links {
            match by_front.iter_mut().find(|(f, _)| *f == p.front) {
                Some((_, addrs)) => addrs.push(p.addr),
                None => by_front.push((p.front.clone(), vec![p.addr])),
            }
        }
        vec![(PROXIES_KEY, encode_proxies(&by_front)), (RELAY_JOB_KEY, encode_job_id(&self.job))]
    }

    /// Register the ranks that have published their card since the last call.
    pub fn add_members(&mut self, server: &PmiServer) -> Result<(), String> {
        if self.pending == 0 {
            return Ok(());
        }
        for rank in 0..self.registered.len() {
            if self.registered[rank] {
                continue;
            }
            let Some(card) = server.value(&format!("ferry-card-{rank}")) else { continue };
            let card = BusinessCard::decode(card).map_err(|e| format!("rank {rank}: {e}"))?;
            let SocketAddr::V4(addr) = card.addr else {
                return Err(format!("rank {rank} listens at {}, but relays reach IPv4 members only", card.addr));
            };
            for (p, c) in self.links.iter_mut().filter(|(p, _)| p.front == self.fronts[rank]) {
                c.add_member(rank as u32, addr).map_err(|e| format!("the relay at {} refused rank {rank} ({addr}): {e}", p.addr))?;
            }
            self.registered[rank] = true;
            self.pending -= 1;
        }
        Ok(())
    }

    /// The control connections, to watch for a relay's end.
    pub fn fds(&self) -> Vec<RawFd> {
        self.links.iter().map(|(_, c)| c.as_raw_fd()).collect()
    }

    /// Which relay control connection `i` leads to.
    pub fn describe(&self, i: usize) -> String {
        let p = &self.links[i].0;
        format!("the relay at {} (front {})", p.addr, p.front)
    }
}
