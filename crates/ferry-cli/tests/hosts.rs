//! `ferry run --host/--hostfile` end to end on this machine: the agents are started by a
//! launcher template that stays local (`env FERRY_TEST_HOST={host}`), so every "host" is
//! this one under another name. Placement, the environment of the ranks, PMI through the
//! agents, output, exit statuses and the failures a job across hosts adds (a host lost, a
//! bad hostfile). The emulated clusters (tests/clusters.sh) run the same code across
//! network namespaces. Every wait is bounded.

use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const FERRY: &str = env!("CARGO_BIN_EXE_ferry");
const LIMIT: Duration = Duration::from_secs(30);
const LOCAL: &str = "env FERRY_TEST_HOST={host}";

struct Finished {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    elapsed: Duration,
}

fn spawn(args: &[&str]) -> Child {
    Command::new(FERRY)
        .args(args)
        .env("FERRY_IF", "lo")
        .env_remove("PMI_FD")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn ferry")
}

fn finish(mut child: Child) -> Finished {
    let start = Instant::now();
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let o = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let e = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break Some(s);
        }
        if start.elapsed() > LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let (stdout, stderr) = (o.join().expect("stdout reader"), e.join().expect("stderr reader"));
    assert!(status.is_some(), "ferry run did not finish within {LIMIT:?}\nstdout:\n{stdout}\nstderr:\n{stderr}");
    Finished { code: status.and_then(|s| s.code()), stdout, stderr, elapsed: start.elapsed() }
}

fn ferry(args: &[&str]) -> Finished {
    finish(spawn(args))
}

fn sorted_lines(s: &str) -> Vec<&str> {
    let mut v: Vec<&str> = s.lines().collect();
    v.sort();
    v
}

#[test]
fn ranks_fill_the_slots_of_each_host_in_turn() {
    let f = ferry(&[
        "run", "--host", "a:2,b", "--launcher", LOCAL, "-n", "4", "sh", "-c",
        "echo $PMI_RANK/$PMI_SIZE on $FERRY_HOST_ID front $FERRY_FRONT_NODE via $FERRY_TEST_HOST local $MPI_LOCALRANKID/$MPI_LOCALNRANKS",
    ]);
    assert_eq!(f.code, Some(0), "{}", f.stderr);
    assert_eq!(
        sorted_lines(&f.stdout),
        [
            "0/4 on a front a via a local 0/3",
            "1/4 on a front a via a local 1/3",
            "2/4 on b front b via b local 0/1",
            "3/4 on a front a via a local 2/3",
        ]
    );
}

#[test]
fn public_first_gives_private_hosts_the_higher_ranks() {
    let dir = tempdir();
    let hosts = format!("{dir}/hosts");
    std::fs::write(&hosts, "c1 front=gw\np1\n").unwrap();
    let f = ferry(&["run", "--hostfile", &hosts, "--launcher", LOCAL, "--rank-policy", "public-first", "-n", "2", "sh", "-c", "echo $PMI_RANK $FERRY_HOST_ID $FERRY_FRONT_NODE"]);
    assert_eq!(f.code, Some(0), "{}", f.stderr);
    assert_eq!(sorted_lines(&f.stdout), ["0 p1 p1", "1 c1 gw"]);
}

#[test]
fn pmi_and_tagged_output_travel_through_the_agents() {
    // Raw PMI-1 over $PMI_FD: put, barrier, get the next rank's value.
    let script = r#"
pmi() { printf '%s\n' "$1" >&"$PMI_FD"; IFS= read -r REPLY <&"$PMI_FD"; }
pmi "cmd=init pmi_version=1 pmi_subversion=1"
pmi "cmd=get_my_kvsname"; kvs=${REPLY##*kvsname=}
pmi "cmd=put kvsname=$kvs key=k$PMI_RANK value=from-$FERRY_HOST_ID"
pmi "cmd=barrier_in"
next=$(( (PMI_RANK + 1) % PMI_SIZE ))
pmi "cmd=get kvsname=$kvs key=k$next"; echo "got ${REPLY##*value=}"
printf 'partial'
pmi "cmd=finalize"
"#;
    let f = ferry(&["run", "--host", "x,y,z", "--launcher", LOCAL, "--tag-output", "-n", "3", "bash", "-c", script]);
    assert_eq!(f.code, Some(0), "{}", f.stderr);
    let lines = sorted_lines(&f.stdout);
    assert_eq!(lines, ["[0] got from-y", "[0] partial", "[1] got from-z", "[1] partial", "[2] got from-x", "[2] partial"]);
}

#[test]
fn a_failing_rank_names_its_host_and_sets_the_exit_status() {
    let f = ferry(&["run", "--host", "a,b", "--launcher", LOCAL, "-n", "2", "sh", "-c", "[ $PMI_RANK = 1 ] && exit 3; sleep 20"]);
    assert_eq!(f.code, Some(3), "{}", f.stderr);
    assert!(f.stderr.contains("rank 1 (pid ") && f.stderr.contains(" on b) exited with code 3; stopping the job"), "{}", f.stderr);
    assert!(f.elapsed < Duration::from_secs(10), "took {:?}", f.elapsed);
}

#[test]
fn a_killed_rank_is_reported_by_signal() {
    let f = ferry(&["run", "--host", "a,b", "--launcher", LOCAL, "-n", "2", "sh", "-c", "[ $PMI_RANK = 0 ] && kill -9 $$; sleep 20"]);
    assert_eq!(f.code, Some(137), "{}", f.stderr);
    assert!(f.stderr.contains(" on a) was killed by signal 9 (SIGKILL)"), "{}", f.stderr);
}

#[test]
fn a_lost_agent_ends_the_job() {
    // The rank kills its own agent (its parent): the host is lost, its ranks with it.
    let f = ferry(&["run", "--host", "a,b", "--launcher", LOCAL, "-n", "2", "sh", "-c", "[ $PMI_RANK = 1 ] && kill -9 $PPID; sleep 20"]);
    assert_eq!(f.code, Some(1), "{}", f.stderr);
    assert!(f.stderr.contains("lost host b (its agent was killed by signal 9 (SIGKILL)) while its rank 1 still ran"), "{}", f.stderr);
    assert!(f.elapsed < Duration::from_secs(10), "took {:?}", f.elapsed);
}

#[test]
fn a_launcher_that_cannot_start_an_agent_is_reported() {
    let f = ferry(&["run", "--host", "a", "--launcher", "false {host}", "-n", "1", "true"]);
    assert_eq!(f.code, Some(1), "{}", f.stderr);
    assert!(f.stderr.contains("lost host a (its agent's launcher exited with code 1) while its rank 0 still ran"), "{}", f.stderr);
}

#[test]
fn a_missing_program_on_a_host_is_127() {
    let f = ferry(&["run", "--host", "a", "--launcher", LOCAL, "-n", "1", "/nonexistent/prog"]);
    assert_eq!(f.code, Some(127), "{}", f.stderr);
    assert!(f.stderr.contains("/nonexistent/prog: command not found"), "{}", f.stderr);
}

#[test]
fn bad_hosts_are_refused_before_anything_starts() {
    let dir = tempdir();
    let hosts = format!("{dir}/hosts");
    std::fs::write(&hosts, "a\nb slots=zero\n").unwrap();
    let f = ferry(&["run", "--hostfile", &hosts, "-n", "1", "true"]);
    assert_eq!(f.code, Some(2), "{}", f.stderr);
    assert!(f.stderr.contains("line 2: slots=zero"), "{}", f.stderr);
    let f = ferry(&["run", "--host", "a", "--launcher", "ssh", "-n", "1", "true"]);
    assert_eq!(f.code, Some(1), "{}", f.stderr);
    assert!(f.stderr.contains("does not say where the host goes"), "{}", f.stderr);
    let f = ferry(&["run", "--show-paths", "-n", "1", "true"]);
    assert_eq!(f.code, Some(2), "{}", f.stderr);
    // Relays listed without the site key to register the job with them.
    std::fs::write(&hosts, "a front=gw\nproxy 127.0.0.1:9 front=gw\n").unwrap();
    let f = ferry(&["run", "--hostfile", &hosts, "-n", "1", "true"]);
    assert_eq!(f.code, Some(1), "{}", f.stderr);
    assert!(f.stderr.contains("--proxy-key FILE"), "{}", f.stderr);
}

/// A fresh directory under the system's temporary one.
fn tempdir() -> String {
    let dir = std::env::temp_dir().join(format!("ferry-hosts-test-{}-{:?}", std::process::id(), std::thread::current().id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.to_string_lossy().into_owned()
}
