//! `ferry sim`: the simulator from the command line. `coll` compares algorithms of one
//! collective over process counts and sizes (tables, JSON, plots, traces); `occ-mpe` runs
//! the status-based collectives study; `presets` lists the built-in machine parameters.

use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::{Args, Subcommand};
use ferry_coll::{algorithms_for, AlgorithmInfo, Collective};
use ferry_model::params::PRESETS;
use ferry_model::ModelParams;
use ferry_plot::Chart;
use ferry_sim::collective::{simulate, Call, Setup};
use ferry_sim::occ_mpe::{self, Study};
use ferry_sim::sweep::Point;

use crate::bench::sizes::parse_size;
use ferry_sim::{background, trace, Ports, Time};

use crate::coll::find_algorithm;

#[derive(Subcommand)]
pub enum SimCommand {
    /// Compare algorithms of one collective over process counts and block sizes.
    Coll(CollArgs),
    /// The status-based collectives study (S1): fixed order against free-first.
    #[command(name = "occ-mpe")]
    OccMpe(OccArgs),
    /// List the built-in parameter sets.
    Presets,
}

#[derive(Args, Debug, Clone)]
pub struct ModelArgs {
    /// Machine parameters from a TOML file (as `ferry fit` writes it).
    #[arg(long, value_name = "FILE", conflicts_with = "preset")]
    params: Option<PathBuf>,
    /// A built-in parameter set (`ferry sim presets`); default: gige-2000 for `coll`,
    /// soc-mpe for `occ-mpe`.
    #[arg(long, value_name = "NAME")]
    preset: Option<String>,
    /// Cost of the status read of status-based algorithms at the root, microseconds
    /// (default: 0.05, five cycles of a 100 MHz engine, as the hardware paid).
    #[arg(long, value_name = "US", default_value_t = 0.05)]
    status_cost: f64,
    /// How a port orders transfers: `in-order` (as matched; a transfer waiting for a busy
    /// peer holds up those behind it, like an engine's queue) or `earliest` (each takes the
    /// earliest time both its ports are free, like an interface with several transfers in
    /// flight). Default: earliest for `coll`, in-order for `occ-mpe`.
    #[arg(long, value_name = "DISCIPLINE", value_parser = ["in-order", "earliest"])]
    ports: Option<String>,
}

fn ports(a: &ModelArgs, default: Ports) -> Ports {
    match a.ports.as_deref() {
        Some("in-order") => Ports::InOrder,
        Some("earliest") => Ports::EarliestFit,
        _ => default,
    }
}

#[derive(Args, Debug)]
pub struct CollArgs {
    /// The collective (bcast, allgather, ...).
    #[arg(long, value_name = "COLL")]
    collective: String,
    /// Algorithms to compare, comma-separated (ids or bare names; default: all of the
    /// collective's).
    #[arg(long, value_name = "A,B,...", value_delimiter = ',')]
    algorithms: Vec<String>,
    /// Process counts: A..B (doubling) or a list.
    #[arg(long, value_name = "RANGE", default_value = "4..64")]
    procs: String,
    /// Bytes per rank block: A..B (doubling) or a list; K, M suffixes.
    #[arg(long, value_name = "RANGE", default_value = "8..1M")]
    bytes: String,
    /// Root of rooted collectives.
    #[arg(long, default_value_t = 0)]
    root: usize,
    /// Background transfers SRC:DST:BYTES[@START_US], comma-separated.
    #[arg(long, value_name = "LIST")]
    background: Option<String>,
    #[command(flatten)]
    model: ModelArgs,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// Draw time against size (or against process count when only one size is given),
    /// one line per algorithm, to FILE.svg or FILE.png.
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
    /// Write every message's timeline (needs one process count and one size); FILE.jsonl
    /// for JSON lines, FILE.json for the Chrome trace format; with several algorithms the
    /// algorithm's name is put before the extension.
    #[arg(long, value_name = "FILE")]
    trace: Option<String>,
    /// Print how fast the simulation ran, on standard error.
    #[arg(long)]
    stats: bool,
}

#[derive(Args, Debug)]
pub struct OccArgs {
    /// Node counts.
    #[arg(long, value_name = "N,...", value_delimiter = ',', default_values_t = [4usize, 8, 16])]
    nodes: Vec<usize>,
    #[command(flatten)]
    model: ModelArgs,
    /// Print JSON instead of tables.
    #[arg(long)]
    json: bool,
}

pub fn run(cmd: SimCommand) -> i32 {
    let res = match cmd {
        SimCommand::Coll(a) => coll(&a),
        SimCommand::OccMpe(a) => occ(&a),
        SimCommand::Presets => {
            for (name, _) in PRESETS {
                let p = ModelParams::preset(name).expect("presets parse");
                let g = p.loggp;
                println!(
                    "{name:<10} L {} us, o {} us, g {} us, G {} us/B\n           {}",
                    g.l,
                    g.o,
                    g.g,
                    g.big_g,
                    p.source.unwrap_or_default()
                );
            }
            Ok(())
        }
    };
    match res {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("ferry sim: {e}");
            2
        }
    }
}

fn model(a: &ModelArgs, default_preset: &str) -> Result<ModelParams, String> {
    if !(a.status_cost.is_finite() && a.status_cost >= 0.0) {
        return Err(format!("--status-cost {}: must be a time >= 0", a.status_cost));
    }
    match &a.params {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
            ModelParams::from_toml(&text).map_err(|e| format!("{}: {e}", path.display()))
        }
        None => ModelParams::preset(a.preset.as_deref().unwrap_or(default_preset)).map_err(|e| e.to_string()),
    }
}

fn collective(name: &str) -> Result<Collective, String> {
    Collective::ALL
        .into_iter()
        .find(|c| c.name() == name)
        .ok_or_else(|| {
            let names: Vec<&str> = Collective::ALL.iter().map(|c| c.name()).collect();
            format!("unknown collective {name:?}; collectives: {}", names.join(", "))
        })
}

fn selected(coll: Collective, names: &[String]) -> Result<Vec<&'static AlgorithmInfo>, String> {
    if names.is_empty() {
        return Ok(algorithms_for(coll).collect());
    }
    names
        .iter()
        .map(|n| {
            let id = if n.contains('.') { n.clone() } else { format!("{}.{n}", coll.name()) };
            let info = find_algorithm(&id)?;
            if info.collective != coll {
                return Err(format!("{} is not a {} algorithm", info.id, coll.name()));
            }
            Ok(info)
        })
        .collect()
}

/// Largest block `ferry sim coll` takes, bytes.
const MAX_BLOCK: usize = 1 << 30;

fn coll(a: &CollArgs) -> Result<(), String> {
    let coll = collective(&a.collective)?;
    let algos = selected(coll, &a.algorithms)?;
    let procs = parse_range(&a.procs).map_err(|e| format!("--procs: {e}"))?;
    let bytes = parse_range(&a.bytes).map_err(|e| format!("--bytes: {e}"))?;
    if let Some(&p) = procs.iter().find(|&&p| p == 0 || p > 1 << 20) {
        return Err(format!("--procs: {p} processes is out of range (1 .. 1M)"));
    }
    if let Some(&b) = bytes.iter().find(|&&b| b > MAX_BLOCK) {
        return Err(format!("--bytes: {b} bytes per block is more than the simulator takes (1G)"));
    }
    // Status-based algorithms run with real buffers: keep them within memory.
    if let Some(a) = algos.iter().find(|a| ferry_sim::collective::reads_status(a)) {
        let (p, b) = (procs.iter().max().expect("one"), bytes.iter().max().expect("one"));
        if p.saturating_mul(*b) > MAX_BLOCK {
            return Err(format!(
                "{} moves real bytes in the simulator: {p} processes x {b} bytes is more than 1G",
                a.id
            ));
        }
    }
    if let Some(path) = &a.plot {
        let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
        if !matches!(ext.as_deref(), Some("svg" | "png")) {
            return Err(format!("--plot {}: name it .svg or .png", path.display()));
        }
    }
    if coll.rooted() && procs.iter().any(|&p| a.root >= p) {
        return Err(format!("--root {} is not a rank of every communicator", a.root));
    }
    let mut setup = Setup::new(model(&a.model, "gige-2000")?);
    setup.status_cost = a.model.status_cost;
    setup.ports = ports(&a.model, Ports::EarliestFit);
    if let Some(spec) = &a.background {
        setup.background = background::parse(spec).map_err(|e| format!("--background: {e}"))?;
    }
    if let Some(path) = &a.trace {
        if procs.len() != 1 || bytes.len() != 1 {
            return Err("--trace needs one process count and one size".into());
        }
        trace::render(path, &[], 0.0, 0.0)?;
    }
    let started = Instant::now();
    let mut points: Vec<Point> = Vec::new();
    let (mut messages, mut events) = (0u64, 0u64);
    for &p in &procs {
        for &b in &bytes {
            for &info in &algos {
                let call = Call {
                    algorithm: info,
                    procs: p,
                    bytes: b,
                    root: a.root,
                };
                let mut s = setup.clone();
                s.trace = a.trace.is_some();
                let out = simulate(&call, &s).map_err(|e| format!("{} on {p} processes, {b} B: {e}", info.id))?;
                messages += out.messages + out.background;
                events += out.events;
                if let Some(path) = &a.trace {
                    let path = if algos.len() > 1 { with_infix(path, info.id) } else { path.clone() };
                    let q = setup.model.at(p);
                    let text = trace::render(&path, &out.trace, q.l, q.o)?;
                    std::fs::write(&path, text).map_err(|e| format!("{path}: {e}"))?;
                }
                points.push(Point {
                    algorithm: info.id,
                    procs: p,
                    bytes: b,
                    time: out.time,
                    messages: out.messages,
                });
            }
        }
    }
    if a.stats {
        let secs = started.elapsed().as_secs_f64();
        eprintln!(
            "simulated {messages} messages ({events} events) in {secs:.3} s: {:.2} M messages/s, {:.2} M events/s",
            messages as f64 / secs / 1e6,
            events as f64 / secs / 1e6
        );
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&points).expect("points are plain data"));
    } else {
        print!("{}", table(&algos, &procs, &bytes, &points));
    }
    if let Some(path) = &a.plot {
        plot(coll, &algos, &procs, &bytes, &points, &setup, path)?;
    }
    Ok(())
}

/// `A..B` (A, 2A, 4A, ... up to B, and B itself), or a comma-separated list; numbers take
/// K, M and G suffixes (powers of 1024).
fn parse_range(spec: &str) -> Result<Vec<usize>, String> {
    let num = |s: &str| -> Result<usize, String> {
        let v = parse_size(s)?;
        usize::try_from(v).map_err(|_| format!("{s:?} is too large"))
    };
    let mut out = Vec::new();
    if let Some((a, b)) = spec.split_once("..") {
        let (a, b) = (num(a)?, num(b)?);
        if a == 0 || a > b {
            return Err(format!("range {spec:?}: need 0 < start <= end"));
        }
        let mut v = a;
        while v < b {
            out.push(v);
            v = v.saturating_mul(2);
        }
        out.push(b);
    } else {
        for s in spec.split(',').filter(|s| !s.trim().is_empty()) {
            out.push(num(s)?);
        }
    }
    if out.is_empty() {
        return Err(format!("{spec:?} names no value"));
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|v| seen.insert(*v));
    Ok(out)
}

/// `trace.json` + `allgather.ring` -> `trace.allgather.ring.json`.
fn with_infix(path: &str, infix: &str) -> String {
    let ext = if path.ends_with(".jsonl") { ".jsonl" } else { ".json" };
    let stem = path.strip_suffix(ext).unwrap_or(path);
    format!("{stem}.{infix}{ext}")
}

fn table(algos: &[&AlgorithmInfo], procs: &[usize], bytes: &[usize], points: &[Point]) -> String {
    let mut s = String::from("# simulated time in microseconds; best per row marked *\n");
    s.push_str(&format!("{:>8} {:>10}", "procs", "bytes"));
    for a in algos {
        s.push_str(&format!(" {:>22}", short(a.id)));
    }
    s.push('\n');
    for &p in procs {
        for &b in bytes {
            let row: Vec<&Point> = points.iter().filter(|x| x.procs == p && x.bytes == b).collect();
            let best = row.iter().map(|x| x.time).fold(f64::INFINITY, f64::min);
            s.push_str(&format!("{p:>8} {b:>10}"));
            for x in row {
                let mark = if x.time == best { "*" } else { " " };
                s.push_str(&format!(" {:>21.2}{mark}", x.time));
            }
            s.push('\n');
        }
    }
    s
}

fn short(id: &str) -> &str {
    id.split_once('.').map_or(id, |(_, n)| n)
}

fn plot(
    coll: Collective,
    algos: &[&AlgorithmInfo],
    procs: &[usize],
    bytes: &[usize],
    points: &[Point],
    setup: &Setup,
    path: &Path,
) -> Result<(), String> {
    let model = setup.model.name.clone().unwrap_or_else(|| "given parameters".into());
    // Time against size at the largest process count, or against processes at one size.
    let by_size = bytes.len() > 1 || procs.len() == 1;
    let p = *procs.iter().max().expect("at least one");
    let (title, x_label) = if by_size {
        (format!("{}, {p} processes, {model} (simulated)", coll.name()), "bytes per rank block")
    } else {
        (format!("{}, {} B per block, {model} (simulated)", coll.name(), bytes[0]), "processes")
    };
    let mut chart = Chart::new(title, x_label, "time (us)").log_x().log_y();
    for a in algos {
        let pts = points
            .iter()
            .filter(|x| x.algorithm == a.id && (!by_size || x.procs == p))
            .map(|x| (if by_size { x.bytes } else { x.procs } as f64, x.time))
            .collect();
        chart = chart.series(short(a.id), pts);
    }
    chart.write(path).map_err(|e| e.to_string())
}

fn occ(a: &OccArgs) -> Result<(), String> {
    if let Some(&n) = a.nodes.iter().find(|&&n| !(4..=64).contains(&n)) {
        return Err(format!("--nodes: {n} nodes; the study needs 4 to 64"));
    }
    let mut study = Study::new(a.nodes.clone(), model(&a.model, "soc-mpe")?, a.model.status_cost as Time);
    study.ports = ports(&a.model, Ports::InOrder);
    let report = occ_mpe::run(&study).map_err(|e| e.to_string())?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report).expect("plain data"));
        return Ok(());
    }
    let name = study.model.name.clone().unwrap_or_else(|| "given parameters".into());
    println!(
        "# status-based vs fixed order; model {name}, status read {} us, ports {:?}",
        study.status_cost, study.ports
    );
    println!("\n## best improvement (T_fixed - T_status) / T_fixed, with interference");
    println!("{:<8} {:>5} {:>12} {:>12}  case", "coll", "nodes", "improvement", "theory max");
    for b in &report.best {
        let t = occ_mpe::theoretical_max(b.collective, b.nodes);
        println!("{:<8} {:>5} {:>12.3} {:>12.3}  {}", b.collective, b.nodes, b.improvement, t, b.case);
    }
    println!("\n## degradation (T_status - T_fixed) / T_fixed without interference, by payload");
    let mut header = format!("{:<8} {:>5}", "coll", "nodes");
    for p in &study.payloads {
        header.push_str(&format!(" {:>7}", format!("{p}B")));
    }
    println!("{header}");
    for (coll, _, _) in occ_mpe::PAIRS {
        for &n in &study.nodes {
            let mut line = format!("{coll:<8} {n:>5}");
            for w in report
                .worst_no_interference
                .iter()
                .filter(|w| w.collective == coll && w.nodes == n)
            {
                line.push_str(&format!(" {:>7.4}", w.degradation));
            }
            println!("{line}");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_double_and_lists_parse() {
        assert_eq!(parse_range("4..32").unwrap(), vec![4, 8, 16, 32]);
        assert_eq!(parse_range("3..20").unwrap(), vec![3, 6, 12, 20]);
        assert_eq!(parse_range("8..1K").unwrap().last(), Some(&1024));
        assert_eq!(parse_range("1M").unwrap(), vec![1 << 20]);
        assert_eq!(parse_range("4, 12,7").unwrap(), vec![4, 12, 7]);
        assert!(parse_range("0..4").is_err());
        assert!(parse_range("9..4").is_err());
        assert!(parse_range("x").unwrap_err().contains("byte count"));
        assert!(parse_range(",").is_err());
        assert_eq!(parse_range("4,8,4").unwrap(), vec![4, 8]);
    }

    #[test]
    fn names_and_infixes() {
        assert_eq!(with_infix("t.json", "allgather.ring"), "t.allgather.ring.json");
        assert_eq!(with_infix("a/t.jsonl", "bcast.binomial"), "a/t.bcast.binomial.jsonl");
        assert!(collective("allgather").is_ok());
        assert!(collective("allgatherz").unwrap_err().contains("allgather"));
        let a = selected(Collective::Allgather, &["ring".into(), "allgather.bruck".into()]).unwrap();
        assert_eq!(a.iter().map(|a| a.id).collect::<Vec<_>>(), ["allgather.ring", "allgather.bruck"]);
        assert!(selected(Collective::Allgather, &["bcast.binomial".into()]).is_err());
        assert!(selected(Collective::Allgather, &["nope".into()]).is_err());
    }
}
