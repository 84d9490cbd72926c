//! Why a job ends early: the one line `ferry run` prints about it and the exit status it
//! returns. Only the first failure of a job is reported; what follows from stopping the
//! other ranks is not.

use std::ffi::OsString;
use std::io;

use ferry_core::bootstrap::RankState;

use super::rank::ExitKind;

/// Exit status of a job stopped by `--timeout`, as timeout(1) uses.
pub const EXIT_TIMEOUT: i32 = 124;
/// The program could not be executed (found but not executable), as shells use.
pub const EXIT_CANNOT_EXECUTE: i32 = 126;
/// The program was not found, as shells use.
pub const EXIT_NOT_FOUND: i32 = 127;

#[derive(Debug)]
pub enum Failure {
    /// A rank exited with a non-zero code. `host`: where it ran, in a job across hosts.
    Exited { rank: u32, pid: i32, host: Option<String>, code: i32 },
    /// A rank was killed by a signal.
    Signaled { rank: u32, pid: i32, host: Option<String>, signal: i32, core_dumped: bool },
    /// A rank exited with code 0 after PMI init but without PMI finalize.
    NoFinalize { rank: u32, pid: i32, host: Option<String> },
    /// A rank asked PMI to abort the job (MPI_Abort).
    Aborted { rank: u32, code: i32, message: Option<String> },
    /// Ranks wait in a PMI barrier that one rank will never enter.
    BarrierBroken { gone: u32, waiting: Vec<u32> },
    /// `--timeout` expired with `live` ranks still running.
    TimedOut { seconds: u64, live: usize },
    /// The launcher received SIGINT or SIGTERM and forwarded it to `live` ranks.
    Interrupted { signal: i32, live: usize },
    /// A rank could not be started.
    LaunchFailed { rank: u32, program: OsString, error: io::Error },
    /// The agent of a host went away (killed, or its connection dropped) while ranks of
    /// that host were still running; `why`: what is known of how.
    HostLost { host: String, ranks: Vec<u32>, why: String },
    /// A relay of the job was lost or refused a member.
    Relay(String),
}

/// How a rank's end reads, given where it stood in PMI: `None` for a clean end.
pub fn judge_end(rank: u32, pid: i32, host: Option<String>, kind: ExitKind, state: Option<RankState>) -> Option<Failure> {
    match kind {
        ExitKind::Signaled { signal, core_dumped } => Some(Failure::Signaled { rank, pid, host, signal, core_dumped }),
        ExitKind::Exited(0) if state == Some(RankState::Initialized) => Some(Failure::NoFinalize { rank, pid, host }),
        ExitKind::Exited(0) => None,
        ExitKind::Exited(code) => Some(Failure::Exited { rank, pid, host, code }),
    }
}

/// "pid 12" or "pid 12 on node-3".
fn process(pid: i32, host: &Option<String>) -> String {
    match host {
        Some(h) => format!("pid {pid} on {h}"),
        None => format!("pid {pid}"),
    }
}

impl Failure {
    /// The line printed on stderr (after `ferry run: `).
    pub fn message(&self) -> String {
        match self {
            Failure::Exited { rank, pid, host, code } => {
                format!("rank {rank} ({}) exited with code {code}; stopping the job", process(*pid, host))
            }
            Failure::Signaled { rank, pid, host, signal, core_dumped } => {
                let name = signal_name(*signal).map(|n| format!(" ({n}{})", if *core_dumped { ", core dumped" } else { "" }));
                format!("rank {rank} ({}) was killed by signal {signal}{}; stopping the job", process(*pid, host), name.unwrap_or_default())
            }
            Failure::NoFinalize { rank, pid, host } => {
                format!("rank {rank} ({}) exited without calling MPI_Finalize; stopping the job", process(*pid, host))
            }
            Failure::Relay(why) => format!("{why}; stopping the job"),
            Failure::HostLost { host, ranks, why } => {
                let list: Vec<String> = ranks.iter().map(u32::to_string).collect();
                format!("lost host {host} ({why}) while its {} {} still ran; stopping the job", plural(ranks.len(), "rank"), list.join(","))
            }
            Failure::Aborted { rank, code, message } => match message.as_deref().map(str::trim).filter(|m| !m.is_empty()) {
                Some(m) => format!("rank {rank} called MPI_Abort with error code {code}: {m}"),
                None => format!("rank {rank} called MPI_Abort with error code {code}"),
            },
            Failure::BarrierBroken { gone, waiting } => {
                let list: Vec<String> = waiting.iter().map(u32::to_string).collect();
                let ranks = if waiting.len() == 1 { "rank" } else { "ranks" };
                format!(
                    "rank {gone} left PMI while {ranks} {} wait in a PMI barrier it will never enter; stopping the job",
                    list.join(",")
                )
            }
            Failure::TimedOut { seconds, live } => {
                format!("job timed out after {seconds} s; killing {live} {}", plural(*live, "rank"))
            }
            Failure::Interrupted { signal, live } => {
                let name = signal_name(*signal).unwrap_or("a signal");
                format!("received {name}; forwarding it to {live} {}", plural(*live, "rank"))
            }
            Failure::LaunchFailed { rank, program, error } => {
                let program = program.to_string_lossy();
                match error.kind() {
                    io::ErrorKind::NotFound => format!("{program}: command not found"),
                    _ => format!("cannot start rank {rank} ({program}): {error}"),
                }
            }
        }
    }

    /// A rank's death in a job with recovery enabled (`--enable-recovery`): the rank it
    /// names, when this failure is one the other ranks may survive.
    pub fn survivable_rank(&self) -> Option<u32> {
        match self {
            Failure::Exited { rank, .. } | Failure::Signaled { rank, .. } | Failure::NoFinalize { rank, .. } => Some(*rank),
            _ => None,
        }
    }

    /// The line printed for a death the job survives (recovery enabled).
    pub fn survived_message(&self) -> String {
        let m = self.message();
        let cause = m.strip_suffix("; stopping the job").unwrap_or(&m);
        format!("{cause}; recovery is enabled: the other ranks go on")
    }

    /// The job's exit status.
    pub fn exit_code(&self) -> i32 {
        match self {
            Failure::Exited { code, .. } => *code,
            Failure::Signaled { signal, .. } | Failure::Interrupted { signal, .. } => 128 + signal,
            Failure::NoFinalize { .. } | Failure::BarrierBroken { .. } | Failure::HostLost { .. } | Failure::Relay(_) => 1,
            // An exit status has 8 bits; an abort code that would read as success becomes 1.
            Failure::Aborted { code, .. } => match code & 0xff {
                0 => 1,
                c => c,
            },
            Failure::TimedOut { .. } => EXIT_TIMEOUT,
            Failure::LaunchFailed { error, .. } => match error.kind() {
                io::ErrorKind::NotFound => EXIT_NOT_FOUND,
                io::ErrorKind::PermissionDenied => EXIT_CANNOT_EXECUTE,
                _ => 1,
            },
        }
    }
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        word.to_owned()
    } else {
        format!("{word}s")
    }
}

/// The conventional name of a signal number, for messages.
pub fn signal_name(signal: i32) -> Option<&'static str> {
    Some(match signal {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        libc::SIGSYS => "SIGSYS",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_and_codes() {
        let f = Failure::Signaled { rank: 1, pid: 1234, host: None, signal: 9, core_dumped: false };
        assert_eq!(f.message(), "rank 1 (pid 1234) was killed by signal 9 (SIGKILL); stopping the job");
        assert_eq!(f.exit_code(), 137);
        let f = Failure::Signaled { rank: 0, pid: 7, host: Some("n2".into()), signal: 11, core_dumped: true };
        assert_eq!(f.message(), "rank 0 (pid 7 on n2) was killed by signal 11 (SIGSEGV, core dumped); stopping the job");
        let f = Failure::Aborted { rank: 2, code: 3, message: Some("bad input".into()) };
        assert_eq!(f.message(), "rank 2 called MPI_Abort with error code 3: bad input");
        assert_eq!(f.exit_code(), 3);
        assert_eq!(Failure::Aborted { rank: 2, code: 256, message: None }.exit_code(), 1);
        assert_eq!(Failure::Aborted { rank: 2, code: 0, message: None }.message(), "rank 2 called MPI_Abort with error code 0");
        let f = Failure::NoFinalize { rank: 0, pid: 5, host: None };
        assert_eq!(f.message(), "rank 0 (pid 5) exited without calling MPI_Finalize; stopping the job");
        assert_eq!(f.exit_code(), 1);
        assert_eq!(Failure::Exited { rank: 3, pid: 9, host: None, code: 42 }.exit_code(), 42);
        assert_eq!(Failure::TimedOut { seconds: 5, live: 4 }.message(), "job timed out after 5 s; killing 4 ranks");
        assert_eq!(Failure::TimedOut { seconds: 5, live: 4 }.exit_code(), 124);
        assert_eq!(Failure::Interrupted { signal: 2, live: 1 }.message(), "received SIGINT; forwarding it to 1 rank");
        assert_eq!(Failure::Interrupted { signal: 15, live: 1 }.exit_code(), 143);
        let f = Failure::BarrierBroken { gone: 1, waiting: vec![0, 2] };
        assert_eq!(f.message(), "rank 1 left PMI while ranks 0,2 wait in a PMI barrier it will never enter; stopping the job");
        let f = Failure::LaunchFailed { rank: 0, program: "nope".into(), error: io::ErrorKind::NotFound.into() };
        assert_eq!((f.message().as_str(), f.exit_code()), ("nope: command not found", 127));
        let f = Failure::LaunchFailed { rank: 0, program: "x".into(), error: io::ErrorKind::PermissionDenied.into() };
        assert_eq!(f.exit_code(), 126);
        let f = Failure::HostLost { host: "c1-n2".into(), ranks: vec![2, 3], why: "its agent was killed by signal 9".into() };
        assert_eq!(f.message(), "lost host c1-n2 (its agent was killed by signal 9) while its ranks 2,3 still ran; stopping the job");
        assert_eq!(f.exit_code(), 1);
    }
}
