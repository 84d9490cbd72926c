//! From the values of single runs to the rows of the results schema: median, minimum and
//! maximum over runs per implementation, benchmark, rank count and size.

use std::collections::HashMap;

use ferry_model::Row;

/// One value of one run.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    pub implementation: String,
    pub benchmark: String,
    pub ranks: u32,
    pub size: u64,
    pub value: f64,
}

/// The median of `values` (the mean of the two middle ones for an even count); None when
/// empty.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(v[n / 2]),
        _ => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
    }
}

/// One row per implementation, benchmark, rank count and size, ordered by implementation
/// (as in `implementations`, others after them by name), then benchmark (in the order
/// first seen), rank count and size.
pub fn aggregate(samples: &[Sample], implementations: &[String]) -> Vec<Row> {
    type Key = (String, String, u32, u64);
    let mut values: HashMap<Key, Vec<f64>> = HashMap::new();
    let mut benchmark_order: Vec<&str> = Vec::new();
    for s in samples {
        if !benchmark_order.contains(&s.benchmark.as_str()) {
            benchmark_order.push(&s.benchmark);
        }
        values
            .entry((s.implementation.clone(), s.benchmark.clone(), s.ranks, s.size))
            .or_default()
            .push(s.value);
    }
    let mut rows: Vec<Row> = values
        .into_iter()
        .map(|((implementation, benchmark, ranks, size), v)| Row {
            implementation,
            benchmark,
            ranks,
            size,
            median: median(&v).expect("every key has a value"),
            min: v.iter().copied().fold(f64::INFINITY, f64::min),
            max: v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            runs: v.len() as u32,
        })
        .collect();
    let impl_rank = |name: &str| implementations.iter().position(|i| i == name).unwrap_or(usize::MAX);
    let bench_rank = |name: &str| benchmark_order.iter().position(|b| *b == name).unwrap_or(usize::MAX);
    rows.sort_by(|a, b| {
        (impl_rank(&a.implementation), &a.implementation, bench_rank(&a.benchmark), a.ranks, a.size).cmp(&(
            impl_rank(&b.implementation),
            &b.implementation,
            bench_rank(&b.benchmark),
            b.ranks,
            b.size,
        ))
    });
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(i: &str, b: &str, ranks: u32, size: u64, value: f64) -> Sample {
        Sample { implementation: i.into(), benchmark: b.into(), ranks, size, value }
    }

    #[test]
    fn medians() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0]), Some(3.0));
        assert_eq!(median(&[5.0, 1.0, 3.0]), Some(3.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[1.0, 1.0, 9.0]), Some(1.0));
    }

    #[test]
    fn rows_summarise_runs_in_a_stable_order() {
        let samples = vec![
            sample("mpich", "shift.total", 2, 8, 3.0),
            sample("ferry", "shift.total", 2, 8, 2.0),
            sample("mpich", "shift.total", 2, 1, 5.0),
            sample("ferry", "shift.total", 2, 8, 4.0),
            sample("ferry", "shift.total", 2, 8, 9.0),
            sample("ferry", "shift.overlap", 2, 8, 1.0),
            sample("ferry", "shift.total", 4, 8, 7.0),
            sample("extra", "shift.total", 2, 8, 1.0),
        ];
        let rows = aggregate(&samples, &["ferry".into(), "mpich".into()]);
        let keys: Vec<(&str, &str, u32, u64)> =
            rows.iter().map(|r| (r.implementation.as_str(), r.benchmark.as_str(), r.ranks, r.size)).collect();
        assert_eq!(
            keys,
            [
                ("ferry", "shift.total", 2, 8),
                ("ferry", "shift.total", 4, 8),
                ("ferry", "shift.overlap", 2, 8),
                ("mpich", "shift.total", 2, 1),
                ("mpich", "shift.total", 2, 8),
                ("extra", "shift.total", 2, 8),
            ]
        );
        let r = &rows[0];
        assert_eq!((r.median, r.min, r.max, r.runs), (4.0, 2.0, 9.0, 3));
        assert_eq!((rows[3].median, rows[3].runs), (5.0, 1));
        // What ferry fit will read back: the schema's own checks hold.
        let text = ferry_model::results::to_csv(&rows);
        assert_eq!(ferry_model::results::parse(&text).unwrap(), rows);
    }
}
