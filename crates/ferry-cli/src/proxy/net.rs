//! This host's IPv4 networks, for the proxy's default member networks and the addresses it
//! must never connect to (its own).

use std::net::Ipv4Addr;

use ferry_core::transport::relay::policy::{is_rfc1918, Cidr};

/// Every IPv4 interface address with its network.
pub fn interface_networks() -> Vec<(Ipv4Addr, Cidr)> {
    ferry_core::transport::tcp::interface_networks().into_iter().map(|(_, ip, bits)| (ip, Cidr::new(ip, bits))).collect()
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
