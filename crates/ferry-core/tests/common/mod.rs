//! Set-up shared by the integration tests: a job of engines over loopback in one process.

use std::net::{IpAddr, Ipv4Addr};
use std::time::{Duration, Instant};

use ferry_core::engine::{Engine, EngineConfig, EngineError, ReqId, Status};
use ferry_core::transport::business_card::{BusinessCard, GlobalId};
use ferry_core::transport::tcp::listen;

/// `n` engines of one job, each listening on loopback, all knowing each other's cards.
#[allow(dead_code)]
pub fn engines(n: u32, eager_limit: usize, secret: &[u8]) -> Vec<Engine> {
    let lo = IpAddr::V4(Ipv4Addr::LOCALHOST);
    let listeners: Vec<_> = (0..n).map(|_| listen(lo, lo, None).unwrap()).collect();
    let cards: Vec<BusinessCard> = listeners
        .iter()
        .enumerate()
        .map(|(i, l)| BusinessCard { addr: l.advertise, id: GlobalId { front: "h".into(), host: "h".into(), pid: i as u32 } })
        .collect();
    listeners
        .into_iter()
        .enumerate()
        .map(|(i, l)| {
            Engine::new(EngineConfig {
                rank: i as u32,
                size: n,
                secret: secret.to_vec(),
                cards: cards.clone(),
                listener: l.socket,
                eager_limit,
                spin: Duration::from_micros(20),
                connect_timeout: Duration::from_secs(10),
                tcp_sndbuf: 0,
                shm: None,
                lost_peer_fatal: true,
                retry_refused: false,
            })
            .unwrap()
        })
        .collect()
}

/// `n` engines of one job in this process; engine `i` sits on emulated host `host_of[i]`, and
/// engines of one host share memory (rings of `ring` bytes, eager limit `shm_eager`) with
/// single-copy reads when `single_copy` (all ranks are this process, so it always works).
#[allow(dead_code)]
pub fn shm_engines(host_of: &[usize], ring: usize, shm_eager: usize, single_copy: bool) -> Vec<Engine> {
    shm_engines_but(host_of, ring, shm_eager, single_copy, None).0.into_iter().map(|e| e.expect("every rank has an engine")).collect()
}

/// As [`shm_engines`], except that rank `raw` gets no engine: its ring ends are returned
/// instead, so that a test can write into its peers' rings whatever it likes.
#[allow(dead_code)]
pub fn shm_engines_but(
    host_of: &[usize],
    ring: usize,
    shm_eager: usize,
    single_copy: bool,
    raw: Option<u32>,
) -> (Vec<Option<Engine>>, Vec<(u32, ferry_core::transport::shm::Link)>) {
    use ferry_core::engine::ShmConfig;
    use ferry_core::transport::shm::{host_job_id, HostConfig, HostShm};
    let n = host_of.len() as u32;
    let lo = IpAddr::V4(Ipv4Addr::LOCALHOST);
    let listeners: Vec<_> = (0..n).map(|_| listen(lo, lo, None).unwrap()).collect();
    let pid = std::process::id();
    let cards: Vec<BusinessCard> = listeners
        .iter()
        .enumerate()
        .map(|(i, l)| BusinessCard { addr: l.advertise, id: GlobalId { front: "f".into(), host: format!("h{}", host_of[i]), pid } })
        .collect();
    let mut nonce = [0u8; 8];
    getrandom::getrandom(&mut nonce).unwrap();
    let job = format!("enginetest-{pid}-{:016x}", u64::from_le_bytes(nonce));
    let mut raw_links = Vec::new();
    let mut keep_hosts = Vec::new();
    let engines = listeners
        .into_iter()
        .enumerate()
        .map(|(i, l)| {
            let locals: Vec<u32> = (0..n).filter(|&r| host_of[r as usize] == host_of[i]).collect();
            let shm = (locals.len() > 1).then(|| {
                let (host, links) = HostShm::join(HostConfig {
                    job_id: host_job_id(&job, &format!("h{}", host_of[i])),
                    locals,
                    me: i as u32,
                    ring_capacity: ring,
                    timeout: Duration::from_secs(5),
                })
                .unwrap();
                ShmConfig { host, links, eager_limit: shm_eager, single_copy: single_copy.then_some(usize::MAX) }
            });
            if raw == Some(i as u32) {
                if let Some(c) = shm {
                    raw_links = c.links;
                    keep_hosts.push(c.host);
                }
                return None;
            }
            Some(
                Engine::new(EngineConfig {
                    rank: i as u32,
                    size: n,
                    secret: b"shm-test".to_vec(),
                    cards: cards.clone(),
                    listener: l.socket,
                    eager_limit: 4096,
                    spin: Duration::from_micros(20),
                    connect_timeout: Duration::from_secs(10),
                    tcp_sndbuf: 0,
                    shm,
                    lost_peer_fatal: true,
                    retry_refused: false,
                })
                .unwrap(),
            )
        })
        .collect();
    // The raw rank's segment mapping lives on in its links; its wake-up socket may go.
    drop(keep_hosts);
    (engines, raw_links)
}

/// Run every engine's progress loop until `done` holds (at most 20 s); a lost peer is not an
/// error of the loop (the requests that waited on it fail instead).
#[allow(dead_code)]
pub fn drive(es: &mut [&mut Engine], mut done: impl FnMut(&mut [&mut Engine]) -> bool) {
    let limit = Instant::now() + Duration::from_secs(20);
    while !done(es) {
        assert!(Instant::now() < limit, "the engines did not settle");
        for e in es.iter_mut() {
            e.progress(Some(Duration::from_millis(1))).expect("an engine's progress failed");
        }
    }
}

/// The outcome of the completed request `r`.
#[allow(dead_code)]
pub fn result(e: &mut Engine, r: ReqId) -> Result<Status, EngineError> {
    e.take(r).expect("completed")
}
