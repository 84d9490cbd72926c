//! The MCAPI hosts file (`FERRY_MCAPI_HOSTS`), pure: which node runs where, and the secret
//! every node of the domain shares. Untrusted input (fuzzed), so every line is checked and an
//! error names its line.
//!
//! ```text
//! # node host[:port]        (port: 17000 + node when absent)
//! 0 alpha.example
//! 1 10.0.0.7:18001
//! 2 [fd00::2]:18002
//! secret 0123...cdef        (64 lowercase hex digits, exactly once)
//! ```
//! `#` starts a comment; blank lines are ignored. The world is the listed nodes in file order.

use std::fmt;

use super::is_job_secret;

/// A node's port when its line names none: this plus the node id.
pub const DEFAULT_PORT_BASE: u32 = 17000;

/// One node's line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostEntry {
    pub node: u32,
    /// A host name, an IPv4 address, or an IPv6 address (without brackets).
    pub host: String,
    pub port: u16,
    /// 1-based line number, for messages.
    pub line: usize,
}

/// A parsed hosts file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostsFile {
    /// In file order: the index of a node is its world rank.
    pub nodes: Vec<HostEntry>,
    /// 64 lowercase hex digits.
    pub secret: String,
}

/// Why a hosts file was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HostsError {
    /// Line `line` is malformed, for `why`.
    Line { line: usize, why: String },
    /// No `secret` line.
    NoSecret,
    /// A second `secret` line.
    SecondSecret { line: usize, first: usize },
    /// A node listed twice.
    DuplicateNode { node: u32, line: usize, first: usize },
    /// No node lines at all.
    NoNodes,
}

impl fmt::Display for HostsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HostsError::Line { line, why } => write!(f, "line {line}: {why}"),
            HostsError::NoSecret => write!(f, "no `secret <64 lowercase hex digits>` line"),
            HostsError::SecondSecret { line, first } => write!(f, "line {line}: a second secret (the first is on line {first})"),
            HostsError::DuplicateNode { node, line, first } => write!(f, "line {line}: node {node} is listed again (first on line {first})"),
            HostsError::NoNodes => write!(f, "no node lines"),
        }
    }
}

impl HostsFile {
    /// Parse the text of a hosts file.
    pub fn parse(text: &str) -> Result<HostsFile, HostsError> {
        let mut nodes: Vec<HostEntry> = Vec::new();
        let mut secret: Option<(String, usize)> = None;
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let bad = |why: String| HostsError::Line { line, why };
            let content = raw.split('#').next().unwrap_or("");
            let fields: Vec<&str> = content.split_whitespace().collect();
            match fields.as_slice() {
                [] => {}
                ["secret", rest @ ..] => {
                    let [s] = rest else { return Err(bad("expected `secret <64 lowercase hex digits>`".into())) };
                    if !is_job_secret(s) {
                        return Err(bad("the secret must be 64 lowercase hex digits".into()));
                    }
                    if let Some((_, first)) = secret {
                        return Err(HostsError::SecondSecret { line, first });
                    }
                    secret = Some((s.to_string(), line));
                }
                [node, host] => {
                    let node = parse_node(node).map_err(bad)?;
                    let (host, port) = parse_host_port(host, node).map_err(bad)?;
                    if let Some(first) = nodes.iter().find(|e| e.node == node) {
                        return Err(HostsError::DuplicateNode { node, line, first: first.line });
                    }
                    nodes.push(HostEntry { node, host, port, line });
                }
                _ => return Err(bad("expected `<node> <host>[:<port>]` or `secret <hex>`".into())),
            }
        }
        let (secret, _) = secret.ok_or(HostsError::NoSecret)?;
        if nodes.is_empty() {
            return Err(HostsError::NoNodes);
        }
        Ok(HostsFile { nodes, secret })
    }

    /// The world rank of `node`: its index in the file.
    pub fn rank_of(&self, node: u32) -> Option<u32> {
        self.nodes.iter().position(|e| e.node == node).map(|i| i as u32)
    }
}

/// The canonical text of a hosts file (every port written out).
impl fmt::Display for HostsFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for e in &self.nodes {
            if e.host.contains(':') {
                writeln!(f, "{} [{}]:{}", e.node, e.host, e.port)?;
            } else {
                writeln!(f, "{} {}:{}", e.node, e.host, e.port)?;
            }
        }
        writeln!(f, "secret {}", self.secret)
    }
}

fn parse_node(s: &str) -> Result<u32, String> {
    if !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("node id {s:?} is not a number"));
    }
    s.parse().map_err(|_| format!("node id {s} is too large"))
}

/// `host`, `host:port`, `[v6]` or `[v6]:port`; the default port for `node` when absent.
fn parse_host_port(s: &str, node: u32) -> Result<(String, u16), String> {
    let (host, port) = if let Some(rest) = s.strip_prefix('[') {
        let (v6, after) = rest.split_once(']').ok_or_else(|| format!("{s:?}: `[` without `]`"))?;
        if v6.parse::<std::net::Ipv6Addr>().is_err() {
            return Err(format!("{v6:?} is not an IPv6 address"));
        }
        let port = match after {
            "" => None,
            p => Some(p.strip_prefix(':').ok_or_else(|| format!("{s:?}: expected `:<port>` after `]`"))?),
        };
        (v6.to_string(), port)
    } else {
        if s.matches(':').count() > 1 {
            return Err(format!("{s:?}: an IPv6 address goes in brackets, as [fd00::1]:17000"));
        }
        let (host, port) = match s.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (s, None),
        };
        if !valid_host_name(host) {
            return Err(format!("{host:?} is not a host name or IPv4 address"));
        }
        (host.to_string(), port)
    };
    let port = match port {
        Some(p) => match p.parse::<u16>() {
            Ok(n) if n > 0 && p.bytes().all(|b| b.is_ascii_digit()) => n,
            _ => return Err(format!("port {p:?} is not a number from 1 to 65535")),
        },
        None => u16::try_from(DEFAULT_PORT_BASE + node.min(u16::MAX as u32))
            .map_err(|_| format!("node {node} needs a port: {DEFAULT_PORT_BASE} + {node} is past 65535"))?,
    };
    Ok((host, port))
}

fn valid_host_name(s: &str) -> bool {
    !s.is_empty() && s.len() <= 253 && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    fn parse(body: &str) -> Result<HostsFile, HostsError> {
        HostsFile::parse(&format!("{body}\nsecret {S}\n"))
    }

    fn line_error(body: &str) -> (usize, String) {
        match parse(body) {
            Err(HostsError::Line { line, why }) => (line, why),
            other => panic!("{body:?}: {other:?}"),
        }
    }

    #[test]
    fn nodes_in_file_order_with_default_ports() {
        let f = HostsFile::parse(&format!("# domain 1\n\n5 alpha.example   # the first\n  2\t10.0.0.7:18001\nsecret {S}\n9 [fd00::2]:18002\n1 [::1]\n")).unwrap();
        let got: Vec<(u32, &str, u16, usize)> = f.nodes.iter().map(|e| (e.node, e.host.as_str(), e.port, e.line)).collect();
        assert_eq!(got, [(5, "alpha.example", 17005, 3), (2, "10.0.0.7", 18001, 4), (9, "fd00::2", 18002, 6), (1, "::1", 17001, 7)]);
        assert_eq!(f.secret, S);
        assert_eq!(f.rank_of(9), Some(2));
        assert_eq!(f.rank_of(3), None);
    }

    #[test]
    fn windows_line_ends_are_accepted() {
        let f = HostsFile::parse(&format!("0 a\r\n1 b:9\r\nsecret {S}\r\n")).unwrap();
        assert_eq!(f.nodes.len(), 2);
        assert_eq!(f.nodes[1].port, 9);
    }

    #[test]
    fn the_canonical_text_parses_back() {
        let f = parse("3 h\n4 [fe80::1]:5\n0 10.1.1.1:65535").unwrap();
        let again = HostsFile::parse(&f.to_string()).unwrap();
        let strip = |f: &HostsFile| f.nodes.iter().map(|e| (e.node, e.host.clone(), e.port)).collect::<Vec<_>>();
        assert_eq!(strip(&f), strip(&again));
        assert_eq!(f.secret, again.secret);
    }

    #[test]
    fn malformed_node_lines_name_their_line() {
        for (body, needle) in [
            ("0", "expected `<node> <host>"),
            ("0 a b", "expected `<node> <host>"),
            ("x a", "not a number"),
            ("-1 a", "not a number"),
            ("+1 a", "not a number"),
            ("4294967296 a", "too large"),
            ("0 a:0", "port \"0\""),
            ("0 a:65536", "port \"65536\""),
            ("0 a:", "port \"\""),
            ("0 a:+5", "port \"+5\""),
            ("0 a:1:2", "in brackets"),
            ("0 :80", "not a host name"),
            ("0 a/b", "not a host name"),
            ("0 fd00::2", "in brackets"),
            ("0 [fd00::2", "without `]`"),
            ("0 [nonsense]:80", "not an IPv6 address"),
            ("0 [::1]80", "expected `:<port>`"),
            ("48536 a", "past 65535"),
            ("4000000000 a", "past 65535"),
        ] {
            let (line, why) = line_error(&format!("# first\n{body}"));
            assert_eq!(line, 2, "{body}");
            assert!(why.contains(needle), "{body}: {why}");
        }
        // The largest node with a default port.
        assert_eq!(parse("48535 a").unwrap().nodes[0].port, 65535);
    }

    #[test]
    fn the_secret_is_required_once_and_well_formed() {
        assert_eq!(HostsFile::parse("0 a\n"), Err(HostsError::NoSecret));
        assert_eq!(HostsFile::parse("# only a comment\n"), Err(HostsError::NoSecret));
        assert_eq!(HostsFile::parse(&format!("0 a\nsecret {S}\nsecret {S}\n")), Err(HostsError::SecondSecret { line: 3, first: 2 }));
        for bad in [&S[..63], &format!("{S}0"), &S.to_uppercase(), &format!("{}g", &S[..63])] {
            let e = HostsFile::parse(&format!("0 a\nsecret {bad}\n")).unwrap_err();
            assert!(matches!(e, HostsError::Line { line: 2, ref why } if why.contains("64 lowercase hex")), "{bad}: {e}");
        }
        let e = HostsFile::parse(&format!("0 a\nsecret {S} extra\n")).unwrap_err();
        assert!(matches!(e, HostsError::Line { line: 2, .. }), "{e}");
        let e = HostsFile::parse("0 a\nsecret\n").unwrap_err();
        assert!(matches!(e, HostsError::Line { line: 2, .. }), "{e}");
    }

    #[test]
    fn a_node_listed_twice_or_none_at_all_is_refused() {
        assert_eq!(parse("1 a\n2 b\n1 c"), Err(HostsError::DuplicateNode { node: 1, line: 3, first: 1 }));
        assert_eq!(HostsFile::parse(&format!("secret {S}\n")), Err(HostsError::NoNodes));
        assert_eq!(HostsError::DuplicateNode { node: 1, line: 3, first: 1 }.to_string(), "line 3: node 1 is listed again (first on line 1)");
    }
}
