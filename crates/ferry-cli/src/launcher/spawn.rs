//! Jobs that ranks start (`MPI_Comm_spawn`), and the name service, on one host. A spawned
//! job is a job like the first: its own PMI server, job name and job secret, its ranks
//! started, watched and judged as the first's; it learns from its key-value space the port
//! its parents accept on. Its processes count against the run's universe size.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use ferry_core::bootstrap::{generate_job_secret, Action, NameRequest, PmiServer, Response, ResponseKind, SpawnCommand, SpawnRequest, PARENT_PORT_KEY};

use super::rank::{LaunchSpec, Rank};
use super::{Job, SubJob};

impl Job {
    /// Start the children `request` asks for on behalf of rank `rank` of job `parent`, and
    /// say how it went: the children's job name, or why none was started (then no child
    /// runs).
    pub(super) fn spawn_children(&mut self, parent: usize, rank: u32, request: &SpawnRequest) -> Action {
        let refuse = |job: &Job, why: String| {
            ferry_core::info!("run", "refused a spawn of job {parent} rank {rank}: {why}");
            job.jobs[parent].server.answer(rank, Response::refusal(ResponseKind::SpawnResult, &why))
        };
        match self.start_children(request) {
            Ok(kvsname) => self.jobs[parent].server.answer(rank, Response::SpawnResult { kvsname }),
            Err(why) => refuse(self, why),
        }
    }

    fn start_children(&mut self, request: &SpawnRequest) -> Result<String, String> {
        if self.stopping {
            return Err("the run is stopping".into());
        }
        let total = request.nprocs();
        if total == 0 || request.commands.iter().any(|c| c.nprocs == 0) {
            return Err("every command must start at least one process".into());
        }
        let live = self.ranks.iter().filter(|r| r.is_live()).count() as u32;
        if u64::from(live) + u64::from(total) > u64::from(self.universe) {
            return Err(format!(
                "{total} more processes would exceed the universe size {} ({live} run already; see ferry run --universe-size)",
                self.universe
            ));
        }
        let programs = request
            .commands
            .iter()
            .enumerate()
            .map(|(k, c)| find_program(c).map_err(|why| format!("command {k} ({}): {why}", String::from_utf8_lossy(&c.program))))
            .collect::<Result<Vec<_>, _>>()?;
        let index = self.jobs.len();
        let kvsname = format!("kvs_{}_{index}", std::process::id());
        let secret = generate_job_secret().map_err(|e| e.to_string())?;
        let mut server = PmiServer::new(total, &kvsname, &secret).map_err(|e| e.to_string())?;
        server.set_universe_size(self.universe);
        let port = std::str::from_utf8(&request.port).map_err(|_| "the port name is not text".to_string())?;
        server.seed(PARENT_PORT_KEY, port).map_err(|e| format!("the port name: {e}"))?;
        self.jobs.push(SubJob { server, first: self.ranks.len(), cancelled: false });
        let mut n = 0u32;
        for (command, program) in request.commands.iter().zip(programs) {
            let args: Vec<OsString> = command.args.iter().map(|a| OsStr::from_bytes(a).to_owned()).collect();
            let spec = LaunchSpec {
                program: program.as_os_str(),
                args: &args,
                size: total,
                env: &self.env,
                tag_output: self.tag_output,
                share_stdin: false,
                cwd: Some(Path::new(OsStr::from_bytes(&command.wdir))),
            };
            for _ in 0..command.nprocs {
                match Rank::spawn(&spec, n, (n, total)) {
                    Ok(r) => {
                        self.ranks.push(r);
                        self.job_of.push(index);
                    }
                    Err(e) => {
                        // Those already started go: a spawn starts all of its processes or none.
                        self.jobs[index].cancelled = true;
                        let first = self.jobs[index].first;
                        self.ranks[first..].iter().for_each(|r| r.signal(libc::SIGKILL));
                        return Err(format!("cannot start {}: {e}", program.display()));
                    }
                }
                n += 1;
            }
        }
        ferry_core::debug!("run", "spawned job {index} ({kvsname}): {total} processes");
        Ok(kvsname)
    }
}

/// Where `command`'s program is: a path with a slash from the working directory, a bare
/// name from the `path` directory and then `PATH`; it must be an executable file.
fn find_program(command: &SpawnCommand) -> Result<PathBuf, String> {
    let wdir = Path::new(OsStr::from_bytes(&command.wdir));
    if !wdir.is_dir() {
        return Err(format!("the working directory {} does not exist", wdir.display()));
    }
    let program = Path::new(OsStr::from_bytes(&command.program));
    let candidates: Vec<PathBuf> = if command.program.contains(&b'/') {
        vec![wdir.join(program)]
    } else {
        let mut dirs: Vec<PathBuf> = Vec::new();
        if !command.path.is_empty() {
            dirs.push(PathBuf::from(OsStr::from_bytes(&command.path)));
        }
        if let Some(path) = std::env::var_os("PATH") {
            dirs.extend(std::env::split_paths(&path));
        }
        dirs.into_iter().map(|d| d.join(program)).collect()
    };
    let mut found_unexecutable = false;
    for c in candidates {
        if c.is_file() {
            if is_executable(&c) {
                return Ok(c);
            }
            found_unexecutable = true;
        }
    }
    Err(if found_unexecutable { "not executable".into() } else { "not found".into() })
}

fn is_executable(path: &Path) -> bool {
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else { return false };
    // SAFETY: access(2) reads the NUL-terminated path only.
    unsafe { libc::access(c.as_ptr(), libc::X_OK) == 0 }
}

/// Serve one request to the name service `names` from rank `rank` of `server`'s job.
pub(super) fn serve_name(names: &mut BTreeMap<String, String>, server: &PmiServer, rank: u32, request: NameRequest) -> Action {
    let response = match request {
        NameRequest::Publish { service, port } => {
            if names.contains_key(&service) {
                Response::refusal(ResponseKind::PublishResult, &format!("service {service} is already published"))
            } else {
                names.insert(service, port);
                Response::PublishResult
            }
        }
        NameRequest::Lookup { service } => match names.get(&service) {
            Some(port) => Response::LookupResult { port: port.clone() },
            None => Response::refusal(ResponseKind::LookupResult, &format!("no service {service} is published")),
        },
        NameRequest::Unpublish { service } => match names.remove(&service) {
            Some(_) => Response::UnpublishResult,
            None => Response::refusal(ResponseKind::UnpublishResult, &format!("no service {service} is published")),
        },
    };
    server.answer(rank, response)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(program: &str, path: &str) -> SpawnCommand {
        SpawnCommand { program: program.into(), args: Vec::new(), nprocs: 1, wdir: b"/".to_vec(), path: path.into() }
    }

    #[test]
    fn finds_programs_by_path_and_says_why_not() {
        assert_eq!(find_program(&command("sh", "/bin")), Ok(PathBuf::from("/bin/sh")));
        assert_eq!(find_program(&command("bin/sh", "")), Ok(PathBuf::from("/bin/sh")));
        assert_eq!(find_program(&command("./no-such-program", "")), Err("not found".into()));
        assert_eq!(find_program(&command("etc/passwd", "")), Err("not executable".into()));
        let mut c = command("sh", "");
        c.wdir = b"/no/such/dir".to_vec();
        assert!(find_program(&c).unwrap_err().contains("does not exist"));
    }

    #[test]
    fn the_name_service_publishes_looks_up_and_withdraws() {
        let server = PmiServer::new(1, "kvs_1_0", &"ab".repeat(32)).expect("valid");
        let mut names = BTreeMap::new();
        let line = |a: Action| match a {
            Action::Reply { bytes, .. } => String::from_utf8(bytes).expect("text"),
            other => panic!("{other:?}"),
        };
        let publish = NameRequest::Publish { service: "s".into(), port: "p".into() };
        assert_eq!(line(serve_name(&mut names, &server, 0, publish.clone())), "cmd=publish_result rc=0\n");
        assert!(line(serve_name(&mut names, &server, 0, publish)).contains("rc=-1"));
        assert_eq!(line(serve_name(&mut names, &server, 0, NameRequest::Lookup { service: "s".into() })), "cmd=lookup_result rc=0 port=p\n");
        assert_eq!(line(serve_name(&mut names, &server, 0, NameRequest::Unpublish { service: "s".into() })), "cmd=unpublish_result rc=0\n");
        assert!(line(serve_name(&mut names, &server, 0, NameRequest::Lookup { service: "s".into() })).contains("rc=-1"));
    }
}
