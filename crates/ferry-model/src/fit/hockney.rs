//! Hockney's model of a point-to-point message, t(m) = t0 + m / r_inf, fitted to the
//! ping-pong `latency` rows (one-way time, half the round trip). Derived figures:
//! m_1/2 = t0 · r_inf (the size that reaches half the asymptotic bandwidth) and
//! pi0 = 1 / t0 (Hockney and Jesshope's specific performance).
//!
//! Method: weighted least squares on (size, median one-way time), weight 1 / t², i.e. the
//! sum of squared *relative* residuals is minimised. Latencies from 0 B to megabytes differ
//! by 1000x or more; unweighted least squares minimises absolute error, so the few largest
//! messages, whose run-to-run noise alone exceeds t0, would fix the intercept (a small or
//! even negative t0). With relative weights every size counts alike: the small sizes set
//! t0, the large ones r_inf.
//!
//! Refused, not held at a bound as LogGP's parameters are: a time of 0 (no relative error
//! exists), a slope <= 0 (the time does not grow with size: the rows cannot determine a
//! bandwidth, and r_inf = 1 / slope would be infinite), and t0 <= 0 (pi0 = 1 / t0 would be
//! infinite too). A negative t0 usually means the large sizes follow a steeper line than the
//! small ones (a protocol change such as eager to rendezvous); fitting a narrower size range
//! helps. The fit reports its [`Quality`]: R² and the sizes farthest from the line.

use super::{fit_line, need_sizes, one_implementation, quality, rank_counts, series, FitError, Quality};
use crate::params::Hockney;
use crate::results::Row;

/// A Hockney fit and how well it matches.
#[derive(Clone, Debug, PartialEq)]
pub struct HockneyFit {
    pub params: Hockney,
    /// Rank count of the rows used (the smallest present; ping-pong involves two ranks).
    pub ranks: u32,
    /// Sizes fitted, increasing.
    pub sizes: Vec<u64>,
    /// Largest relative residual |t_fit − t| / t, and the size where it occurs.
    pub worst: (u64, f64),
    pub quality: Quality,
}

/// Fits Hockney's model to the `latency` rows of one implementation.
pub fn fit(rows: &[Row]) -> Result<HockneyFit, FitError> {
    one_implementation(rows)?;
    let ranks = *rank_counts(rows, "latency").first().ok_or(FitError::NoRows {
        benchmark: "latency".into(),
        ranks: None,
    })?;
    let points = series(rows, "latency", ranks)?;
    need_sizes(rows, "latency", ranks, &points)?;
    if let Some(&(size, t)) = points.iter().find(|p| p.1 <= 0.0) {
        return Err(FitError::NonPhysical {
            what: format!("latency at {size} B"),
            value: t,
            why: "a one-way time must be positive".into(),
        });
    }
    let weighted: Vec<(f64, f64, f64)> = points.iter().map(|&(s, t)| (s as f64, t, 1.0 / (t * t))).collect();
    let line = fit_line(&weighted).expect("need_sizes found two different sizes");
    if line.slope <= 0.0 {
        return Err(FitError::NonPhysical {
            what: "Hockney 1 / r_inf".into(),
            value: line.slope,
            why: format!(
                "the latency does not grow with the message size over {} .. {} B, so the rows cannot determine a bandwidth",
                points[0].0,
                points[points.len() - 1].0
            ),
        });
    }
    if line.intercept <= 0.0 {
        return Err(FitError::NonPhysical {
            what: "Hockney t0".into(),
            value: line.intercept,
            why: "the start-up time must be positive; the large sizes probably follow a steeper line \
                  (a protocol change): fit a narrower size range"
                .into(),
        });
    }
    let t0 = line.intercept;
    let r_inf = 1.0 / line.slope;
    let worst = points
        .iter()
        .map(|&(s, t)| (s, (line.at(s as f64) - t).abs() / t))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .expect("at least two points");
    Ok(HockneyFit {
        params: Hockney {
            t0,
            r_inf,
            m_half: t0 * r_inf,
            pi0: 1.0 / t0,
        },
        ranks,
        sizes: points.iter().map(|p| p.0).collect(),
        worst,
        quality: quality(format!("latency at {ranks} ranks"), &points.iter().map(|&(s, t)| (s, t, t)).collect::<Vec<_>>(), &line),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fit::synthetic::{close, latency, row, sizes, Noise};

    #[test]
    fn exact_rows_give_the_parameters_back() {
        let mut rows = latency(1.75, 9000.0, &sizes(4 << 20), &mut Noise::none());
        rows.push(row("latency", 2, 0, 1.75));
        let f = fit(&rows).unwrap();
        close("t0", f.params.t0, 1.75, 1e-9);
        close("r_inf", f.params.r_inf, 9000.0, 1e-9);
        close("m_half", f.params.m_half, 1.75 * 9000.0, 1e-9);
        close("pi0", f.params.pi0, 1.0 / 1.75, 1e-9);
        assert!(f.worst.1 < 1e-9);
        assert!(f.quality.r2.unwrap() > 1.0 - 1e-12 && f.quality.worst(1)[0].1.abs() < 1e-9, "{:?}", f.quality);
        assert_eq!((f.ranks, f.sizes.len(), f.sizes[0]), (2, 24, 0));
    }

    #[test]
    fn noisy_rows_give_them_back_within_the_noise() {
        for seed in 1..20 {
            let rows = latency(40.0, 117.0, &sizes(1 << 20), &mut Noise::new(seed, 0.03));
            let f = fit(&rows).unwrap();
            close("t0", f.params.t0, 40.0, 0.05);
            close("r_inf", f.params.r_inf, 117.0, 0.05);
            assert!(f.worst.1 < 0.07, "worst {:?}", f.worst);
            assert_eq!(f.quality.worst(1)[0].0, f.worst.0);
            close("worst residual", f.quality.worst(1)[0].1.abs(), f.worst.1, 1e-12);
        }
    }

    #[test]
    fn bad_data_is_refused_with_the_reason() {
        assert_eq!(fit(&[row("bandwidth", 2, 8, 1.0)]), Err(FitError::NoRows { benchmark: "latency".into(), ranks: None }));
        assert!(matches!(fit(&[row("latency", 2, 8, 1.0)]), Err(FitError::TooFewSizes { got: 1, .. })));
        let same = vec![row("latency", 2, 8, 1.0), row("latency", 2, 8, 1.1), row("latency", 2, 8, 0.9)];
        assert!(matches!(fit(&same), Err(FitError::SameSize { rows: 3, size: 8, .. })));
        let mut nan = latency(1.0, 100.0, &sizes(64), &mut Noise::none());
        nan[2].median = f64::NAN;
        assert!(matches!(fit(&nan), Err(FitError::NotFinite { size: 4, .. })));
        let zero = vec![row("latency", 2, 1, 0.0), row("latency", 2, 2, 1.0)];
        assert!(fit(&zero).unwrap_err().to_string().contains("latency at 1 B"));
        let flat = vec![row("latency", 2, 1, 2.0), row("latency", 2, 1024, 1.0)];
        assert!(fit(&flat).unwrap_err().to_string().contains("does not grow"));
        // A steep large-message line below a flat small one crosses zero: negative t0.
        let steep = vec![row("latency", 2, 1000, 1.0), row("latency", 2, 2000, 5.0)];
        let e = fit(&steep).unwrap_err();
        assert!(matches!(&e, FitError::NonPhysical { value, .. } if *value < 0.0), "{e}");
        assert!(e.to_string().contains("t0"), "{e}");
    }

    #[test]
    fn the_smallest_rank_count_is_used() {
        let mut rows = latency(2.0, 1000.0, &sizes(1024), &mut Noise::none());
        rows.extend(latency(3.0, 10.0, &sizes(1024), &mut Noise::none()).into_iter().map(|mut r| {
            r.ranks = 4;
            r
        }));
        let f = fit(&rows).unwrap();
        assert_eq!(f.ranks, 2);
        close("t0", f.params.t0, 2.0, 1e-9);
    }
}
