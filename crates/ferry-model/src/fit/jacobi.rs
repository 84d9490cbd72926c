//! The S2 application check: a 1-D Jacobi sweep on an N x N grid of doubles, split by rows
//! over p ranks, with a wrap-around boundary exchange (one row, 8N bytes, to each
//! neighbour). S2's model of one iteration with the interior work placed between the sends
//! and the receives is T = Tp + max(TB, Tc) + TD + Tr, so overlap saves min(TB, Tc) against
//! receiving first:
//! - TB: the interior work (`jacobi.interior`, measured);
//! - Tc: the overlappable communication time of the boundary exchange, from the fitted
//!   model at n = p ([`ModelParams::at`]): the overlappable part of a k-byte shift is
//!   L + g + k·G (see [`super::loggp`]), and each rank sends two k-byte rows, one to each
//!   neighbour, through its one port, so Tc = L(p) + g(p) + 2·8N·G(p);
//! - predicted gain = min(TB, Tc); measured gain = `jacobi.blocking` − `jacobi.overlap`.

use super::{one_implementation, rank_counts, series, FitError};
use crate::params::{LogGp, ModelParams};
use crate::results::Row;

/// Predicted against measured gain at one grid size and rank count (times in us).
#[derive(Clone, Debug, PartialEq)]
pub struct JacobiPoint {
    pub ranks: u32,
    /// Grid side N.
    pub grid: u64,
    /// Bytes of one boundary message, 8N.
    pub bytes: u64,
    pub tb: f64,
    pub tc: f64,
    pub predicted_gain: f64,
    pub measured_gain: f64,
}

/// Tc: the overlappable time of one boundary exchange on an N x N grid of doubles.
pub fn boundary_overlap(p: &LogGp, grid: u64) -> f64 {
    let bytes = 8.0 * grid as f64;
    p.l + p.g + 2.0 * bytes * p.big_g
}

/// The prediction for every (rank count, grid size) that has interior, blocking and
/// overlap rows, by rank count then grid size.
pub fn predict(rows: &[Row], model: &ModelParams) -> Result<Vec<JacobiPoint>, FitError> {
    one_implementation(rows)?;
    const NEEDED: [&str; 3] = ["jacobi.interior", "jacobi.blocking", "jacobi.overlap"];
    for b in NEEDED {
        if !rows.iter().any(|r| r.benchmark == b) {
            return Err(FitError::NoRows {
                benchmark: b.into(),
                ranks: None,
            });
        }
    }
    let mut out = Vec::new();
    for ranks in rank_counts(rows, "jacobi.interior") {
        let [interior, blocking, overlap] = NEEDED.map(|b| series(rows, b, ranks));
        let (interior, blocking, overlap) = (interior?, blocking?, overlap?);
        let p = model.at(ranks as usize);
        for &(grid, tb) in &interior {
            let find = |s: &[(u64, f64)]| s.iter().find(|q| q.0 == grid).map(|q| q.1);
            let (Some(b), Some(o)) = (find(&blocking), find(&overlap)) else { continue };
            let tc = boundary_overlap(&p, grid);
            out.push(JacobiPoint {
                ranks,
                grid,
                bytes: 8 * grid,
                tb,
                tc,
                predicted_gain: tb.min(tc),
                measured_gain: b - o,
            });
        }
    }
    if out.is_empty() {
        return Err(FitError::NoRows {
            benchmark: "jacobi.interior, jacobi.blocking and jacobi.overlap at a common grid size and rank count"
                .into(),
            ranks: None,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fit::synthetic::{close, row};

    const P: LogGp = LogGp {
        l: 40.0,
        o: 8.0,
        g: 12.0,
        big_g: 0.0085,
    };

    /// Rows whose measured gain is exactly S2's min(TB, Tc), with TB = interior time.
    fn rows(ranks: u32, grids: &[u64], interior: impl Fn(u64) -> f64) -> Vec<Row> {
        let mut rows = Vec::new();
        for &n in grids {
            let tb = interior(n);
            let tc = boundary_overlap(&P, n);
            let (tp, td) = (2.0 * P.o, 0.5 * tb / n as f64);
            let overlap = tp + tb.max(tc) + td;
            let blocking = tp + tb + tc + td;
            rows.push(row("jacobi.interior", ranks, n, tb));
            rows.push(row("jacobi.boundary", ranks, n, td));
            rows.push(row("jacobi.overlap", ranks, n, overlap));
            rows.push(row("jacobi.blocking", ranks, n, blocking));
        }
        rows
    }

    #[test]
    fn exact_rows_match_the_prediction() {
        // Interior work grows as N²/p: small grids are communication-bound, large ones not.
        let rows = rows(4, &[64, 128, 192, 256], |n| (n * n) as f64 * 0.01 / 4.0);
        let got = predict(&rows, &ModelParams::loggp(P)).unwrap();
        assert_eq!(got.len(), 4);
        for p in &got {
            close("measured vs predicted gain", p.measured_gain, p.predicted_gain, 1e-9);
            assert_eq!(p.bytes, 8 * p.grid);
        }
        close("Tc at 64", got[0].tc, 40.0 + 12.0 + 2.0 * 512.0 * 0.0085, 1e-12);
        assert_eq!(got[0].predicted_gain, got[0].tb, "TB < Tc at 64");
        assert_eq!(got[3].predicted_gain, got[3].tc, "Tc < TB at 256");
    }

    #[test]
    fn the_model_is_taken_at_the_jobs_rank_count() {
        let mut m = ModelParams::loggp(P);
        m.nlogp = Some(crate::params::NLogP {
            n: vec![2, 8],
            l: Some(vec![40.0, 100.0]),
            ..Default::default()
        });
        let mut all = rows(2, &[64], |_| 1000.0);
        all.extend(rows(8, &[64], |_| 1000.0));
        let got = predict(&all, &m).unwrap();
        assert_eq!((got[0].ranks, got[1].ranks), (2, 8));
        close("Tc(8) − Tc(2)", got[1].tc - got[0].tc, 60.0, 1e-12);
    }

    #[test]
    fn missing_rows_are_named() {
        let all = rows(4, &[64], |_| 10.0);
        let e = predict(&[], &ModelParams::loggp(P)).unwrap_err();
        assert!(e.to_string().contains("no jacobi.interior rows"), "{e}");
        let no_blocking: Vec<Row> = all.iter().filter(|r| r.benchmark != "jacobi.blocking").cloned().collect();
        assert!(predict(&no_blocking, &ModelParams::loggp(P)).unwrap_err().to_string().contains("jacobi.blocking"));
        let mut apart = all.clone();
        apart.iter_mut().filter(|r| r.benchmark == "jacobi.overlap").for_each(|r| r.size = 128);
        assert!(predict(&apart, &ModelParams::loggp(P)).unwrap_err().to_string().contains("common grid size"));
    }
}
