//! The benchmark programs of `bench/` that `ferry bench` runs, as a table: adding one is one
//! entry. Every program follows the contract of bench/benchutil.h (one invocation is one
//! run; rank 0 prints `ROW <benchmark> <ranks> <size> <value>`, every other line starts
//! with '#'), so the runner needs to know only how to pass sizes and which names to expect.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

use super::implementations::Implementation;
use super::sizes::SizeRange;

/// How a program takes its sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SizeArgs {
    /// Message bytes, `-s MIN -m MAX`, doubling from MIN; MIN at least `smallest`.
    MinMax { smallest: u64 },
    /// Block bytes as a list, `-s A,B,...`, multiples of 4 (reductions of MPI_INT).
    ListOf4,
    /// Grid sides, `-s MIN -m MAX` (from `--grids`, not `--sizes`).
    Grid,
}

#[derive(Debug)]
pub struct Program {
    /// The name `--benchmarks` takes, and the file name of the built program.
    pub name: &'static str,
    /// Source file, relative to the repository.
    pub source: &'static str,
    /// Names of the ROW lines it prints (results.rs's benchmark names).
    pub benchmarks: &'static [&'static str],
    /// Each benchmark comes as `.min`, `.avg` and `.max` over ranks.
    pub per_rank_stats: bool,
    /// Rank counts when `--ranks` is not given.
    pub default_ranks: &'static [u32],
    /// Fewest ranks it runs on.
    pub min_ranks: u32,
    pub sizes: SizeArgs,
    /// Extra arguments with `--quick`, to keep a run short.
    pub quick_args: &'static [&'static str],
    /// What to say when the source is not in this tree (a program that lands separately).
    pub when_absent: Option<&'static str>,
}

pub const PROGRAMS: &[Program] = &[
    Program {
        name: "latency",
        source: "bench/latency.c",
        benchmarks: &["latency"],
        per_rank_stats: false,
        default_ranks: &[2],
        min_ranks: 2,
        sizes: SizeArgs::MinMax { smallest: 0 },
        quick_args: &["-i", "200"],
        when_absent: None,
    },
    Program {
        name: "bandwidth",
        source: "bench/bandwidth.c",
        benchmarks: &["bandwidth"],
        per_rank_stats: false,
        default_ranks: &[2],
        min_ranks: 2,
        sizes: SizeArgs::MinMax { smallest: 1 },
        quick_args: &["-i", "10"],
        when_absent: None,
    },
    Program {
        name: "bibandwidth",
        source: "bench/bibandwidth.c",
        benchmarks: &["bibandwidth"],
        per_rank_stats: false,
        default_ranks: &[2],
        min_ranks: 2,
        sizes: SizeArgs::MinMax { smallest: 1 },
        quick_args: &["-i", "10"],
        when_absent: None,
    },
    Program {
        name: "coll",
        source: "bench/coll.c",
        benchmarks: &[
            "bcast", "scatter", "gather", "allgather", "alltoall", "reduce", "allreduce",
            "reduce_scatter", "scan", "exscan", "barrier",
        ],
        per_rank_stats: true,
        default_ranks: &[2],
        min_ranks: 1,
        sizes: SizeArgs::ListOf4,
        quick_args: &["-i", "50", "-t", "0.01"],
        when_absent: None,
    },
    Program {
        name: "shift",
        source: "bench/shift.c",
        benchmarks: &["shift.total", "shift.nonoverlap", "shift.overlap"],
        per_rank_stats: false,
        default_ranks: &[2],
        min_ranks: 2,
        sizes: SizeArgs::MinMax { smallest: 1 },
        quick_args: &["-i", "5"],
        when_absent: None,
    },
    Program {
        name: "jacobi",
        source: "bench/jacobi.c",
        benchmarks: &["jacobi.overlap", "jacobi.blocking", "jacobi.interior", "jacobi.boundary"],
        per_rank_stats: false,
        default_ranks: &[4],
        min_ranks: 1,
        sizes: SizeArgs::Grid,
        quick_args: &["-i", "50", "-r", "2"],
        when_absent: None,
    },
    Program {
        name: "prtt",
        source: "bench/prtt.c",
        benchmarks: &["prtt.1", "prtt.n", "prtt.nd", "prtt.d"],
        per_rank_stats: false,
        default_ranks: &[2],
        min_ranks: 2,
        sizes: SizeArgs::MinMax { smallest: 1 },
        quick_args: &["-i", "20"],
        when_absent: None,
    },
    Program {
        name: "rma",
        source: "bench/rma.c",
        benchmarks: &[
            "rma.put_latency", "rma.get_latency", "rma.acc_latency", "rma.put_bandwidth",
            "rma.get_bandwidth", "rma.fence", "rma.lock", "rma.fop_latency", "rma.cas_latency",
        ],
        per_rank_stats: false,
        default_ranks: &[2],
        min_ranks: 2,
        sizes: SizeArgs::MinMax { smallest: 1 },
        quick_args: &["-i", "50"],
        when_absent: None,
    },
    Program {
        name: "io",
        source: "bench/io.c",
        benchmarks: &[
            "io.shm.coll_write_bandwidth", "io.shm.coll_read_bandwidth", "io.shm.coll_write_cb1_bandwidth",
            "io.shm.plain_write_bandwidth", "io.shm.indep_write_bandwidth", "io.shm.plain_read_bandwidth",
            "io.shm.indep_read_bandwidth", "io.disk.coll_write_bandwidth", "io.disk.coll_read_bandwidth",
            "io.disk.coll_write_cb1_bandwidth", "io.disk.plain_write_bandwidth", "io.disk.indep_write_bandwidth",
            "io.disk.plain_read_bandwidth", "io.disk.indep_read_bandwidth", "io.shm.coll_write_cbon_bandwidth",
            "io.shm.coll_read_cbon_bandwidth", "io.disk.coll_write_cbon_bandwidth", "io.disk.coll_read_cbon_bandwidth",
        ],
        per_rank_stats: false,
        default_ranks: &[4],
        min_ranks: 1,
        sizes: SizeArgs::MinMax { smallest: 512 },
        quick_args: &["-i", "1", "-f", "4M"],
        when_absent: None,
    },
];

/// The program called `name`.
pub fn by_name(name: &str) -> Option<&'static Program> {
    PROGRAMS.iter().find(|p| p.name == name)
}

/// Every program name, for messages.
pub fn names() -> Vec<&'static str> {
    PROGRAMS.iter().map(|p| p.name).collect()
}

impl Program {
    /// The benchmark names its ROW lines may carry.
    pub fn expected(&self) -> Vec<String> {
        if !self.per_rank_stats {
            return self.benchmarks.iter().map(|b| b.to_string()).collect();
        }
        self.benchmarks
            .iter()
            .flat_map(|b| ["min", "avg", "max"].map(|s| format!("{b}.{s}")))
            .collect()
    }

    /// The arguments that give it its sizes: from `bytes` (`--sizes`) or `grids`
    /// (`--grids`); none when the range is not given (the program's own defaults). Err
    /// when no size of the range suits the program.
    pub fn size_args(&self, bytes: Option<SizeRange>, grids: Option<SizeRange>) -> Result<Vec<String>, String> {
        let min_max = |r: SizeRange| vec!["-s".into(), r.min.to_string(), "-m".into(), r.max.to_string()];
        match self.sizes {
            SizeArgs::MinMax { smallest } => {
                let Some(r) = bytes else { return Ok(Vec::new()) };
                if r.max < smallest {
                    return Err(format!("its sizes start at {smallest}, above {r}"));
                }
                Ok(min_max(SizeRange::new(r.min.max(smallest), r.max)))
            }
            SizeArgs::Grid => Ok(grids.map(min_max).unwrap_or_default()),
            SizeArgs::ListOf4 => {
                let Some(r) = bytes else { return Ok(Vec::new()) };
                let list: Vec<String> =
                    r.doubling().into_iter().filter(|s| *s >= 4 && s.is_multiple_of(4)).map(|s| s.to_string()).collect();
                if list.is_empty() {
                    return Err(format!("no size in {r} is a multiple of 4, as its reductions of MPI_INT need"));
                }
                Ok(vec!["-s".into(), list.join(",")])
            }
        }
    }
}

/// Compiles `program` with `implementation`'s compiler into `dir` unless the binary there
/// is newer than its sources; returns the binary. Err carries the compiler's output.
pub fn build(program: &Program, implementation: &Implementation, repo: &Path, dir: &Path) -> Result<PathBuf, String> {
    let source = repo.join(program.source);
    let binary = dir.join(program.name);
    let inputs = [source.clone(), repo.join("bench/benchutil.h")];
    if up_to_date(&binary, &inputs) {
        return Ok(binary);
    }
    fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let argv = implementation.compile_argv(&source, &binary);
    let out = Command::new(&argv[0])
        .args(&argv[1..])
        .current_dir(repo)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", argv[0]))?;
    if out.status.success() {
        return Ok(binary);
    }
    let _ = fs::remove_file(&binary);
    Err(format!(
        "{} failed ({}):\n{}",
        argv.join(" "),
        out.status,
        super::runner::tail(&String::from_utf8_lossy(&out.stderr), 15)
    ))
}

fn up_to_date(binary: &Path, inputs: &[PathBuf]) -> bool {
    let modified = |p: &Path| -> io::Result<SystemTime> { fs::metadata(p)?.modified() };
    let Ok(built) = modified(binary) else { return false };
    inputs.iter().all(|i| modified(i).map(|m| m <= built).unwrap_or(true))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_benchmarks_are_those_of_the_schema() {
        let all = names();
        for (i, n) in all.iter().enumerate() {
            assert!(!all[..i].contains(n), "{n} twice");
        }
        let coll = by_name("coll").unwrap().expected();
        assert_eq!(coll.len(), 33);
        assert!(coll.contains(&"reduce_scatter.avg".to_owned()));
        assert_eq!(by_name("shift").unwrap().expected(), ["shift.total", "shift.nonoverlap", "shift.overlap"]);
        for p in PROGRAMS {
            for b in p.expected() {
                // Values of every benchmark are times, but for the two bandwidths.
                let unit = if b.contains("bandwidth") { "MB/s" } else { "us" };
                assert_eq!(ferry_model::results::unit(&b), unit, "{b}");
            }
        }
    }

    #[test]
    fn size_arguments_follow_each_programs_options() {
        let r = Some(SizeRange::new(1, 64));
        let g = Some(SizeRange::new(64, 128));
        let args = |name: &str, b, g| by_name(name).unwrap().size_args(b, g);
        assert_eq!(args("latency", r, g).unwrap(), ["-s", "1", "-m", "64"]);
        assert_eq!(args("latency", None, g).unwrap(), Vec::<String>::new());
        let from_0 = Some(SizeRange::new(0, 8));
        assert_eq!(args("latency", from_0, g).unwrap(), ["-s", "0", "-m", "8"]);
        assert_eq!(args("bandwidth", from_0, g).unwrap(), ["-s", "1", "-m", "8"]);
        assert!(args("shift", Some(SizeRange::new(0, 0)), g).unwrap_err().contains("start at 1"));
        assert_eq!(args("coll", r, g).unwrap(), ["-s", "4,8,16,32,64"]);
        assert_eq!(args("coll", None, None).unwrap(), Vec::<String>::new());
        assert!(args("coll", Some(SizeRange::new(1, 2)), g).unwrap_err().contains("multiple of 4"));
        assert_eq!(args("jacobi", r, g).unwrap(), ["-s", "64", "-m", "128"]);
        assert_eq!(args("jacobi", r, None).unwrap(), Vec::<String>::new());
    }
}
