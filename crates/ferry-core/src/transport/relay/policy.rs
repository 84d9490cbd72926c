//! Which addresses a proxy may open a second leg to, pure. A proxy that could be talked into
//! connecting anywhere would be an open relay into its cluster: it connects only to members
//! whose address lies in its member networks, and never to loopback, link-local,
//! unspecified, multicast or broadcast addresses, nor to itself.

use core::net::{Ipv4Addr, SocketAddrV4};

/// An IPv4 network, `a.b.c.d/n`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr {
    pub net: Ipv4Addr,
    pub bits: u8,
}

/// Why a network text is not a network.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CidrError(pub String);

impl std::fmt::Display for CidrError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?} is not an IPv4 network a.b.c.d/n", self.0)
    }
}

impl Cidr {
    pub fn new(ip: Ipv4Addr, bits: u8) -> Cidr {
        let bits = bits.min(32);
        Cidr { net: Ipv4Addr::from(u32::from(ip) & mask(bits)), bits }
    }

    pub fn parse(s: &str) -> Result<Cidr, CidrError> {
        let err = || CidrError(s.to_string());
        let (ip, bits) = s.trim().split_once('/').ok_or_else(err)?;
        let ip: Ipv4Addr = ip.parse().map_err(|_| err())?;
        let bits: u8 = bits.parse().ok().filter(|b| *b <= 32).ok_or_else(err)?;
        Ok(Cidr::new(ip, bits))
    }

    pub fn contains(&self, ip: Ipv4Addr) -> bool {
        u32::from(ip) & mask(self.bits) == u32::from(self.net)
    }
}

impl std::fmt::Display for Cidr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.net, self.bits)
    }
}

fn mask(bits: u8) -> u32 {
    if bits == 0 {
        0
    } else {
        u32::MAX << (32 - bits as u32)
    }
}

/// Whether `ip` is in an RFC 1918 private network (10/8, 172.16/12, 192.168/16).
pub fn is_rfc1918(ip: Ipv4Addr) -> bool {
    ip.is_private()
}

/// Why an address may not be connected to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddrRefusal {
    Unspecified,
    Loopback,
    LinkLocal,
    Multicast,
    Broadcast,
    /// 0.0.0.0/8 or 240.0.0.0/4.
    Reserved,
    PortZero,
    /// One of the proxy's own addresses (or its listening socket).
    ProxyItself,
    NotInMemberNetworks,
}

impl std::fmt::Display for AddrRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            AddrRefusal::Unspecified => "unspecified address",
            AddrRefusal::Loopback => "loopback address",
            AddrRefusal::LinkLocal => "link-local address",
            AddrRefusal::Multicast => "multicast address",
            AddrRefusal::Broadcast => "broadcast address",
            AddrRefusal::Reserved => "reserved address",
            AddrRefusal::PortZero => "port 0",
            AddrRefusal::ProxyItself => "the proxy's own address",
            AddrRefusal::NotInMemberNetworks => "outside the proxy's member networks",
        })
    }
}

/// The proxy's address policy.
#[derive(Debug, Clone)]
pub struct AddrPolicy {
    members: Vec<Cidr>,
    own: Vec<Ipv4Addr>,
    listen: Option<SocketAddrV4>,
    /// Only the driver tests of this crate set this: their members listen on loopback.
    loopback_for_tests: bool,
}

impl AddrPolicy {
    /// Members must lie in `members`; `own` are the proxy's own addresses.
    pub fn new(members: Vec<Cidr>, own: Vec<Ipv4Addr>) -> AddrPolicy {
        AddrPolicy { members, own, listen: None, loopback_for_tests: false }
    }

    /// The proxy's listening socket, never a target even where its address is allowed.
    pub fn set_listen(&mut self, listen: SocketAddrV4) {
        self.listen = Some(listen);
    }

    /// Let loopback members through (and nothing else): for in-process tests, never built
    /// into the shipped program.
    #[cfg(test)]
    pub(crate) fn allow_loopback_for_tests(mut self) -> AddrPolicy {
        self.loopback_for_tests = true;
        self
    }

    pub fn members(&self) -> &[Cidr] {
        &self.members
    }

    /// Whether the proxy may connect to `addr`.
    pub fn check(&self, addr: SocketAddrV4) -> Result<(), AddrRefusal> {
        let ip = *addr.ip();
        let o = ip.octets();
        if Some(addr) == self.listen {
            return Err(AddrRefusal::ProxyItself);
        }
        if ip.is_unspecified() {
            return Err(AddrRefusal::Unspecified);
        }
        if ip.is_loopback() && !self.loopback_for_tests {
            return Err(AddrRefusal::Loopback);
        }
        if ip.is_link_local() {
            return Err(AddrRefusal::LinkLocal);
        }
        if ip.is_multicast() {
            return Err(AddrRefusal::Multicast);
        }
        if ip.is_broadcast() {
            return Err(AddrRefusal::Broadcast);
        }
        if o[0] == 0 || o[0] >= 240 {
            return Err(AddrRefusal::Reserved);
        }
        if addr.port() == 0 {
            return Err(AddrRefusal::PortZero);
        }
        if self.own.contains(&ip) {
            return Err(AddrRefusal::ProxyItself);
        }
        if !self.members.iter().any(|c| c.contains(ip)) {
            return Err(AddrRefusal::NotInMemberNetworks);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn a(s: &str) -> SocketAddrV4 {
        s.parse().unwrap()
    }

    #[test]
    fn cidr_parse_and_contains() {
        let c = Cidr::parse("10.1.2.3/16").unwrap();
        assert_eq!(c.to_string(), "10.1.0.0/16");
        assert!(c.contains("10.1.255.1".parse().unwrap()));
        assert!(!c.contains("10.2.0.1".parse().unwrap()));
        assert!(Cidr::parse("0.0.0.0/0").unwrap().contains("8.8.8.8".parse().unwrap()));
        for bad in ["10.0.0.0", "10.0.0.0/33", "10.0.0/8", "x/8", "10.0.0.0/-1", ""] {
            assert!(Cidr::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn only_members_in_member_networks_pass() {
        let mut p = AddrPolicy::new(vec![Cidr::parse("10.1.0.0/16").unwrap()], vec!["10.1.0.1".parse().unwrap()]);
        p.set_listen(a("10.1.0.1:7000"));
        assert_eq!(p.check(a("10.1.0.11:4000")), Ok(()));
        assert_eq!(p.check(a("10.2.0.11:4000")), Err(AddrRefusal::NotInMemberNetworks));
        assert_eq!(p.check(a("10.1.0.1:4000")), Err(AddrRefusal::ProxyItself));
        assert_eq!(p.check(a("10.1.0.1:7000")), Err(AddrRefusal::ProxyItself));
        assert_eq!(p.check(a("10.1.0.11:0")), Err(AddrRefusal::PortZero));
    }

    #[test]
    fn forbidden_kinds_are_refused_even_inside_a_member_network() {
        // A careless --members 0.0.0.0/0 still never reaches these.
        let p = AddrPolicy::new(vec![Cidr::parse("0.0.0.0/0").unwrap()], vec![]);
        assert_eq!(p.check(a("127.0.0.1:22")), Err(AddrRefusal::Loopback));
        assert_eq!(p.check(a("127.8.9.1:22")), Err(AddrRefusal::Loopback));
        assert_eq!(p.check(a("0.0.0.0:22")), Err(AddrRefusal::Unspecified));
        assert_eq!(p.check(a("0.1.2.3:22")), Err(AddrRefusal::Reserved));
        assert_eq!(p.check(a("169.254.169.254:80")), Err(AddrRefusal::LinkLocal));
        assert_eq!(p.check(a("224.0.0.1:22")), Err(AddrRefusal::Multicast));
        assert_eq!(p.check(a("255.255.255.255:22")), Err(AddrRefusal::Broadcast));
        assert_eq!(p.check(a("250.1.1.1:22")), Err(AddrRefusal::Reserved));
        assert_eq!(p.check(a("8.8.8.8:53")), Ok(()));
    }

    #[test]
    fn the_test_policy_lets_loopback_through_but_not_the_proxy_itself() {
        let mut p = AddrPolicy::new(vec![Cidr::parse("127.0.0.0/8").unwrap()], vec![]).allow_loopback_for_tests();
        p.set_listen(a("127.0.0.1:7000"));
        assert_eq!(p.check(a("127.0.0.1:7001")), Ok(()));
        assert_eq!(p.check(a("127.0.0.1:7000")), Err(AddrRefusal::ProxyItself));
        assert_eq!(p.check(a("169.254.0.1:7001")), Err(AddrRefusal::LinkLocal));
    }

    proptest! {
        #[test]
        fn allowed_addresses_are_never_special(ip in any::<u32>(), port in any::<u16>(), bits in 0u8..=32, net in any::<u32>()) {
            let p = AddrPolicy::new(vec![Cidr::new(Ipv4Addr::from(net), bits)], vec![]);
            let addr = SocketAddrV4::new(Ipv4Addr::from(ip), port);
            if p.check(addr).is_ok() {
                let ip = *addr.ip();
                prop_assert!(!ip.is_loopback() && !ip.is_unspecified() && !ip.is_link_local() && !ip.is_multicast() && !ip.is_broadcast());
                prop_assert!(port != 0);
                prop_assert!(p.members()[0].contains(ip));
            }
        }
    }
}
