//! The MPI implementations `ferry bench` compares: where each one's compiler and launcher
//! are, and the command line that starts a job under it. Every launcher gets the same
//! treatment on one host: shared memory, and Open MPI told to oversubscribe past the cores
//! (MPICH and Ferry need no flag for it).

use std::env;
use std::path::Path;

use super::layout::Layout;

/// One implementation, found and ready to use.
#[derive(Clone, Debug, PartialEq)]
pub struct Implementation {
    /// Its name in results and plots: `ferry`, `ferry-async`, `mpich`, `openmpi`, or the
    /// name given with `--mpi`.
    pub name: String,
    /// The compiler wrapper: program and leading arguments.
    pub mpicc: Vec<String>,
    pub launcher: Launcher,
    /// Set in the job's environment.
    pub env: Vec<(String, String)>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Launcher {
    /// `<launcher words> -n N PROGRAM ARGS` (Ferry's `ferry run`, MPICH's Hydra, `--mpi`).
    Plain(Vec<String>),
    /// Open MPI's mpirun on shared memory (`--mca pml ob1 --mca btl vader,self`), with
    /// `--oversubscribe` when the ranks outnumber the cores. Its one-sided component is
    /// osc/sm (`--mca osc ^rdma`): 4.1.4's default here, osc/rdma over vader, dies with
    /// SIGSEGV in the first MPI_Fetch_and_op of bench/rma.c.
    OpenMpi(String),
}

/// What `--mpi NAME=MPICC,MPIEXEC` gives: the launcher is called as `MPIEXEC -n N`.
#[derive(Clone, Debug, PartialEq)]
pub struct CustomMpi {
    pub name: String,
    pub mpicc: Vec<String>,
    pub mpiexec: Vec<String>,
}

/// Parses `NAME=MPICC,MPIEXEC`; MPICC and MPIEXEC may carry arguments after spaces.
pub fn parse_custom(s: &str) -> Result<CustomMpi, String> {
    let form = "expected NAME=MPICC,MPIEXEC (e.g. mine=/opt/mpi/bin/mpicc,/opt/mpi/bin/mpiexec)";
    let (name, tools) = s.split_once('=').ok_or_else(|| format!("{form}, got {s:?}"))?;
    let (mpicc, mpiexec) = tools.split_once(',').ok_or_else(|| format!("{form}, got {s:?}"))?;
    let words = |t: &str| t.split_whitespace().map(str::to_owned).collect::<Vec<_>>();
    let (mpicc, mpiexec) = (words(mpicc), words(mpiexec));
    if !valid_name(name) {
        return Err(format!("implementation names are letters, digits, '-', '_' and '.', got {name:?}"));
    }
    if BUILT_IN.contains(&name) {
        return Err(format!("{name:?} is a built-in implementation; give yours another name"));
    }
    if mpicc.is_empty() || mpiexec.is_empty() {
        return Err(format!("{form}, got {s:?}"));
    }
    Ok(CustomMpi { name: name.to_owned(), mpicc, mpiexec })
}

fn valid_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
}

/// The implementations `ferry bench` knows without being told.
pub const BUILT_IN: [&str; 4] = ["ferry", "ferry-async", "mpich", "openmpi"];

/// Those run when `--impl` is not given (ferry-async only when asked for).
pub const DEFAULT: [&str; 3] = ["ferry", "mpich", "openmpi"];

/// An implementation as it would be if its tools are there.
struct Candidate {
    implementation: Implementation,
    /// Files it needs, each with what to say when it is missing.
    needs: Vec<(String, String)>,
}

fn candidate(name: &str, layout: &Layout, custom: &[CustomMpi]) -> Option<Candidate> {
    let tool = |t: &str| (t.to_owned(), format!("{t} not found"));
    let text = |p: &Path| p.to_string_lossy().into_owned();
    let ours = |p: &Path| (text(p), format!("{} not found ({})", p.display(), layout.hint));
    let ferry = |async_progress: &str| Candidate {
        implementation: Implementation {
            name: name.to_owned(),
            mpicc: vec![text(&layout.mpicc)],
            launcher: Launcher::Plain(vec![text(&layout.ferry), "run".into()]),
            env: vec![("FERRY_ASYNC_PROGRESS".into(), async_progress.into())],
        },
        needs: vec![ours(&layout.mpicc), ours(&layout.ferry), ours(&layout.libmpi)],
    };
    Some(match name {
        "ferry" => ferry("0"),
        "ferry-async" => ferry("1"),
        "mpich" => Candidate {
            implementation: Implementation {
                name: name.to_owned(),
                mpicc: vec!["mpicc.mpich".into()],
                launcher: Launcher::Plain(vec!["mpiexec.mpich".into()]),
                env: Vec::new(),
            },
            needs: vec![tool("mpicc.mpich"), tool("mpiexec.mpich")],
        },
        "openmpi" => Candidate {
            implementation: Implementation {
                name: name.to_owned(),
                mpicc: vec!["mpicc.openmpi".into()],
                launcher: Launcher::OpenMpi("mpirun.openmpi".into()),
                env: Vec::new(),
            },
            needs: vec![tool("mpicc.openmpi"), tool("mpirun.openmpi")],
        },
        _ => {
            let c = custom.iter().find(|c| c.name == name)?;
            Candidate {
                implementation: Implementation {
                    name: name.to_owned(),
                    mpicc: c.mpicc.clone(),
                    launcher: Launcher::Plain(c.mpiexec.clone()),
                    env: Vec::new(),
                },
                needs: vec![tool(&c.mpicc[0]), tool(&c.mpiexec[0])],
            }
        }
    })
}

/// The implementations to run, in order: `selected` (names; unknown ones are an error) or
/// the defaults and every `--mpi` one. Those whose tools are missing are left out, each
/// with a line saying why in the second list.
pub fn find(
    layout: &Layout,
    selected: Option<&[String]>,
    custom: &[CustomMpi],
) -> Result<(Vec<Implementation>, Vec<String>), String> {
    let names: Vec<String> = match selected {
        Some(names) => names.to_vec(),
        None => DEFAULT.iter().map(|s| s.to_string()).chain(custom.iter().map(|c| c.name.clone())).collect(),
    };
    let mut found = Vec::new();
    let mut missing = Vec::new();
    for (i, name) in names.iter().enumerate() {
        if names[..i].contains(name) {
            continue;
        }
        let Some(c) = candidate(name, layout, custom) else {
            let mut known: Vec<&str> = BUILT_IN.to_vec();
            known.extend(custom.iter().map(|c| c.name.as_str()));
            return Err(format!("unknown implementation {name:?} (known: {})", known.join(", ")));
        };
        let absent: Vec<&str> = c.needs.iter().filter(|(t, _)| !on_path(t)).map(|(_, why)| why.as_str()).collect();
        if absent.is_empty() {
            found.push(c.implementation);
        } else {
            missing.push(format!("{name}: left out, {}", absent.join("; ")));
        }
    }
    Ok((found, missing))
}

/// Whether `tool` is an executable file: a path, or a name found on PATH.
fn on_path(tool: &str) -> bool {
    let executable = |p: &Path| {
        use std::os::unix::fs::PermissionsExt;
        p.metadata().map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0).unwrap_or(false)
    };
    if tool.contains('/') {
        return executable(Path::new(tool));
    }
    env::var_os("PATH")
        .map(|paths| env::split_paths(&paths).any(|dir| executable(&dir.join(tool))))
        .unwrap_or(false)
}

impl Implementation {
    /// The command line that runs `program` on `ranks` ranks of a host with `cores` cores.
    pub fn launch_argv(&self, ranks: u32, cores: usize, program: &Path, args: &[String]) -> Vec<String> {
        let mut argv: Vec<String> = match &self.launcher {
            Launcher::Plain(words) => words.clone(),
            Launcher::OpenMpi(mpirun) => {
                let mut v = vec![mpirun.clone(), "--allow-run-as-root".into()];
                if ranks as usize > cores {
                    v.push("--oversubscribe".into());
                }
                v.extend(["--mca", "pml", "ob1", "--mca", "btl", "vader,self", "--mca", "osc", "^rdma"].map(String::from));
                v
            }
        };
        argv.extend(["-n".to_owned(), ranks.to_string(), program.to_string_lossy().into_owned()]);
        argv.extend(args.iter().cloned());
        argv
    }

    /// The command line that compiles `source` into `output`.
    pub fn compile_argv(&self, source: &Path, output: &Path) -> Vec<String> {
        let mut argv = self.mpicc.clone();
        argv.extend(["-O2".into(), "-Wall".into(), "-o".into(), output.to_string_lossy().into_owned()]);
        argv.push(source.to_string_lossy().into_owned());
        argv
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn custom_implementations_parse() {
        let c = parse_custom("mine=/opt/bin/mpicc -O1,/opt/bin/mpiexec --bind-to none").unwrap();
        assert_eq!(c.name, "mine");
        assert_eq!(c.mpicc, strings(&["/opt/bin/mpicc", "-O1"]));
        assert_eq!(c.mpiexec, strings(&["/opt/bin/mpiexec", "--bind-to", "none"]));
        assert!(parse_custom("mine").is_err());
        assert!(parse_custom("mine=cc").is_err());
        assert!(parse_custom("mine=,mpiexec").is_err());
        assert!(parse_custom("=cc,run").is_err());
        assert!(parse_custom("a,b=cc,run").is_err());
        assert!(parse_custom("mpich=cc,run").unwrap_err().contains("built-in"));
    }

    #[test]
    fn launch_lines_are_those_of_the_shell_drivers() {
        let repo = &Layout::repository(Path::new("/repo"));
        let ferry = candidate("ferry-async", repo, &[]).unwrap().implementation;
        assert_eq!(
            ferry.launch_argv(2, 2, Path::new("b/latency"), &strings(&["-m", "4K"])),
            strings(&["/repo/target/release/ferry", "run", "-n", "2", "b/latency", "-m", "4K"])
        );
        assert_eq!(ferry.env, [("FERRY_ASYNC_PROGRESS".to_owned(), "1".to_owned())]);
        let ompi = candidate("openmpi", repo, &[]).unwrap().implementation;
        let at = |ranks| ompi.launch_argv(ranks, 2, Path::new("p"), &[]).join(" ");
        assert_eq!(at(2), "mpirun.openmpi --allow-run-as-root --mca pml ob1 --mca btl vader,self --mca osc ^rdma -n 2 p");
        assert_eq!(at(4), "mpirun.openmpi --allow-run-as-root --oversubscribe --mca pml ob1 --mca btl vader,self --mca osc ^rdma -n 4 p");
        let mpich = candidate("mpich", repo, &[]).unwrap().implementation;
        assert_eq!(mpich.launch_argv(4, 2, Path::new("p"), &[]).join(" "), "mpiexec.mpich -n 4 p");
        assert_eq!(
            mpich.compile_argv(Path::new("bench/shift.c"), Path::new("out/shift")).join(" "),
            "mpicc.mpich -O2 -Wall -o out/shift bench/shift.c"
        );
    }

    #[test]
    fn selection_refuses_unknown_names_and_leaves_out_missing_tools() {
        let custom = vec![parse_custom("ghost=/nonexistent/mpicc,/nonexistent/mpiexec").unwrap()];
        let repo = &Layout::repository(Path::new("/nonexistent-repo"));
        let err = find(repo, Some(&strings(&["nope"])), &custom).unwrap_err();
        assert!(err.contains("unknown implementation \"nope\"") && err.contains("ghost"), "{err}");
        let (found, missing) = find(repo, Some(&strings(&["ghost", "ferry", "ghost"])), &custom).unwrap();
        assert!(found.is_empty());
        assert_eq!(missing.len(), 2, "{missing:?}");
        assert!(missing[0].starts_with("ghost: left out, /nonexistent/mpicc not found"), "{missing:?}");
        assert!(missing[1].contains("make build"), "{missing:?}");
    }
}
