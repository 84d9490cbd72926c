//! This host's IPv4 networks, for the proxy's default member networks and the addresses it
//! must never connect to (its own).

use std::net::Ipv4Addr;

use ferry_core::transport::relay::policy::{is_rfc1918, Cidr};

/// Every IPv4 interface address with its network.
pub fn interface_networks() -> Vec<(Ipv4Addr, Cidr)> {
    let mut out = Vec::new();
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `head` with a list we walk read-only and free exactly once;
    // an entry's address and netmask, when present and AF_INET, are sockaddr_in.
    unsafe {
        if libc::getifaddrs(&mut head) != 0 {
            return out;
        }
        let mut p = head;
        while !p.is_null() {
            let ifa = &*p;
            if !ifa.ifa_addr.is_null() && (*ifa.ifa_addr).sa_family as i32 == libc::AF_INET {
                let ip = Ipv4Addr::from(u32::from_be((*(ifa.ifa_addr as *const libc::sockaddr_in)).sin_addr.s_addr));
                let bits = if ifa.ifa_netmask.is_null() { 32 } else { u32::from_be((*(ifa.ifa_netmask as *const libc::sockaddr_in)).sin_addr.s_addr).count_ones() as u8 };
                out.push((ip, Cidr::new(ip, bits)));
            }
            p = ifa.ifa_next;
        }
        libc::freeifaddrs(head);
    }
    out
}

/// The default member networks: those of the RFC 1918 private interfaces, once each.
pub fn private_networks(ifs: &[(Ipv4Addr, Cidr)]) -> Vec<Cidr> {
    let mut nets: Vec<Cidr> = Vec::new();
    for (ip, net) in ifs {
        if is_rfc1918(*ip) && !nets.contains(net) {
            nets.push(*net);
        }
    }
    nets
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_private_interfaces_give_default_networks() {
        let c = |s: &str| Cidr::parse(s).unwrap();
        let ifs = vec![
            ("127.0.0.1".parse().unwrap(), c("127.0.0.0/8")),
            ("10.1.0.1".parse().unwrap(), c("10.1.0.0/16")),
            ("10.1.0.2".parse().unwrap(), c("10.1.0.0/16")),
            ("198.51.100.11".parse().unwrap(), c("198.51.100.0/24")),
            ("192.168.5.1".parse().unwrap(), c("192.168.5.0/24")),
            ("172.20.0.1".parse().unwrap(), c("172.20.0.0/16")),
        ];
        assert_eq!(private_networks(&ifs), vec![c("10.1.0.0/16"), c("192.168.5.0/24"), c("172.20.0.0/16")]);
    }

    #[test]
    fn this_host_has_loopback_with_its_network() {
        let ifs = interface_networks();
        assert!(ifs.iter().any(|(ip, net)| ip.is_loopback() && net.bits == 8), "{ifs:?}");
    }
}
