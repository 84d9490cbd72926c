//! A rank's business card: where to reach it and who it is, published through PMI.
//!
//! Encoded as `ferry1|<ip>|<port>|<front>|<host>|<pid>`: no spaces or `=` so it travels as a
//! PMI-1 value unchanged.

use std::net::{IpAddr, SocketAddr};

/// A process's global id: (front-node name, compute-node name, pid). A public node has
/// front == host.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct GlobalId {
    pub front: String,
    pub host: String,
    pub pid: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BusinessCard {
    pub addr: SocketAddr,
    pub id: GlobalId,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardError(pub String);

impl std::fmt::Display for CardError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "malformed business card {:?}", self.0)
    }
}

fn valid_name(s: &str) -> bool {
    !s.is_empty() && s.len() <= 255 && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._".contains(&b))
}

impl BusinessCard {
    pub fn encode(&self) -> String {
        format!("ferry1|{}|{}|{}|{}|{}", self.addr.ip(), self.addr.port(), self.id.front, self.id.host, self.id.pid)
    }

    pub fn decode(s: &str) -> Result<BusinessCard, CardError> {
        let bad = || CardError(s.chars().take(80).collect());
        let f: Vec<&str> = s.split('|').collect();
        if f.len() != 6 || f[0] != "ferry1" {
            return Err(bad());
        }
        let ip: IpAddr = f[1].parse().map_err(|_| bad())?;
        let port: u16 = f[2].parse().map_err(|_| bad())?;
        if port == 0 || !valid_name(f[3]) || !valid_name(f[4]) {
            return Err(bad());
        }
        let pid: u32 = f[5].parse().map_err(|_| bad())?;
        Ok(BusinessCard { addr: SocketAddr::new(ip, port), id: GlobalId { front: f[3].into(), host: f[4].into(), pid } })
    }
}

/// Host names go into cards; keep only the characters a card allows.
pub fn sanitize_name(s: &str) -> String {
    let t: String = s.chars().filter(|c| c.is_ascii_alphanumeric() || "-._".contains(*c)).take(255).collect();
    if t.is_empty() {
        "localhost".into()
    } else {
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let c = BusinessCard {
            addr: "10.1.2.3:4567".parse().unwrap(),
            id: GlobalId { front: "front-a".into(), host: "node7.cluster".into(), pid: 1234 },
        };
        assert_eq!(BusinessCard::decode(&c.encode()), Ok(c));
    }

    #[test]
    fn rejects_malformed() {
        for s in ["", "ferry1|x|1|a|b|1", "ferry2|1.2.3.4|1|a|b|1", "ferry1|1.2.3.4|0|a|b|1", "ferry1|1.2.3.4|1|a b|b|1", "ferry1|1.2.3.4|1|a|b", "ferry1|1.2.3.4|1|a|b|x"] {
            assert!(BusinessCard::decode(s).is_err(), "{s}");
        }
        assert_eq!(sanitize_name("a b|c"), "abc");
    }
}
