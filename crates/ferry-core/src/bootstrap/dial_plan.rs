//! Which way each of this rank's connections goes (`transport::paths::reach`), and through
//! which relay, from the ranks' global ids and the relays the launcher seeded in the
//! key-value space. Under Hydra, Slurm or `ferry run` on one network nothing is seeded and
//! every peer is reached directly, on first use.
//!
//! The launcher seeds two keys when relays serve the job:
//! - [`PROXIES_KEY`]: `FRONT=IP:PORT,IP:PORT;FRONT=IP:PORT` — the relays of each front node;
//! - [`RELAY_JOB_KEY`]: the job's id at the relays, 32 hex digits.

use std::net::SocketAddr;

use crate::transport::business_card::GlobalId;
use crate::transport::paths::{self, Path, Reach};
use crate::transport::relay::{relay_key, JobId};
use crate::transport::tcp::{Dial, DialPlan, RelayCredentials};

pub const PROXIES_KEY: &str = "ferry-proxies";
pub const RELAY_JOB_KEY: &str = "ferry-relay-job";

/// The relays of each front node.
pub type Proxies = Vec<(String, Vec<SocketAddr>)>;

pub fn encode_proxies(proxies: &Proxies) -> String {
    let fronts: Vec<String> = proxies
        .iter()
        .map(|(front, addrs)| format!("{front}={}", addrs.iter().map(SocketAddr::to_string).collect::<Vec<_>>().join(",")))
        .collect();
    fronts.join(";")
}

pub fn parse_proxies(s: &str) -> Result<Proxies, String> {
    let mut out = Proxies::new();
    for part in s.split(';').filter(|p| !p.is_empty()) {
        let (front, addrs) = part.split_once('=').ok_or_else(|| format!("{part:?}: expected FRONT=ADDR,..."))?;
        if front.is_empty() {
            return Err(format!("{part:?}: no front node"));
        }
        let addrs = addrs.split(',').map(|a| a.parse::<SocketAddr>().map_err(|_| format!("{a:?}: expected IP:PORT"))).collect::<Result<Vec<_>, _>>()?;
        out.push((front.to_owned(), addrs));
    }
    Ok(out)
}

pub fn encode_job_id(job: &JobId) -> String {
    job.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn parse_job_id(s: &str) -> Result<JobId, String> {
    let mut job = JobId::default();
    if s.len() != 2 * job.len() || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(format!("{s:?}: expected {} hex digits", 2 * job.len()));
    }
    for (i, byte) in job.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).expect("checked hex");
    }
    Ok(job)
}

/// The plan of rank `me`: how it reaches each peer, which peers it connects to at once, and
/// what it proves to a relay (when the job has relays: `relay_job` and the job's secret).
pub fn plan(ids: &[GlobalId], me: u32, proxies: &Proxies, relay_job: Option<JobId>, secret: &[u8]) -> DialPlan {
    let mut plan = DialPlan::direct(ids.len() as u32);
    plan.relay = relay_job.map(|job| RelayCredentials { job, key: relay_key(secret) });
    for peer in 0..ids.len() {
        if peer == me as usize {
            continue;
        }
        plan.dial[peer] = match paths::reach(ids, me as usize, peer) {
            Reach::OnDemand => Dial::Direct,
            Reach::Await => Dial::Await,
            Reach::Open(Path::Direct | Path::ThroughNat { .. }) => {
                plan.eager.push(peer as u32);
                Dial::Direct
            }
            Reach::Open(Path::ThroughProxy { front }) => {
                plan.eager.push(peer as u32);
                match proxies.iter().find(|(f, addrs)| *f == front && !addrs.is_empty()) {
                    Some((_, addrs)) if plan.relay.is_some() => Dial::Relay(addrs[paths::pick_proxy(addrs.len(), me as usize, peer)]),
                    _ => Dial::Unreachable(format!(
                        "it is private behind front node {front} and no relay serves {front} (list one in the hostfile: proxy ADDR:PORT front={front})"
                    )),
                }
            }
        };
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(front: &str, host: &str) -> GlobalId {
        GlobalId { front: front.into(), host: host.into(), pid: 1 }
    }

    #[test]
    fn proxies_and_job_ids_round_trip() {
        let p: Proxies = vec![("f1".into(), vec!["1.2.3.4:5".parse().unwrap(), "1.2.3.4:6".parse().unwrap()]), ("f2".into(), vec!["9.9.9.9:7".parse().unwrap()])];
        assert_eq!(encode_proxies(&p), "f1=1.2.3.4:5,1.2.3.4:6;f2=9.9.9.9:7");
        assert_eq!(parse_proxies(&encode_proxies(&p)), Ok(p));
        assert_eq!(parse_proxies(""), Ok(Vec::new()));
        assert!(parse_proxies("f1").is_err());
        assert!(parse_proxies("=1.2.3.4:5").is_err());
        assert!(parse_proxies("f1=1.2.3.4").is_err());
        let job: JobId = core::array::from_fn(|i| i as u8 * 17);
        assert_eq!(parse_job_id(&encode_job_id(&job)), Ok(job));
        assert!(parse_job_id("abc").is_err());
        assert!(parse_job_id(&"zz".repeat(16)).is_err());
    }

    #[test]
    fn plans_follow_the_paths() {
        // 0, 1 public; 2, 3 behind f1; 4, 5 behind f2.
        let ids = vec![id("p1", "p1"), id("p2", "p2"), id("f1", "a"), id("f1", "b"), id("f2", "c"), id("f2", "d")];
        let relays: Proxies = vec![("f1".into(), vec!["9.0.0.1:7100".parse().unwrap(), "9.0.0.1:7101".parse().unwrap()])];
        let job = Some([7u8; 16]);
        let p0 = plan(&ids, 0, &relays, job, b"secret");
        assert_eq!(p0.dial[1], Dial::Direct);
        assert_eq!(p0.dial[2], Dial::Await);
        assert!(p0.eager.is_empty());
        let p4 = plan(&ids, 4, &relays, job, b"secret");
        assert_eq!(p4.dial[..4], [Dial::Direct, Dial::Direct, Dial::Relay("9.0.0.1:7100".parse().unwrap()), Dial::Relay("9.0.0.1:7101".parse().unwrap())]);
        assert_eq!(p4.dial[5], Dial::Direct);
        assert_eq!(p4.eager, vec![0, 1, 2, 3]);
        assert_eq!(p4.relay, Some(RelayCredentials { job: [7; 16], key: relay_key(b"secret") }));
        // Without relays the private ranks still reach the public ones (through NAT), but
        // not a private rank of another cluster.
        let p5 = plan(&ids, 5, &Vec::new(), None, b"secret");
        assert!(matches!(&p5.dial[2], Dial::Unreachable(why) if why.contains("no relay serves f1")));
        assert_eq!(p5.dial[0], Dial::Direct);
    }
}
