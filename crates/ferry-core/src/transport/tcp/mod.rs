//! TCP transport: one listening socket per process, one connection per pair of ranks.
//!
//! `conn` is the route (frames read straight into their destination when it is known,
//! written with `writev`), `handshake` the pure authentication exchange, `connector` the
//! connection set-up that turns sockets into authenticated routes. This file holds the
//! addressing: which interface to advertise, and the listening socket.

pub mod bridge;
pub mod conn;
pub mod connector;
pub mod dial;
pub mod handshake;

pub use bridge::{BridgeError, Bridges};
pub use conn::Conn;
pub use connector::{Connector, ConnectorEvent};
pub use dial::{Dial, DialPlan, RelayCredentials};

use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use ferry_wire::WireError;

/// Why the transport could not do what was asked.
#[derive(Debug)]
pub enum TransportError {
    Bind(String),
    Interface(String),
    Io(io::Error),
    Wire(WireError),
}

impl std::fmt::Display for TransportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TransportError::Bind(s) => write!(f, "cannot listen: {s}"),
            TransportError::Interface(s) => write!(f, "FERRY_IF: {s}"),
            TransportError::Io(e) => write!(f, "{e}"),
            TransportError::Wire(e) => write!(f, "malformed frame: {e}"),
        }
    }
}

impl From<io::Error> for TransportError {
    fn from(e: io::Error) -> Self {
        TransportError::Io(e)
    }
}

/// The IPv4 addresses of this host's interfaces, as (interface name, address).
pub fn interfaces() -> Vec<(String, Ipv4Addr)> {
    interface_networks().into_iter().map(|(name, ip, _)| (name, ip)).collect()
}

/// The IPv4 addresses of this host's interfaces with the length of their network prefix, as
/// (interface name, address, prefix length).
pub fn interface_networks() -> Vec<(String, Ipv4Addr, u8)> {
    let mut out = Vec::new();
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `head` with a list we walk read-only and free exactly once; an
    // entry's address and netmask, when present and AF_INET, are sockaddr_in.
    unsafe {
        if libc::getifaddrs(&mut head) != 0 {
            return out;
        }
        let mut p = head;
        while !p.is_null() {
            let ifa = &*p;
            if !ifa.ifa_addr.is_null() && (*ifa.ifa_addr).sa_family as i32 == libc::AF_INET {
                let sin = &*(ifa.ifa_addr as *const libc::sockaddr_in);
                let ip = Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr));
                let bits = if ifa.ifa_netmask.is_null() { 32 } else { u32::from_be((*(ifa.ifa_netmask as *const libc::sockaddr_in)).sin_addr.s_addr).count_ones() as u8 };
                let name = std::ffi::CStr::from_ptr(ifa.ifa_name).to_string_lossy().into_owned();
                out.push((name, ip, bits));
            }
            p = ifa.ifa_next;
        }
        libc::freeifaddrs(head);
    }
    out
}

/// Choose the address to advertise (and, when `FERRY_IF` is given, to bind). `spec` is an
/// interface name or an IPv4 CIDR; empty means: the first non-loopback address, else loopback.
pub fn choose_address(spec: &str, ifs: &[(String, Ipv4Addr)]) -> Result<Ipv4Addr, TransportError> {
    let spec = spec.trim();
    if spec.is_empty() {
        return Ok(ifs.iter().map(|(_, ip)| *ip).find(|ip| !ip.is_loopback()).unwrap_or(Ipv4Addr::LOCALHOST));
    }
    if let Some((net, bits)) = spec.split_once('/') {
        let net: Ipv4Addr = net.parse().map_err(|_| TransportError::Interface(format!("{spec:?} is not name or a.b.c.d/n")))?;
        let bits: u32 = bits.parse().ok().filter(|b| *b <= 32).ok_or_else(|| TransportError::Interface(format!("bad prefix length in {spec:?}")))?;
        let mask = if bits == 0 { 0 } else { u32::MAX << (32 - bits) };
        return ifs
            .iter()
            .map(|(_, ip)| *ip)
            .find(|ip| u32::from(*ip) & mask == u32::from(net) & mask)
            .ok_or_else(|| TransportError::Interface(format!("no interface address in {spec}")));
    }
    ifs.iter()
        .find(|(n, _)| n == spec)
        .map(|(_, ip)| *ip)
        .ok_or_else(|| TransportError::Interface(format!("no IPv4 interface named {spec:?}")))
}

/// A bound, listening socket and the address to advertise for it.
pub struct Listener {
    pub socket: mio::net::TcpListener,
    pub advertise: SocketAddr,
}

/// Listen on `bind_ip` (any port, or the first free one of `range`).
pub fn listen(bind_ip: IpAddr, advertise_ip: IpAddr, range: Option<(u16, u16)>) -> Result<Listener, TransportError> {
    let ports: Vec<u16> = match range {
        Some((lo, hi)) => (lo..=hi).collect(),
        None => vec![0],
    };
    let mut last = None;
    for port in ports {
        match std::net::TcpListener::bind(SocketAddr::new(bind_ip, port)) {
            Ok(l) => {
                l.set_nonblocking(true)?;
                let port = l.local_addr()?.port();
                return Ok(Listener { socket: mio::net::TcpListener::from_std(l), advertise: SocketAddr::new(advertise_ip, port) });
            }
            Err(e) => last = Some(e),
        }
    }
    Err(TransportError::Bind(match (range, last) {
        (Some((lo, hi)), Some(e)) => format!("no free port in FERRY_PORT_RANGE {lo}:{hi} (last error: {e})"),
        (_, Some(e)) => e.to_string(),
        _ => "no port to try".into(),
    }))
}

pub(crate) fn set_sndbuf(stream: &mio::net::TcpStream, bytes: usize) {
    use std::os::fd::AsRawFd;
    let v = bytes.min(i32::MAX as usize) as libc::c_int;
    // SAFETY: setsockopt reads one c_int from a valid pointer; the fd is a live socket.
    let rc = unsafe {
        libc::setsockopt(stream.as_raw_fd(), libc::SOL_SOCKET, libc::SO_SNDBUF, &v as *const libc::c_int as *const libc::c_void, std::mem::size_of::<libc::c_int>() as libc::socklen_t)
    };
    if rc != 0 {
        crate::debug!("tcp", "SO_SNDBUF {bytes}: {}", io::Error::last_os_error());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ifs() -> Vec<(String, Ipv4Addr)> {
        vec![("lo".into(), Ipv4Addr::LOCALHOST), ("eth0".into(), Ipv4Addr::new(10, 1, 2, 3)), ("ib0".into(), Ipv4Addr::new(192, 168, 7, 9))]
    }

    #[test]
    fn address_by_default_name_and_cidr() {
        assert_eq!(choose_address("", &ifs()).unwrap(), Ipv4Addr::new(10, 1, 2, 3));
        assert_eq!(choose_address("", &ifs()[..1]).unwrap(), Ipv4Addr::LOCALHOST);
        assert_eq!(choose_address("ib0", &ifs()).unwrap(), Ipv4Addr::new(192, 168, 7, 9));
        assert_eq!(choose_address("192.168.0.0/16", &ifs()).unwrap(), Ipv4Addr::new(192, 168, 7, 9));
        assert_eq!(choose_address("127.0.0.0/8", &ifs()).unwrap(), Ipv4Addr::LOCALHOST);
        assert_eq!(choose_address("0.0.0.0/0", &ifs()).unwrap(), Ipv4Addr::LOCALHOST);
    }

    #[test]
    fn address_errors_name_the_problem() {
        for bad in ["wlan9", "172.16.0.0/12", "10.0.0.0/40", "nonsense/8"] {
            let e = choose_address(bad, &ifs()).unwrap_err().to_string();
            assert!(e.starts_with("FERRY_IF"), "{bad}: {e}");
        }
    }

    #[test]
    fn port_range_is_honoured_and_exhaustion_is_reported() {
        let lo = IpAddr::V4(Ipv4Addr::LOCALHOST);
        // Find a pair of free adjacent ports (another process may hold some).
        let (base, a, b) = (0..200u16)
            .map(|i| 47000 + ((std::process::id() as u16 % 500) * 2 + i * 2) % 4000)
            .find_map(|base| {
                let a = listen(lo, lo, Some((base, base))).ok()?;
                let b = listen(lo, lo, Some((base + 1, base + 1))).ok()?;
                Some((base, a, b))
            })
            .expect("some pair of adjacent ports is free");
        assert_eq!((a.advertise.port(), b.advertise.port()), (base, base + 1));
        let e = listen(lo, lo, Some((base, base + 1))).err().expect("range exhausted").to_string();
        assert!(e.contains("FERRY_PORT_RANGE"), "{e}");
        // With the second port free again, a range search skips the busy first one.
        drop(b);
        assert_eq!(listen(lo, lo, Some((base, base + 1))).unwrap().advertise.port(), base + 1);
        drop(a);
    }
}
