//! The hosts of a job across machines: the hostfile (`--hostfile`) or list (`--host`), where
//! each rank runs (`place`), and the process mapping MPICH programs read from PMI. Pure.
//!
//! Hostfile lines (`#` starts a comment):
//!
//! ```text
//! host [slots=K] [front=NAME]     # a host; K ranks per round (default 1); its front node
//! proxy ADDR:PORT front=NAME      # a `ferry proxy` serving the private cluster behind NAME
//! ```
//!
//! A host without `front=` (or whose front is itself) is public: it can be reached from
//! anywhere. A host behind a front node is private: reachable only inside its cluster.

use std::net::SocketAddr;

/// One host of the job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Host {
    pub name: String,
    pub slots: u32,
    /// The front node of its private cluster; `None` for a public host.
    pub front: Option<String>,
}

impl Host {
    pub fn is_public(&self) -> bool {
        self.front.as_ref().is_none_or(|f| *f == self.name)
    }

    /// The front-node name of its global id: its own name when it is public.
    pub fn front_name(&self) -> &str {
        self.front.as_deref().unwrap_or(&self.name)
    }
}

/// A relay serving one private cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Proxy {
    pub addr: SocketAddr,
    pub front: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostList {
    pub hosts: Vec<Host>,
    pub proxies: Vec<Proxy>,
}

/// How ranks are ordered over the hosts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RankPolicy {
    /// In the order the hosts are given.
    Given,
    /// Public hosts first, so that private hosts get the higher ranks and open their
    /// connections outward through NAT (SEEDS.md S5, rank management).
    PublicFirst,
}

/// Names go into business cards and command lines: the characters a card allows.
fn valid_name(s: &str) -> bool {
    !s.is_empty() && s.len() <= 255 && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._".contains(&b))
}

fn name(s: &str, what: &str) -> Result<String, String> {
    if valid_name(s) {
        Ok(s.to_owned())
    } else {
        Err(format!("{what} {s:?}: expected letters, digits, '-', '.' or '_'"))
    }
}

fn slots(s: &str) -> Result<u32, String> {
    match s.parse::<u32>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("slots={s}: expected a whole number of at least 1")),
    }
}

/// Parse a hostfile's text.
pub fn parse_hostfile(text: &str) -> Result<HostList, String> {
    let mut list = HostList::default();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        parse_line(line, &mut list).map_err(|e| format!("line {}: {e}", i + 1))?;
    }
    if list.hosts.is_empty() {
        return Err("no host listed".into());
    }
    check(&list)?;
    Ok(list)
}

fn parse_line(line: &str, list: &mut HostList) -> Result<(), String> {
    let mut words = line.split_whitespace();
    let first = words.next().expect("a non-empty line has a word");
    if first == "proxy" {
        list.proxies.push(parse_proxy(words.collect())?);
        return Ok(());
    }
    let mut slots_v = None;
    let mut front = None;
    for w in words {
        match w.split_once('=') {
            Some(("slots", v)) => slots_v = Some(slots(v)?),
            Some(("front", v)) => front = Some(name(v, "front")?),
            _ => return Err(format!("unexpected {w:?}: expected slots=K or front=NAME")),
        }
    }
    list.hosts.push(Host { name: name(first, "host")?, slots: slots_v.unwrap_or(1), front });
    Ok(())
}

/// The same checks for a hostfile and a host list: a host listed twice would get two
/// agents; a proxy must serve a front that some host names.
fn check(list: &HostList) -> Result<(), String> {
    for (i, h) in list.hosts.iter().enumerate() {
        if list.hosts[..i].iter().any(|o| o.name == h.name) {
            return Err(format!("host {} is listed twice (give it slots=K instead)", h.name));
        }
    }
    for p in &list.proxies {
        if !list.hosts.iter().any(|h| h.front_name() == p.front) {
            return Err(format!("proxy {} serves front {}, which no host names", p.addr, p.front));
        }
    }
    Ok(())
}

fn parse_proxy(words: Vec<&str>) -> Result<Proxy, String> {
    let [addr, front] = words[..] else {
        return Err("expected: proxy ADDR:PORT front=NAME".into());
    };
    let addr: SocketAddr = addr.parse().map_err(|_| format!("proxy address {addr:?}: expected IP:PORT"))?;
    let front = match front.split_once('=') {
        Some(("front", v)) => name(v, "front")?,
        _ => return Err(format!("unexpected {front:?}: expected front=NAME")),
    };
    Ok(Proxy { addr, front })
}

/// `--host a,b:2,c`: hosts with one slot each unless `:K` says otherwise (as MPICH's
/// `-hosts`); all public.
pub fn parse_host_list(s: &str) -> Result<HostList, String> {
    let mut list = HostList::default();
    for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let (n, k) = match item.split_once(':') {
            Some((n, k)) => (n, slots(k)?),
            None => (item, 1),
        };
        list.hosts.push(Host { name: name(n, "host")?, slots: k, front: None });
    }
    if list.hosts.is_empty() {
        return Err("no host listed".into());
    }
    check(&list)?;
    Ok(list)
}

/// The host of every rank: hosts take ranks in blocks of their slots, in the policy's
/// order, round after round until every rank has a host (more ranks than slots
/// oversubscribe the hosts evenly). `result[rank]` is an index into `hosts`.
pub fn place(hosts: &[Host], ranks: u32, policy: RankPolicy) -> Vec<usize> {
    let mut order: Vec<usize> = (0..hosts.len()).collect();
    if policy == RankPolicy::PublicFirst {
        order.sort_by_key(|&i| !hosts[i].is_public());
    }
    let mut out = Vec::with_capacity(ranks as usize);
    'rounds: loop {
        for &h in &order {
            for _ in 0..hosts[h].slots {
                if out.len() == ranks as usize {
                    break 'rounds;
                }
                out.push(h);
            }
        }
        if out.len() == ranks as usize || hosts.is_empty() {
            break;
        }
    }
    out
}

/// MPICH's `PMI_process_mapping` for a placement: `(vector,(node,count,ranks_per_node),...)`
/// where each triple gives `count` nodes from `node` on, each holding the next
/// `ranks_per_node` ranks.
pub fn process_mapping(placement: &[usize]) -> String {
    let mut runs: Vec<(usize, usize)> = Vec::new(); // (node, consecutive ranks)
    for &h in placement {
        match runs.last_mut() {
            Some((node, n)) if *node == h => *n += 1,
            _ => runs.push((h, 1)),
        }
    }
    let mut triples: Vec<(usize, usize, usize)> = Vec::new();
    for (node, n) in runs {
        match triples.last_mut() {
            Some((start, count, per)) if *per == n && *start + *count == node => *count += 1,
            _ => triples.push((node, 1, n)),
        }
    }
    let parts: Vec<String> = triples.iter().map(|(s, c, p)| format!("({s},{c},{p})")).collect();
    format!("(vector,{})", parts.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(name: &str, slots: u32, front: Option<&str>) -> Host {
        Host { name: name.into(), slots, front: front.map(Into::into) }
    }

    #[test]
    fn hostfile_lines() {
        let text = "# two clusters\nfy-p-n1 slots=2\n\nfy-c1-n1 front=fy-c1-front # private\nfy-c1-n2 slots=3 front=fy-c1-front\nproxy 198.51.100.11:7100 front=fy-c1-front\nproxy 198.51.100.11:7101 front=fy-c1-front\n";
        let list = parse_hostfile(text).expect("valid");
        assert_eq!(list.hosts, vec![host("fy-p-n1", 2, None), host("fy-c1-n1", 1, Some("fy-c1-front")), host("fy-c1-n2", 3, Some("fy-c1-front"))]);
        assert_eq!(list.proxies.len(), 2);
        assert_eq!(list.proxies[1], Proxy { addr: "198.51.100.11:7101".parse().unwrap(), front: "fy-c1-front".into() });
        assert!(list.hosts[0].is_public() && !list.hosts[1].is_public());
        assert_eq!(list.hosts[0].front_name(), "fy-p-n1");
        assert_eq!(list.hosts[2].front_name(), "fy-c1-front");
    }

    #[test]
    fn hostfile_errors_name_the_line() {
        let cases = [
            ("a\nb slots=0\n", "line 2: slots=0"),
            ("a slot=2\n", "line 1: unexpected \"slot=2\""),
            ("a\na\n", "host a is listed twice"),
            ("# nothing\n", "no host listed"),
            ("a|b\n", "line 1: host \"a|b\""),
            ("a\nproxy 1.2.3.4 front=a\n", "line 2: proxy address"),
            ("a\nproxy 1.2.3.4:5\n", "line 2: expected: proxy ADDR:PORT front=NAME"),
            ("a\nproxy 1.2.3.4:5 front=zz\n", "serves front zz, which no host names"),
        ];
        for (text, want) in cases {
            let e = parse_hostfile(text).expect_err(text);
            assert!(e.contains(want), "{text:?}: {e}");
        }
    }

    #[test]
    fn host_lists() {
        let list = parse_host_list("a, b:3,c").expect("valid");
        assert_eq!(list.hosts, vec![host("a", 1, None), host("b", 3, None), host("c", 1, None)]);
        assert!(parse_host_list("").is_err());
        assert!(parse_host_list("a:x").is_err());
        assert!(parse_host_list("a,a").is_err());
    }

    #[test]
    fn placement_fills_blocks_then_wraps() {
        let hosts = [host("a", 2, None), host("b", 1, None)];
        assert_eq!(place(&hosts, 2, RankPolicy::Given), vec![0, 0]);
        assert_eq!(place(&hosts, 3, RankPolicy::Given), vec![0, 0, 1]);
        assert_eq!(place(&hosts, 7, RankPolicy::Given), vec![0, 0, 1, 0, 0, 1, 0]);
    }

    #[test]
    fn public_first_gives_private_hosts_the_higher_ranks() {
        let hosts = [host("c1", 1, Some("f1")), host("p1", 1, None), host("c2", 1, Some("f1")), host("p2", 1, Some("p2"))];
        assert_eq!(place(&hosts, 4, RankPolicy::Given), vec![0, 1, 2, 3]);
        assert_eq!(place(&hosts, 4, RankPolicy::PublicFirst), vec![1, 3, 0, 2]);
    }

    #[test]
    fn mapping_in_mpich_form() {
        assert_eq!(process_mapping(&[0, 0, 0, 0]), "(vector,(0,1,4))");
        assert_eq!(process_mapping(&[0, 0, 1, 1, 2, 2]), "(vector,(0,3,2))");
        assert_eq!(process_mapping(&[0, 1, 0, 1]), "(vector,(0,2,1),(0,2,1))");
        assert_eq!(process_mapping(&[1, 1, 0]), "(vector,(1,1,2),(0,1,1))");
    }
}
