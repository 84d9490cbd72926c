//! The benchmark results schema: one row per implementation, benchmark, rank count and size,
//! with the median, minimum and maximum over runs. `ferry bench` writes it as CSV and JSON;
//! `ferry fit` reads either.
//!
//! CSV: the header [`CSV_HEADER`], then one line per row. JSON: an array of objects with the
//! same field names. Benchmarks and their units:
//!
//! | benchmark | size | value |
//! |---|---|---|
//! | `latency` | message bytes | one-way time (half a ping-pong round trip), us |
//! | `bandwidth` | message bytes | MB/s (10^6 B/s), a window of non-blocking sends one way |
//! | `bibandwidth` | message bytes | MB/s, both directions at once, summed |
//! | `<collective>.min` / `.avg` / `.max` | per-rank block bytes (ferry-coll's size metric) | us per call; min, mean, max over ranks |
//! | `shift.total` | message bytes | us: circular shift (Bsend, Recv) with no work between |
//! | `shift.nonoverlap` | message bytes | us: the part of the shift that work cannot hide (S2's o part) |
//! | `shift.overlap` | message bytes | us: `shift.total - shift.nonoverlap` (S2's L + g part) |
//! | `prtt.1`, `prtt.n`, `prtt.nd` | message bytes | us: PRTT(1,0,s), PRTT([`PRTT_N`],0,s), PRTT([`PRTT_N`],d,s) |
//! | `prtt.d` | message bytes | us: the delay d used for `prtt.nd` |
//! | `jacobi.overlap` | grid side N (N x N doubles) | us per iteration, interior work between send and receive |
//! | `jacobi.blocking` | grid side N | us per iteration, receive before the interior work |
//! | `jacobi.interior` | grid side N | us per iteration of the interior work alone (TB) |
//! | `jacobi.boundary` | grid side N | us per iteration of the boundary work alone (TD) |
//! | `rma.put_latency`, `rma.get_latency`, `rma.acc_latency` | message bytes | us per operation and flush in a passive epoch |
//! | `rma.put_bandwidth`, `rma.get_bandwidth` | message bytes | MB/s, windows of 64 operations and one flush |
//! | `rma.fence`, `rma.lock` | message bytes | us per epoch of one put: fence, or exclusive lock and unlock |
//! | `rma.fop_latency`, `rma.cas_latency` | 8 (one int64) | us per MPI_Fetch_and_op or MPI_Compare_and_swap and flush |
//! | `io.<shm or disk>.<coll_write, coll_read, coll_write_cb1, coll_write_cbon, coll_read_cbon, indep_write, indep_read, plain_write, plain_read>_bandwidth` | block bytes | MB/s of a file on tmpfs or disk (bench/io.c) |
//!
//! Collective names are those of ferry-coll (`bcast`, `allgather`, `reduce_scatter`, ...).
//! Implementations are named freely (`ferry`, `ferry-async`, `mpich`, `openmpi`).

use serde::{Deserialize, Serialize};
use thiserror::Error;

pub const CSV_HEADER: &str = "implementation,benchmark,ranks,size,median,min,max,runs";

/// Ping-pongs per PRTT measurement for `prtt.n` and `prtt.nd`.
pub const PRTT_N: u32 = 16;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Row {
    pub implementation: String,
    pub benchmark: String,
    pub ranks: u32,
    pub size: u64,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub runs: u32,
}

#[derive(Debug, Error, PartialEq)]
pub enum ResultsError {
    #[error("no results: the input is empty")]
    Empty,
    #[error("line 1: expected the header {CSV_HEADER:?}, got {0:?}")]
    Header(String),
    #[error("line {line}: {msg}")]
    Line { line: usize, msg: String },
    #[error("JSON: {0}")]
    Json(String),
}

/// Unit of a benchmark's values.
pub fn unit(benchmark: &str) -> &'static str {
    match benchmark {
        b if b.contains("bandwidth") => "MB/s",
        _ => "us",
    }
}

/// CSV text of `rows`, header first.
pub fn to_csv(rows: &[Row]) -> String {
    let mut s = String::from(CSV_HEADER);
    s.push('\n');
    for r in rows {
        s.push_str(&format!(
            "{},{},{},{},{},{},{},{}\n",
            r.implementation, r.benchmark, r.ranks, r.size, r.median, r.min, r.max, r.runs
        ));
    }
    s
}

/// JSON text of `rows` (an array of objects).
pub fn to_json(rows: &[Row]) -> String {
    serde_json::to_string_pretty(rows).expect("rows are plain data")
}

/// Parses CSV or JSON (chosen by the first non-blank character: `[` means JSON) and checks
/// every row: names without commas, values finite and non-negative, min <= median <= max.
pub fn parse(text: &str) -> Result<Vec<Row>, ResultsError> {
    let trimmed = text.trim_start();
    if trimmed.is_empty() {
        return Err(ResultsError::Empty);
    }
    let rows = if trimmed.starts_with('[') {
        let rows: Vec<Row> =
            serde_json::from_str(trimmed).map_err(|e| ResultsError::Json(e.to_string()))?;
        for (i, r) in rows.iter().enumerate() {
            check(r).map_err(|msg| ResultsError::Json(format!("row {}: {msg}", i + 1)))?;
        }
        rows
    } else {
        parse_csv(text)?
    };
    if rows.is_empty() {
        return Err(ResultsError::Empty);
    }
    Ok(rows)
}

fn parse_csv(text: &str) -> Result<Vec<Row>, ResultsError> {
    let mut lines = text.lines().enumerate();
    let (_, header) = lines.next().ok_or(ResultsError::Empty)?;
    if header.trim() != CSV_HEADER {
        return Err(ResultsError::Header(header.trim().to_owned()));
    }
    let mut rows = Vec::new();
    for (i, line) in lines {
        let line_no = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        let err = |msg: String| ResultsError::Line { line: line_no, msg };
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        if f.len() != 8 {
            return Err(err(format!("expected 8 columns, got {}", f.len())));
        }
        let int = |k: usize, name: &str| {
            f[k].parse::<u64>()
                .map_err(|_| err(format!("{name} {:?} is not a whole number", f[k])))
        };
        let num = |k: usize, name: &str| {
            f[k].parse::<f64>()
                .map_err(|_| err(format!("{name} {:?} is not a number", f[k])))
        };
        let row = Row {
            implementation: f[0].to_owned(),
            benchmark: f[1].to_owned(),
            ranks: u32::try_from(int(2, "ranks")?).map_err(|_| err("ranks too large".into()))?,
            size: int(3, "size")?,
            median: num(4, "median")?,
            min: num(5, "min")?,
            max: num(6, "max")?,
            runs: u32::try_from(int(7, "runs")?).map_err(|_| err("runs too large".into()))?,
        };
        check(&row).map_err(err)?;
        rows.push(row);
    }
    Ok(rows)
}

fn check(r: &Row) -> Result<(), String> {
    if r.implementation.is_empty() || r.benchmark.is_empty() {
        return Err("implementation and benchmark must be named".into());
    }
    if r.implementation.contains(',') || r.benchmark.contains(',') {
        return Err("names may not contain commas".into());
    }
    for (name, v) in [("median", r.median), ("min", r.min), ("max", r.max)] {
        if !v.is_finite() || v < 0.0 {
            return Err(format!("{name} {v} is not a finite number >= 0"));
        }
    }
    if !(r.min <= r.median && r.median <= r.max) {
        return Err(format!(
            "min {} <= median {} <= max {} does not hold",
            r.min, r.median, r.max
        ));
    }
    if r.ranks == 0 || r.runs == 0 {
        return Err("ranks and runs must be at least 1".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(b: &str, size: u64, v: f64) -> Row {
        Row {
            implementation: "ferry".into(),
            benchmark: b.into(),
            ranks: 2,
            size,
            median: v,
            min: v * 0.9,
            max: v * 1.5,
            runs: 5,
        }
    }

    #[test]
    fn csv_and_json_round_trip() {
        let rows = vec![row("latency", 8, 1.25), row("bandwidth", 1 << 20, 9000.5)];
        assert_eq!(parse(&to_csv(&rows)).unwrap(), rows);
        assert_eq!(parse(&to_json(&rows)).unwrap(), rows);
        assert_eq!(unit("bandwidth"), "MB/s");
        assert_eq!(unit("rma.get_bandwidth"), "MB/s");
        assert_eq!(unit("rma.get_latency"), "us");
        assert_eq!(unit("bcast.max"), "us");
    }

    #[test]
    fn bad_input_names_what_is_wrong() {
        let e = |t: &str| parse(t).unwrap_err().to_string();
        assert_eq!(parse("  \n"), Err(ResultsError::Empty));
        assert_eq!(parse(&format!("{CSV_HEADER}\n")), Err(ResultsError::Empty));
        assert_eq!(parse("[]"), Err(ResultsError::Empty));
        assert!(e("a,b,c\n1,2,3\n").contains("expected the header"));
        let h = CSV_HEADER;
        assert!(e(&format!("{h}\nferry,latency,2,8,1.0\n")).contains("line 2: expected 8 columns, got 5"));
        assert!(e(&format!("{h}\nferry,latency,2,8,NaN,1,1,3\n")).contains("median NaN"));
        assert!(e(&format!("{h}\nferry,latency,2,8,inf,1,1,3\n")).contains("finite"));
        assert!(e(&format!("{h}\nferry,latency,two,8,1,1,1,3\n")).contains("ranks \"two\""));
        assert!(e(&format!("{h}\nferry,latency,2,8,1,2,3,3\n")).contains("min 2 <= median 1"));
        assert!(e(&format!("{h}\nferry,latency,0,8,1,1,1,3\n")).contains("at least 1"));
        assert!(e("[{\"implementation\": \"x\"}]").starts_with("JSON"));
        assert!(e("[{\"implementation\":\"x\",\"benchmark\":\"b\",\"ranks\":2,\"size\":1,\"median\":-1,\"min\":-1,\"max\":-1,\"runs\":1}]").contains("row 1"));
    }
}
