//! `ferry proxy`: the relay on a private cluster's front node. Ranks of other clusters reach
//! this cluster's private ranks through it, for jobs a launcher registered with the site key.
//! The event loop is `ferry_core::transport::relay::proxy`; this is its command line: options,
//! the default member networks, the key file, signals.

mod net;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::Args;
use ferry_core::log::Level;
use ferry_core::transport::relay::policy::{AddrPolicy, Cidr};
use ferry_core::transport::relay::proxy::{self as relay_proxy, Config, Proxy};
use ferry_core::transport::relay::registry::Quotas;
use ferry_core::transport::relay::{read_site_key, write_site_key};

/// What `ferry proxy` is told.
#[derive(Args, Debug)]
#[command(after_help = "\
Log lines (stderr; shown by default, FERRY_LOG=warn keeps only refusals):
  proxy listening on ADDR (member networks: CIDR ...)
  job HEX registered by ADDR: N ranks        job HEX rank R at ADDR
  pair opened: job HEX rank A -> rank B at ADDR (client ADDR)
  pair closed: job HEX rank A -> rank B: N bytes to target, M bytes to client (WHY)
  job HEX ended: P pairs, B bytes relayed
  denied ...: REASON        throttled N connections from IP: WHY

Exit status: 0 after SIGINT or SIGTERM (or --make-key done); 1 when serving failed; 2 for bad
options, an unusable key file or no member network.")]
pub struct ProxyArgs {
    /// Address and port to listen on (ranks of other clusters and the launcher connect here).
    #[arg(long, value_name = "ADDR:PORT", required_unless_present = "make_key")]
    listen: Option<SocketAddr>,
    /// The site key (hex text or raw bytes, at least 32 bytes, mode 0600 or 0400); launchers
    /// prove it to register jobs.
    #[arg(long, value_name = "FILE", required_unless_present = "make_key")]
    key_file: Option<PathBuf>,
    /// Write a new site key (32 random bytes as hex, mode 0600) to FILE and exit.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["listen", "key_file"])]
    make_key: Option<PathBuf>,
    /// Networks the proxy may connect into (repeatable). Default: the networks of this
    /// host's RFC 1918 private IPv4 interfaces. Loopback, link-local, multicast, broadcast
    /// and this host's own addresses are never connected to, whatever is given.
    #[arg(long = "members", value_name = "CIDR", value_parser = parse_cidr)]
    members: Vec<Cidr>,
    /// Connections that have not yet sent their first frame, in all (the oldest is dropped
    /// for a new one beyond this).
    #[arg(long, value_name = "N", default_value_t = relay_proxy::DEFAULT_MAX_PENDING, value_parser = clap::value_parser!(usize))]
    max_pending: usize,
    /// ... and from one source address (beyond this, new ones are refused at once).
    #[arg(long, value_name = "N", default_value_t = relay_proxy::DEFAULT_MAX_PENDING_PER_SOURCE)]
    max_pending_per_source: usize,
    /// Relayed connections per job.
    #[arg(long, value_name = "N", default_value_t = Quotas::default().job_connections)]
    job_connections: u32,
    /// Relayed connections per rank (those it asked for and those to it).
    #[arg(long, value_name = "N", default_value_t = Quotas::default().rank_connections)]
    rank_connections: u32,
    /// Bytes buffered per direction of a relayed pair; when full, the proxy stops reading
    /// that side until the other drains.
    #[arg(long, value_name = "BYTES", default_value_t = relay_proxy::DEFAULT_PAIR_BUFFER)]
    pair_buffer: usize,
    /// Relay by copying through the proxy's memory, never with splice(2) through a kernel
    /// pipe (the pipes cost descriptors, and need --pair-buffer within pipe-max-size).
    #[arg(long)]
    copy: bool,
}

fn parse_cidr(s: &str) -> Result<Cidr, String> {
    Cidr::parse(s).map_err(|e| e.to_string())
}

/// Every pair holds two sockets, and four pipe descriptors while it splices (up to half the
/// limit, see `Config::pipe_fds`): take the soft limit on open files up to the hard one, as
/// a server that may hold thousands of pairs should. Best effort: the limit stays otherwise.
fn raise_fd_limit() {
    // SAFETY: getrlimit/setrlimit with a local struct; all-zero is a valid rlimit.
    unsafe {
        let mut lim: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 && lim.rlim_cur < lim.rlim_max {
            lim.rlim_cur = lim.rlim_max;
            let _ = libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        }
    }
}

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}

/// SIGINT and SIGTERM set [`STOP`]; the proxy's wait is interrupted (no SA_RESTART) and it
/// looks at the flag at once.
fn catch_signals() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: a zeroed sigaction with a handler that only stores to an atomic, which is
        // async-signal-safe; the pointers are valid for the call.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

pub fn run(args: ProxyArgs) -> i32 {
    ferry_core::log::set_prefix("ferry proxy".into());
    if let Some(path) = args.make_key {
        return match write_site_key(&path) {
            Ok(()) => {
                eprintln!("ferry proxy: wrote a new site key to {}", path.display());
                0
            }
            Err(e) => {
                eprintln!("ferry proxy: {e}");
                2
            }
        };
    }
    let (Some(listen), Some(key_file)) = (args.listen, args.key_file) else {
        eprintln!("ferry proxy: --listen and --key-file are required");
        return 2;
    };
    let site_key = match read_site_key(&key_file) {
        Ok(k) => k,
        Err(e) => {
            eprintln!("ferry proxy: {e}");
            return 2;
        }
    };
    let ifs = net::interface_networks();
    let members = if args.members.is_empty() { net::private_networks(&ifs) } else { args.members };
    if members.is_empty() {
        eprintln!("ferry proxy: no RFC 1918 private interface on this host: give --members CIDR");
        return 2;
    }
    let own = ifs.iter().map(|(ip, _)| *ip).collect();
    raise_fd_limit();
    let mut cfg = Config::new(listen, site_key, AddrPolicy::new(members.clone(), own));
    cfg.max_pending = args.max_pending.max(1);
    cfg.max_pending_per_source = args.max_pending_per_source.max(1);
    cfg.quotas.job_connections = args.job_connections;
    cfg.quotas.rank_connections = args.rank_connections;
    cfg.pair_buffer = args.pair_buffer.max(4096);
    cfg.splice = !args.copy;
    // Jobs, pairs and denials are what an operator runs the proxy to see.
    ferry_core::log::set_default_level(Level::Info);
    catch_signals();
    let mut proxy = match Proxy::bind(cfg) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("ferry proxy: cannot listen on {listen}: {e}");
            return 2;
        }
    };
    let nets: Vec<String> = members.iter().map(Cidr::to_string).collect();
    ferry_core::info!("proxy", "proxy listening on {} (member networks: {})", proxy.local_addr(), nets.join(" "));
    match proxy.run(&STOP) {
        Ok(()) => {
            ferry_core::info!("proxy", "stopped");
            0
        }
        Err(e) => {
            ferry_core::error!("proxy", "{e}");
            1
        }
    }
}
