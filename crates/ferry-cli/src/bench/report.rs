//! The `--plot` report, as data: one figure per benchmark and rank count (x = size, y =
//! the median, one line per implementation, log-log), and summary.md with a table per
//! figure and the ratios of every other implementation to the reference (Ferry). Drawing
//! the figures is charts.rs's business.

use std::fmt::Write;

use ferry_model::results::unit;
use ferry_model::Row;

use super::sizes::human;

/// One chart to draw.
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    pub benchmark: String,
    pub ranks: u32,
    /// File name without extension: `latency.n2`.
    pub stem: String,
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    /// One line per implementation: (size, median) with both above 0, for log axes.
    pub series: Vec<(String, Vec<(f64, f64)>)>,
}

/// What the summary says about the whole run.
pub struct Context<'a> {
    /// Implementations in order, each with its library's version line if known.
    pub implementations: &'a [(String, Option<String>)],
    /// The implementation ratios are taken to (`ferry`), if it ran.
    pub reference: Option<&'a str>,
    pub runs: u32,
}

/// The figures of `rows`, in the order their benchmarks and rank counts first appear.
pub fn figures(rows: &[Row], implementations: &[String]) -> Vec<Figure> {
    let mut keys: Vec<(&str, u32)> = Vec::new();
    for r in rows {
        if !keys.contains(&(r.benchmark.as_str(), r.ranks)) {
            keys.push((&r.benchmark, r.ranks));
        }
    }
    keys.into_iter()
        .map(|(benchmark, ranks)| {
            let series = implementations
                .iter()
                .filter_map(|i| {
                    let points: Vec<(f64, f64)> = rows
                        .iter()
                        .filter(|r| r.implementation == *i && r.benchmark == benchmark && r.ranks == ranks)
                        .filter(|r| r.size > 0 && r.median > 0.0)
                        .map(|r| (r.size as f64, r.median))
                        .collect();
                    (!points.is_empty()).then(|| (i.clone(), points))
                })
                .collect();
            Figure {
                benchmark: benchmark.to_owned(),
                ranks,
                stem: format!("{benchmark}.n{ranks}"),
                title: title(benchmark, ranks),
                x_label: size_label(benchmark).to_owned(),
                y_label: unit(benchmark).to_owned(),
                series,
            }
        })
        .collect()
}

fn title(benchmark: &str, ranks: u32) -> String {
    format!("{benchmark}, {ranks} rank{}", if ranks == 1 { "" } else { "s" })
}

fn size_label(benchmark: &str) -> &'static str {
    if benchmark.starts_with("jacobi.") {
        "grid side N (N x N doubles)"
    } else if benchmark.contains('.') && !benchmark.starts_with("shift.") && !benchmark.starts_with("prtt.") {
        "bytes per rank's block"
    } else {
        "message bytes"
    }
}

/// summary.md: the context, then per figure its image and a table of medians and ratios.
pub fn summary(rows: &[Row], figures: &[Figure], ctx: &Context) -> String {
    let mut md = String::from("# ferry bench\n\n");
    let _ = writeln!(
        md,
        "Medians over {} run{} per implementation, run alternately (minimum and maximum in \
         results.csv). The figures leave out sizes and values of 0, which log axes cannot \
         show; the tables keep them.\n",
        ctx.runs,
        if ctx.runs == 1 { "" } else { "s" }
    );
    md.push_str("| implementation | library |\n|---|---|\n");
    for (name, library) in ctx.implementations {
        let _ = writeln!(md, "| {name} | {} |", library.as_deref().unwrap_or("?").replace('|', "/"));
    }
    let names: Vec<&str> = ctx.implementations.iter().map(|(n, _)| n.as_str()).collect();
    let others: Vec<&str> = names.iter().copied().filter(|n| Some(*n) != ctx.reference).collect();
    if let Some(reference) = ctx.reference.filter(|_| !others.is_empty()) {
        let _ = writeln!(
            md,
            "\nRatios are `other/{reference}` of the medians: for times (us) above 1 means \
             {reference} is faster; for bandwidths (MB/s) below 1 means {reference} is faster."
        );
    }

    for f in figures {
        let u = unit(&f.benchmark);
        let _ = writeln!(md, "\n## {} ({u})\n", f.title);
        let _ = writeln!(md, "![{}]({}.svg) ([PNG]({}.png))\n", f.title, f.stem, f.stem);
        let these: Vec<&Row> = rows.iter().filter(|r| r.benchmark == f.benchmark && r.ranks == f.ranks).collect();
        let mut sizes: Vec<u64> = these.iter().map(|r| r.size).collect();
        sizes.sort_unstable();
        sizes.dedup();
        let ratio_to = ctx.reference.filter(|r| names.contains(r) && !others.is_empty());
        let mut head = format!("| {} |", if f.benchmark.starts_with("jacobi.") { "N" } else { "size" });
        let mut rule = String::from("|---:|");
        for n in &names {
            let _ = write!(head, " {n} |");
            rule.push_str("---:|");
        }
        if let Some(reference) = ratio_to {
            for o in &others {
                let _ = write!(head, " {o}/{reference} |");
                rule.push_str("---:|");
            }
        }
        let _ = writeln!(md, "{head}\n{rule}");
        for size in sizes {
            let value = |name: &str| these.iter().find(|r| r.implementation == name && r.size == size).map(|r| r.median);
            let mut line = format!("| {} |", human(size));
            for n in &names {
                let _ = write!(line, " {} |", value(n).map(number).unwrap_or_else(|| "-".into()));
            }
            if let Some(reference) = ratio_to {
                for o in &others {
                    let ratio = match (value(o), value(reference)) {
                        (Some(v), Some(r)) if r > 0.0 => format!("{:.2}", v / r),
                        _ => "-".into(),
                    };
                    let _ = write!(line, " {ratio} |");
                }
            }
            let _ = writeln!(md, "{line}");
        }
    }
    md
}

/// A value with about three significant digits.
fn number(v: f64) -> String {
    if v >= 1000.0 {
        format!("{v:.0}")
    } else if v >= 100.0 {
        format!("{v:.1}")
    } else if v >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(i: &str, b: &str, ranks: u32, size: u64, median: f64) -> Row {
        Row { implementation: i.into(), benchmark: b.into(), ranks, size, median, min: median, max: median, runs: 3 }
    }

    fn rows() -> Vec<Row> {
        vec![
            row("ferry", "latency", 2, 0, 0.4),
            row("ferry", "latency", 2, 1024, 1.0),
            row("mpich", "latency", 2, 0, 0.5),
            row("mpich", "latency", 2, 1024, 1.5),
            row("ferry", "bandwidth", 2, 1024, 2000.0),
            row("mpich", "bandwidth", 2, 1024, 1000.0),
            row("ferry", "jacobi.overlap", 4, 64, 12.0),
        ]
    }

    #[test]
    fn one_figure_per_benchmark_and_rank_count_without_what_log_axes_cannot_show() {
        let impls = vec!["ferry".to_owned(), "mpich".to_owned()];
        let figs = figures(&rows(), &impls);
        let stems: Vec<&str> = figs.iter().map(|f| f.stem.as_str()).collect();
        assert_eq!(stems, ["latency.n2", "bandwidth.n2", "jacobi.overlap.n4"]);
        assert_eq!(figs[0].series, [("ferry".to_owned(), vec![(1024.0, 1.0)]), ("mpich".to_owned(), vec![(1024.0, 1.5)])]);
        assert_eq!((figs[1].y_label.as_str(), figs[1].x_label.as_str()), ("MB/s", "message bytes"));
        assert_eq!(figs[2].series.len(), 1);
        assert!(figs[2].x_label.starts_with("grid side"));
        assert_eq!(figs[2].title, "jacobi.overlap, 4 ranks");
    }

    #[test]
    fn the_summary_has_tables_ratios_and_links() {
        let impls = vec![("ferry".to_owned(), Some("Ferry 0.1.0".to_owned())), ("mpich".to_owned(), None)];
        let names: Vec<String> = impls.iter().map(|(n, _)| n.clone()).collect();
        let rows = rows();
        let figs = figures(&rows, &names);
        let md = summary(&rows, &figs, &Context { implementations: &impls, reference: Some("ferry"), runs: 3 });
        assert!(md.contains("| ferry | Ferry 0.1.0 |"), "{md}");
        assert!(md.contains("## latency, 2 ranks (us)"), "{md}");
        assert!(md.contains("![latency, 2 ranks](latency.n2.svg) ([PNG](latency.n2.png))"), "{md}");
        assert!(md.contains("| size | ferry | mpich | mpich/ferry |"), "{md}");
        assert!(md.contains("| 0 | 0.400 | 0.500 | 1.25 |"), "{md}");
        assert!(md.contains("| 1K | 1.00 | 1.50 | 1.50 |"), "{md}");
        assert!(md.contains("| 1K | 2000 | 1000 | 0.50 |"), "{md}");
        assert!(md.contains("| 64 | 12.00 | - | - |"), "{md}");
        assert!(md.contains("| N |"), "{md}");

        let alone = [("ferry".to_owned(), None)];
        let md = summary(&rows[..2], &figures(&rows[..2], &names), &Context { implementations: &alone, reference: Some("ferry"), runs: 1 });
        assert!(!md.contains("Ratios") && md.contains("| size | ferry |\n"), "{md}");
    }
}
