//! Interfering traffic: transfers given one by one, and the two patterns of the
//! status-based study (SEEDS.md S1): two nodes exchanging a message, and bursts in which
//! several nodes communicate at once.

use crate::engine::{Time, Transfer};

/// `a` and `b` send each other `bytes` at time `start`.
pub fn exchange(a: usize, b: usize, bytes: u64, start: Time) -> Vec<Transfer> {
    vec![
        Transfer {
            src: a,
            dst: b,
            bytes,
            start,
        },
        Transfer {
            src: b,
            dst: a,
            bytes,
            start,
        },
    ]
}

/// `rounds` bursts, one every `period` from `start`: in each, every node of `nodes` sends
/// `bytes` to the next one (the last to the first), so all of them send and receive at once.
pub fn bursts(nodes: &[usize], bytes: u64, rounds: usize, start: Time, period: Time) -> Vec<Transfer> {
    let k = nodes.len();
    if k < 2 {
        return Vec::new();
    }
    let mut out = Vec::with_capacity(rounds * k);
    for round in 0..rounds {
        for (i, &src) in nodes.iter().enumerate() {
            out.push(Transfer {
                src,
                dst: nodes[(i + 1) % k],
                bytes,
                start: start + round as f64 * period,
            });
        }
    }
    out
}

/// Parses transfers given as `SRC:DST:BYTES@START` (START in microseconds; `@START` may be
/// left out for 0), separated by commas.
pub fn parse(text: &str) -> Result<Vec<Transfer>, String> {
    let mut out = Vec::new();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (spec, start) = match item.split_once('@') {
            Some((s, t)) => (s, t.trim().parse::<f64>().map_err(|_| format!("{item:?}: start {t:?} is not a number"))?),
            None => (item, 0.0),
        };
        let f: Vec<&str> = spec.split(':').collect();
        if f.len() != 3 {
            return Err(format!("{item:?}: expected SRC:DST:BYTES[@START_US]"));
        }
        let num = |s: &str, what: &str| s.trim().parse::<u64>().map_err(|_| format!("{item:?}: {what} {s:?} is not a whole number"));
        if !(start.is_finite() && start >= 0.0) {
            return Err(format!("{item:?}: start must be a time >= 0"));
        }
        out.push(Transfer {
            src: num(f[0], "source")? as usize,
            dst: num(f[1], "destination")? as usize,
            bytes: num(f[2], "size")?,
            start,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_have_the_right_shape() {
        let e = exchange(2, 5, 32, 1.0);
        assert_eq!((e[0].src, e[0].dst, e[1].src, e[1].dst), (2, 5, 5, 2));
        let b = bursts(&[1, 3, 4], 512, 2, 0.0, 10.0);
        assert_eq!(b.len(), 6);
        assert_eq!((b[2].src, b[2].dst), (4, 1));
        assert_eq!(b[3].start, 10.0);
        assert!(bursts(&[1], 8, 3, 0.0, 1.0).is_empty());
    }

    #[test]
    fn transfers_parse_and_bad_ones_are_named() {
        let t = parse("1:2:32, 3:0:1536@12.5").unwrap();
        assert_eq!(t[1], Transfer { src: 3, dst: 0, bytes: 1536, start: 12.5 });
        assert!(parse("1:2").unwrap_err().contains("SRC:DST:BYTES"));
        assert!(parse("1:2:x").unwrap_err().contains("size"));
        assert!(parse("1:2:3@-1").unwrap_err().contains(">= 0"));
        assert!(parse("1:2:3@soon").unwrap_err().contains("not a number"));
    }
}
