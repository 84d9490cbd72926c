//! One rank of a job as the launcher sees it: its process (in a process group of its own),
//! the launcher's end of its PMI socket, and its output pipes.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, ErrorKind, Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

use super::output::{OutputStream, Sink};

/// Inherited variables that would send an MPICH-style PMI client somewhere other than the
/// socket this launcher hands down, or a rank to the port of a singleton that started us
/// (FERRY_PARENT_PORT, read once by the launcher).
const FOREIGN_PMI_VARS: &[&str] = &["PMI_PORT", "PMI_ID", "PMI_SPAWNED", "PMI_HOSTNAME", "FERRY_PARENT_PORT"];

/// Cap on replies queued for a rank that does not read them.
const MAX_QUEUED_REPLIES: usize = 1 << 20;

/// How a rank's process ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitKind {
    Exited(i32),
    Signaled { signal: i32, core_dumped: bool },
}

/// What every rank of a job is started with.
pub struct LaunchSpec<'a> {
    pub program: &'a OsStr,
    pub args: &'a [OsString],
    pub size: u32,
    pub env: &'a [(String, String)],
    pub tag_output: bool,
    /// Rank 0 reads the launcher's stdin (when that is not a terminal); an agent, whose
    /// stdin is its line to the head, gives every rank /dev/null.
    pub share_stdin: bool,
    /// The working directory; `None`: the launcher's own.
    pub cwd: Option<&'a std::path::Path>,
}

pub struct Rank {
    pub index: u32,
    pub pid: libc::pid_t,
    /// The launcher's end of the PMI socket, non-blocking; `None` once closed.
    pub pmi: Option<UnixStream>,
    /// Replies not yet written to `pmi`.
    pub pmi_queue: Vec<u8>,
    pub stdout: Option<OutputStream>,
    pub stderr: Option<OutputStream>,
    /// Set once the process has been reaped.
    pub exit: Option<ExitKind>,
}

impl Rank {
    /// Start rank `index`: PMI over an inherited socketpair end whose number is in `PMI_FD`
    /// (with `PMI_RANK`, `PMI_SIZE`, and `MPI_LOCALNRANKS`/`MPI_LOCALRANKID` as Hydra sets
    /// them; `FERRY_RANK`/`FERRY_SIZE` say the same under our own names, for programs that
    /// are not MPI, such as an MCAPI program choosing its node id), stdout and stderr through pipes, stdin from ours for rank 0 when it is not a
    /// terminal (else, and for the other ranks, /dev/null), in a new process group.
    /// `local`: the rank's index among the ranks of its host, and their number.
    pub fn spawn(spec: &LaunchSpec<'_>, index: u32, local: (u32, u32)) -> io::Result<Rank> {
        let (ours, theirs) = UnixStream::pair()?;
        let child_fd = theirs.as_raw_fd();
        let mut cmd = Command::new(spec.program);
        cmd.args(spec.args);
        if let Some(dir) = spec.cwd {
            cmd.current_dir(dir);
        }
        for var in FOREIGN_PMI_VARS {
            cmd.env_remove(var);
        }
        for (name, value) in spec.env {
            cmd.env(name, value);
        }
        cmd.env("PMI_FD", child_fd.to_string())
            .env("PMI_RANK", index.to_string())
            .env("PMI_SIZE", spec.size.to_string())
            .env("MPI_LOCALNRANKS", local.1.to_string())
            .env("MPI_LOCALRANKID", local.0.to_string())
            .env("FERRY_RANK", index.to_string())
            .env("FERRY_SIZE", spec.size.to_string());
        // SAFETY: isatty only inspects descriptor 0.
        let stdin_is_terminal = unsafe { libc::isatty(0) } == 1;
        cmd.stdin(if spec.share_stdin && index == 0 && !stdin_is_terminal { Stdio::inherit() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Its own group: a terminal's ^C reaches the ranks only through us, and stopping a
            // rank also stops whatever it started.
            .process_group(0);
        // SAFETY: getpid is always safe.
        let launcher = unsafe { libc::getpid() };
        // SAFETY: runs in the child between fork and exec and only calls fcntl, prctl,
        // getppid and _exit, which are async-signal-safe. The socket end was created
        // close-on-exec (so no other rank inherits it); this child alone keeps it across exec.
        unsafe {
            cmd.pre_exec(move || {
                // A rank must not outlive its launcher (killed, or dead on a closed pipe):
                // the kernel kills it when the launcher dies; if that already happened, stop.
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) != 0 || libc::getppid() != launcher {
                    libc::_exit(127);
                }
                let flags = libc::fcntl(child_fd, libc::F_GETFD);
                if flags < 0 || libc::fcntl(child_fd, libc::F_SETFD, flags & !libc::FD_CLOEXEC) < 0 {
                    return Err(io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let mut child = cmd.spawn()?;
        drop(theirs);
        ours.set_nonblocking(true)?;
        let tag = spec.tag_output.then(|| format!("[{index}] "));
        let stdout = child.stdout.take().map(|p| OutputStream::new(nonblocking_file(p.into()), Sink::Stdout, tag.clone()));
        let stderr = child.stderr.take().map(|p| OutputStream::new(nonblocking_file(p.into()), Sink::Stderr, tag));
        // The process is reaped with waitpid by pid; `child` is only a handle and dropping it
        // neither waits nor kills.
        let pid = child.id() as libc::pid_t;
        Ok(Rank { index, pid, pmi: Some(ours), pmi_queue: Vec::new(), stdout, stderr, exit: None })
    }

    pub fn is_live(&self) -> bool {
        self.exit.is_none()
    }

    /// Reap the process if it has ended.
    pub fn try_reap(&mut self) -> Option<ExitKind> {
        if self.exit.is_some() {
            return None;
        }
        self.exit = reap(self.pid);
        self.exit
    }

    /// Send `signal` to the rank's process group. Only while the rank is unreaped: its
    /// group id is then still its own pid and cannot have been reused.
    pub fn signal(&self, signal: libc::c_int) {
        if self.is_live() {
            // SAFETY: kill(2) with a negative pid signals our child's process group.
            unsafe {
                libc::kill(-self.pid, signal);
            }
        }
    }

    /// Read what the PMI socket holds: the bytes, or `None` at its end (then closed).
    /// With `all`, read until the socket is empty rather than once.
    pub fn read_pmi(&mut self, all: bool) -> Option<Vec<u8>> {
        let stream = self.pmi.as_mut()?;
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            match stream.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    got.extend_from_slice(&buf[..n]);
                    if !all {
                        return Some(got);
                    }
                    continue;
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Some(got),
                Err(_) => break,
            }
        }
        self.pmi = None;
        self.pmi_queue.clear();
        if got.is_empty() {
            None
        } else {
            Some(got)
        }
    }

    /// The PMI socket as poll(2) should watch it: for requests, and for room while replies
    /// wait to be written.
    pub fn pmi_pollfd(&self) -> Option<libc::pollfd> {
        let events = if self.pmi_queue.is_empty() { libc::POLLIN } else { libc::POLLIN | libc::POLLOUT };
        self.pmi.as_ref().map(|p| libc::pollfd { fd: p.as_raw_fd(), events, revents: 0 })
    }

    /// Queue `bytes` for the rank and write as much as the socket takes now.
    pub fn send_pmi(&mut self, bytes: &[u8]) {
        if self.pmi.is_none() {
            return;
        }
        if self.pmi_queue.len() + bytes.len() > MAX_QUEUED_REPLIES {
            ferry_core::warn!("run", "rank {} does not read its PMI replies; closing its PMI channel", self.index);
            self.pmi = None;
            self.pmi_queue.clear();
            return;
        }
        self.pmi_queue.extend_from_slice(bytes);
        self.flush_pmi();
    }

    /// Write queued replies until the socket would block.
    pub fn flush_pmi(&mut self) {
        let Some(stream) = self.pmi.as_mut() else { return };
        // A broken socket: the rank closed its end; what it did not read no longer matters.
        let _ = write_queued(stream, &mut self.pmi_queue);
    }
}

/// Reap child `pid` if it has ended, and say how.
pub(super) fn reap(pid: libc::pid_t) -> Option<ExitKind> {
    let mut status = 0;
    // SAFETY: waitpid on our own child, writing into a local.
    if unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) } != pid {
        return None;
    }
    Some(if libc::WIFSIGNALED(status) {
        ExitKind::Signaled { signal: libc::WTERMSIG(status), core_dumped: libc::WCOREDUMP(status) }
    } else {
        ExitKind::Exited(libc::WEXITSTATUS(status))
    })
}

/// Write `queue` to the non-blocking `w` until it is empty or `w` would block; on an error
/// (the other end is gone) the queue is dropped and the error returned.
pub(super) fn write_queued(w: &mut impl Write, queue: &mut Vec<u8>) -> io::Result<()> {
    while !queue.is_empty() {
        match w.write(queue) {
            Ok(n) => {
                queue.drain(..n);
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(()),
            Err(e) => {
                queue.clear();
                return Err(e);
            }
        }
    }
    Ok(())
}

pub(super) fn nonblocking_file(fd: OwnedFd) -> File {
    // SAFETY: fcntl on a descriptor we own. Failure leaves it blocking, which poll-driven
    // single reads tolerate.
    unsafe {
        let flags = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
        if flags >= 0 {
            libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK);
        }
    }
    File::from(fd)
}
