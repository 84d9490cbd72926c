//! `ferry proxy` end to end, as shipped: the key file, refusals visible in the default log,
//! loopback members refused (only the library's own tests may relay to loopback), the job
//! summary line, and a clean exit on SIGTERM. Every wait is bounded.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use ferry_core::transport::relay::wire::hex;
use ferry_core::transport::relay::{relay_key, ClientStep, ControlClient, ControlRefusal, DenyReason, RelayClient, RelayError};

const FERRY: &str = env!("CARGO_BIN_EXE_ferry");
const T: Duration = Duration::from_secs(10);

fn tmpdir(tag: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("ferry-proxy-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The proxy's stderr, line by line.
struct Proxy {
    child: Child,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Proxy {
    fn wait_line(&mut self, needle: &str) -> String {
        let end = Instant::now() + T;
        if let Some(l) = self.seen.iter().find(|l| l.contains(needle)) {
            return l.clone();
        }
        while let Ok(l) = self.lines.recv_timeout(end.saturating_duration_since(Instant::now())) {
            self.seen.push(l.clone());
            if l.contains(needle) {
                return l;
            }
        }
        panic!("no line with {needle:?} in:\n{}", self.seen.join("\n"));
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(key: &std::path::Path) -> (Proxy, SocketAddr) {
    let mut child = Command::new(FERRY)
        .args(["proxy", "--listen", "127.0.0.1:0", "--members", "127.0.0.0/8", "--key-file"])
        .arg(key)
        .env_remove("FERRY_LOG")
        .stderr(Stdio::piped())
        .spawn()
        .expect("start ferry proxy");
    let err = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for l in BufReader::new(err).lines().map_while(Result::ok) {
            if tx.send(l).is_err() {
                return;
            }
        }
    });
    let mut p = Proxy { child, lines: rx, seen: Vec::new() };
    let l = p.wait_line("proxy listening on ");
    let addr = l.split("listening on ").nth(1).and_then(|r| r.split(' ').next()).and_then(|a| a.parse().ok()).expect("address in the start line");
    (p, addr)
}

#[test]
fn make_key_writes_a_private_key_once() {
    let d = tmpdir("mk");
    let k = d.join("site.key");
    let st = Command::new(FERRY).args(["proxy", "--make-key"]).arg(&k).status().unwrap();
    assert!(st.success());
    assert_eq!(std::fs::metadata(&k).unwrap().permissions().mode() & 0o777, 0o600);
    assert_eq!(std::fs::read_to_string(&k).unwrap().trim().len(), 64);
    let again = Command::new(FERRY).args(["proxy", "--make-key"]).arg(&k).status().unwrap();
    assert_eq!(again.code(), Some(2), "never overwrites a key");
    // A key others may read is refused.
    std::fs::set_permissions(&k, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = Command::new(FERRY).args(["proxy", "--listen", "127.0.0.1:0", "--key-file"]).arg(&k).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("must be 0600 or 0400"));
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn the_shipped_proxy_logs_refusals_by_default_and_stops_cleanly() {
    let d = tmpdir("run");
    let k = d.join("site.key");
    assert!(Command::new(FERRY).args(["proxy", "--make-key"]).arg(&k).status().unwrap().success());
    let key = ferry_core::transport::relay::read_site_key(&k).unwrap();
    let (mut p, addr) = start(&k);

    match ControlClient::connect(addr, b"a wrong site key, long enough to be one", T) {
        Err(RelayError::Refused(ControlRefusal::BadProof)) => {}
        other => panic!("{other:?}"),
    }
    p.wait_line("denied control connection from 127.0.0.1");

    let job = [0x42; 16];
    let mut ctl = ControlClient::connect(addr, &key, T).expect("control");
    ctl.register_job(job, relay_key(b"secret"), 2).expect("register");
    p.wait_line(&format!("job {} registered by 127.0.0.1", hex(&job)));
    // Even with --members 127.0.0.0/8, the shipped proxy never connects to loopback.
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let SocketAddr::V4(ta) = l.local_addr().unwrap() else { panic!() };
    assert!(matches!(ctl.add_member(1, ta), Err(RelayError::Refused(ControlRefusal::AddressNotAllowed))));
    p.wait_line("(loopback address)");

    // A rank asking for an unregistered member.
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(T)).unwrap();
    let mut c = RelayClient::new(job, relay_key(b"secret"), 0, 1, [5; 32]);
    let mut buf = [0u8; 128];
    let verdict = loop {
        let n = s.read(&mut buf).unwrap();
        assert!(n > 0, "closed without a verdict");
        match c.on_bytes(&buf[..n]) {
            Ok(ClientStep::Send(b)) => s.write_all(&b).unwrap(),
            Ok(ClientStep::NeedMore) => {}
            other => break other,
        }
    };
    assert!(matches!(verdict, Err(RelayError::Denied(DenyReason::TargetNotRegistered))), "{verdict:?}");
    p.wait_line("denied relay request from 127.0.0.1");

    drop(ctl);
    p.wait_line(&format!("job {} ended: 0 pairs, 0 bytes relayed", hex(&job)));

    // SAFETY: signalling our own child process by its pid.
    assert_eq!(unsafe { libc::kill(p.child.id() as libc::pid_t, libc::SIGTERM) }, 0);
    let end = Instant::now() + T;
    let status = loop {
        if let Some(st) = p.child.try_wait().unwrap() {
            break st;
        }
        assert!(Instant::now() < end, "no exit after SIGTERM");
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(status.code(), Some(0));
    let _ = std::fs::remove_dir_all(d);
}
