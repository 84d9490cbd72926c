//! `ferry fit`: fits the performance models of `ferry_model::fit` to a results file written
//! by `ferry bench`, prints what it found (and what it could not fit, and why), and writes
//! the parameter file that `ferry sim --params` reads. This module only reads, selects and
//! formats; the fitting itself is pure code in ferry-model.

use std::path::{Path, PathBuf};

use clap::Args;
use ferry_model::fit::hockney::{self, HockneyFit};
use ferry_model::fit::jacobi::{self, JacobiPoint};
use ferry_model::fit::loggp::{self, LogGpFit, PrttFit, Split};
use ferry_model::fit::nlogp::{self, NLogPFit};
use ferry_model::fit::Quality;
use ferry_model::{results, LogGp, ModelParams, Row};

use crate::info::table;

#[derive(Args, Debug)]
pub struct FitArgs {
    /// Results files, CSV or JSON, as `ferry bench` writes them; their rows are pooled.
    #[arg(value_name = "RESULTS", required = true, num_args = 1..)]
    results: Vec<PathBuf>,
    /// Implementation to fit; required when the file holds more than one.
    #[arg(long = "impl", value_name = "NAME")]
    implementation: Option<String>,
    /// Write the parameter file to FILE instead of printing it after the report.
    #[arg(short, long, value_name = "FILE.toml")]
    out: Option<PathBuf>,
}

/// Benchmarks some fit uses: any other row is ignored.
const USED: [&str; 4] = ["latency", "shift.", "prtt.", "jacobi."];

/// Every part of the fit, or why it could not be done.
pub struct Fitted {
    pub hockney: Result<HockneyFit, String>,
    pub loggp: Result<LogGpFit, String>,
    pub nlogp: Result<NLogPFit, String>,
    pub jacobi: Result<Vec<JacobiPoint>, String>,
    /// PRTT on its own, shown when LogGP could not be fitted but PRTT could.
    pub prtt_alone: Option<PrttFit>,
    /// The parameter file, when LogGP could be fitted.
    pub params: Option<ModelParams>,
}

/// Implementation names in the order they first appear.
pub fn implementations(rows: &[Row]) -> Vec<&str> {
    let mut names: Vec<&str> = Vec::new();
    for r in rows {
        if !names.contains(&r.implementation.as_str()) {
            names.push(&r.implementation);
        }
    }
    names
}

/// The implementation to fit: `wanted` if the rows have it, else the only one present.
pub fn choose(rows: &[Row], wanted: Option<&str>) -> Result<String, String> {
    let names = implementations(rows);
    match (wanted, names.as_slice()) {
        (Some(w), _) if names.contains(&w) => Ok(w.to_owned()),
        (Some(w), _) => Err(format!("no rows of implementation {w:?}; the file has: {}", names.join(", "))),
        (None, [one]) => Ok((*one).to_owned()),
        (None, _) => Err(format!(
            "the file holds several implementations ({}); choose one with --impl NAME",
            names.join(", ")
        )),
    }
}

/// Whether any row is of a benchmark some fit uses.
pub fn usable(rows: &[Row]) -> bool {
    rows.iter().any(|r| USED.iter().any(|u| r.benchmark == *u || (u.ends_with('.') && r.benchmark.starts_with(u))))
}

/// Fits everything `rows` (one implementation's) allow. `origin` names the results file in
/// the parameter file's `source`.
pub fn fit_all(rows: &[Row], implementation: &str, origin: &str) -> Fitted {
    let hockney = hockney::fit(rows).map_err(|e| e.to_string());
    let loggp = loggp::fit(rows, hockney.as_ref().ok().map(|h| &h.params)).map_err(|e| e.to_string());
    let needs_loggp = || "needs the LogGP fit, which failed (see above)".to_owned();
    let nlogp = match &loggp {
        Ok(base) => nlogp::fit(rows, base).map_err(|e| e.to_string()),
        Err(_) => Err(needs_loggp()),
    };
    let params = loggp.as_ref().ok().map(|l| {
        let mut parts = vec![format!(
            "LogGP from shift.* at 2 ranks, g from {}",
            match l.split {
                Split::Prtt => "PRTT",
                Split::Latency => "latency (L = t0 - 2o)",
            }
        )];
        if let Ok(n) = &nlogp {
            let counts: Vec<String> = n.table.n.iter().map(u32::to_string).collect();
            parts.push(format!("nLogP from shift.* at n = {}", counts.join(", ")));
        }
        if hockney.is_ok() {
            parts.push("Hockney from latency".into());
        }
        rounded(ModelParams {
            name: Some(implementation.to_owned()),
            source: Some(format!(
                "fitted by ferry fit from {origin} (implementation {implementation}): {}",
                parts.join("; ")
            )),
            loggp: l.params,
            nlogp: nlogp.as_ref().ok().map(|n| n.table.clone()),
            hockney: hockney.as_ref().ok().map(|h| h.params),
        })
    });
    let jacobi = match &params {
        Some(p) => jacobi::predict(rows, p).map_err(|e| e.to_string()),
        None => Err(needs_loggp()),
    };
    let prtt_alone = loggp.is_err().then(|| loggp::fit_prtt(rows).ok()).flatten();
    Fitted {
        hockney,
        loggp,
        nlogp,
        jacobi,
        prtt_alone,
        params,
    }
}

/// `v` with four significant digits.
fn num(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let decimals = |v: f64| (3 - v.abs().log10().floor() as i32).clamp(0, 12);
    // Round first, so 0.99996 shows as 1.000, not 1.0000.
    let scale = 10f64.powi(decimals(v));
    let rounded = (v * scale).round() / scale;
    let digits = decimals(rounded) as usize;
    format!("{rounded:.digits$}")
}

/// `v` rounded to 9 significant digits: far below any measurement's precision, and the
/// parameter file reads 0.3 instead of 0.30000000000000004.
fn significant(v: f64) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    let scale = 10f64.powi(8 - v.abs().log10().floor() as i32);
    (v * scale).round() / scale
}

/// `p` with every number rounded by [`significant`].
fn rounded(mut p: ModelParams) -> ModelParams {
    let r = |l: &mut LogGp| {
        for v in [&mut l.l, &mut l.o, &mut l.g, &mut l.big_g] {
            *v = significant(*v);
        }
    };
    r(&mut p.loggp);
    if let Some(t) = &mut p.nlogp {
        for col in [&mut t.l, &mut t.o, &mut t.g, &mut t.big_g].into_iter().flatten() {
            col.iter_mut().for_each(|v| *v = significant(*v));
        }
    }
    if let Some(h) = &mut p.hockney {
        for v in [&mut h.t0, &mut h.r_inf, &mut h.m_half, &mut h.pi0] {
            *v = significant(*v);
        }
    }
    p
}

fn bytes(s: u64) -> String {
    match s {
        s if s >= 1 << 20 && s % (1 << 20) == 0 => format!("{} MiB", s >> 20),
        s if s >= 1 << 10 && s % (1 << 10) == 0 => format!("{} KiB", s >> 10),
        s => format!("{s} B"),
    }
}

fn percent(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{:.1} %", 100.0 * v))
}

fn cells(row: &[&str]) -> Vec<String> {
    row.iter().map(|s| (*s).to_owned()).collect()
}

/// The report: every part fitted, with units, and every part not fitted, with the reason.
pub fn report(f: &Fitted, origin: &str, implementation: &str, rows: usize) -> String {
    let mut out = format!("ferry fit: {origin}, implementation {implementation}, {rows} rows\n\n");
    match &f.hockney {
        Ok(h) => {
            let p = &h.params;
            out += &format!(
                "Hockney t(m) = t0 + m / r_inf (latency at {} ranks, {} sizes {} .. {}; least squares weighted for relative error)\n",
                h.ranks,
                h.sizes.len(),
                bytes(h.sizes[0]),
                bytes(h.sizes[h.sizes.len() - 1])
            );
            out += &table(&[
                cells(&["t0", &num(p.t0), "us", "start-up time"]),
                cells(&["r_inf", &num(p.r_inf), "MB/s", "asymptotic bandwidth"]),
                cells(&["m_1/2", &num(p.m_half), "B", "half-performance message length, t0 r_inf"]),
                cells(&["pi0", &num(p.pi0), "1/us", "specific performance, 1 / t0"]),
            ]);
            out += &quality_section(std::slice::from_ref(&h.quality));
        }
        Err(e) => out += &format!("Hockney: not fitted: {e}\n"),
    }
    out.push('\n');
    match &f.loggp {
        Ok(l) => out += &loggp_section(l),
        Err(e) => {
            out += &format!("LogGP: not fitted: {e}\n");
            if let Some(p) = &f.prtt_alone {
                out += &format!(
                    "  PRTT alone ({} sizes at {} ranks; not a parameter file): L {} us, o {} us, g {} us, G {} us/B\n",
                    p.sizes.len(),
                    p.ranks,
                    num(p.l),
                    num(p.o),
                    num(p.g),
                    num(p.big_g)
                );
                for w in &p.warnings {
                    out += &format!("  warning: {w}\n");
                }
            }
        }
    }
    out.push('\n');
    match &f.nlogp {
        Ok(n) => out += &nlogp_section(n, f.loggp.as_ref().map(LogGpFit::gap_share).unwrap_or(0.0)),
        Err(e) => out += &format!("nLogP: not fitted: {e}\n"),
    }
    out.push('\n');
    match &f.jacobi {
        Ok(points) => out += &jacobi_section(points),
        Err(e) => out += &format!("Jacobi prediction: not made: {e}\n"),
    }
    out
}

fn loggp_section(l: &LogGpFit) -> String {
    let s = &l.shift;
    let mut out = format!(
        "LogGP at 2 ranks (shift: {} sizes; o and L + g from {} .. {}, G from {} .. {})\n",
        s.sizes.len(),
        bytes(s.small.0),
        bytes(s.small.1),
        bytes(s.large.0),
        bytes(s.large.1)
    );
    let mut rows = vec![cells(&["PARAM", "UNIT", "WRITTEN", "FROM", "SHIFT", "PRTT", "LATENCY", "SPREAD"])];
    let opt = |v: Option<f64>| v.map_or("-".to_owned(), num);
    for e in l.estimates() {
        rows.push(vec![
            e.name.into(),
            e.unit.into(),
            num(e.value),
            e.from.into(),
            opt(e.shift),
            opt(e.prtt),
            opt(e.latency),
            percent(e.spread()),
        ]);
    }
    out += &table(&rows);
    if l.params.big_g > 0.0 {
        out += &format!("  G = {} us/B is {} MB/s\n", num(l.params.big_g), num(1.0 / l.params.big_g));
    }
    out += &match l.split {
        Split::Prtt => "  L and g separated by PRTT's g (the shift measures L + g together)\n".to_owned(),
        Split::Latency => "  L and g separated by the latency: Hockney's t0 = L + 2o, so L = t0 - 2o\n".to_owned(),
    };
    match &l.prtt {
        Ok(p) => out += &format!("  PRTT: {} sizes at {} ranks\n", p.sizes.len(), p.ranks),
        Err(e) => out += &format!("  PRTT cross-check: not available: {e}\n"),
    }
    let prtt_quality = l.prtt.as_ref().map(|p| p.quality.as_slice()).unwrap_or(&[]);
    out += &quality_section(&[s.quality.as_slice(), prtt_quality].concat());
    let prtt_warnings = l.prtt.as_ref().map(|p| p.warnings.as_slice()).unwrap_or(&[]);
    for w in s.warnings.iter().chain(prtt_warnings).chain(&l.warnings) {
        out += &format!("  warning: {w}\n");
    }
    out
}

fn nlogp_section(n: &NLogPFit, share: f64) -> String {
    let mut out = format!(
        "nLogP by process count n (shift at each n; L + g split as at 2 ranks, g = {:.1} % of it)\n",
        100.0 * share
    );
    let mut rows = vec![cells(&["N", "L us", "o us", "g us", "G us/B", "L + g us"])];
    for p in &n.points {
        let q = &p.params;
        rows.push(vec![p.n.to_string(), num(q.l), num(q.o), num(q.g), num(q.big_g), num(p.l_plus_g)]);
    }
    out += &table(&rows);
    let others: Vec<Quality> = n.points.iter().filter(|p| p.n != 2).flat_map(|p| p.quality.iter().cloned()).collect();
    if !others.is_empty() {
        out += &quality_section(&others);
    }
    for (count, e) in &n.skipped {
        out += &format!("  n = {count} left out: {e}\n");
    }
    for p in &n.points {
        for w in &p.warnings {
            out += &format!("  warning (n = {}): {w}\n", p.n);
        }
    }
    out
}

/// How many of a line's sizes farthest from it the report names.
const FARTHEST: usize = 3;

/// One line per fitted line: its series and sizes, R² and the sizes farthest from it.
fn quality_section(lines: &[Quality]) -> String {
    let mut out = format!(
        "  fit quality (R^2 of each line, weighted for relative error; the {FARTHEST} sizes farthest from it, measured against fitted):\n"
    );
    let mut rows = Vec::new();
    for q in lines {
        let sizes = q.residuals.iter().map(|r| r.0);
        let range = format!("{} .. {}", bytes(sizes.clone().min().unwrap_or(0)), bytes(sizes.max().unwrap_or(0)));
        let farthest: Vec<String> = q.worst(FARTHEST).iter().map(|&(s, r)| format!("{} {:+.1} %", bytes(s), 100.0 * r)).collect();
        let r2 = q.r2.map_or("-".to_owned(), |v| format!("R^2 {v:.3}"));
        rows.push(vec![format!("  {}", q.series), range, r2, farthest.join(", ")]);
    }
    out += &table(&rows);
    out
}

fn jacobi_section(points: &[JacobiPoint]) -> String {
    let mut out = "Jacobi, predicted against measured gain of overlap (S2: gain = min(TB, Tc), Tc = L + g + 2*8N*G at n = ranks)\n".to_owned();
    let mut rows = vec![cells(&["RANKS", "N", "BOUNDARY", "TB us", "Tc us", "PREDICTED us", "MEASURED us", "MEASURED/PREDICTED"])];
    for p in points {
        let ratio = if p.predicted_gain > 0.0 { num(p.measured_gain / p.predicted_gain) } else { "-".into() };
        rows.push(vec![
            p.ranks.to_string(),
            p.grid.to_string(),
            bytes(p.bytes),
            num(p.tb),
            num(p.tc),
            num(p.predicted_gain),
            num(p.measured_gain),
            ratio,
        ]);
    }
    out += &table(&rows);
    out
}

/// Runs `ferry fit`; returns the exit status: 0 when the parameter file was written, 1 when
/// the rows allow no parameter file (the report says why) or it cannot be written, 2 for
/// unreadable or invalid input.
pub fn run(args: &FitArgs) -> i32 {
    let names: Vec<String> = args.results.iter().map(|p| p.display().to_string()).collect();
    let origin = names.join(" + ");
    let mut all = Vec::new();
    for (path, name) in args.results.iter().zip(&names) {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("ferry fit: cannot read {name}: {e}");
                return 2;
            }
        };
        match results::parse(&text) {
            Ok(rows) => all.extend(rows),
            Err(e) => {
                eprintln!("ferry fit: {name}: {e}");
                return 2;
            }
        }
    }
    let implementation = match choose(&all, args.implementation.as_deref()) {
        Ok(name) => name,
        Err(e) => {
            eprintln!("ferry fit: {origin}: {e}");
            return 2;
        }
    };
    let rows: Vec<Row> = all.into_iter().filter(|r| r.implementation == implementation).collect();
    if !usable(&rows) {
        let mut present: Vec<&str> = rows.iter().map(|r| r.benchmark.as_str()).collect();
        present.sort_unstable();
        present.dedup();
        eprintln!(
            "ferry fit: {origin}: no usable rows for implementation {implementation}: fitting needs latency, \
             shift.*, prtt.* or jacobi.* rows; the file has {}",
            present.join(", ")
        );
        return 2;
    }
    let fitted = fit_all(&rows, &implementation, &origin);
    print!("{}", report(&fitted, &origin, &implementation, rows.len()));
    let Some(params) = &fitted.params else {
        eprintln!("ferry fit: no parameter file: its [loggp] section needs the LogGP fit, which failed (see the report)");
        return 1;
    };
    let toml = params.to_toml();
    if let Err(e) = ModelParams::from_toml(&toml) {
        eprintln!("ferry fit: the fitted parameters do not make a valid parameter file: {e}");
        return 1;
    }
    write_params(args.out.as_deref(), &toml)
}

fn write_params(out: Option<&Path>, toml: &str) -> i32 {
    match out {
        Some(path) => match std::fs::write(path, toml) {
            Ok(()) => {
                println!("\nparameter file written to {}", path.display());
                0
            }
            Err(e) => {
                eprintln!("ferry fit: cannot write {}: {e}", path.display());
                1
            }
        },
        None => {
            println!("\n# ---- parameter file (ferry sim --params FILE); everything above is the report ----");
            print!("{toml}");
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(implementation: &str, benchmark: &str, ranks: u32, size: u64, v: f64) -> Row {
        Row {
            implementation: implementation.into(),
            benchmark: benchmark.into(),
            ranks,
            size,
            median: v,
            min: v,
            max: v,
            runs: 1,
        }
    }

    /// Rows from LogGP (L 0.8, o 0.3, g 0.5, G 1/9000) for latency and the shift at 2 ranks.
    fn rows(with_shift: bool) -> Vec<Row> {
        let (l, o, g, big_g) = (0.8, 0.3, 0.5, 1.0 / 9000.0);
        let mut rows = Vec::new();
        for s in (0..18).map(|k| 1u64 << k) {
            let x = s as f64;
            rows.push(row("ferry", "latency", 2, s, l + 2.0 * o + x * big_g));
            if with_shift {
                rows.push(row("ferry", "shift.nonoverlap", 2, s, 2.0 * o));
                rows.push(row("ferry", "shift.overlap", 2, s, l + g + x * big_g));
            }
        }
        rows.push(row("ferry", "bandwidth", 2, 1024, 900.0));
        rows
    }

    #[test]
    fn the_implementation_is_the_only_one_or_the_one_named() {
        let mut r = rows(false);
        assert_eq!(choose(&r, None), Ok("ferry".into()));
        assert_eq!(choose(&r, Some("ferry")), Ok("ferry".into()));
        let e = choose(&r, Some("mpich")).unwrap_err();
        assert!(e.contains("\"mpich\"") && e.contains("ferry"), "{e}");
        r.push(row("mpich", "latency", 2, 8, 1.0));
        r.push(row("openmpi", "latency", 2, 8, 1.0));
        assert_eq!(implementations(&r), ["ferry", "mpich", "openmpi"]);
        let e = choose(&r, None).unwrap_err();
        assert!(e.contains("ferry, mpich, openmpi") && e.contains("--impl"), "{e}");
        assert_eq!(choose(&r, Some("mpich")), Ok("mpich".into()));
    }

    #[test]
    fn only_the_benchmarks_a_fit_uses_count_as_usable() {
        assert!(!usable(&[row("x", "bandwidth", 2, 8, 1.0), row("x", "bcast.max", 4, 8, 1.0)]));
        assert!(!usable(&[row("x", "shiftless", 2, 8, 1.0), row("x", "latency2", 2, 8, 1.0)]));
        for b in ["latency", "shift.total", "prtt.1", "jacobi.overlap"] {
            assert!(usable(&[row("x", b, 2, 8, 1.0)]), "{b}");
        }
    }

    #[test]
    fn latency_alone_fits_hockney_but_gives_no_parameter_file() {
        let f = fit_all(&rows(false), "ferry", "r.csv");
        assert!(f.hockney.is_ok());
        assert!(f.loggp.as_ref().unwrap_err().contains("no shift.nonoverlap rows at 2 ranks"));
        assert!(f.params.is_none());
        let text = report(&f, "r.csv", "ferry", 19);
        assert!(text.contains("t0     1.400   us    start-up time"), "{text}");
        assert!(text.contains("LogGP: not fitted: no shift.nonoverlap rows"), "{text}");
        assert!(text.contains("nLogP: not fitted: needs the LogGP fit"), "{text}");
        assert!(text.contains("Jacobi prediction: not made"), "{text}");
    }

    #[test]
    fn shift_and_latency_give_a_parameter_file_that_says_where_it_came_from() {
        let f = fit_all(&rows(true), "ferry", "r.csv");
        let p = f.params.as_ref().unwrap();
        assert!((p.loggp.g - 0.5).abs() < 1e-9 && (p.loggp.l - 0.8).abs() < 1e-9, "{:?}", p.loggp);
        assert_eq!(p.name.as_deref(), Some("ferry"));
        let source = p.source.as_deref().unwrap();
        assert!(source.contains("r.csv") && source.contains("g from latency"), "{source}");
        assert!(p.hockney.is_some() && p.nlogp.is_none());
        assert_eq!(ModelParams::from_toml(&p.to_toml()).as_ref(), Ok(p));
        let text = report(&f, "r.csv", "ferry", 55);
        assert!(text.contains("L and g separated by the latency"), "{text}");
        assert!(text.contains("PRTT cross-check: not available: no prtt.1 rows"), "{text}");
    }

    #[test]
    fn a_negative_free_g_is_held_at_zero_and_the_report_says_so() {
        // The shift's overlappable part shrinks as messages grow: the free slope of the
        // total is negative, yet a parameter file is written, with G = 0.
        let mut r = rows(true);
        for x in r.iter_mut().filter(|x| x.benchmark == "shift.overlap") {
            x.median = 1.3 * (1.0 - x.size as f64 / (1u64 << 18) as f64);
        }
        let f = fit_all(&r, "ferry", "busy.csv");
        let p = f.params.as_ref().expect("a parameter file despite the falling time");
        assert_eq!(p.loggp.big_g, 0.0);
        let text = report(&f, "busy.csv", "ferry", r.len());
        assert!(text.contains("warning: G (shift.total at 2 ranks, 512 .. 131072 B) came out -0.00000"), "{text}");
        assert!(text.contains("fit quality (R^2 of each line"), "{text}");
        // The flat line lies farthest above the largest size, where the time fell most.
        let total = text.lines().find(|l| l.trim_start().starts_with("shift.total at 2 ranks")).expect("a line for shift.total");
        assert!(total.contains("512 B .. 128 KiB") && total.contains("R^2 0.000  128 KiB -"), "{total}");
    }

    #[test]
    fn prtt_without_the_shift_is_shown_on_its_own() {
        // PRTT(1,0,s) = 2(L + 2o + sG), PRTT(16,0,s) adds 15(g + sG), PRTT(16,d,s) 15(o + d).
        let (l, o, g, big_g) = (0.8, 0.3, 0.5, 1.0 / 9000.0);
        let mut rows = Vec::new();
        for s in (0..10).map(|k| 1u64 << k) {
            let p1 = 2.0 * (l + 2.0 * o + s as f64 * big_g);
            rows.push(row("x", "prtt.1", 2, s, p1));
            rows.push(row("x", "prtt.n", 2, s, p1 + 15.0 * (g + s as f64 * big_g)));
            rows.push(row("x", "prtt.nd", 2, s, p1 + 15.0 * (o + p1)));
            rows.push(row("x", "prtt.d", 2, s, p1));
        }
        let f = fit_all(&rows, "x", "p.csv");
        assert!(f.params.is_none());
        let text = report(&f, "p.csv", "x", rows.len());
        assert!(text.contains("PRTT alone (10 sizes at 2 ranks; not a parameter file): L 0.8000 us, o 0.3000 us, g 0.5000 us"), "{text}");
    }

    #[test]
    fn numbers_keep_four_significant_digits() {
        assert_eq!(num(1.4), "1.400");
        assert_eq!(num(9000.0), "9000");
        assert_eq!(num(123456.7), "123457");
        assert_eq!(num(1.0 / 9000.0), "0.0001111");
        assert_eq!(num(0.0), "0");
        assert_eq!(num(0.99996), "1.000");
        assert_eq!(num(-2.5), "-2.500");
        assert_eq!(significant(0.30000000000000004), 0.3);
        assert_eq!(significant(1.0 / 9000.0), 0.000111111111);
        assert_eq!((bytes(0), bytes(512), bytes(128 << 10), bytes(4 << 20), bytes(1000)), ("0 B".into(), "512 B".into(), "128 KiB".into(), "4 MiB".into(), "1000 B".into()));
    }
}
