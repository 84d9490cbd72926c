//! Runs: the order they go in (implementations alternate run by run, so a drift of the
//! machine hits all of them alike), starting one job with a time limit, and reading the
//! ROW lines it printed.

use std::io::Read;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use std::os::unix::process::{CommandExt, ExitStatusExt};

/// One run of one program under one implementation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Job {
    /// Index into the plan's programs.
    pub program: usize,
    pub ranks: u32,
    /// 1-based.
    pub run: u32,
    /// Index into the implementations.
    pub implementation: usize,
}

/// The jobs in the order they run: for each program and rank count, run 1 of every
/// implementation, then run 2 of every implementation, and so on. `ranks[p]` lists the rank
/// counts of program `p`.
pub fn schedule(ranks: &[Vec<u32>], runs: u32, implementations: usize) -> Vec<Job> {
    let mut jobs = Vec::new();
    for (program, counts) in ranks.iter().enumerate() {
        for &n in counts {
            for run in 1..=runs {
                for implementation in 0..implementations {
                    jobs.push(Job { program, ranks: n, run, implementation });
                }
            }
        }
    }
    jobs
}

/// What became of a job's process.
#[derive(Debug)]
pub struct Outcome {
    pub status: Option<ExitStatus>,
    pub timed_out: bool,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
}

impl Outcome {
    pub fn succeeded(&self) -> bool {
        !self.timed_out && self.status.map(|s| s.success()).unwrap_or(false)
    }

    /// Why it failed, in a few words.
    pub fn failure(&self) -> String {
        if self.timed_out {
            return format!("timed out after {:.0} s", self.elapsed.as_secs_f64());
        }
        match self.status {
            Some(s) if s.success() => "exited 0".into(),
            Some(s) => match (s.code(), s.signal()) {
                (Some(c), _) => format!("exit status {c}"),
                (None, Some(sig)) => format!("killed by signal {sig}"),
                _ => format!("{s}"),
            },
            None => "no exit status".into(),
        }
    }
}

/// Grace between SIGTERM and SIGKILL when a job runs out of time.
const KILL_GRACE: Duration = Duration::from_secs(3);

/// Runs `cmd` in a process group of its own with stdout and stderr captured; after
/// `timeout` the whole group gets SIGTERM (launchers pass it on to their ranks) and, if it
/// is still there `KILL_GRACE` later, SIGKILL.
pub fn execute(mut cmd: Command, timeout: Duration) -> std::io::Result<Outcome> {
    let start = Instant::now();
    let mut child = cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0).spawn()?;
    let pid = child.id() as libc::pid_t;
    let (done_tx, done_rx) = mpsc::channel();
    let stdout = Capture::start(child.stdout.take().map(|p| Box::new(p) as Box<dyn Read + Send>), done_tx.clone());
    let stderr = Capture::start(child.stderr.take().map(|p| Box::new(p) as Box<dyn Read + Send>), done_tx);
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(child.wait());
    });
    let kill = |signal| {
        // SAFETY: kill has no memory effects; the group is the one this job leads.
        unsafe { libc::kill(-pid, signal) };
    };
    let mut timed_out = false;
    let status = match rx.recv_timeout(timeout) {
        Ok(status) => status?,
        Err(_) => {
            timed_out = true;
            kill(libc::SIGTERM);
            match rx.recv_timeout(KILL_GRACE) {
                Ok(status) => status?,
                Err(_) => {
                    kill(libc::SIGKILL);
                    rx.recv().map_err(|_| std::io::Error::other("the waiting thread is gone"))??
                }
            }
        }
    };
    let elapsed = start.elapsed();
    // A process that left the group could keep the pipes open: the job is over, so the
    // wait for the rest of its output is short.
    let deadline = Instant::now() + KILL_GRACE;
    for _ in 0..2 {
        if done_rx.recv_timeout(deadline.saturating_duration_since(Instant::now())).is_err() {
            break;
        }
    }
    let (stdout, stderr) = (stdout.text(), stderr.text());
    Ok(Outcome { status: Some(status), timed_out, stdout, stderr, elapsed })
}

/// Output of one pipe, collected by a thread as it comes, so that what arrived can be
/// read even if the pipe never closes.
struct Capture(Arc<Mutex<Vec<u8>>>);

impl Capture {
    fn start(pipe: Option<Box<dyn Read + Send>>, done: mpsc::Sender<()>) -> Capture {
        let text = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&text);
        thread::spawn(move || {
            if let Some(mut p) = pipe {
                let mut chunk = [0u8; 8192];
                loop {
                    match p.read(&mut chunk) {
                        Ok(0) => break,
                        Ok(n) => sink.lock().expect("no panic while holding it").extend_from_slice(&chunk[..n]),
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                        Err(_) => break,
                    }
                }
            }
            let _ = done.send(());
        });
        Capture(text)
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().expect("no panic while holding it")).into_owned()
    }
}

/// One ROW line.
#[derive(Clone, Debug, PartialEq)]
pub struct RowLine {
    pub benchmark: String,
    pub ranks: u32,
    pub size: u64,
    pub value: f64,
}

/// Parses `ROW <benchmark> <ranks> <size> <value>`.
pub fn parse_row_line(line: &str) -> Result<RowLine, String> {
    let f: Vec<&str> = line.split_whitespace().collect();
    if f.len() != 5 || f[0] != "ROW" {
        return Err(format!("expected \"ROW <benchmark> <ranks> <size> <value>\", got {line:?}"));
    }
    let ranks = f[2].parse::<u32>().map_err(|_| format!("ranks {:?} is not a whole number in {line:?}", f[2]))?;
    let size = f[3].parse::<u64>().map_err(|_| format!("size {:?} is not a whole number in {line:?}", f[3]))?;
    let value = f[4].parse::<f64>().map_err(|_| format!("value {:?} is not a number in {line:?}", f[4]))?;
    if !value.is_finite() || value < 0.0 {
        return Err(format!("value {value} is not a finite number >= 0 in {line:?}"));
    }
    Ok(RowLine { benchmark: f[1].to_owned(), ranks, size, value })
}

/// The ROW lines of a run's output, checked: each well formed, for the job's rank count,
/// with a name of `expected`, and at least one. Lines that are not ROW lines are left
/// alone (the programs' comments, and whatever a launcher prints).
pub fn read_rows(stdout: &str, ranks: u32, expected: &[String]) -> Result<Vec<RowLine>, String> {
    let mut rows = Vec::new();
    for line in stdout.lines() {
        if !line.starts_with("ROW") {
            continue;
        }
        let row = parse_row_line(line)?;
        if row.ranks != ranks {
            return Err(format!("a run on {ranks} ranks printed a row for {}: {line:?}", row.ranks));
        }
        if !expected.contains(&row.benchmark) {
            return Err(format!("unexpected benchmark {:?} (expected one of {})", row.benchmark, expected.join(", ")));
        }
        rows.push(row);
    }
    if rows.is_empty() {
        return Err("it printed no ROW line".into());
    }
    Ok(rows)
}

/// The last `n` lines of `text`, indented for a report.
pub fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let start = lines.len().saturating_sub(n);
    lines[start..].iter().map(|l| format!("    {l}")).collect::<Vec<_>>().join("\n")
}

/// The `# library: ...` line of a run's output, if it has one.
pub fn library(stdout: &str) -> Option<String> {
    stdout.lines().find_map(|l| l.strip_prefix("# library:")).map(|l| l.trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn implementations_alternate_run_by_run() {
        let jobs = schedule(&[vec![2], vec![2, 4]], 2, 3);
        let order: Vec<(usize, u32, u32, usize)> =
            jobs.iter().map(|j| (j.program, j.ranks, j.run, j.implementation)).collect();
        assert_eq!(
            order,
            [
                (0, 2, 1, 0), (0, 2, 1, 1), (0, 2, 1, 2),
                (0, 2, 2, 0), (0, 2, 2, 1), (0, 2, 2, 2),
                (1, 2, 1, 0), (1, 2, 1, 1), (1, 2, 1, 2),
                (1, 2, 2, 0), (1, 2, 2, 1), (1, 2, 2, 2),
                (1, 4, 1, 0), (1, 4, 1, 1), (1, 4, 1, 2),
                (1, 4, 2, 0), (1, 4, 2, 1), (1, 4, 2, 2),
            ]
        );
        assert!(schedule(&[vec![2]], 0, 3).is_empty());
        assert!(schedule(&[vec![]], 5, 3).is_empty());
    }

    #[test]
    fn row_lines_parse() {
        assert_eq!(
            parse_row_line("ROW bcast.avg 4 1024 12.500"),
            Ok(RowLine { benchmark: "bcast.avg".into(), ranks: 4, size: 1024, value: 12.5 })
        );
        assert_eq!(parse_row_line("ROW  latency\t2 0 0.42 ").unwrap().size, 0);
        for bad in [
            "ROW latency 2 8",
            "ROW latency 2 8 1.0 extra",
            "ROWS latency 2 8 1.0",
            "ROW latency two 8 1.0",
            "ROW latency 2 -8 1.0",
            "ROW latency 2 8 fast",
            "ROW latency 2 8 nan",
            "ROW latency 2 8 inf",
            "ROW latency 2 8 -1",
        ] {
            assert!(parse_row_line(bad).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn a_runs_rows_are_checked_against_the_job() {
        let expected = vec!["latency".to_owned()];
        let out = "# bench/latency\n# library: Ferry 0.1\nROW latency 2 1 0.5\nsome launcher noise\nROW latency 2 2 0.6\n";
        assert_eq!(read_rows(out, 2, &expected).unwrap().len(), 2);
        assert!(read_rows(out, 4, &expected).unwrap_err().contains("on 4 ranks"));
        assert!(read_rows("ROW bandwidth 2 1 5.0\n", 2, &expected).unwrap_err().contains("unexpected"));
        assert!(read_rows("# nothing\n", 2, &expected).unwrap_err().contains("no ROW"));
        assert!(read_rows("ROW latency 2 1\n", 2, &expected).is_err());
        assert_eq!(library(out).as_deref(), Some("Ferry 0.1"));
        assert_eq!(library("ROW latency 2 1 1\n"), None);
    }

    #[test]
    fn tails_keep_the_last_lines() {
        assert_eq!(tail("a\nb\n\nc\nd\n", 2), "    c\n    d");
        assert_eq!(tail("", 3), "");
    }

    #[test]
    fn a_job_past_its_time_is_stopped() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "echo started; sleep 30"]);
        let o = execute(cmd, Duration::from_millis(200)).unwrap();
        assert!(o.timed_out && !o.succeeded());
        assert_eq!(o.stdout, "started\n");
        assert!(o.elapsed < Duration::from_secs(10), "{:?}", o.elapsed);
        assert!(o.failure().starts_with("timed out"));

        let mut cmd = Command::new("sh");
        cmd.args(["-c", "echo out; echo err >&2; exit 3"]);
        let o = execute(cmd, Duration::from_secs(30)).unwrap();
        assert!(!o.timed_out && !o.succeeded());
        assert_eq!((o.stdout.as_str(), o.stderr.as_str(), o.failure().as_str()), ("out\n", "err\n", "exit status 3"));
    }
}
