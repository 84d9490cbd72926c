//! `ferry tune`: a decision table for this machine. For each collective, rank count and
//! size it predicts every candidate algorithm in the simulator (this machine's `ferry fit`
//! parameters, or a preset), measures the few that matter for real with bench/coll.c under
//! `ferry run` (alternating, median), keeps the measured fastest, writes a table that
//! `FERRY_COLL_TABLE` loads, and prints predicted against measured times.

mod table;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use clap::Args;
use ferry_coll::select::{self, CallKind, Table};
use ferry_coll::AlgorithmInfo;
use ferry_model::ModelParams;
use ferry_sim::collective::{simulate, Call, Setup};
use ferry_sim::Ports;

use crate::bench::layout::Layout;
use crate::bench::sizes::parse_size;
use table::{Cell, Outcome, TunedRow};

#[derive(Args, Debug)]
pub struct TuneArgs {
    /// Communicator sizes to tune, comma-separated.
    #[arg(long, value_name = "N,...", value_delimiter = ',', default_values_t = [2usize, 4])]
    ranks: Vec<usize>,
    /// Per-rank block sizes (the table's size metric), comma-separated, multiples of 4; K, M
    /// suffixes. Barrier has one cell whatever they are.
    #[arg(long, value_name = "SIZES", default_value = "8,1K,64K,1M")]
    sizes: String,
    /// Collectives, comma-separated: barrier, bcast, reduce, allreduce, gather, scatter,
    /// allgather, alltoall, scan, exscan.
    #[arg(long, value_name = "COLLS", value_delimiter = ',', default_value = "barrier,bcast,reduce,allreduce,gather,scatter,allgather,alltoall")]
    collectives: Vec<String>,
    /// Measured runs of each algorithm in each cell (the algorithms alternate run by run;
    /// the median counts).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    runs: u32,
    /// How many of the fastest predicted algorithms of a cell are measured, besides the
    /// base table's choice.
    #[arg(long, default_value_t = 2)]
    top: usize,
    /// Time budget of one collective and size in one run of bench/coll.c (its -t).
    #[arg(long, value_name = "SECONDS", default_value_t = 0.1)]
    seconds: f64,
    /// A cell changes only when the measured winner is faster than the base table's
    /// choice by more than this many percent.
    #[arg(long, value_name = "PERCENT", default_value_t = 5.0)]
    margin: f64,
    /// Machine parameters from `ferry fit` (its TOML file).
    #[arg(long, value_name = "FILE", conflicts_with = "preset")]
    params: Option<PathBuf>,
    /// A built-in parameter set (`ferry sim presets`) when --params is not given.
    #[arg(long, value_name = "NAME", default_value = "shm-local")]
    preset: String,
    /// Pick by prediction alone: no program runs, nothing is measured.
    #[arg(long)]
    simulate_only: bool,
    /// The table to compare with and to fall through to (default: the built-in table).
    #[arg(long, value_name = "FILE")]
    base: Option<PathBuf>,
    /// Where the table goes.
    #[arg(long, short = 'o', value_name = "FILE", default_value = "ferry-tune.table")]
    output: PathBuf,
    /// The Ferry repository (default: found from the current directory or this program).
    #[arg(long, value_name = "DIR")]
    repo: Option<PathBuf>,
}

pub fn run(args: &TuneArgs) -> i32 {
    match tune(args) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("ferry tune: {e}");
            2
        }
    }
}

/// The calls `ferry tune` can time: those bench/coll.c runs under the table's name.
const TUNABLE: [&str; 10] = ["barrier", "bcast", "reduce", "allreduce", "gather", "scatter", "allgather", "alltoall", "scan", "exscan"];

struct Plan {
    calls: Vec<CallKind>,
    ranks: Vec<usize>,
    sizes: Vec<usize>,
    setup: Setup,
    model_source: String,
    base: Table,
    base_source: String,
}

fn plan(a: &TuneArgs) -> Result<Plan, String> {
    let calls = a
        .collectives
        .iter()
        .map(|n| {
            let n = n.trim();
            CallKind::from_name(n).filter(|_| TUNABLE.contains(&n)).ok_or_else(|| format!("--collectives: {n:?} cannot be tuned; tunable: {}", TUNABLE.join(", ")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    if a.ranks.is_empty() || a.ranks.iter().any(|&n| !(2..=256).contains(&n)) {
        return Err("--ranks: communicator sizes from 2 to 256".into());
    }
    let mut sizes = Vec::new();
    for s in a.sizes.split(',') {
        let b = parse_size(s).map_err(|e| format!("--sizes: {e}"))?;
        if b == 0 || b % 4 != 0 || b > 1 << 28 {
            return Err(format!("--sizes: {s} is not a multiple of 4 from 4 to 256M (bench/coll.c's blocks)"));
        }
        sizes.push(b as usize);
    }
    sizes.sort_unstable();
    sizes.dedup();
    let valid = a.seconds > 0.0 && a.seconds <= 10.0 && (0.0..100.0).contains(&a.margin) && a.top > 0;
    if !valid {
        return Err("--seconds from 0 to 10, --margin from 0 to 100, --top at least 1".into());
    }
    let (model, model_source) = match &a.params {
        Some(p) => {
            let text = std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
            (ModelParams::from_toml(&text).map_err(|e| format!("{}: {e}", p.display()))?, format!("parameters {}", p.display()))
        }
        None => (ModelParams::preset(&a.preset).map_err(|e| e.to_string())?, format!("preset {}", a.preset)),
    };
    let mut setup = Setup::new(model);
    setup.ports = Ports::EarliestFit;
    let (base, base_source) = match &a.base {
        Some(p) => (ferry_core::config::load_coll_table(&p.to_string_lossy())?, format!("file {}", p.display())),
        None => (Table::builtin().clone(), "built-in".to_owned()),
    };
    Ok(Plan { calls, ranks: a.ranks.clone(), sizes, setup, model_source, base, base_source })
}

/// The cells of one call at one rank count: one per size, one for barrier.
fn cells(call: CallKind, ranks: usize, sizes: &[usize]) -> Vec<Cell> {
    if call.sized() && call.collective != ferry_coll::Collective::Barrier {
        sizes.iter().map(|&bytes| Cell { call, ranks, bytes }).collect()
    } else {
        vec![Cell { call, ranks, bytes: 0 }]
    }
}

fn predict(setup: &Setup, cell: &Cell, a: &'static AlgorithmInfo) -> Result<f64, String> {
    let call = Call { algorithm: a, procs: cell.ranks, bytes: cell.bytes, root: 0 };
    simulate(&call, setup).map(|o| o.time).map_err(|e| format!("simulating {} on {} ranks, {} B: {e}", a.id, cell.ranks, cell.bytes))
}

/// Runs bench/coll.c for real: the binary, and how to launch it.
struct Bench {
    ferry: PathBuf,
    binary: PathBuf,
    seconds: f64,
}

impl Bench {
    fn build(repo: Option<&Path>, seconds: f64) -> Result<Bench, String> {
        let cwd = std::env::current_dir().map_err(|e| format!("current directory: {e}"))?;
        let exe = std::env::current_exe().and_then(|e| e.canonicalize()).ok();
        let layout = Layout::find(repo, &cwd, exe.as_deref())?;
        for tool in [&layout.mpicc, &layout.ferry, &layout.libmpi] {
            if !tool.exists() {
                return Err(format!("{} not found ({})", tool.display(), layout.hint));
            }
        }
        let dir = layout.work.join("build/tune");
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let binary = dir.join("coll");
        let source = layout.sources.join("bench/coll.c");
        let out = Command::new(&layout.mpicc)
            .args(["-O2", "-o"])
            .arg(&binary)
            .arg(&source)
            .current_dir(&layout.sources)
            .output()
            .map_err(|e| format!("cannot run {}: {e}", layout.mpicc.display()))?;
        if !out.status.success() {
            return Err(format!("building {} failed:\n{}", source.display(), String::from_utf8_lossy(&out.stderr)));
        }
        Ok(Bench { ferry: layout.ferry, binary, seconds })
    }

    /// Per-call times (us, the slowest rank's mean) of `call` with `a` forced, by size.
    fn measure(&self, call: CallKind, ranks: usize, a: &AlgorithmInfo, sizes: &[usize]) -> Result<HashMap<usize, f64>, String> {
        let list: Vec<String> = sizes.iter().map(|s| s.max(&4).to_string()).collect();
        let var = select::env_var(call.collective);
        let out = Command::new(&self.ferry)
            .args(["run", "-n", &ranks.to_string(), "--timeout", "300"])
            .arg(&self.binary)
            .args(["-c", call.name(), "-s", &list.join(","), "-t", &self.seconds.to_string()])
            .env_remove("FERRY_COLL_TABLE")
            .env(&var, a.id)
            .output()
            .map_err(|e| format!("cannot run {}: {e}", self.ferry.display()))?;
        if !out.status.success() {
            return Err(format!(
                "{var}={} ferry run -n {ranks} {} failed ({}):\n{}",
                a.id,
                self.binary.display(),
                out.status,
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        Ok(parse_rows(&String::from_utf8_lossy(&out.stdout), call.name()))
    }
}

/// `ROW <call>.max <ranks> <size> <us>` lines of bench/coll.c: us by size.
fn parse_rows(text: &str, call: &str) -> HashMap<usize, f64> {
    let want = format!("{call}.max");
    text.lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            match w.as_slice() {
                ["ROW", name, _, size, us] if *name == want => Some((size.parse().ok()?, us.parse().ok()?)),
                _ => None,
            }
        })
        .collect()
}

/// What one cell needs: its predictions, the base choice, and what to measure.
struct Work {
    cell: Cell,
    predicted: Vec<(&'static AlgorithmInfo, f64)>,
    current: &'static AlgorithmInfo,
    measure: Vec<&'static AlgorithmInfo>,
    samples: HashMap<&'static str, Vec<f64>>,
}

fn tune(a: &TuneArgs) -> Result<(), String> {
    let p = plan(a)?;
    let bench = if a.simulate_only { None } else { Some(Bench::build(a.repo.as_deref(), a.seconds)?) };
    let mut outcomes = Vec::new();
    let mut tuned = Vec::new();
    for &call in &p.calls {
        for &ranks in &p.ranks {
            let mut work = Vec::new();
            for cell in cells(call, ranks, &p.sizes) {
                let predicted = table::candidates(&cell).into_iter().map(|alg| Ok((alg, predict(&p.setup, &cell, alg)?))).collect::<Result<Vec<_>, String>>()?;
                let current = table::table_choice(&p.base, &cell);
                let measure = table::to_measure(&predicted, current, a.top);
                work.push(Work { cell, predicted, current, measure, samples: HashMap::new() });
            }
            if let Some(bench) = &bench {
                measure_all(bench, call, ranks, a.runs, &mut work)?;
            }
            let spans = table::size_spans(&work.iter().map(|w| w.cell.bytes).collect::<Vec<_>>());
            let mut decided: Vec<Outcome> = work.iter().map(|w| decide(w, a.simulate_only, a.margin / 100.0)).collect();
            if let Some(bench) = &bench {
                recheck(bench, call, ranks, a.runs, a.margin / 100.0, &mut decided)?;
            }
            for ((w, span), o) in work.iter().zip(spans).zip(decided) {
                let bytes = table::clip(span, &p.base, call, ranks, w.cell.bytes);
                tuned.push(TunedRow { call, ranks, bytes, winner: o.winner });
                outcomes.push(o);
            }
        }
    }
    let header = header(a, &p);
    let text = table::render(&header, &tuned, &p.base);
    Table::parse(&text).map_err(|e| format!("the written table does not parse ({e}); this is a bug"))?;
    std::fs::write(&a.output, &text).map_err(|e| format!("{}: {e}", a.output.display()))?;
    if a.simulate_only {
        println!("# predicted only (--simulate-only): US columns are the simulator's, {}", p.model_source);
    } else {
        println!("# measured: bench/coll.c, slowest rank's mean per call, median of {} runs; predicted: {}", a.runs, p.model_source);
    }
    print!("{}", table::report(&outcomes));
    println!("table written to {}; use it with FERRY_COLL_TABLE={}", a.output.display(), a.output.display());
    Ok(())
}

/// Runs every (algorithm, its sizes) of one call and rank count `runs` times, the
/// algorithms alternating and their order rotating run by run.
fn measure_all(bench: &Bench, call: CallKind, ranks: usize, runs: u32, work: &mut [Work]) -> Result<(), String> {
    let mut algs: Vec<&'static AlgorithmInfo> = Vec::new();
    for w in work.iter() {
        for alg in &w.measure {
            if !algs.iter().any(|b| b.id == alg.id) {
                algs.push(alg);
            }
        }
    }
    for run in 0..runs as usize {
        for k in 0..algs.len() {
            let alg = algs[(k + run) % algs.len()];
            let sizes: Vec<usize> = work.iter().filter(|w| w.measure.iter().any(|b| b.id == alg.id)).map(|w| w.cell.bytes).collect();
            let times = bench.measure(call, ranks, alg, &sizes)?;
            for w in work.iter_mut().filter(|w| w.measure.iter().any(|b| b.id == alg.id)) {
                // Barrier's one row is size 0 whatever was asked.
                if let Some(&t) = times.get(&w.cell.bytes).or_else(|| if times.len() == 1 { times.values().next() } else { None }) {
                    w.samples.entry(alg.id).or_default().push(t);
                }
            }
        }
    }
    Ok(())
}

/// Measures every changed cell again in runs of their own (the proposed winner against the
/// base choice, alternating), and gives back to the base choice each change that does not
/// hold there: a change then rests on two separate measurements, not on one lucky set.
fn recheck(bench: &Bench, call: CallKind, ranks: usize, runs: u32, margin: f64, decided: &mut [Outcome]) -> Result<(), String> {
    let changed: Vec<usize> = (0..decided.len()).filter(|&i| decided[i].winner.id != decided[i].current.id).collect();
    if changed.is_empty() {
        return Ok(());
    }
    let mut work: Vec<Work> = changed
        .iter()
        .map(|&i| {
            let o = &decided[i];
            Work { cell: o.cell, predicted: Vec::new(), current: o.current, measure: vec![o.current, o.winner], samples: HashMap::new() }
        })
        .collect();
    measure_all(bench, call, ranks, runs, &mut work)?;
    for (w, &i) in work.iter().zip(&changed) {
        let us = |a: &AlgorithmInfo| table::median(w.samples.get(a.id).map_or(&[][..], Vec::as_slice));
        let o = decided[i].clone();
        let r = table::Recheck::new(o.winner, us(o.winner), o.current, us(o.current), margin);
        decided[i] = o.rechecked(r);
    }
    Ok(())
}

fn decide(w: &Work, simulate_only: bool, margin: f64) -> Outcome {
    let predicted_of = |alg: &AlgorithmInfo| w.predicted.iter().find(|(b, _)| b.id == alg.id).map_or(f64::NAN, |(_, t)| *t);
    if simulate_only {
        let winner = table::choose(&w.predicted, w.current, margin);
        let (current_us, winner_us) = (Some(predicted_of(w.current)), Some(predicted_of(winner)));
        return Outcome { cell: w.cell, current: w.current, current_us, winner, winner_us, predicted_us: predicted_of(winner), current_predicted_us: predicted_of(w.current), measured: false, recheck: None };
    }
    let measured: Vec<(&'static AlgorithmInfo, f64)> = w.measure.iter().map(|alg| (*alg, table::median(w.samples.get(alg.id).map_or(&[][..], Vec::as_slice)))).collect();
    let winner = table::choose(&measured, w.current, margin);
    let time_of = |alg: &AlgorithmInfo| measured.iter().find(|(b, _)| b.id == alg.id).map(|(_, t)| *t).filter(|t| t.is_finite());
    Outcome { cell: w.cell, current: w.current, current_us: time_of(w.current), winner, winner_us: time_of(winner), predicted_us: predicted_of(winner), current_predicted_us: predicted_of(w.current), measured: true, recheck: None }
}

/// The table's header: on which machine, when and how it was made.
fn header(a: &TuneArgs, p: &Plan) -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").map(|h| h.trim().to_owned()).unwrap_or_else(|_| "unknown".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let date = Command::new("date").args(["-u", "+%Y-%m-%d %H:%M UTC"]).output().ok().map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned()).unwrap_or_default();
    let command: Vec<String> = std::env::args().map(|s| if s.contains(' ') { format!("'{s}'") } else { s }).collect();
    let how = if a.simulate_only {
        format!("chosen by prediction alone ({}); nothing measured", p.model_source)
    } else {
        format!("chosen by measurement (bench/coll.c under ferry run, median of {} runs, margin {}%); predictions: {}", a.runs, a.margin, p.model_source)
    };
    format!(
        "Decision table made by ferry tune\nmachine: {host}, {cores} cores\ndate: {date}\ncommand: {}\n{how}\nbase table: {}",
        command.join(" "),
        p.base_source
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_of_the_benchmark_are_read_by_size() {
        let text = "# bench/coll\nROW bcast.min 2 8 1.0\nROW bcast.max 2 8 1.5\nROW bcast.max 2 1024 3.25\nROW reduce.max 2 8 9\n";
        let rows = parse_rows(text, "bcast");
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[&8], rows[&1024]), (1.5, 3.25));
    }

    #[test]
    fn barrier_has_one_cell() {
        let barrier = CallKind::from_name("barrier").unwrap();
        assert_eq!(cells(barrier, 2, &[8, 1024]), [Cell { call: barrier, ranks: 2, bytes: 0 }]);
        let bcast = CallKind::from_name("bcast").unwrap();
        assert_eq!(cells(bcast, 4, &[8, 1024]).len(), 2);
    }
}
