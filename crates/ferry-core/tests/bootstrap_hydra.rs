//! The PMI client under a launcher that is not ours: MPICH's Hydra (`mpiexec.hydra`), as
//! Debian ships it. Skipped, with a notice, where Hydra is not installed.
//!
//! The ranks are this test binary itself, started again by Hydra with a filter that runs
//! only `bootstrap_hydra_rank`, which then acts as `examples/pmi_probe.rs`.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[allow(dead_code)]
#[path = "../examples/pmi_probe.rs"]
mod pmi_probe;

const HYDRA: &str = "/usr/bin/mpiexec.hydra";
/// Set in the ranks' environment so `bootstrap_hydra_rank` knows it is a rank.
const RANK_MODE: &str = "FERRY_TEST_PMI_PROBE_RANK";

/// Run `cmd` to completion within `limit`, returning (exit code, stdout, stderr).
fn run_bounded(mut cmd: Command, limit: Duration) -> (Option<i32>, String, String) {
    let mut child = cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn");
    let mut out = child.stdout.take().expect("piped");
    let mut err = child.stderr.take().expect("piped");
    let out_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break Some(status);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = out_reader.join().expect("stdout reader");
    let err = err_reader.join().expect("stderr reader");
    assert!(status.is_some(), "timed out after {limit:?}\nstdout:\n{out}\nstderr:\n{err}");
    (status.and_then(|s| s.code()), out, err)
}

#[test]
fn bootstrap_hydra_rank() {
    if std::env::var_os(RANK_MODE).is_none() {
        return; // only meaningful when Hydra starts this binary as a rank
    }
    if let Err(e) = pmi_probe::probe() {
        panic!("pmi_probe: {e}");
    }
}

#[test]
fn bootstrap_under_hydra() {
    if !Path::new(HYDRA).exists() {
        eprintln!("skipping bootstrap_under_hydra: {HYDRA} is not installed");
        return;
    }
    let me = std::env::current_exe().expect("test binary path");
    let mut cmd = Command::new(HYDRA);
    cmd.args(["-n", "4"])
        .arg(&me)
        .args(["--exact", "bootstrap_hydra_rank", "--nocapture", "--test-threads=1"])
        .env(RANK_MODE, "1");
    let (code, out, err) = run_bounded(cmd, Duration::from_secs(60));
    assert_eq!(code, Some(0), "mpiexec.hydra failed\nstdout:\n{out}\nstderr:\n{err}");
    // The harness of each rank prints its own chatter, which may land before a probe line.
    let lines: Vec<&str> = out.lines().filter_map(|l| l.find("pmi_probe: rank ").map(|at| &l[at..])).collect();
    assert_eq!(lines.len(), 4, "one probe line per rank expected\n{out}\n{err}");
    let mut digests = Vec::new();
    for rank in 0..4 {
        let line = lines
            .iter()
            .find(|l| l.starts_with(&format!("pmi_probe: rank {rank} of 4 ")))
            .unwrap_or_else(|| panic!("no line from rank {rank}\n{out}"));
        let peer = (rank + 1) % 4;
        assert!(line.contains(&format!("got hello-from-{peer} from rank {peer}")), "{line}");
        // The longest value a put line of at most 1024 bytes carries under Hydra's kvsname.
        let vallen: usize = line.split("-byte value intact").next().and_then(|l| l.rsplit(' ').next()).and_then(|n| n.parse().ok()).unwrap_or(0);
        assert!((900..1000).contains(&vallen), "{line}");
        assert!(line.contains(" appnum 0 "), "{line}");
        digests.push(line.rsplit(' ').next().expect("digest").to_owned());
    }
    // Hydra does not seed the secret: rank 0 made one and every rank got the same.
    assert!(digests.iter().all(|d| *d == digests[0] && d.len() == 16), "{digests:?}");
}
