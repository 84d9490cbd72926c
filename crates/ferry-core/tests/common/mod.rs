//! Set-up shared by the integration tests: a job of engines over loopback in one process.

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use ferry_core::engine::{Engine, EngineConfig};
use ferry_core::transport::business_card::{BusinessCard, GlobalId};
use ferry_core::transport::tcp::listen;

/// `n` engines of one job, each listening on loopback, all knowing each other's cards.
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
            })
            .unwrap()
        })
        .collect()
}
