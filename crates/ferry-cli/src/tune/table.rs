//! The pure half of `ferry tune`: which algorithms are candidates for a cell, which one wins
//! it, the size ranges a measured size stands for, the decision table file written from the
//! winners, and the report of predicted against measured times. No I/O: `super` measures.

use ferry_coll::select::{self, CallKind, Facts, Row, Span, Table};
use ferry_coll::{algorithms_for, AlgorithmInfo};

/// One cell of the decision table that `ferry tune` checks: a call at one communicator
/// size and one size metric (bytes of one rank's block; 0 for barrier).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cell {
    pub call: CallKind,
    pub ranks: usize,
    pub bytes: usize,
}

/// What the tuner runs on: one host, every rank on it, blocking calls with a predefined
/// (commutative) operation, as bench/coll.c makes them.
pub fn facts(call: CallKind) -> Facts {
    Facts { call, commutative: true, one_host: true, several_hosts: false }
}

/// The registered algorithms of the cell's collective that may run for it on this host
/// (shared-memory ones only where their slots hold the block; no hierarchical ones).
pub fn candidates(cell: &Cell) -> Vec<&'static AlgorithmInfo> {
    let f = facts(cell.call);
    algorithms_for(cell.call.collective).filter(|a| select::applies(a, &f, cell.ranks, cell.bytes)).collect()
}

/// What `table` runs for the cell on this host.
pub fn table_choice(table: &Table, cell: &Cell) -> &'static AlgorithmInfo {
    select::select(table, None, &facts(cell.call), cell.ranks, cell.bytes)
}

/// The algorithms worth measuring: the `top` fastest predicted (ties in registration
/// order) and the table's current choice, each once.
pub fn to_measure(predicted: &[(&'static AlgorithmInfo, f64)], current: &'static AlgorithmInfo, top: usize) -> Vec<&'static AlgorithmInfo> {
    let mut by_time: Vec<_> = predicted.to_vec();
    by_time.sort_by(|a, b| a.1.total_cmp(&b.1));
    let mut out: Vec<&'static AlgorithmInfo> = by_time.iter().take(top).map(|(a, _)| *a).collect();
    if !out.iter().any(|a| a.id == current.id) {
        out.push(current);
    }
    out
}

/// The winner of a cell: the fastest of `times`, unless it beats `current` by no more than
/// `margin` (a fraction: 0.05 is 5%), in which case the table's choice stays, so that a
/// tuned table changes a cell only where the difference is larger than the noise asked
/// for. `current` without a time of its own is beaten by any time.
pub fn choose(times: &[(&'static AlgorithmInfo, f64)], current: &'static AlgorithmInfo, margin: f64) -> &'static AlgorithmInfo {
    let Some(&(best, t_best)) = times.iter().filter(|(_, t)| t.is_finite()).min_by(|a, b| a.1.total_cmp(&b.1)) else {
        return current;
    };
    match times.iter().find(|(a, _)| a.id == current.id) {
        Some(&(_, t_cur)) if t_cur.is_finite() && t_best >= t_cur * (1.0 - margin) => current,
        _ => best,
    }
}

/// The median of `xs` (NaN when empty).
pub fn median(xs: &[f64]) -> f64 {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 }
}

/// The byte ranges that measured `sizes` stand for, one per size in ascending order: from
/// half the smallest to twice the largest, split between neighbours at the power of two
/// nearest their geometric mean. Sizes outside all of them fall through to the rows after
/// the tuned ones.
pub fn size_spans(sizes: &[usize]) -> Vec<Span> {
    let mut s: Vec<usize> = sizes.to_vec();
    s.sort_unstable();
    s.dedup();
    let pow2_near = |x: f64| -> usize { 1usize << (x.max(1.0).log2().round() as u32) };
    let mut bounds = vec![s.first().map_or(0, |&f| f / 2)];
    for w in s.windows(2) {
        let b = pow2_near(((w[0] as f64) * (w[1] as f64)).sqrt()).clamp(w[0] + 1, w[1]);
        bounds.push(b);
    }
    bounds.push(s.last().map_or(1, |&l| l.saturating_mul(2).max(l + 1)));
    bounds.windows(2).map(|w| Span { lo: w[0], hi: Some(w[1]) }).collect()
}

/// `span` cut to the bytes over which `base` decides as it does at `bytes` (the base row
/// that holds the cell), so that a tuned row never changes sizes where the base table had
/// another choice than at the size measured; those fall through to the base rows.
pub fn clip(span: Span, base: &Table, call: CallKind, ranks: usize, bytes: usize) -> Span {
    let Some(row) = base.lookup(call, ranks, bytes) else { return span };
    let lo = span.lo.max(row.bytes.lo);
    let hi = match (span.hi, row.bytes.hi) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    Span { lo, hi }
}

/// One tuned row: the winner of the cell for `ranks` ranks and the bytes of `bytes`.
#[derive(Clone, Debug)]
pub struct TunedRow {
    pub call: CallKind,
    pub ranks: usize,
    pub bytes: Span,
    pub winner: &'static AlgorithmInfo,
}

/// The algorithm list of a tuned row: the base table's hierarchical algorithms for the
/// cell first (they run only across hosts, which the tuner did not measure), then the
/// winner, then the rest of the base row as the fallbacks where the winner does not apply.
fn row_algorithms(base: &Table, r: &TunedRow) -> Vec<&'static AlgorithmInfo> {
    let at = if r.call.sized() { r.bytes.lo } else { 0 };
    let base_list: Vec<&'static AlgorithmInfo> = base.lookup(r.call, r.ranks, at).map(|row| row.algorithms.clone()).unwrap_or_default();
    let mut out: Vec<&'static AlgorithmInfo> = base_list.iter().copied().filter(|a| a.hier).collect();
    for a in std::iter::once(r.winner).chain(base_list.iter().copied()) {
        if !out.iter().any(|b| b.id == a.id) {
            out.push(a);
        }
    }
    out
}

fn show_row(call: CallKind, ranks: Span, bytes: Span, algorithms: &[&'static AlgorithmInfo]) -> String {
    let names: Vec<&str> = algorithms.iter().map(|a| a.id.split_once('.').map_or(a.id, |(_, n)| n)).collect();
    format!("{:<21} {:<6} {:<11} {}\n", call.name(), ranks.to_string(), bytes.to_string(), names.join(", "))
}

/// The table file: `header` (each line made a comment), the tuned rows (a barrier's bytes
/// are `*`), then every row of `base`, which decide what the tuned rows do not cover.
pub fn render(header: &str, tuned: &[TunedRow], base: &Table) -> String {
    let mut out = String::new();
    for line in header.lines() {
        out.push_str(if line.is_empty() { "#\n" } else { "" });
        if !line.is_empty() {
            out.push_str(&format!("# {line}\n"));
        }
    }
    out.push_str("#\n# Format: crates/ferry-coll/decisions.table (CALL RANKS BYTES ALGORITHMS; the first\n");
    out.push_str("# matching row wins). Load it with FERRY_COLL_TABLE=<this file>.\n\n");
    out.push_str("# Tuned rows: one per measured collective, rank count and size.\n");
    for r in tuned {
        let bytes = if r.call.sized() && r.call.collective != ferry_coll::Collective::Barrier { r.bytes } else { Span::ANY };
        let ranks = Span { lo: r.ranks, hi: Some(r.ranks + 1) };
        out.push_str(&show_row(r.call, ranks, bytes, &row_algorithms(base, r)));
    }
    out.push_str("\n# The base table's rows (the built-in table's unless said otherwise): what no row\n# above covers.\n");
    for Row { call, ranks, bytes, algorithms } in base.rows() {
        out.push_str(&show_row(*call, *ranks, *bytes, algorithms));
    }
    out
}

/// One line of the report.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub cell: Cell,
    /// The base table's choice, and its measured time (us) when measured.
    pub current: &'static AlgorithmInfo,
    pub current_us: Option<f64>,
    pub winner: &'static AlgorithmInfo,
    pub winner_us: Option<f64>,
    /// The simulator's time for the winner (us), and for the base choice.
    pub predicted_us: f64,
    pub current_predicted_us: f64,
    /// Whether the US columns were measured (else they are the simulator's).
    pub measured: bool,
    /// For a changed cell: the second, separate measurement of the change.
    pub recheck: Option<Recheck>,
}

/// A change measured again in runs of its own, the proposed winner against the base
/// choice, alternating: it holds only if the winner is again faster by the margin.
#[derive(Clone, Copy, Debug)]
pub struct Recheck {
    pub proposed: &'static AlgorithmInfo,
    pub proposed_us: f64,
    pub current_us: f64,
    pub held: bool,
}

impl Recheck {
    pub fn new(proposed: &'static AlgorithmInfo, proposed_us: f64, current: &'static AlgorithmInfo, current_us: f64, margin: f64) -> Recheck {
        let held = choose(&[(current, current_us), (proposed, proposed_us)], current, margin).id == proposed.id;
        Recheck { proposed, proposed_us, current_us, held }
    }
}

impl Outcome {
    /// The outcome once its change was measured again: a change that did not hold gives
    /// the cell back to the base choice.
    pub fn rechecked(self, r: Recheck) -> Outcome {
        if r.held {
            Outcome { recheck: Some(r), ..self }
        } else {
            Outcome { winner: self.current, winner_us: self.current_us, predicted_us: self.current_predicted_us, recheck: Some(r), ..self }
        }
    }

    /// (predicted - measured) / measured, in percent, when measured.
    pub fn error_pct(&self) -> Option<f64> {
        self.winner_us.filter(|m| self.measured && *m > 0.0).map(|m| (self.predicted_us - m) / m * 100.0)
    }
}

/// The report: a column table of every cell, then how many cells changed and how far the
/// predictions were from the measurements.
pub fn report(outcomes: &[Outcome]) -> String {
    let us = |t: Option<f64>| t.map_or("-".to_owned(), |t| format!("{t:.2}"));
    let short = |a: &AlgorithmInfo| a.id.split_once('.').map_or(a.id, |(_, n)| n).to_owned();
    let mut rows = vec![["CELL", "BUILTIN", "US", "TUNED", "US", "PREDICTED_US", "ERROR", "RECHECK"].map(str::to_owned).to_vec()];
    for o in outcomes {
        let size = if o.cell.call.sized() && o.cell.call.collective != ferry_coll::Collective::Barrier { select::show_size(o.cell.bytes) } else { "-".to_owned() };
        rows.push(vec![
            format!("{} n={} {}", o.cell.call.name(), o.cell.ranks, size),
            short(o.current),
            us(o.current_us),
            if o.winner.id == o.current.id { "=".to_owned() } else { short(o.winner) },
            us(o.winner_us),
            format!("{:.2}", o.predicted_us),
            o.error_pct().map_or("-".to_owned(), |e| format!("{e:+.0}%")),
            match o.recheck {
                None => "-".to_owned(),
                Some(r) if r.held => format!("held {:.2} < {:.2}", r.proposed_us, r.current_us),
                Some(r) => format!("dropped {} {:.2} vs {:.2}", short(r.proposed), r.proposed_us, r.current_us),
            },
        ]);
    }
    let mut out = crate::info::table(&rows);
    let changed = outcomes.iter().filter(|o| o.winner.id != o.current.id).count();
    out.push_str(&format!("{changed} of {} cells changed (TUNED \"=\": the base table's choice kept)", outcomes.len()));
    let rechecked: Vec<&Recheck> = outcomes.iter().filter_map(|o| o.recheck.as_ref()).collect();
    if !rechecked.is_empty() {
        let held = rechecked.iter().filter(|r| r.held).count();
        out.push_str(&format!("; of {} changes measured again in separate runs, {held} held and {} were dropped", rechecked.len(), rechecked.len() - held));
    }
    out.push('\n');
    let mut errs: Vec<f64> = outcomes.iter().filter_map(Outcome::error_pct).map(f64::abs).collect();
    if !errs.is_empty() {
        errs.sort_by(f64::total_cmp);
        let within = |p: f64| errs.iter().filter(|e| **e <= p).count();
        out.push_str(&format!(
            "prediction error of the tuned choices: median {:.0}%, largest {:.0}%; within 25%: {} of {}, within 100%: {} of {}\n",
            median(&errs),
            errs[errs.len() - 1],
            within(25.0),
            errs.len(),
            within(100.0),
            errs.len()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alg(id: &str) -> &'static AlgorithmInfo {
        ferry_coll::algorithm(id).unwrap_or_else(|| panic!("{id} is registered"))
    }

    fn call(name: &str) -> CallKind {
        CallKind::from_name(name).unwrap()
    }

    #[test]
    fn candidates_keep_shared_memory_within_its_slots_and_leave_out_hierarchy() {
        let small = candidates(&Cell { call: call("bcast"), ranks: 2, bytes: 8 });
        assert!(small.iter().any(|a| a.id == "bcast.shm") && small.iter().any(|a| a.id == "bcast.binomial"));
        assert!(!small.iter().any(|a| a.hier));
        let large = candidates(&Cell { call: call("bcast"), ranks: 2, bytes: 1 << 20 });
        assert!(!large.iter().any(|a| a.shared.is_some()) && !large.is_empty());
    }

    #[test]
    fn measured_are_the_top_predicted_and_the_current_choice() {
        let (b, s, c) = (alg("bcast.binomial"), alg("bcast.shm"), alg("bcast.pipelined_chain"));
        let p = [(b, 3.0), (s, 1.0), (c, 2.0)];
        let ids = |v: Vec<&'static AlgorithmInfo>| v.iter().map(|a| a.id).collect::<Vec<_>>();
        assert_eq!(ids(to_measure(&p, b, 2)), ["bcast.shm", "bcast.pipelined_chain", "bcast.binomial"]);
        assert_eq!(ids(to_measure(&p, s, 2)), ["bcast.shm", "bcast.pipelined_chain"]);
    }

    #[test]
    fn the_winner_must_beat_the_current_choice_by_the_margin() {
        let (b, s) = (alg("bcast.binomial"), alg("bcast.shm"));
        assert_eq!(choose(&[(b, 10.0), (s, 9.0)], b, 0.05).id, "bcast.shm");
        assert_eq!(choose(&[(b, 10.0), (s, 9.8)], b, 0.05).id, "bcast.binomial", "2% is within the margin");
        assert_eq!(choose(&[(b, 10.0), (s, 11.0)], b, 0.0).id, "bcast.binomial");
        assert_eq!(choose(&[(s, 11.0)], b, 0.05).id, "bcast.shm", "an unmeasured current choice loses");
        assert_eq!(choose(&[(b, f64::NAN), (s, f64::NAN)], b, 0.05).id, "bcast.binomial", "no times: no change");
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn size_spans_cover_each_size_and_meet_between_them() {
        let spans = size_spans(&[1 << 20, 8, 1024, 65536]);
        let shown: Vec<String> = spans.iter().map(|s| s.to_string()).collect();
        assert_eq!(shown, ["4..128", "128..8K", "8K..256K", "256K..2M"]);
        for (s, b) in spans.iter().zip([8, 1024, 65536, 1 << 20]) {
            assert!(s.contains(b), "{s} holds {b}");
        }
        assert_eq!(size_spans(&[0]).iter().map(|s| s.to_string()).collect::<Vec<_>>(), ["0..1"]);
        assert_eq!(size_spans(&[4, 8]).iter().map(|s| s.to_string()).collect::<Vec<_>>(), ["2..8", "8..16"]);
    }

    #[test]
    fn a_tuned_span_stays_within_the_base_row_of_its_size() {
        let base = Table::parse("bcast * 0..4K shm, binomial\nbcast * 4K.. binomial\n").unwrap();
        let bcast = call("bcast");
        let s = |lo, hi| Span { lo, hi: Some(hi) };
        assert_eq!(clip(s(1024, 128 << 10), &base, bcast, 2, 65536), s(4096, 128 << 10));
        assert_eq!(clip(s(4, 1024), &base, bcast, 2, 8), s(4, 1024));
        assert_eq!(clip(s(128, 8192), &base, bcast, 2, 1024), s(128, 4096));
        assert_eq!(clip(s(4, 8), &Table::parse("").unwrap(), bcast, 2, 4), s(4, 8), "no base row: as it was");
    }

    #[test]
    fn the_written_table_parses_puts_tuned_rows_first_and_falls_through_to_the_base() {
        let base = Table::builtin();
        let spans = size_spans(&[8, 65536]);
        let tuned = vec![
            TunedRow { call: call("bcast"), ranks: 2, bytes: spans[0], winner: alg("bcast.binomial") },
            TunedRow { call: call("allreduce"), ranks: 4, bytes: spans[1], winner: alg("allreduce.ring") },
            TunedRow { call: call("barrier"), ranks: 2, bytes: Span { lo: 0, hi: Some(1) }, winner: alg("barrier.dissemination") },
        ];
        let text = render("made by a test\n\nmachine: nowhere", &tuned, base);
        assert!(text.starts_with("# made by a test\n#\n# machine: nowhere\n"), "{text}");
        let t = Table::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(t.rows().len(), tuned.len() + base.rows().len());
        let ids = |r: &Row| r.algorithms.iter().map(|a| a.id).collect::<Vec<_>>();
        // The winner, then the built-in row's others (a hierarchical algorithm of that row
        // would stay ahead: it runs only across hosts).
        assert_eq!(ids(t.lookup(call("bcast"), 2, 8).unwrap()), ["bcast.binomial", "bcast.shm"]);
        assert_eq!(table_choice(&t, &Cell { call: call("bcast"), ranks: 2, bytes: 8 }).id, "bcast.binomial");
        assert_eq!(table_choice(&t, &Cell { call: call("allreduce"), ranks: 4, bytes: 65536 }).id, "allreduce.ring");
        assert_eq!(table_choice(&t, &Cell { call: call("barrier"), ranks: 2, bytes: 0 }).id, "barrier.dissemination");
        // Cells the tuner did not measure decide as the built-in table does.
        for (c, ranks, bytes) in [("bcast", 3, 8), ("bcast", 2, 1 << 20), ("allreduce", 2, 65536), ("gather", 2, 8), ("barrier", 4, 0)] {
            let cell = Cell { call: call(c), ranks, bytes };
            assert_eq!(table_choice(&t, &cell).id, table_choice(base, &cell).id, "{cell:?}");
        }
    }

    #[test]
    fn the_report_shows_both_choices_and_the_prediction_error() {
        let o = |w: &str, wus: f64| Outcome {
            cell: Cell { call: call("bcast"), ranks: 2, bytes: 1024 },
            current: alg("bcast.shm"),
            current_us: Some(2.0),
            winner: alg(w),
            winner_us: Some(wus),
            predicted_us: 1.5,
            current_predicted_us: 1.0,
            measured: true,
            recheck: None,
        };
        let r = report(&[o("bcast.shm", 2.0), o("bcast.binomial", 1.0)]);
        let lines: Vec<&str> = r.lines().collect();
        assert_eq!(lines[1].split_whitespace().collect::<Vec<_>>(), ["bcast", "n=2", "1K", "shm", "2.00", "=", "2.00", "1.50", "-25%", "-"]);
        assert_eq!(lines[2].split_whitespace().collect::<Vec<_>>(), ["bcast", "n=2", "1K", "shm", "2.00", "binomial", "1.00", "1.50", "+50%", "-"]);
        assert!(r.contains("1 of 2 cells changed"), "{r}");
        assert!(r.contains("median 38%, largest 50%; within 25%: 1 of 2, within 100%: 2 of 2"), "{r}");
        let (shm, binomial) = (alg("bcast.shm"), alg("bcast.binomial"));
        let held = o("bcast.binomial", 1.0).rechecked(Recheck::new(binomial, 1.2, shm, 2.1, 0.05));
        let dropped = o("bcast.binomial", 1.0).rechecked(Recheck::new(binomial, 2.05, shm, 2.1, 0.05));
        assert_eq!((held.winner.id, dropped.winner.id, dropped.winner_us), ("bcast.binomial", "bcast.shm", Some(2.0)));
        let r = report(&[o("bcast.shm", 2.0), held, dropped]);
        assert!(r.lines().nth(2).unwrap().split_whitespace().collect::<Vec<_>>().ends_with(&["+50%", "held", "1.20", "<", "2.10"]), "{r}");
        assert!(r.lines().nth(3).unwrap().split_whitespace().collect::<Vec<_>>().ends_with(&["=", "2.00", "1.00", "-50%", "dropped", "binomial", "2.05", "vs", "2.10"]), "{r}");
        assert!(r.contains("1 of 3 cells changed (TUNED \"=\": the base table's choice kept); of 2 changes measured again in separate runs, 1 held and 1 were dropped\n"), "{r}");
        let predicted_only = report(&[Outcome { measured: false, ..o("bcast.binomial", 1.0) }]);
        assert!(predicted_only.lines().nth(1).unwrap().ends_with(" -") && !predicted_only.contains("prediction error"), "{predicted_only}");
    }
}
