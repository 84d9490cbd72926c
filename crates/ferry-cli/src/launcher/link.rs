//! The head's line to the agent of one host: the launcher template's process (`ssh host
//! ferry agent`, `ip netns exec host ferry agent`) with its stdin (orders, written without
//! blocking from a queue), stdout (reports, split into frames) and stderr (what ssh or the
//! agent say, forwarded as `[host] ` lines).

use std::fs::File;
use std::io::{self, ErrorKind, Read};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};

use ferry_wire::launch::{FrameReader, FromAgent, LaunchError, ToAgent};

use super::output::{OutputStream, Sink};
use super::rank::{nonblocking_file, reap, write_queued, ExitKind};

/// The command that starts the agent on `host`: the template's words with `{host}`
/// replaced, then `ferry agent`. The template must name the host somewhere.
pub fn agent_command(template: &str, host: &str, ferry: &Path) -> Result<Vec<String>, String> {
    if !template.contains("{host}") {
        return Err(format!("--launcher {template:?} does not say where the host goes ({{host}})"));
    }
    let mut words: Vec<String> = template.split_whitespace().map(|w| w.replace("{host}", host)).collect();
    words.push(ferry.to_string_lossy().into_owned());
    words.push("agent".into());
    Ok(words)
}

pub struct AgentLink {
    pub host: String,
    pub pid: libc::pid_t,
    stdin: Option<File>,
    queue: Vec<u8>,
    stdout: Option<File>,
    reader: FrameReader,
    pub stderr: Option<OutputStream>,
    pub exit: Option<ExitKind>,
}

impl AgentLink {
    pub fn spawn(words: &[String], host: &str) -> io::Result<AgentLink> {
        let (program, args) = words.split_first().ok_or_else(|| io::Error::new(ErrorKind::InvalidInput, "empty launcher"))?;
        let mut cmd = Command::new(program);
        cmd.args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0);
        // SAFETY: getpid is always safe.
        let head = unsafe { libc::getpid() };
        // SAFETY: between fork and exec only prctl, getppid and _exit, which are
        // async-signal-safe. The agent (or ssh) must not outlive the head.
        unsafe {
            cmd.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) != 0 || libc::getppid() != head {
                    libc::_exit(127);
                }
                Ok(())
            });
        }
        let mut child = cmd.spawn()?;
        let stdin = child.stdin.take().map(|p| nonblocking_file(p.into()));
        let stdout = child.stdout.take().map(|p| nonblocking_file(p.into()));
        let stderr = child.stderr.take().map(|p| OutputStream::new(nonblocking_file(p.into()), Sink::Stderr, Some(format!("[{host}] "))));
        let pid = child.id() as libc::pid_t;
        Ok(AgentLink { host: host.to_owned(), pid, stdin, queue: Vec::new(), stdout, reader: FrameReader::new(), stderr, exit: None })
    }

    /// The agent's stdin, when orders wait to be written to it.
    pub fn queued_orders_fd(&self) -> Option<i32> {
        self.stdin.as_ref().filter(|_| !self.queue.is_empty()).map(File::as_raw_fd)
    }

    pub fn stdout_fd(&self) -> Option<i32> {
        self.stdout.as_ref().map(File::as_raw_fd)
    }

    /// Whether the agent's reports have ended and its process has been reaped.
    pub fn is_done(&self) -> bool {
        self.stdout.is_none() && self.exit.is_some()
    }

    pub fn send(&mut self, msg: &ToAgent) {
        if self.stdin.is_some() {
            self.queue.extend_from_slice(&msg.encode());
            self.flush();
        }
    }

    /// Write queued orders until the pipe would block.
    pub fn flush(&mut self) {
        let Some(pipe) = self.stdin.as_mut() else { return };
        if write_queued(pipe, &mut self.queue).is_err() {
            // The agent is gone; its stdout's end says so too.
            self.stdin = None;
        }
    }

    /// Close the agent's stdin: it stops its ranks and leaves.
    pub fn hang_up(&mut self) {
        self.stdin = None;
        self.queue.clear();
    }

    /// Read the agent's reports: the whole messages that arrived, `Ok(None)` at the end of
    /// its stdout, an error when it sent something malformed.
    pub fn read(&mut self) -> Result<Option<Vec<FromAgent>>, LaunchError> {
        let Some(pipe) = self.stdout.as_mut() else { return Ok(None) };
        let mut buf = [0u8; 64 * 1024];
        match pipe.read(&mut buf) {
            Ok(0) => {
                self.stdout = None;
                return Ok(None);
            }
            Ok(n) => self.reader.push(&buf[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => return Ok(Some(Vec::new())),
            Err(_) => {
                self.stdout = None;
                return Ok(None);
            }
        }
        let mut msgs = Vec::new();
        while let Some(m) = self.reader.next_from_agent() {
            msgs.push(m?);
        }
        Ok(Some(msgs))
    }

    /// Stop listening to the agent (it broke the protocol, or it is being abandoned).
    pub fn close(&mut self) {
        self.stdout = None;
        self.hang_up();
    }

    pub fn try_reap(&mut self) -> Option<ExitKind> {
        if self.exit.is_some() {
            return None;
        }
        self.exit = reap(self.pid);
        self.exit
    }

    /// Kill the launcher command's process group (the agent itself where the template
    /// execs it; ssh otherwise, whose end the remote agent sees as its stdin closing).
    pub fn kill(&self) {
        if self.exit.is_none() {
            // SAFETY: kill(2) on our unreaped child's process group.
            unsafe {
                libc::kill(-self.pid, libc::SIGKILL);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_words() {
        let ferry = Path::new("/opt/ferry/bin/ferry");
        assert_eq!(agent_command("ssh {host}", "n1", ferry).unwrap(), ["ssh", "n1", "/opt/ferry/bin/ferry", "agent"]);
        assert_eq!(
            agent_command("ip netns exec {host} env FERRY_X={host}", "fy-c1-n1", ferry).unwrap(),
            ["ip", "netns", "exec", "fy-c1-n1", "env", "FERRY_X=fy-c1-n1", "/opt/ferry/bin/ferry", "agent"]
        );
        assert!(agent_command("ssh", "n1", ferry).unwrap_err().contains("{host}"));
    }
}
