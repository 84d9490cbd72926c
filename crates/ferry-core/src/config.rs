//! The one registry of `FERRY_*` knobs: name, default, meaning. The runtime reads values
//! through it and `ferry info` prints it, so the two cannot drift apart.

use std::fmt;

/// One configuration knob.
#[derive(Clone, Copy, Debug)]
pub struct Knob {
    pub name: &'static str,
    pub default: &'static str,
    pub meaning: &'static str,
}

pub const EAGER_LIMIT: Knob = Knob {
    name: "FERRY_EAGER_LIMIT",
    // Measured over TCP (docs/performance.md, bench/eager-sweep.sh): rendezvous costs a
    // round trip (~10 us here), 30-40% of a 64-256 KiB transfer, and buys nothing in
    // bandwidth below 256 KiB; above it the round trip is lost in the transfer time.
    default: "262144",
    meaning: "messages up to this many bytes are sent eagerly; larger ones use rendezvous",
};
pub const TCP_SNDBUF: Knob = Knob {
    name: "FERRY_TCP_SNDBUF",
    default: "262144",
    meaning: "send buffer of each TCP connection in bytes (0: the kernel's autotuning); a bounded buffer keeps large transfers pipelined through the cache",
};
pub const PORT_RANGE: Knob = Knob {
    name: "FERRY_PORT_RANGE",
    default: "",
    meaning: "lo:hi range for every listening socket (empty: any port)",
};
pub const IFACE: Knob = Knob {
    name: "FERRY_IF",
    default: "",
    meaning: "interface name or CIDR whose address is advertised (empty: 127.0.0.1 for one-host jobs, else the host's address)",
};
pub const SPIN_US: Knob = Knob {
    name: "FERRY_SPIN_US",
    default: "50",
    meaning: "microseconds a blocked call polls before it sleeps on its sockets",
};
pub const CONNECT_TIMEOUT: Knob = Knob {
    name: "FERRY_CONNECT_TIMEOUT",
    default: "30",
    meaning: "seconds to establish and authenticate a connection to a peer before the job fails",
};
pub const FRONT_NODE: Knob = Knob {
    name: "FERRY_FRONT_NODE",
    default: "",
    meaning: "front-node name in this process's global id (empty: the host name, i.e. a public node)",
};
pub const TRANSPORTS: Knob = Knob {
    name: "FERRY_TRANSPORTS",
    default: "shm,tcp",
    meaning: "transports to use: shm,tcp (ranks of one host share memory, others use TCP) or tcp (TCP between all ranks)",
};
pub const HOST_ID: Knob = Knob {
    name: "FERRY_HOST_ID",
    default: "",
    meaning: "host identity in this process's global id (empty: the host name); ranks share memory only with ranks of the same identity, so different values emulate different hosts",
};
pub const SHM_EAGER_LIMIT: Knob = Knob {
    name: "FERRY_SHM_EAGER_LIMIT",
    default: "32768",
    meaning: "between ranks of one host, messages up to this many bytes are copied through the ring; larger ones use rendezvous (single copy where permitted)",
};
pub const SHM_RING_SIZE: Knob = Knob {
    name: "FERRY_SHM_RING_SIZE",
    default: "0",
    meaning: "bytes of each shared-memory ring, a power of two (0: 256 KiB, less when many ranks share a host, to bound the segment to about 64 MiB)",
};
pub const SHM_SINGLE_COPY: Knob = Knob {
    name: "FERRY_SHM_SINGLE_COPY",
    // Measured (docs/performance.md): on 2 cores the pipelined copy, in which the sender
    // copies into the ring while the receiver copies out, moves 1-4 MiB about 2x faster than
    // one process_vm_readv, whose page pinning holds it near 7 GB/s; up to 64 KiB the two
    // take the same time for one message, and the single copy leaves the sender free.
    default: "",
    meaning: "1: every message above the shm eager limit is read straight from the sender (process_vm_readv) when the kernel permits, one copy by the receiver; 0: none, all pipelined through the ring, sender and receiver copying at once (unset: up to FERRY_SHM_SINGLE_COPY_MAX, every size with FERRY_ASYNC_PROGRESS=1)",
};
pub const SHM_SINGLE_COPY_MAX: Knob = Knob {
    name: "FERRY_SHM_SINGLE_COPY_MAX",
    default: "65536",
    meaning: "when FERRY_SHM_SINGLE_COPY is unset: shm messages above the eager limit and up to this many bytes use the single copy, longer ones the pipelined copy",
};
pub const RECOVERY: Knob = Knob {
    name: "FERRY_RECOVERY",
    default: "0",
    meaning: "1: fault-tolerant MPI (docs/fault-tolerance.md): a rank's death is reported to the others as errors (MPIX_ERR_PROC_FAILED) instead of ending the job; `ferry run --enable-recovery` sets it",
};
pub const ASYNC_PROGRESS: Knob = Knob {
    name: "FERRY_ASYNC_PROGRESS",
    default: "0",
    meaning: "1: a progress thread moves messages while the application computes, sleeping when there is nothing to do; 0: progress only inside MPI calls",
};
pub const LOCK_ELISION: Knob = Knob {
    name: "FERRY_LOCK_ELISION",
    default: "1",
    meaning: "1: below MPI_THREAD_MULTIPLE, and while no session, tool interface or progress thread is in use, MPI calls skip the runtime's lock (the program makes one call at a time); 0: every call takes the lock",
};
macro_rules! algorithm_knob {
    ($konst:ident, $name:literal, $coll:literal) => {
        #[doc = concat!("Algorithms for ", $coll, ", overriding the decision table.")]
        pub const $konst: Knob = Knob {
            name: $name,
            default: "",
            meaning: concat!(
                "comma-separated ",
                $coll,
                " algorithms, best first; the first that applies to a call runs (empty: the decision table)"
            ),
        };
    };
}
algorithm_knob!(BCAST_ALGORITHM, "FERRY_BCAST_ALGORITHM", "bcast");
algorithm_knob!(SCATTER_ALGORITHM, "FERRY_SCATTER_ALGORITHM", "scatter(v)");
algorithm_knob!(GATHER_ALGORITHM, "FERRY_GATHER_ALGORITHM", "gather(v)");
algorithm_knob!(ALLGATHER_ALGORITHM, "FERRY_ALLGATHER_ALGORITHM", "allgather(v)");
algorithm_knob!(ALLTOALL_ALGORITHM, "FERRY_ALLTOALL_ALGORITHM", "alltoall(v)");
algorithm_knob!(REDUCE_ALGORITHM, "FERRY_REDUCE_ALGORITHM", "reduce");
algorithm_knob!(ALLREDUCE_ALGORITHM, "FERRY_ALLREDUCE_ALGORITHM", "allreduce");
algorithm_knob!(REDUCE_SCATTER_ALGORITHM, "FERRY_REDUCE_SCATTER_ALGORITHM", "reduce_scatter(_block)");
algorithm_knob!(SCAN_ALGORITHM, "FERRY_SCAN_ALGORITHM", "scan");
algorithm_knob!(EXSCAN_ALGORITHM, "FERRY_EXSCAN_ALGORITHM", "exscan");
algorithm_knob!(BARRIER_ALGORITHM, "FERRY_BARRIER_ALGORITHM", "barrier");
pub const ALLGATHER_RADIX: Knob = Knob {
    name: "FERRY_ALLGATHER_RADIX",
    default: "4",
    meaning: "radix k of allgather.k_bruck, 2 to 1024",
};
pub const STATUS_SOURCE: Knob = Knob {
    name: "FERRY_STATUS_SOURCE",
    default: "board",
    meaning: "how the root of a status-based collective learns which ranks are free: board (the shared-memory status board for ranks on its host, arrival tokens for the others) or arrival (arrival tokens for all)",
};
pub const COLL_STATS: Knob = Knob {
    name: "FERRY_COLL_STATS",
    default: "0",
    meaning: "1: at MPI_Finalize every rank prints to stderr which collective algorithm ran how often, by call and size class",
};
pub const COLL_TABLE: Knob = Knob {
    name: "FERRY_COLL_TABLE",
    default: "",
    meaning: "a decision table file (the format of crates/ferry-coll/decisions.table, as `ferry tune` writes it) read at MPI_Init instead of the built-in table; a file that does not parse fails MPI_Init with its line (empty: the built-in table)",
};
pub const MCAPI_HOSTS: Knob = Knob {
    name: "FERRY_MCAPI_HOSTS",
    default: "",
    meaning: "MCAPI without a launcher: a file of `<node> <host>[:<port>]` lines (port 17000+node when absent) and one `secret <64 hex>` line; the nodes connect over TCP only",
};
pub const MCAPI_RENDEZVOUS: Knob = Knob {
    name: "FERRY_MCAPI_RENDEZVOUS",
    default: "",
    meaning: "MCAPI without a launcher or hosts file: the private directory where nodes of one host find each other (empty: $XDG_RUNTIME_DIR/ferry-mcapi, else /tmp/ferry-mcapi-<uid>); TCP over loopback only",
};
pub const MCAPI_MAX_NODES: Knob = Knob {
    name: "FERRY_MCAPI_MAX_NODES",
    default: "64",
    meaning: "MCAPI rendezvous: how many nodes of one domain may run at once on this host (every node must use the same value)",
};
pub const LOG: Knob = Knob {
    name: "FERRY_LOG",
    default: "warn",
    meaning: "log level on stderr: error, warn, info, debug",
};

/// Up to which size large shared-memory messages use the single copy (`None`: never):
/// `FERRY_SHM_SINGLE_COPY` when set (every size or none), else every size with
/// `FERRY_ASYNC_PROGRESS=1` (a progress thread moves a single copy with one wake-up, the
/// pipelined copy with one per ring's worth on each side), else `FERRY_SHM_SINGLE_COPY_MAX`
/// (0: none). Whether the kernel permits it is a separate question
/// (`transport::shm::cma_available`).
pub fn shm_single_copy() -> Result<Option<usize>, BadValue> {
    if SHM_SINGLE_COPY.is_set() {
        return Ok(SHM_SINGLE_COPY.flag()?.then_some(usize::MAX));
    }
    if ASYNC_PROGRESS.flag()? {
        return Ok(Some(usize::MAX));
    }
    let max = SHM_SINGLE_COPY_MAX.bytes()?;
    Ok((max > 0).then(|| usize::try_from(max).unwrap_or(usize::MAX)))
}

pub const UNIVERSE_SIZE: Knob = Knob {
    name: "FERRY_UNIVERSE_SIZE",
    default: "",
    meaning: "MPI_UNIVERSE_SIZE: how many processes a run may hold at once, spawned children included (empty: the number of cores, and at least the job's size; ferry run --universe-size overrides)",
};
pub const PARENT_PORT: Knob = Knob {
    name: "FERRY_PARENT_PORT",
    default: "",
    meaning: "set by a singleton in the environment of the ferry run it starts for its spawned children: the port they connect to (not for users; an environment, unlike a command line, is private to its owner)",
};
pub const FERRY_BINARY: Knob = Knob {
    name: "FERRY_BINARY",
    default: "",
    meaning: "the ferry program a singleton starts to run the children it spawns (empty: next to libmpi, then on PATH)",
};

/// Every knob, in the order `ferry info` prints them.
pub const KNOBS: &[Knob] = &[
    EAGER_LIMIT,
    UNIVERSE_SIZE,
    FERRY_BINARY,
    PARENT_PORT,
    TCP_SNDBUF,
    PORT_RANGE,
    IFACE,
    SPIN_US,
    CONNECT_TIMEOUT,
    FRONT_NODE,
    TRANSPORTS,
    HOST_ID,
    SHM_EAGER_LIMIT,
    SHM_RING_SIZE,
    SHM_SINGLE_COPY,
    SHM_SINGLE_COPY_MAX,
    ASYNC_PROGRESS,
    RECOVERY,
    LOCK_ELISION,
    BCAST_ALGORITHM,
    SCATTER_ALGORITHM,
    GATHER_ALGORITHM,
    ALLGATHER_ALGORITHM,
    ALLTOALL_ALGORITHM,
    REDUCE_ALGORITHM,
    ALLREDUCE_ALGORITHM,
    REDUCE_SCATTER_ALGORITHM,
    SCAN_ALGORITHM,
    EXSCAN_ALGORITHM,
    BARRIER_ALGORITHM,
    ALLGATHER_RADIX,
    STATUS_SOURCE,
    COLL_STATS,
    COLL_TABLE,
    MCAPI_HOSTS,
    MCAPI_RENDEZVOUS,
    MCAPI_MAX_NODES,
    LOG,
];

/// The decision table that `path` (the value of `FERRY_COLL_TABLE`) holds; Err says which
/// file and which line is wrong, in the words `MPI_Init` and `ferry info` print.
pub fn load_coll_table(path: &str) -> Result<ferry_coll::select::Table, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}={path}: cannot read the decision table: {e}", COLL_TABLE.name))?;
    ferry_coll::select::Table::parse(&text).map_err(|e| format!("{}={path}: line {}: {}", COLL_TABLE.name, e.line, e.message))
}

/// A knob whose value could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadValue {
    pub knob: &'static str,
    pub value: String,
    pub expected: &'static str,
}

impl fmt::Display for BadValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={:?} is invalid: expected {}", self.knob, self.value, self.expected)
    }
}
impl std::error::Error for BadValue {}

impl Knob {
    /// The value in effect: the environment's, else the default.
    pub fn value(&self) -> String {
        match std::env::var(self.name) {
            Ok(v) if !v.is_empty() => v,
            _ => self.default.to_string(),
        }
    }

    /// Whether the environment sets this knob.
    pub fn is_set(&self) -> bool {
        std::env::var(self.name).map(|v| !v.is_empty()).unwrap_or(false)
    }

    /// Parse the value as an unsigned integer (with optional k/m/g binary suffix).
    pub fn bytes(&self) -> Result<u64, BadValue> {
        parse_size(&self.value()).ok_or(BadValue { knob: self.name, value: self.value(), expected: "a byte count such as 65536 or 64k" })
    }

    pub fn u64(&self) -> Result<u64, BadValue> {
        self.value().trim().parse().map_err(|_| BadValue { knob: self.name, value: self.value(), expected: "an unsigned integer" })
    }

    /// Parse `0` or `1`.
    pub fn flag(&self) -> Result<bool, BadValue> {
        match self.value().trim() {
            "0" => Ok(false),
            "1" => Ok(true),
            _ => Err(BadValue { knob: self.name, value: self.value(), expected: "0 or 1" }),
        }
    }

    /// Parse a transport list: whether shared memory may be used (TCP always is).
    pub fn transports(&self) -> Result<bool, BadValue> {
        let v = self.value();
        let bad = || BadValue { knob: self.name, value: v.clone(), expected: "shm,tcp or tcp" };
        let mut shm = false;
        let mut tcp = false;
        for t in v.split(',').map(str::trim) {
            match t {
                "shm" => shm = true,
                "tcp" => tcp = true,
                _ => return Err(bad()),
            }
        }
        if !tcp {
            // Shared memory reaches only the ranks of one host; TCP must stay for the others.
            return Err(bad());
        }
        Ok(shm)
    }

    /// Parse `lo:hi` (inclusive); `None` when empty.
    pub fn port_range(&self) -> Result<Option<(u16, u16)>, BadValue> {
        let v = self.value();
        if v.trim().is_empty() {
            return Ok(None);
        }
        let bad = || BadValue { knob: self.name, value: v.clone(), expected: "lo:hi with 1 <= lo <= hi <= 65535" };
        let (lo, hi) = v.trim().split_once(':').ok_or_else(bad)?;
        let lo: u16 = lo.parse().map_err(|_| bad())?;
        let hi: u16 = hi.parse().map_err(|_| bad())?;
        if lo == 0 || lo > hi {
            return Err(bad());
        }
        Ok(Some((lo, hi)))
    }
}

/// `65536`, `64k`, `1m`, `2g` -> bytes.
pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim().to_ascii_lowercase();
    let (digits, mult) = match s.chars().last()? {
        'k' => (&s[..s.len() - 1], 1u64 << 10),
        'm' => (&s[..s.len() - 1], 1 << 20),
        'g' => (&s[..s.len() - 1], 1 << 30),
        _ => (&s[..], 1),
    };
    digits.parse::<u64>().ok()?.checked_mul(mult)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("65536"), Some(65536));
        assert_eq!(parse_size("64k"), Some(65536));
        assert_eq!(parse_size("1M"), Some(1 << 20));
        assert_eq!(parse_size("x"), None);
        assert_eq!(parse_size(""), None);
    }

    #[test]
    fn registry_names_are_unique_and_prefixed() {
        let mut names: Vec<_> = KNOBS.iter().map(|k| k.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), KNOBS.len());
        assert!(KNOBS.iter().all(|k| k.name.starts_with("FERRY_")));
    }

    #[test]
    fn every_collective_has_its_algorithm_knob() {
        for c in ferry_coll::Collective::ALL {
            let name = ferry_coll::select::env_var(c);
            assert!(KNOBS.iter().any(|k| k.name == name), "{name} is not in the registry");
        }
    }
}
