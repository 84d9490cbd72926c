//! Fitting the models of [`crate::params`] to benchmark results ([`crate::results`]): Hockney
//! from ping-pong latency, LogGP from the S2 circular shift cross-checked with PRTT, nLogP
//! from the shift at several process counts, and the S2 Jacobi prediction from a fitted model.
//! Pure code: rows in, parameters and diagnostics out.
//!
//! Conventions shared by every fit:
//! - A point is one (size, value) of one benchmark at one rank count, the value being the
//!   row's median over runs. Rows that repeat a size (several result files concatenated) are
//!   merged into one point by the median of their medians.
//! - Lines are fitted by least squares weighted for *relative* error (weight 1 / scale² per
//!   point, the scale being the measured time of that point): message sizes span three or
//!   more orders of magnitude, and an unweighted fit would let the largest messages, whose
//!   noise alone exceeds the small-message times, decide the intercept.
//! - The per-byte term is written s·G, not LogGP's (s − 1)·G: the one byte lies far below
//!   any measurement's resolution, and s·G keeps zero-byte messages on the same line.
//! - Coefficients the model makes non-negative (o, L + g, g, G, and the sums of them that
//!   intercepts and slopes stand for) are fitted as such: least squares under the bound, by
//!   [`fit_line_bounded`]. Where the free line would cross a bound (noise on a busy machine,
//!   or a size range too narrow to see a per-byte cost), the coefficient is held at 0, the
//!   other refitted, and the fit says so; it refuses only rows that cannot carry a line at
//!   all (fewer than two sizes, no positive time to weigh by).
//! - Every line reports its quality ([`Quality`]): weighted R² and each point's residual
//!   relative to the time measured there, so the rows that disagree most can be named.
//! - "Small sizes" are the lower half of a series' sizes and "large sizes" the upper half
//!   (each at least two sizes when there are two; they overlap when the count is odd), so the
//!   split follows whatever size range the benchmark was run with.

pub mod hockney;
pub mod jacobi;
pub mod loggp;
pub mod nlogp;

use thiserror::Error;

use crate::results::Row;

/// Why a model could not be fitted to the rows given.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum FitError {
    #[error("no {benchmark} rows{}", at_ranks(*ranks))]
    NoRows { benchmark: String, ranks: Option<u32> },
    #[error("{benchmark} at {ranks} ranks: {got} message size(s); at least {need} needed to determine a line's intercept and slope")]
    TooFewSizes {
        benchmark: String,
        ranks: u32,
        got: usize,
        need: usize,
    },
    #[error("{benchmark} at {ranks} ranks: all {rows} rows have size {size}; a line's slope cannot be determined without different sizes")]
    SameSize {
        benchmark: String,
        ranks: u32,
        rows: usize,
        size: u64,
    },
    #[error("{benchmark} at {ranks} ranks, size {size}: value {value} is not a finite number")]
    NotFinite {
        benchmark: String,
        ranks: u32,
        size: u64,
        value: f64,
    },
    #[error("{what} = {value:.6}: {why}")]
    NonPhysical { what: String, value: f64, why: String },
    #[error("rows of several implementations ({0}); fit one implementation at a time")]
    Mixed(String),
    #[error("shift rows give L + g = {sum:.6} us together; latency or prtt.* rows are needed to separate L from g ({why})")]
    Inseparable { sum: f64, why: String },
    #[error("nLogP needs shift.* rows fitted at two or more rank counts; fitted: {0:?}")]
    TooFewRankCounts(Vec<u32>),
}

fn at_ranks(ranks: Option<u32>) -> String {
    ranks.map(|r| format!(" at {r} ranks")).unwrap_or_default()
}

/// A straight line y = intercept + slope · x.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Line {
    pub intercept: f64,
    pub slope: f64,
}

impl Line {
    pub fn at(&self, x: f64) -> f64 {
        self.intercept + self.slope * x
    }
}

/// Weighted least squares through `(x, y, weight)`; `None` when the x values do not vary.
/// Centred sums keep the result exact to rounding even with x in the millions.
pub(crate) fn fit_line(points: &[(f64, f64, f64)]) -> Option<Line> {
    let w: f64 = points.iter().map(|p| p.2).sum();
    if points.is_empty() || w.is_nan() || w <= 0.0 {
        return None;
    }
    let mx = points.iter().map(|p| p.2 * p.0).sum::<f64>() / w;
    let my = points.iter().map(|p| p.2 * p.1).sum::<f64>() / w;
    let sxx: f64 = points.iter().map(|p| p.2 * (p.0 - mx) * (p.0 - mx)).sum();
    let sxy: f64 = points.iter().map(|p| p.2 * (p.0 - mx) * (p.1 - my)).sum();
    if sxx.is_nan() || sxx <= 0.0 {
        return None;
    }
    let slope = sxy / sxx;
    Some(Line {
        intercept: my - slope * mx,
        slope,
    })
}

/// Which coefficients of a line may not be negative.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    pub intercept: bool,
    pub slope: bool,
}

impl Bounds {
    pub const BOTH: Bounds = Bounds { intercept: true, slope: true };
    pub const INTERCEPT: Bounds = Bounds { intercept: true, slope: false };
}

/// A line fitted under [`Bounds`], with the free least-squares line and what the bounds held.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BoundedLine {
    pub line: Line,
    /// The unconstrained weighted least-squares line.
    pub free: Line,
    /// The intercept was held at 0 (and the slope refitted alone).
    pub held_intercept: bool,
    /// The slope was held at 0 (and the intercept refitted alone).
    pub held_slope: bool,
}

fn weighted_ssr(points: &[(f64, f64, f64)], l: &Line) -> f64 {
    points.iter().map(|p| p.2 * (p.1 - l.at(p.0)).powi(2)).sum()
}

/// Weighted least squares through `(x, y, weight)` with the coefficients `bounds` names kept
/// >= 0; `None` when the x values do not vary. The problem is convex, so its minimum is the
/// free line when that is feasible, else the best of the lines with one or both bounded
/// coefficients held at 0 and the other fitted alone (itself kept >= 0 when bounded).
pub(crate) fn fit_line_bounded(points: &[(f64, f64, f64)], bounds: Bounds) -> Option<BoundedLine> {
    let free = fit_line(points)?;
    let fine = |l: &Line| !(bounds.intercept && l.intercept < 0.0 || bounds.slope && l.slope < 0.0);
    if fine(&free) {
        return Some(BoundedLine { line: free, free, held_intercept: false, held_slope: false });
    }
    let keep = |v: f64, bounded: bool| if bounded { v.max(0.0) } else { v };
    let w: f64 = points.iter().map(|p| p.2).sum();
    let mean = points.iter().map(|p| p.2 * p.1).sum::<f64>() / w;
    let sxx: f64 = points.iter().map(|p| p.2 * p.0 * p.0).sum();
    let through_zero = if sxx > 0.0 { points.iter().map(|p| p.2 * p.0 * p.1).sum::<f64>() / sxx } else { 0.0 };
    let mut candidates = Vec::new();
    if bounds.slope {
        candidates.push((Line { intercept: keep(mean, bounds.intercept), slope: 0.0 }, mean < 0.0 && bounds.intercept, true));
    }
    if bounds.intercept {
        candidates.push((Line { intercept: 0.0, slope: keep(through_zero, bounds.slope) }, true, through_zero < 0.0 && bounds.slope));
    }
    let (line, held_intercept, held_slope) = candidates
        .into_iter()
        .min_by(|a, b| weighted_ssr(points, &a.0).total_cmp(&weighted_ssr(points, &b.0)))
        .expect("a bound was crossed, so one is set");
    Some(BoundedLine { line, free, held_intercept, held_slope })
}

/// How well a line matches the points it was fitted to.
#[derive(Clone, Debug, PartialEq)]
pub struct Quality {
    /// The series, as the report names it (e.g. "shift.total at 2 ranks").
    pub series: String,
    /// Coefficient of determination of the weighted fit, 1 − SSR/SST; `None` when the
    /// values do not vary. Near 0 or below: the line explains nothing of the scatter.
    pub r2: Option<f64>,
    /// (size, (measured − fitted) / scale) for every point, the largest magnitude first: a
    /// point above its line is positive. The scale is the time measured at that size (for
    /// the shift's parts, the whole shift).
    pub residuals: Vec<(u64, f64)>,
}

impl Quality {
    /// The `n` points farthest from the line.
    pub fn worst(&self, n: usize) -> &[(u64, f64)] {
        &self.residuals[..n.min(self.residuals.len())]
    }
}

/// The quality of `line` through `points`: (size, value, scale), weighed by 1 / scale².
pub(crate) fn quality(series: String, points: &[(u64, f64, f64)], line: &Line) -> Quality {
    let w: f64 = points.iter().map(|p| 1.0 / (p.2 * p.2)).sum();
    let mean = points.iter().map(|p| p.1 / (p.2 * p.2)).sum::<f64>() / w;
    let sst: f64 = points.iter().map(|p| ((p.1 - mean) / p.2).powi(2)).sum();
    let ssr: f64 = points.iter().map(|p| ((p.1 - line.at(p.0 as f64)) / p.2).powi(2)).sum();
    let mut residuals: Vec<(u64, f64)> = points.iter().map(|p| (p.0, (p.1 - line.at(p.0 as f64)) / p.2)).collect();
    residuals.sort_by(|a, b| b.1.abs().total_cmp(&a.1.abs()));
    Quality { series, r2: (sst > 0.0).then(|| 1.0 - ssr / sst), residuals }
}

/// Median of a non-empty slice (mean of the two middle values for an even count).
pub(crate) fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

/// Refuses rows of more than one implementation: a fit mixes nothing.
pub(crate) fn one_implementation(rows: &[Row]) -> Result<(), FitError> {
    let mut names: Vec<&str> = Vec::new();
    for r in rows {
        if !names.contains(&r.implementation.as_str()) {
            names.push(&r.implementation);
        }
    }
    if names.len() > 1 {
        return Err(FitError::Mixed(names.join(", ")));
    }
    Ok(())
}

/// The points of `benchmark` at `ranks`: (size, median value) by increasing size, repeated
/// sizes merged by their median. Empty when there are no such rows.
pub(crate) fn series(rows: &[Row], benchmark: &str, ranks: u32) -> Result<Vec<(u64, f64)>, FitError> {
    let mut by_size: Vec<(u64, Vec<f64>)> = Vec::new();
    for r in rows.iter().filter(|r| r.benchmark == benchmark && r.ranks == ranks) {
        if !r.median.is_finite() {
            return Err(FitError::NotFinite {
                benchmark: benchmark.to_owned(),
                ranks,
                size: r.size,
                value: r.median,
            });
        }
        match by_size.iter_mut().find(|(s, _)| *s == r.size) {
            Some((_, v)) => v.push(r.median),
            None => by_size.push((r.size, vec![r.median])),
        }
    }
    by_size.sort_by_key(|(s, _)| *s);
    Ok(by_size.into_iter().map(|(s, mut v)| (s, median(&mut v))).collect())
}

/// Checks that `points` (of `benchmark` at `ranks`, taken from `rows`) can carry a line: two
/// sizes or more. One size measured several times is told apart from one row.
pub(crate) fn need_sizes(rows: &[Row], benchmark: &str, ranks: u32, points: &[(u64, f64)]) -> Result<(), FitError> {
    match points {
        [] => Err(FitError::NoRows {
            benchmark: benchmark.to_owned(),
            ranks: Some(ranks),
        }),
        [(size, _)] => {
            let same = rows.iter().filter(|r| r.benchmark == benchmark && r.ranks == ranks && r.size == *size).count();
            Err(if same > 1 {
                FitError::SameSize {
                    benchmark: benchmark.to_owned(),
                    ranks,
                    rows: same,
                    size: *size,
                }
            } else {
                FitError::TooFewSizes {
                    benchmark: benchmark.to_owned(),
                    ranks,
                    got: 1,
                    need: 2,
                }
            })
        }
        _ => Ok(()),
    }
}

/// Rank counts that have rows of `benchmark`, increasing.
pub(crate) fn rank_counts(rows: &[Row], benchmark: &str) -> Vec<u32> {
    let mut counts: Vec<u32> = rows.iter().filter(|r| r.benchmark == benchmark).map(|r| r.ranks).collect();
    counts.sort_unstable();
    counts.dedup();
    counts
}

/// The lower and upper halves of `n` points, as index ranges (see the module comment).
pub(crate) fn halves(n: usize) -> (std::ops::Range<usize>, std::ops::Range<usize>) {
    let half = n.div_ceil(2).max(n.min(2));
    (0..half, n - half..n)
}

/// Synthetic rows from the model equations, with optional seeded noise, for the tests.
#[cfg(test)]
pub(crate) mod synthetic {
    use crate::params::LogGp;
    use crate::results::{Row, PRTT_N};

    /// A seeded generator of multiplicative noise factors in [1 - amp, 1 + amp].
    pub struct Noise {
        state: u64,
        amp: f64,
    }

    impl Noise {
        pub fn new(seed: u64, amp: f64) -> Noise {
            Noise { state: seed, amp }
        }

        pub fn none() -> Noise {
            Noise::new(1, 0.0)
        }

        /// splitmix64: small, seeded and good enough to scatter test points.
        fn next_unit(&mut self) -> f64 {
            self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            (z >> 11) as f64 / (1u64 << 53) as f64
        }

        pub fn apply(&mut self, v: f64) -> f64 {
            v * (1.0 + self.amp * (2.0 * self.next_unit() - 1.0))
        }
    }

    pub fn row(benchmark: &str, ranks: u32, size: u64, v: f64) -> Row {
        Row {
            implementation: "synthetic".into(),
            benchmark: benchmark.into(),
            ranks,
            size,
            median: v,
            min: v,
            max: v,
            runs: 1,
        }
    }

    /// 1 B, 2 B, ... doubling up to `max`.
    pub fn sizes(max: u64) -> Vec<u64> {
        std::iter::successors(Some(1u64), |s| Some(s * 2)).take_while(|&s| s <= max).collect()
    }

    /// Ping-pong latency t0 + s / r_inf.
    pub fn latency(t0: f64, r_inf: f64, sizes: &[u64], noise: &mut Noise) -> Vec<Row> {
        sizes.iter().map(|&s| row("latency", 2, s, noise.apply(t0 + s as f64 / r_inf))).collect()
    }

    /// The S2 shift as the fitter reads it: nonoverlap 2o + s·Gp (Gp: the per-byte share the
    /// processor does itself), overlap L + g + s·(G − Gp), total their sum.
    pub fn shift(p: &LogGp, cpu_per_byte: f64, ranks: u32, sizes: &[u64], noise: &mut Noise) -> Vec<Row> {
        let mut rows = Vec::new();
        for &s in sizes {
            let x = s as f64;
            let tp = noise.apply(2.0 * p.o + x * cpu_per_byte);
            let tc = noise.apply(p.l + p.g + x * (p.big_g - cpu_per_byte));
            rows.push(row("shift.nonoverlap", ranks, s, tp));
            rows.push(row("shift.overlap", ranks, s, tc));
            rows.push(row("shift.total", ranks, s, tp + tc));
        }
        rows
    }

    /// PRTT with d = PRTT(1,0,s): PRTT(1,0,s) = 2(L + 2o + sG),
    /// PRTT(n,0,s) = PRTT(1,0,s) + (n−1)(g + sG), PRTT(n,d,s) = PRTT(1,0,s) + (n−1)(o + d).
    pub fn prtt(p: &LogGp, sizes: &[u64], noise: &mut Noise) -> Vec<Row> {
        let n = (PRTT_N - 1) as f64;
        let mut rows = Vec::new();
        for &s in sizes {
            let x = s as f64;
            let p1 = noise.apply(2.0 * (p.l + 2.0 * p.o + x * p.big_g));
            let d = p1;
            rows.push(row("prtt.1", 2, s, p1));
            rows.push(row("prtt.n", 2, s, noise.apply(2.0 * (p.l + 2.0 * p.o + x * p.big_g) + n * (p.g + x * p.big_g))));
            rows.push(row("prtt.nd", 2, s, noise.apply(2.0 * (p.l + 2.0 * p.o + x * p.big_g) + n * (p.o + d))));
            rows.push(row("prtt.d", 2, s, d));
        }
        rows
    }

    /// Asserts |got − want| <= tol · |want| (or tol when want is 0).
    pub fn close(what: &str, got: f64, want: f64, tol: f64) {
        let scale = if want == 0.0 { 1.0 } else { want.abs() };
        assert!((got - want).abs() <= tol * scale, "{what}: got {got}, want {want} (tolerance {tol})");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use synthetic::row;

    #[test]
    fn weighted_lines_are_exact_on_exact_data() {
        let pts: Vec<(f64, f64, f64)> =
            (0..23).map(|k| (k as f64 * 1e5, 3.5 + 2e-4 * k as f64 * 1e5, 1.0 / (k as f64 + 1.0))).collect();
        let l = fit_line(&pts).unwrap();
        synthetic::close("intercept", l.intercept, 3.5, 1e-12);
        synthetic::close("slope", l.slope, 2e-4, 1e-12);
        assert_eq!(fit_line(&[(1.0, 1.0, 1.0), (1.0, 2.0, 1.0)]), None, "one x");
        assert_eq!(fit_line(&[]), None);
    }

    #[test]
    fn bounded_lines_are_the_least_squares_under_the_bounds() {
        // Seeded clouds around lines of every sign: the bounded line is feasible and no
        // feasible line on a fine grid around it does better.
        let mut noise = synthetic::Noise::new(11, 1.0);
        for case in 0..200 {
            let (a, b) = (noise.apply(1.0) - 1.0, noise.apply(1.0) - 1.0);
            let pts: Vec<(f64, f64, f64)> = (0..6).map(|k| (k as f64, a + b * k as f64 + noise.apply(1.0) - 1.0, noise.apply(1.5))).collect();
            for bounds in [Bounds::BOTH, Bounds::INTERCEPT] {
                let got = fit_line_bounded(&pts, bounds).unwrap();
                let l = got.line;
                assert!(l.intercept >= 0.0 && (!bounds.slope || l.slope >= 0.0), "case {case}: {got:?}");
                assert!(!got.held_intercept || l.intercept == 0.0, "case {case}: {got:?}");
                assert!(!got.held_slope || l.slope == 0.0, "case {case}: {got:?}");
                assert_eq!(got.held_intercept || got.held_slope, got.line != got.free, "case {case}: {got:?}");
                let best = weighted_ssr(&pts, &l);
                for i in -40..=40 {
                    for j in -40..=40 {
                        let t = Line { intercept: (l.intercept + i as f64 * 0.01).max(0.0), slope: l.slope + j as f64 * 0.01 };
                        if bounds.slope && t.slope < 0.0 {
                            continue;
                        }
                        assert!(weighted_ssr(&pts, &t) >= best - 1e-12, "case {case}: {t:?} beats {got:?}");
                    }
                }
            }
        }
        // A feasible free line is kept as it is.
        let pts = [(1.0, 2.0, 1.0), (2.0, 3.0, 1.0), (3.0, 4.5, 1.0)];
        let got = fit_line_bounded(&pts, Bounds::BOTH).unwrap();
        assert_eq!((got.line, got.held_intercept, got.held_slope), (got.free, false, false));
    }

    #[test]
    fn quality_names_the_rows_farthest_from_the_line() {
        let line = Line { intercept: 1.0, slope: 0.5 };
        let mut pts: Vec<(u64, f64, f64)> = (0..8).map(|s| (s, line.at(s as f64), line.at(s as f64))).collect();
        let q = quality("latency at 2 ranks".into(), &pts, &line);
        assert_eq!(q.r2, Some(1.0));
        assert!(q.residuals.iter().all(|r| r.1 == 0.0));
        pts[5].1 *= 1.2;
        pts[2].1 *= 0.95;
        let q = quality("latency at 2 ranks".into(), &pts, &line);
        assert_eq!(q.worst(2).iter().map(|r| r.0).collect::<Vec<_>>(), [5, 2]);
        // The scale stays the line's value there: +20 % of it above the line.
        synthetic::close("residual at 5", q.residuals[0].1, 0.2, 1e-12);
        assert!(q.r2.unwrap() < 1.0 && q.r2.unwrap() > 0.5, "{q:?}");
        assert_eq!(quality("flat".into(), &[(1, 2.0, 2.0), (2, 2.0, 2.0)], &line).r2, None);
    }

    #[test]
    fn series_merges_repeated_sizes_and_sorts() {
        let rows = vec![
            row("latency", 2, 8, 3.0),
            row("latency", 2, 1, 1.0),
            row("latency", 2, 8, 5.0),
            row("latency", 2, 8, 4.5),
            row("latency", 4, 8, 9.0),
            row("shift.total", 2, 8, 9.0),
        ];
        assert_eq!(series(&rows, "latency", 2).unwrap(), vec![(1, 1.0), (8, 4.5)]);
        assert_eq!(rank_counts(&rows, "latency"), vec![2, 4]);
        let mut bad = rows.clone();
        bad[0].median = f64::NAN;
        assert!(matches!(series(&bad, "latency", 2), Err(FitError::NotFinite { size: 8, .. })));
    }

    #[test]
    fn halves_cover_both_ends() {
        assert_eq!(halves(2), (0..2, 0..2));
        assert_eq!(halves(3), (0..2, 1..3));
        assert_eq!(halves(4), (0..2, 2..4));
        assert_eq!(halves(18), (0..9, 9..18));
    }

    #[test]
    fn mixed_implementations_are_refused() {
        let mut rows = vec![row("latency", 2, 1, 1.0), row("latency", 2, 2, 1.0)];
        assert_eq!(one_implementation(&rows), Ok(()));
        rows[1].implementation = "mpich".into();
        assert_eq!(one_implementation(&rows), Err(FitError::Mixed("synthetic, mpich".into())));
    }
}
