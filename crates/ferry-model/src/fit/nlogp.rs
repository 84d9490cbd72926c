//! nLogP (S2): LogGP measured at user level as a function of the number of communicating
//! processes n, from the circular shift run at each n (`shift.*` rows with ranks = n).
//!
//! At every n the shift is read exactly as at two ranks ([`loggp::fit_shift`]): o(n) from
//! `shift.nonoverlap`, L(n) + g(n) from `shift.overlap`, G(n) from the slope of
//! `shift.total`. PRTT runs on two ranks only, so nothing measures g apart from L at other n;
//! L(n) + g(n) is split in the proportion found at two ranks ([`LogGpFit::gap_share`]):
//! g(n) = share · (L + g)(n), L(n) = (L + g)(n) − g(n). The split never makes either part
//! negative, and at n = 2 it reproduces [loggp] exactly. A rank count whose rows cannot be
//! fitted is left out of the table and reported.

use super::loggp::{self, LogGpFit};
use super::{one_implementation, rank_counts, FitError};
use crate::params::{LogGp, NLogP};
use crate::results::Row;

/// The fit at one process count.
#[derive(Clone, Debug, PartialEq)]
pub struct NPoint {
    pub n: u32,
    pub l_plus_g: f64,
    pub params: LogGp,
    /// The shift's lines at this n (as [`loggp::ShiftFit::quality`]).
    pub quality: Vec<super::Quality>,
    pub warnings: Vec<String>,
}

/// The nLogP tables and the rank counts that could not be fitted.
#[derive(Clone, Debug, PartialEq)]
pub struct NLogPFit {
    pub table: NLogP,
    pub points: Vec<NPoint>,
    pub skipped: Vec<(u32, FitError)>,
}

/// Fits L(n), o(n), g(n), G(n) to the shift rows at every rank count, splitting L + g as
/// `base` (the two-rank LogGP fit) did.
pub fn fit(rows: &[Row], base: &LogGpFit) -> Result<NLogPFit, FitError> {
    one_implementation(rows)?;
    let share = base.gap_share();
    let mut points = Vec::new();
    let mut skipped = Vec::new();
    for n in rank_counts(rows, "shift.nonoverlap") {
        if n == base.shift.ranks {
            points.push(NPoint {
                n,
                l_plus_g: base.shift.l_plus_g,
                params: base.params,
                quality: base.shift.quality.clone(),
                warnings: Vec::new(),
            });
            continue;
        }
        match loggp::fit_shift(rows, n) {
            Ok(s) => {
                let g = share * s.l_plus_g;
                points.push(NPoint {
                    n,
                    l_plus_g: s.l_plus_g,
                    params: LogGp {
                        l: s.l_plus_g - g,
                        o: s.o,
                        g,
                        big_g: s.big_g,
                    },
                    quality: s.quality,
                    warnings: s.warnings,
                });
            }
            Err(e) => skipped.push((n, e)),
        }
    }
    if points.len() < 2 {
        return Err(FitError::TooFewRankCounts(points.iter().map(|p| p.n).collect()));
    }
    let column = |f: fn(&LogGp) -> f64| Some(points.iter().map(|p| f(&p.params)).collect());
    let table = NLogP {
        n: points.iter().map(|p| p.n).collect(),
        l: column(|p| p.l),
        o: column(|p| p.o),
        g: column(|p| p.g),
        big_g: column(|p| p.big_g),
    };
    Ok(NLogPFit { table, points, skipped })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fit::synthetic::{close, prtt, row, shift, sizes, Noise};
    use crate::params::ModelParams;

    /// L + g grows with n, o a little, G too; g keeps its two-rank share (0.5 / 1.3) of L + g.
    fn at(n: u32) -> LogGp {
        let lg = 1.3 + 0.2 * f64::from(n - 2);
        LogGp {
            l: lg * 0.8 / 1.3,
            o: 0.3 + 0.01 * f64::from(n),
            g: lg * 0.5 / 1.3,
            big_g: (1.0 + 0.1 * f64::from(n)) / 9000.0,
        }
    }

    fn rows(noise: &mut Noise) -> Vec<Row> {
        let mut rows = Vec::new();
        for n in 2..=8 {
            rows.extend(shift(&at(n), 0.0, n, &sizes(128 << 10), noise));
        }
        rows.extend(prtt(&at(2), &sizes(128 << 10), noise));
        rows
    }

    #[test]
    fn exact_rows_give_every_table_back() {
        let rows = rows(&mut Noise::none());
        let base = loggp::fit(&rows, None).unwrap();
        let f = fit(&rows, &base).unwrap();
        assert_eq!(f.table.n, (2..=8).collect::<Vec<_>>());
        assert!(f.skipped.is_empty());
        for (k, n) in (2..=8).enumerate() {
            let want = at(n);
            close("L(n)", f.table.l.as_ref().unwrap()[k], want.l, 1e-9);
            close("o(n)", f.table.o.as_ref().unwrap()[k], want.o, 1e-9);
            close("g(n)", f.table.g.as_ref().unwrap()[k], want.g, 1e-9);
            close("G(n)", f.table.big_g.as_ref().unwrap()[k], want.big_g, 1e-9);
        }
        // The table is a valid parameter file whose n = 2 column is [loggp].
        let mut m = ModelParams::loggp(base.params);
        m.nlogp = Some(f.table.clone());
        let m = ModelParams::from_toml(&m.to_toml()).unwrap();
        assert_eq!(m.at(2), base.params);
    }

    #[test]
    fn noisy_rows_give_the_tables_back_within_the_noise() {
        for seed in 1..10 {
            let rows = rows(&mut Noise::new(seed, 0.03));
            let base = loggp::fit(&rows, None).unwrap();
            let f = fit(&rows, &base).unwrap();
            for (k, n) in (2..=8).enumerate() {
                let p = &f.points[k];
                close("o(n)", p.params.o, at(n).o, 0.06);
                close("L(n) + g(n)", p.l_plus_g, at(n).l + at(n).g, 0.06);
                close("G(n)", p.params.big_g, at(n).big_g, 0.06);
            }
        }
    }

    #[test]
    fn unfittable_rank_counts_are_skipped_and_too_few_refused() {
        let mut rows = rows(&mut Noise::none());
        rows.push(row("shift.nonoverlap", 16, 8, 1.0));
        let base = loggp::fit(&rows, None).unwrap();
        let f = fit(&rows, &base).unwrap();
        assert_eq!(f.skipped.len(), 1);
        assert_eq!(f.skipped[0].0, 16);
        assert!(f.skipped[0].1.to_string().contains("no shift.overlap rows at 16 ranks"));
        let two: Vec<Row> = rows.into_iter().filter(|r| r.ranks == 2).collect();
        assert_eq!(fit(&two, &base), Err(FitError::TooFewRankCounts(vec![2])));
    }
}
