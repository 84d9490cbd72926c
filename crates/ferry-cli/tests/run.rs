//! `ferry run` end to end: exit statuses, failure messages, output forwarding, PMI.
//!
//! Ranks are shell one-liners, bash scripts that speak raw PMI lines over `$PMI_FD`, or
//! this test binary itself started again as a rank (`ranks_main`), using Ferry's PMI client.
//! Every wait is bounded.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use ferry_core::bootstrap::PmiClient;

const FERRY: &str = env!("CARGO_BIN_EXE_ferry");
/// No test job may take longer than this.
const LIMIT: Duration = Duration::from_secs(30);
/// Set in a rank's environment to make `ranks_main` act as a rank.
const RANK_MODE: &str = "FERRY_CLI_TEST_RANK_MODE";

/// Bash helpers for speaking PMI by hand: `pmi LINE` sends a line and reads the reply into
/// $REPLY; `pmi_send LINE` only sends.
const PMI_SH: &str = r#"
pmi_send() { printf '%s\n' "$1" >&"$PMI_FD"; }
pmi() { pmi_send "$1"; IFS= read -r REPLY <&"$PMI_FD"; }
"#;

struct Finished {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    elapsed: Duration,
}

fn collect(mut child: Child, start: Instant) -> Finished {
    // Either pipe may already have been taken over by the caller.
    fn reader(pipe: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<String> {
        std::thread::spawn(move || {
            let mut s = String::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_string(&mut s);
            }
            s
        })
    }
    let out_reader = reader(child.stdout.take());
    let err_reader = reader(child.stderr.take());
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break Some(status);
        }
        if start.elapsed() > LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let elapsed = start.elapsed();
    let stdout = out_reader.join().expect("stdout reader");
    let stderr = err_reader.join().expect("stderr reader");
    assert!(status.is_some(), "ferry run did not finish within {LIMIT:?}\nstdout:\n{stdout}\nstderr:\n{stderr}");
    Finished { code: status.and_then(|s| s.code()), stdout, stderr, elapsed }
}

fn spawn_ferry(args: &[&str], envs: &[(&str, &str)]) -> Child {
    let mut cmd = Command::new(FERRY);
    cmd.args(args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).env_remove("PMI_FD").env_remove(RANK_MODE);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd.spawn().expect("spawn ferry")
}

fn ferry(args: &[&str]) -> Finished {
    collect(spawn_ferry(args, &[]), Instant::now())
}

/// `ferry run` with this test binary as the ranks, acting in `mode`.
fn ferry_with_rust_ranks(n: u32, mode: &str, extra: &[&str]) -> Finished {
    let me = std::env::current_exe().expect("test binary");
    let me = me.to_str().expect("utf-8 path");
    let n = n.to_string();
    let mut args = vec!["run", "-n", &n];
    args.extend_from_slice(extra);
    args.extend_from_slice(&[me, "--exact", "ranks_main", "--nocapture", "--test-threads=1", "-q"]);
    collect(spawn_ferry(&args, &[(RANK_MODE, mode)]), Instant::now())
}

/// Lines of `text` that contain `marker`, from the marker on (the test harness of each
/// rank prints its own chatter around them).
fn marked<'a>(text: &'a str, marker: &str) -> Vec<&'a str> {
    text.lines().filter_map(|l| l.find(marker).map(|at| &l[at..])).collect()
}

/// What a rank does when this binary runs as one (see `ferry_with_rust_ranks`).
#[test]
fn ranks_main() {
    let Ok(mode) = std::env::var(RANK_MODE) else { return };
    let mut pmi = PmiClient::from_env().expect("PMI handshake").expect("PMI_FD set by ferry run");
    let (rank, size) = (pmi.rank(), pmi.size());
    match mode.as_str() {
        "probe" => {
            pmi.put(&format!("card-{rank}"), &format!("hello-from-{rank}")).unwrap();
            pmi.barrier().unwrap();
            let peer = (rank + 1) % size;
            let got = pmi.get(&format!("card-{peer}")).unwrap().unwrap_or_default();
            let secret = pmi.job_secret().unwrap();
            println!("probe rank {rank} of {size} got {got} secret {}", &secret[..8]);
            pmi.finalize().unwrap();
        }
        "abort" => {
            if rank == 1 {
                pmi.abort(3, "bad input on line 7").unwrap();
                std::process::exit(3);
            }
            pmi.barrier().unwrap(); // never released: rank 1 aborts
            unreachable!("the barrier cannot complete");
        }
        "no-finalize" => {
            if rank == 0 {
                std::process::exit(0);
            }
            std::thread::sleep(LIMIT);
        }
        other => panic!("unknown rank mode {other}"),
    }
}

#[test]
fn all_ranks_exit_zero() {
    let f = ferry(&["run", "-n", "3", "sh", "-c", "echo rank $PMI_RANK of $PMI_SIZE"]);
    assert_eq!(f.code, Some(0), "{}", f.stderr);
    let mut lines: Vec<&str> = f.stdout.lines().collect();
    lines.sort();
    assert_eq!(lines, ["rank 0 of 3", "rank 1 of 3", "rank 2 of 3"]);
    assert_eq!(f.stderr, "");
}

#[test]
fn every_rank_learns_its_rank_and_the_size() {
    let f = ferry(&["run", "-n", "3", "sh", "-c", "echo $FERRY_RANK/$FERRY_SIZE"]);
    assert_eq!(f.code, Some(0), "{}", f.stderr);
    let mut lines: Vec<&str> = f.stdout.lines().collect();
    lines.sort();
    assert_eq!(lines, ["0/3", "1/3", "2/3"]);
}

#[test]
fn np_and_env_are_accepted() {
    let f = ferry(&[
        "run",
        "-np",
        "2",
        "--env",
        "GREETING=hi there",
        "sh",
        "-c",
        "echo \"$GREETING $MPI_LOCALRANKID/$MPI_LOCALNRANKS\"",
    ]);
    assert_eq!(f.code, Some(0), "{}", f.stderr);
    let mut lines: Vec<&str> = f.stdout.lines().collect();
    lines.sort();
    assert_eq!(lines, ["hi there 0/2", "hi there 1/2"]);
}

#[test]
fn a_failing_rank_sets_the_exit_status_and_stops_the_others() {
    let f = ferry(&["run", "-n", "3", "sh", "-c", "if [ $PMI_RANK = 2 ]; then exit 7; fi; exec sleep 20"]);
    assert_eq!(f.code, Some(7));
    assert!(f.stderr.contains("ferry run: rank 2 (pid "), "{}", f.stderr);
    assert!(f.stderr.contains(") exited with code 7; stopping the job"), "{}", f.stderr);
    assert_eq!(f.stderr.lines().count(), 1, "one line about the failure, none about its consequences:\n{}", f.stderr);
    assert!(f.elapsed < Duration::from_secs(5), "{:?}", f.elapsed);
}

#[test]
fn a_rank_killed_by_sigkill_stops_the_job_within_seconds() {
    let f = ferry(&["run", "-n", "4", "sh", "-c", "if [ $PMI_RANK = 1 ]; then kill -KILL $$; fi; exec sleep 20"]);
    assert_eq!(f.code, Some(128 + 9));
    assert!(f.stderr.contains("ferry run: rank 1 (pid "), "{}", f.stderr);
    assert!(f.stderr.contains(") was killed by signal 9 (SIGKILL); stopping the job"), "{}", f.stderr);
    assert!(f.elapsed < Duration::from_secs(5), "{:?}", f.elapsed);
}

#[test]
fn ranks_that_ignore_sigterm_are_killed_after_a_short_grace() {
    let f = ferry(&["run", "-n", "2", "sh", "-c", "if [ $PMI_RANK = 1 ]; then exit 4; fi; trap '' TERM; exec sleep 20"]);
    assert_eq!(f.code, Some(4));
    assert!(f.elapsed < Duration::from_secs(4), "{:?}", f.elapsed);
}

#[test]
fn pmi_abort_ends_the_job_with_its_code_and_message() {
    let f = ferry_with_rust_ranks(3, "abort", &[]);
    assert_eq!(f.code, Some(3), "{}", f.stderr);
    assert!(f.stderr.contains("ferry run: rank 1 called MPI_Abort with error code 3: bad input on line 7\n"), "{}", f.stderr);
    assert!(f.elapsed < Duration::from_secs(10), "{:?}", f.elapsed);
}

#[test]
fn raw_pmi_abort_without_a_message() {
    let script = format!("{PMI_SH} pmi 'cmd=init pmi_version=1 pmi_subversion=1'; pmi_send 'cmd=abort exitcode=9'; sleep 20");
    let f = ferry(&["run", "-n", "1", "bash", "-c", &script]);
    assert_eq!(f.code, Some(9), "{}", f.stderr);
    assert!(f.stderr.contains("ferry run: rank 0 called MPI_Abort with error code 9\n"), "{}", f.stderr);
}

#[test]
fn exiting_zero_after_init_without_finalize_is_a_failure() {
    let f = ferry_with_rust_ranks(2, "no-finalize", &[]);
    assert_eq!(f.code, Some(1), "{}", f.stderr);
    assert!(f.stderr.contains("ferry run: rank 0 (pid "), "{}", f.stderr);
    assert!(f.stderr.contains(") exited without calling MPI_Finalize; stopping the job"), "{}", f.stderr);
}

#[test]
fn a_program_that_never_uses_pmi_may_exit_zero() {
    let f = ferry(&["run", "-n", "2", "true"]);
    assert_eq!(f.code, Some(0), "{}", f.stderr);
}

#[test]
fn a_barrier_that_can_never_complete_ends_the_job() {
    // Rank 0 waits in a barrier; rank 1 finalizes without entering it.
    let script = format!(
        "{PMI_SH} pmi 'cmd=init pmi_version=1 pmi_subversion=1'; \
         if [ $PMI_RANK = 0 ]; then pmi 'cmd=barrier_in'; echo released; else pmi 'cmd=finalize'; fi"
    );
    let f = ferry(&["run", "-n", "2", "bash", "-c", &script]);
    assert_eq!(f.code, Some(1), "{}", f.stderr);
    assert!(f.stderr.contains("ferry run: rank 1 left PMI while rank 0 wait in a PMI barrier"), "{}", f.stderr);
    assert!(!f.stdout.contains("released"));
}

#[test]
fn timeout_kills_a_hung_job() {
    let f = ferry(&["run", "-n", "2", "--timeout", "1", "sleep", "20"]);
    assert_eq!(f.code, Some(124));
    assert!(f.stderr.contains("ferry run: job timed out after 1 s; killing 2 ranks"), "{}", f.stderr);
    assert!(f.elapsed >= Duration::from_secs(1) && f.elapsed < Duration::from_secs(4), "{:?}", f.elapsed);
}

#[test]
fn tag_output_prefixes_every_line_with_its_rank() {
    let f = ferry(&["run", "-n", "2", "--tag-output", "sh", "-c", "echo out; echo err >&2; printf 'no newline'"]);
    assert_eq!(f.code, Some(0), "{}", f.stderr);
    let mut out: Vec<&str> = f.stdout.lines().collect();
    out.sort();
    assert_eq!(out, ["[0] no newline", "[0] out", "[1] no newline", "[1] out"]);
    let mut err: Vec<&str> = f.stderr.lines().collect();
    err.sort();
    assert_eq!(err, ["[0] err", "[1] err"]);
}

#[test]
fn untagged_output_is_passed_through_as_is() {
    let f = ferry(&["run", "-n", "1", "sh", "-c", "printf 'a\\nb'; printf 'c' >&2"]);
    assert_eq!((f.code, f.stdout.as_str(), f.stderr.as_str()), (Some(0), "a\nb", "c"));
    // Long lines stay whole.
    let f = ferry(&["run", "-n", "2", "sh", "-c", "head -c 200000 /dev/zero | tr '\\0' x; echo"]);
    assert_eq!(f.code, Some(0));
    let lines: Vec<usize> = f.stdout.lines().map(str::len).collect();
    assert_eq!(lines, [200000, 200000]);
}

#[test]
fn one_rank_and_eight_ranks_speak_pmi() {
    for n in [1u32, 8] {
        let f = ferry_with_rust_ranks(n, "probe", &["--tag-output"]);
        assert_eq!(f.code, Some(0), "n={n}\n{}\n{}", f.stdout, f.stderr);
        let lines = marked(&f.stdout, "probe rank ");
        assert_eq!(lines.len(), n as usize, "{}", f.stdout);
        let mut secrets = Vec::new();
        for rank in 0..n {
            let peer = (rank + 1) % n;
            let line = lines.iter().find(|l| l.starts_with(&format!("probe rank {rank} of {n} "))).expect("line per rank");
            assert!(line.contains(&format!("got hello-from-{peer} ")), "{line}");
            secrets.push(line.rsplit(' ').next().unwrap().to_owned());
        }
        assert!(secrets.iter().all(|s| *s == secrets[0]), "one job secret: {secrets:?}");
        // --tag-output put each rank's lines under its own tag.
        for rank in 0..n {
            assert!(f.stdout.lines().any(|l| l.starts_with(&format!("[{rank}] ")) && l.contains(&format!("probe rank {rank} "))));
        }
    }
}

#[test]
fn a_garbage_pmi_line_is_answered_and_logged_and_the_job_goes_on() {
    let script = format!(
        "{PMI_SH} pmi 'cmd=init pmi_version=1 pmi_subversion=1'; pmi 'this is not PMI'; echo \"reply: $REPLY\"; \
         pmi 'cmd=put key=x'; echo \"reply: $REPLY\"; pmi 'cmd=finalize'; echo \"reply: $REPLY\""
    );
    let f = ferry(&["run", "-n", "1", "bash", "-c", &script]);
    assert_eq!(f.code, Some(0), "{}", f.stderr);
    assert_eq!(
        f.stdout,
        "reply: cmd=error rc=-1 msg=PMI_line_does_not_start_with_\"cmd=\"\n\
         reply: cmd=put_result rc=-1 msg=cmd=put:_missing_attribute_value\n\
         reply: cmd=finalize_ack\n"
    );
    assert!(
        f.stderr.contains("rank 0 sent a malformed PMI line (PMI line does not start with \"cmd=\"): \"this is not PMI\""),
        "{}",
        f.stderr
    );
}

#[test]
fn the_job_secret_is_not_in_the_environment_or_the_command_line() {
    let script = format!("{PMI_SH} pmi 'cmd=init pmi_version=1 pmi_subversion=1'; pmi 'cmd=get key=ferry-job-secret'; echo \"$REPLY\"; env; cat /proc/$PPID/cmdline | tr '\\0' ' '; echo; pmi 'cmd=finalize'");
    let f = ferry(&["run", "-n", "1", "bash", "-c", &script]);
    assert_eq!(f.code, Some(0), "{}", f.stderr);
    let first = f.stdout.lines().next().unwrap();
    let secret = first.strip_prefix("cmd=get_result rc=0 msg=success value=").expect(first);
    assert_eq!(secret.len(), 64);
    assert_eq!(f.stdout.matches(secret).count(), 1, "the secret appears only in the PMI reply:\n{}", f.stdout);
}

#[test]
fn a_missing_program_is_a_clear_error() {
    let f = ferry(&["run", "-n", "2", "/nonexistent/program"]);
    assert_eq!(f.code, Some(127));
    assert_eq!(f.stderr, "ferry run: /nonexistent/program: command not found\n");
    let f = ferry(&["run", "-n", "2"]);
    assert_eq!(f.code, Some(2));
    assert!(f.stderr.contains("<PROGRAM>"), "{}", f.stderr);
    let f = ferry(&["run", "-n", "0", "true"]);
    assert_eq!(f.code, Some(2));
}

/// Start `ferry run -n 2 sh -c SCRIPT` (SCRIPT must print "ready" once per rank), send the
/// launcher SIGINT `times` times, 200 ms apart, and collect the result.
fn interrupt_job(script: &str, times: usize) -> Finished {
    let start = Instant::now();
    let mut child = spawn_ferry(&["run", "-n", "2", "sh", "-c", script], &[]);
    // Wait (bounded) until both ranks run, so the launcher has its handlers in place.
    let stdout = child.stdout.take().expect("piped");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    for _ in 0..2 {
        assert_eq!(rx.recv_timeout(LIMIT).expect("ranks start"), "ready");
    }
    for i in 0..times {
        if i > 0 {
            std::thread::sleep(Duration::from_millis(200));
        }
        // SAFETY: kill(2) on our own child.
        unsafe {
            libc::kill(child.id() as i32, libc::SIGINT);
        }
    }
    collect(child, start)
}

#[test]
fn sigint_is_forwarded_to_the_ranks() {
    let f = interrupt_job("echo ready; exec sleep 20", 1);
    assert_eq!(f.code, Some(128 + 2), "{}", f.stderr);
    assert_eq!(f.stderr, "ferry run: received SIGINT; forwarding it to 2 ranks\n");
    assert!(f.elapsed < Duration::from_secs(4), "{:?}", f.elapsed);
}

#[test]
fn a_second_sigint_kills_ranks_that_ignore_the_first() {
    let f = interrupt_job("trap '' INT; echo ready; exec sleep 20", 2);
    assert_eq!(f.code, Some(128 + 2), "{}", f.stderr);
    assert!(f.stderr.contains("ferry run: received SIGINT while stopping the job; killing 2 ranks"), "{}", f.stderr);
    assert!(f.elapsed < Duration::from_secs(4), "{:?}", f.elapsed);
}
