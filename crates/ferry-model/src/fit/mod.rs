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
    #[error("{benchmark} at {ranks} ranks: {got} message size(s); at least {need} needed")]
    TooFewSizes {
        benchmark: String,
        ranks: u32,
        got: usize,
        need: usize,
    },
    #[error("{benchmark} at {ranks} ranks: all {rows} rows have size {size}; a line needs different sizes")]
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
