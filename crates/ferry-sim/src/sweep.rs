//! Algorithms of one collective compared over process counts and block sizes
//! (`ferry sim coll`): the points of the comparison and the ranges that span it.

use crate::engine::Time;
use serde::Serialize;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Point {
    pub algorithm: &'static str,
    pub procs: usize,
    pub bytes: usize,
    /// Simulated time of the call, microseconds.
    pub time: Time,
    pub messages: u64,
}

/// `A..B` (A, 2A, 4A, ... up to B, and B itself), or a comma-separated list; numbers take
/// K, M and G suffixes (powers of 1024).
pub fn parse_range(spec: &str) -> Result<Vec<usize>, String> {
    let num = |s: &str| -> Result<usize, String> {
        let s = s.trim();
        let (digits, mult) = match s.char_indices().last() {
            Some((i, 'k' | 'K')) => (&s[..i], 1usize << 10),
            Some((i, 'm' | 'M')) => (&s[..i], 1 << 20),
            Some((i, 'g' | 'G')) => (&s[..i], 1 << 30),
            _ => (s, 1),
        };
        digits
            .parse::<usize>()
            .ok()
            .and_then(|v| v.checked_mul(mult))
            .ok_or_else(|| format!("{s:?} is not a size (a whole number, optionally with K, M or G)"))
    };
    let mut out = Vec::new();
    if let Some((a, b)) = spec.split_once("..") {
        let (a, b) = (num(a)?, num(b)?);
        if a == 0 || a > b {
            return Err(format!("range {spec:?}: need 0 < start <= end"));
        }
        let mut v = a;
        while v < b {
            out.push(v);
            v = v.saturating_mul(2);
        }
        out.push(b);
    } else {
        for s in spec.split(',').filter(|s| !s.trim().is_empty()) {
            out.push(num(s)?);
        }
    }
    if out.is_empty() {
        return Err(format!("{spec:?} names no value"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_double_and_lists_parse() {
        assert_eq!(parse_range("4..32").unwrap(), vec![4, 8, 16, 32]);
        assert_eq!(parse_range("3..20").unwrap(), vec![3, 6, 12, 20]);
        assert_eq!(parse_range("8..1K").unwrap().last(), Some(&1024));
        assert_eq!(parse_range("1M").unwrap(), vec![1 << 20]);
        assert_eq!(parse_range("4, 12,7").unwrap(), vec![4, 12, 7]);
        assert!(parse_range("0..4").is_err());
        assert!(parse_range("9..4").is_err());
        assert!(parse_range("x").unwrap_err().contains("not a size"));
        assert!(parse_range(",").is_err());
    }
}
