//! MCAPI nodes started by hand, without a launcher: processes that find each other through a
//! same-host rendezvous directory or a hosts file, started in a shuffled order with delays,
//! each exchanging one message with every other.
//!
//! The nodes are this test binary started again with `FERRY_TEST_NODE` set, which makes
//! `node_main` act as one. Every wait is bounded and every child is killed if the test fails.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use ferry_core::bootstrap::{Locate, NodeMode};
use ferry_core::engine::matching::Pattern;
use ferry_core::Job;

/// Set in a child's environment: the node it is.
const NODE: &str = "FERRY_TEST_NODE";
/// Set in a child's environment: the other nodes it exchanges with, comma-separated, or
/// `hold` to start and wait to be killed.
const PEERS: &str = "FERRY_TEST_PEERS";
const DOMAIN: u32 = 4;
const LIMIT: Duration = Duration::from_secs(30);

/// What a node does when this binary runs as one.
#[test]
fn node_main() {
    let Ok(node) = std::env::var(NODE) else { return };
    let node: u32 = node.parse().expect("node id");
    let peers = std::env::var(PEERS).expect("peers");
    let (mut job, mut engine) = match Job::start_node(DOMAIN, node) {
        Ok(j) => j,
        Err(e) => {
            println!("@@ node {node} failed: {e}");
            std::process::exit(3);
        }
    };
    assert_eq!((job.node(), job.domain()), (node, DOMAIN));
    println!("@@ node {node} started as rank {} ({:?})", job.rank(), job.mode());
    if peers == "hold" {
        std::thread::sleep(LIMIT);
        std::process::exit(0);
    }
    let peers: Vec<u32> = peers.split(',').map(|p| p.parse().expect("peer node")).collect();
    let deadline = Instant::now() + LIMIT;
    let mut ranks = Vec::new();
    for &p in &peers {
        let rank = loop {
            match job.locate(&mut engine, p) {
                Locate::At(r) => break r,
                Locate::NotYet => {
                    assert!(Instant::now() < deadline, "node {p} never appeared");
                    engine.progress(Some(Duration::from_millis(5))).expect("progress");
                }
                Locate::Never => panic!("node {p} will never run"),
            }
        };
        println!("@@ node {node} found node {p} at rank {rank}");
        ranks.push(rank);
    }
    assert_eq!(job.locate(&mut engine, node), Locate::At(job.rank()));
    let msg = format!("from node {node}");
    let mut bufs: Vec<Vec<u8>> = peers.iter().map(|_| vec![0u8; 64]).collect();
    let recvs: Vec<u64> = ranks.iter().zip(bufs.iter_mut()).map(|(&r, b)| unsafe { engine.irecv(Pattern { ctx: 0, src: Some(r), tag: Some(1) }, b.as_mut_ptr(), b.len()) }).collect();
    let sends: Vec<u64> = ranks.iter().filter_map(|&r| unsafe { engine.isend(r, 0, 1, msg.as_ptr(), msg.len(), false) }).collect();
    for r in sends.iter().chain(&recvs) {
        engine.wait_until(|e| e.is_done(*r)).expect("engine");
    }
    for s in sends {
        engine.take(s).unwrap().expect("sent");
    }
    for ((r, b), p) in recvs.into_iter().zip(&bufs).zip(&peers) {
        let st = engine.take(r).unwrap().expect("received");
        println!("@@ node {node} got {:?} from node {p}", std::str::from_utf8(&b[..st.bytes]).unwrap());
    }
    assert!(engine.take_lost_peers().is_empty());
    engine.finalize().expect("finalize");
}

/// Children killed when the test ends, however it ends.
struct Nodes(Vec<(u32, Child)>);

impl Drop for Nodes {
    fn drop(&mut self) {
        for (_, c) in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn spawn(node: u32, peers: &str, env: &[(&str, &Path)]) -> Child {
    let me = std::env::current_exe().expect("test binary");
    let mut cmd = Command::new(me);
    cmd.args(["--exact", "node_main", "--nocapture", "--test-threads=1", "-q"])
        .env(NODE, node.to_string())
        .env(PEERS, peers)
        .env_remove("PMI_FD")
        .env_remove("FERRY_MCAPI_HOSTS")
        .env_remove("FERRY_MCAPI_RENDEZVOUS")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.spawn().expect("spawn a node")
}

/// Wait for every child (within [`LIMIT`]); each one's exit code and output.
fn finish(nodes: &mut Nodes) -> Vec<(u32, Option<i32>, String)> {
    let start = Instant::now();
    let mut out = Vec::new();
    for (node, c) in &mut nodes.0 {
        let status = loop {
            if let Some(s) = c.try_wait().expect("wait") {
                break Some(s);
            }
            if start.elapsed() > LIMIT {
                break None;
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let _ = c.kill();
        let mut text = String::new();
        c.stdout.take().expect("piped").read_to_string(&mut text).unwrap();
        c.stderr.take().expect("piped").read_to_string(&mut text).unwrap();
        out.push((*node, status.and_then(|s| s.code()), text));
    }
    out
}

/// Start `order` (node ids) one after another, `gap` apart, each exchanging with all others.
fn run_nodes(order: &[u32], gap: Duration, env: &[(&str, &Path)]) -> Vec<(u32, Option<i32>, String)> {
    let mut nodes = Nodes(Vec::new());
    for &n in order {
        let peers: Vec<String> = order.iter().filter(|&&p| p != n).map(|p| p.to_string()).collect();
        nodes.0.push((n, spawn(n, &peers.join(","), env)));
        std::thread::sleep(gap);
    }
    finish(&mut nodes)
}

fn check_all_met(results: &[(u32, Option<i32>, String)], mode: NodeMode) {
    let all: Vec<u32> = results.iter().map(|r| r.0).collect();
    for (node, code, text) in results {
        assert_eq!(*code, Some(0), "node {node}:\n{text}");
        assert!(text.contains(&format!("@@ node {node} started as rank")) && text.contains(&format!("({mode:?})")), "node {node}:\n{text}");
        for p in all.iter().filter(|p| *p != node) {
            assert!(text.contains(&format!("@@ node {node} got \"from node {p}\" from node {p}")), "node {node} from {p}:\n{text}");
        }
    }
}

fn scratch_dir(what: &str) -> PathBuf {
    let mut n = [0u8; 8];
    getrandom::getrandom(&mut n).unwrap();
    let d = std::env::temp_dir().join(format!("ferry-{what}-{}-{:016x}", std::process::id(), u64::from_le_bytes(n)));
    std::fs::create_dir(&d).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o700)).unwrap();
    d
}

#[test]
fn nodes_started_by_hand_meet_through_the_rendezvous() {
    let dir = scratch_dir("rendezvous");
    let results = run_nodes(&[9, 3, 5], Duration::from_millis(150), &[("FERRY_MCAPI_RENDEZVOUS", &dir)]);
    check_all_met(&results, NodeMode::Rendezvous);
    // Slots in order of arrival: the first node is rank 0.
    assert!(results[0].2.contains("@@ node 9 started as rank 0"), "{}", results[0].2);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_same_node_twice_in_a_rendezvous_is_refused() {
    let dir = scratch_dir("rendezvous-dup");
    let mut nodes = Nodes(vec![(7, spawn(7, "hold", &[("FERRY_MCAPI_RENDEZVOUS", &dir)]))]);
    // Wait until the first one holds its slot.
    let mut first = BufReader::new(nodes.0[0].1.stdout.take().expect("piped"));
    let mut line = String::new();
    while !line.contains("@@ node 7 started") {
        line.clear();
        assert!(first.read_line(&mut line).unwrap() > 0, "the first node 7 did not start");
    }
    nodes.0.push((7, spawn(7, "hold", &[("FERRY_MCAPI_RENDEZVOUS", &dir)])));
    let (_, c) = nodes.0.last_mut().unwrap();
    let start = Instant::now();
    while c.try_wait().unwrap().is_none() {
        assert!(start.elapsed() < LIMIT, "the second node 7 did not stop");
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut text = String::new();
    c.stdout.take().unwrap().read_to_string(&mut text).unwrap();
    assert_eq!(c.wait().unwrap().code(), Some(3), "{text}");
    assert!(text.contains("node 7 of domain 4 is claimed by two processes: rank 0 and rank 1"), "{text}");
    drop(nodes);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn nodes_listed_in_a_hosts_file_meet_in_any_order() {
    let dir = scratch_dir("hosts");
    // Free ports now; a node that starts late leaves its peers retrying meanwhile.
    let ports: Vec<u16> = (0..3).map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap()).collect::<Vec<_>>().iter().map(|l| l.local_addr().unwrap().port()).collect();
    let secret = "5e".repeat(32);
    let text = format!("# three nodes on loopback\n10 127.0.0.1:{}\n20 localhost:{}\n30 127.0.0.1:{}\nsecret {secret}\n", ports[0], ports[1], ports[2]);
    let file = dir.join("hosts");
    std::fs::write(&file, text).unwrap();
    let results = run_nodes(&[30, 10, 20], Duration::from_millis(300), &[("FERRY_MCAPI_HOSTS", &file)]);
    check_all_met(&results, NodeMode::HostsFile);
    // Ranks follow the file, not the order of start.
    assert!(results[0].2.contains("@@ node 30 started as rank 2"), "{}", results[0].2);
    assert!(results[1].2.contains("@@ node 10 found node 20 at rank 1"), "{}", results[1].2);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_node_missing_from_the_hosts_file_is_told_so() {
    let dir = scratch_dir("hosts-missing");
    let file = dir.join("hosts");
    std::fs::write(&file, format!("1 127.0.0.1:1\nsecret {}\n", "ab".repeat(32))).unwrap();
    let mut nodes = Nodes(vec![(2, spawn(2, "1", &[("FERRY_MCAPI_HOSTS", &file)]))]);
    let r = finish(&mut nodes);
    assert_eq!(r[0].1, Some(3), "{}", r[0].2);
    assert!(r[0].2.contains("FERRY_MCAPI_HOSTS") && r[0].2.contains("node 2 is not listed"), "{}", r[0].2);
    std::fs::remove_dir_all(&dir).unwrap();
}
