//! `ferry bench`: the programs of `bench/` under Ferry and other MPI implementations side
//! by side. Each program is built with each implementation's own compiler, run several
//! times with the implementations alternating run by run, and summarised in the results
//! schema of ferry-model (results.csv, results.json), optionally with figures and a
//! Markdown summary.

mod aggregate;
mod charts;
mod implementations;
pub(crate) mod layout;
mod output;
mod programs;
mod progress;
mod report;
mod runner;
pub(crate) mod sizes;

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use clap::{value_parser, Args};

use aggregate::Sample;
use implementations::{CustomMpi, Implementation};
use layout::Layout;
use programs::Program;
use progress::Progress;
use sizes::SizeRange;

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Benchmark programs, comma-separated (default: all): latency, bandwidth, bibandwidth,
    /// coll, shift, jacobi, prtt, rma, io.
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    benchmarks: Option<Vec<String>>,
    /// Implementations in this order, comma-separated (default: ferry, mpich, openmpi and
    /// every --mpi one; ferry-async, Ferry with FERRY_ASYNC_PROGRESS=1, only when named).
    #[arg(long = "impl", value_name = "LIST", value_delimiter = ',')]
    implementations: Option<Vec<String>>,
    /// Another MPI implementation, launched as `MPIEXEC -n N PROGRAM ARGS` (repeatable).
    #[arg(long = "mpi", value_name = "NAME=MPICC,MPIEXEC", value_parser = implementations::parse_custom)]
    custom: Vec<CustomMpi>,
    /// Rank counts for every benchmark, comma-separated (default: each program's own, 2;
    /// jacobi and io 4). Latency, bandwidth and bibandwidth use ranks 0 and 1; the others wait.
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = value_parser!(u32).range(1..=1024))]
    ranks: Option<Vec<u32>>,
    /// Message and block sizes MIN..MAX (suffixes K, M, G), doubling from MIN (default:
    /// each program's own).
    #[arg(long, value_name = "MIN..MAX")]
    sizes: Option<SizeRange>,
    /// Grid sides of jacobi MIN..MAX, in steps of 64 (default 64..256).
    #[arg(long, value_name = "MIN..MAX")]
    grids: Option<SizeRange>,
    /// Runs of each program per implementation and rank count (default 5).
    #[arg(long, value_name = "N", value_parser = value_parser!(u32).range(1..))]
    runs: Option<u32>,
    /// Directory for results.csv, results.json and raw/ (default build/bench/results in
    /// the repository, or in the current directory when Ferry is installed).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Also write an SVG and a PNG per benchmark and rank count, and summary.md, into DIR.
    #[arg(long, value_name = "DIR")]
    plot: Option<PathBuf>,
    /// A short check: tiny sizes, 2 ranks, Ferry only, 2 runs (options given still apply).
    #[arg(long)]
    quick: bool,
    /// Seconds one run may take before it is stopped (default 300; 60 with --quick).
    #[arg(long, value_name = "SECONDS", value_parser = value_parser!(u64).range(1..))]
    timeout: Option<u64>,
    /// The Ferry repository: bench/ sources, bin/mpicc, target/release/ferry (default: the
    /// current directory when it is one, else the prefix or repository of this ferry).
    #[arg(long, value_name = "DIR")]
    repo: Option<PathBuf>,
}

/// What --quick changes, unless the option is given.
const QUICK_SIZES: SizeRange = SizeRange::new(1, 256);
const QUICK_GRIDS: SizeRange = SizeRange::new(64, 64);
const QUICK_RUNS: u32 = 2;
const QUICK_TIMEOUT: u64 = 60;
const RUNS: u32 = 5;
const TIMEOUT: u64 = 300;

/// Runs `ferry bench`; returns the exit status: 0, 1 when a run or build failed, 2 when
/// nothing could start.
pub fn run(args: BenchArgs) -> i32 {
    match Plan::new(args).and_then(|plan| plan.execute()) {
        Ok(true) => 0,
        Ok(false) => 1,
        Err(e) => {
            eprintln!("ferry bench: {e}");
            2
        }
    }
}

/// A run that gave rows.
struct Ran {
    rows: Vec<runner::RowLine>,
    elapsed: Duration,
    library: Option<String>,
}

/// A run that did not: why, and its stderr.
struct Failed {
    why: String,
    stderr: String,
}

/// Everything decided before the first build.
struct Plan {
    layout: Layout,
    programs: Vec<&'static Program>,
    /// Per program: rank counts, and arguments.
    ranks: Vec<Vec<u32>>,
    args: Vec<Vec<String>>,
    implementations: Vec<Implementation>,
    runs: u32,
    timeout: Duration,
    out: PathBuf,
    plot: Option<PathBuf>,
}

impl Plan {
    fn new(a: BenchArgs) -> Result<Plan, String> {
        let cwd = std::env::current_dir().map_err(|e| format!("no current directory: {e}"))?;
        let exe = std::env::current_exe().and_then(|e| e.canonicalize()).ok();
        let layout = Layout::find(a.repo.as_deref(), &cwd, exe.as_deref())?;

        let wanted: Vec<String> = match &a.benchmarks {
            Some(list) => list.clone(),
            None => programs::names().iter().map(|s| s.to_string()).collect(),
        };
        let mut chosen = Vec::new();
        for name in &wanted {
            let p = programs::by_name(name).ok_or_else(|| {
                format!("unknown benchmark {name:?} (known: {})", programs::names().join(", "))
            })?;
            if !chosen.iter().any(|c: &&Program| c.name == p.name) {
                chosen.push(p);
            }
        }

        let sizes = a.sizes.or(a.quick.then_some(QUICK_SIZES));
        let grids = a.grids.or(a.quick.then_some(QUICK_GRIDS));
        let (mut programs, mut ranks, mut args) = (Vec::new(), Vec::new(), Vec::new());
        for p in chosen {
            if !layout.sources.join(p.source).is_file() {
                let why = p.when_absent.map(str::to_owned).unwrap_or_else(|| format!("{} not found", p.source));
                eprintln!("{}: skipped, {why}", p.name);
                continue;
            }
            let mut extra = match p.size_args(sizes, grids) {
                Ok(extra) => extra,
                Err(why) => {
                    eprintln!("{}: skipped, {why}", p.name);
                    continue;
                }
            };
            if a.quick {
                extra.extend(p.quick_args.iter().map(|s| s.to_string()));
            }
            let counts: Vec<u32> = match (&a.ranks, a.quick) {
                (Some(list), _) => list.clone(),
                (None, true) => vec![2],
                (None, false) => p.default_ranks.to_vec(),
            };
            let (fit, too_few): (Vec<u32>, Vec<u32>) = counts.into_iter().partition(|n| *n >= p.min_ranks);
            if !too_few.is_empty() {
                eprintln!("{}: not on {too_few:?} ranks, it needs at least {}", p.name, p.min_ranks);
            }
            if fit.is_empty() {
                continue;
            }
            programs.push(p);
            ranks.push(fit);
            args.push(extra);
        }
        if programs.is_empty() {
            return Err("no benchmark left to run".into());
        }

        let selected = a.implementations.clone().or(a.quick.then(|| vec!["ferry".to_owned()]));
        let (implementations, missing) = implementations::find(&layout, selected.as_deref(), &a.custom)?;
        for m in &missing {
            eprintln!("{m}");
        }
        if implementations.is_empty() {
            return Err("no MPI implementation available".into());
        }

        Ok(Plan {
            out: a.out.unwrap_or_else(|| layout.work.join("build/bench/results")),
            plot: a.plot,
            runs: a.runs.unwrap_or(if a.quick { QUICK_RUNS } else { RUNS }),
            timeout: Duration::from_secs(a.timeout.unwrap_or(if a.quick { QUICK_TIMEOUT } else { TIMEOUT })),
            layout,
            programs,
            ranks,
            args,
            implementations,
        })
    }

    /// Builds, runs and writes everything; Ok(false) when some build or run failed.
    fn execute(self) -> Result<bool, String> {
        let names: Vec<String> = self.implementations.iter().map(|i| i.name.clone()).collect();
        eprintln!(
            "ferry bench: {} with {}, {} run{} each",
            self.programs.iter().map(|p| p.name).collect::<Vec<_>>().join(", "),
            names.join(", "),
            self.runs,
            if self.runs == 1 { "" } else { "s" }
        );
        let (binaries, build_failures) = self.build();

        let jobs: Vec<runner::Job> = runner::schedule(&self.ranks, self.runs, self.implementations.len())
            .into_iter()
            .filter(|j| binaries.contains_key(&(j.implementation, j.program)))
            .collect();
        let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        let mut progress = Progress::new(jobs.len() as u64);
        let mut samples = Vec::new();
        let mut libraries: HashMap<usize, String> = HashMap::new();
        let mut failed_runs = 0;
        for job in &jobs {
            let p = self.programs[job.program];
            let imp = &self.implementations[job.implementation];
            let what = format!("{} on {} ranks, run {}/{}, {}", p.name, job.ranks, job.run, self.runs, imp.name);
            progress.start(&what);
            let binary = &binaries[&(job.implementation, job.program)];
            let argv = imp.launch_argv(job.ranks, cores, binary, &self.args[job.program]);
            match self.run_job(job, &argv) {
                Ok(ran) => {
                    if let Some(lib) = ran.library {
                        libraries.entry(job.implementation).or_insert(lib);
                    }
                    samples.extend(ran.rows.into_iter().map(|r| Sample {
                        implementation: imp.name.clone(),
                        benchmark: r.benchmark,
                        ranks: r.ranks,
                        size: r.size,
                        value: r.value,
                    }));
                    progress.finish(&what, &format!("ok, {:.1} s", ran.elapsed.as_secs_f64()));
                }
                Err(Failed { why, stderr }) => {
                    failed_runs += 1;
                    let env: String = imp.env.iter().map(|(k, v)| format!("{k}={v} ")).collect();
                    let mut text = format!("FAILED: {what}: {why}\n  command: {env}{}", argv.join(" "));
                    let tail = runner::tail(&stderr, 10);
                    if !tail.is_empty() {
                        text.push_str(&format!("\n  stderr, last lines:\n{tail}"));
                    }
                    progress.println(&text);
                    progress.finish(&what, "FAILED");
                }
            }
        }
        progress.done();

        let rows = aggregate::aggregate(&samples, &names);
        if rows.is_empty() {
            eprintln!("ferry bench: no run gave a result; nothing written");
            return Ok(false);
        }
        let [csv, json] = output::write_results(&self.out, &rows)?;
        println!("results: {} and {}", csv.display(), json.display());
        if let Some(dir) = &self.plot {
            let listed: Vec<(String, Option<String>)> =
                names.iter().enumerate().map(|(i, n)| (n.clone(), libraries.get(&i).cloned())).collect();
            // Ratios to Ferry; to ferry-async when only that one ran.
            let reference = names
                .iter()
                .find(|n| *n == "ferry")
                .or_else(|| names.iter().find(|n| n.starts_with("ferry")))
                .map(String::as_str);
            let figures = report::figures(&rows, &names);
            let ctx = report::Context { implementations: &listed, reference, runs: self.runs };
            let summary = report::summary(&rows, &figures, &ctx);
            charts::write(dir, &figures, &summary)?;
            println!("report: {}", dir.join("summary.md").display());
        }

        let failures = build_failures + failed_runs;
        if failures > 0 {
            eprintln!(
                "ferry bench: {failed_runs} of {} runs failed, {build_failures} build{} failed",
                jobs.len(),
                if build_failures == 1 { "" } else { "s" }
            );
        }
        Ok(failures == 0)
    }

    /// One run: the command line `argv` under the implementation's environment, its output
    /// kept under raw/, its ROW lines checked.
    fn run_job(&self, job: &runner::Job, argv: &[String]) -> Result<Ran, Failed> {
        let p = self.programs[job.program];
        let imp = &self.implementations[job.implementation];
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..]).envs(imp.env.iter().map(|(k, v)| (k, v))).current_dir(&self.layout.work);
        let o = runner::execute(cmd, self.timeout)
            .map_err(|e| Failed { why: format!("cannot start it: {e}"), stderr: String::new() })?;
        let kept = output::write_raw(&self.out, &imp.name, p.name, job.ranks, job.run, &o.stdout, &o.stderr);
        if !o.succeeded() {
            return Err(Failed { why: o.failure(), stderr: o.stderr });
        }
        kept.map_err(|why| Failed { why, stderr: String::new() })?;
        let rows = runner::read_rows(&o.stdout, job.ranks, &p.expected())
            .map_err(|why| Failed { why, stderr: o.stderr.clone() })?;
        Ok(Ran { rows, elapsed: o.elapsed, library: runner::library(&o.stdout) })
    }

    /// Every program with every implementation, into build/bench/<impl>/; returns the
    /// binaries by (implementation, program) and the number of failed builds (each
    /// reported).
    fn build(&self) -> (HashMap<(usize, usize), PathBuf>, usize) {
        let mut binaries = HashMap::new();
        let mut failures = 0;
        for (i, imp) in self.implementations.iter().enumerate() {
            let dir = self.layout.work.join("build/bench").join(&imp.name);
            for (k, p) in self.programs.iter().enumerate() {
                match programs::build(p, imp, &self.layout.sources, &dir) {
                    Ok(binary) => {
                        binaries.insert((i, k), binary);
                    }
                    Err(e) => {
                        failures += 1;
                        eprintln!("FAILED: building {} for {}: {e}", p.name, imp.name);
                    }
                }
            }
        }
        (binaries, failures)
    }
}
