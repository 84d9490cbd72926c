//! Byte counts and ranges of them as `ferry bench` reads them (`64K`, `1..4M`), and the
//! doubling sweep the benchmark programs run over a range.

use std::fmt;
use std::str::FromStr;

/// The largest size the benchmark programs take (bench/benchutil.h).
pub const MAX_SIZE: u64 = 1 << 30;

/// A byte count: digits with an optional suffix K, M or G (powers of 1024).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (digits, unit) = match t.char_indices().last() {
        Some((i, 'k' | 'K')) => (&t[..i], 1u64 << 10),
        Some((i, 'm' | 'M')) => (&t[..i], 1 << 20),
        Some((i, 'g' | 'G')) => (&t[..i], 1 << 30),
        _ => (t, 1),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("expected a byte count such as 1024, 64K or 1M, got {s:?}"));
    }
    digits
        .parse::<u64>()
        .ok()
        .and_then(|v| v.checked_mul(unit))
        .ok_or_else(|| format!("{s:?} is too large"))
}

/// Sizes from `min` to `max`, both included.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SizeRange {
    pub min: u64,
    pub max: u64,
}

impl SizeRange {
    pub const fn new(min: u64, max: u64) -> SizeRange {
        SizeRange { min, max }
    }

    /// `min`, then doubling while at most `max`; 0 is followed by 1. The programs sweep
    /// the same way from `-s MIN` to `-m MAX`.
    pub fn doubling(&self) -> Vec<u64> {
        let mut sizes = Vec::new();
        let mut s = self.min;
        while s <= self.max {
            sizes.push(s);
            s = if s == 0 { 1 } else { s * 2 };
        }
        sizes
    }
}

impl FromStr for SizeRange {
    type Err = String;

    /// `MIN..MAX`, or one size `N` for `N..N`.
    fn from_str(s: &str) -> Result<SizeRange, String> {
        let (min, max) = match s.split_once("..") {
            Some((a, b)) => (parse_size(a)?, parse_size(b)?),
            None => {
                let v = parse_size(s)?;
                (v, v)
            }
        };
        if min > max {
            return Err(format!("the range {s:?} is empty: MIN is above MAX"));
        }
        if max > MAX_SIZE {
            return Err(format!("sizes go up to 1G, not {max}"));
        }
        Ok(SizeRange { min, max })
    }
}

impl fmt::Display for SizeRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..{}", human(self.min), human(self.max))
    }
}

/// A size as people write it: `64K` for 65536, `1M`, else the plain number.
pub fn human(size: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1 << 30, "G"), (1 << 20, "M"), (1 << 10, "K")];
    for (unit, suffix) in UNITS {
        if size >= unit && size.is_multiple_of(unit) {
            return format!("{}{suffix}", size / unit);
        }
    }
    size.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_suffixes() {
        assert_eq!(parse_size("0"), Ok(0));
        assert_eq!(parse_size("1024"), Ok(1024));
        assert_eq!(parse_size("64K"), Ok(65536));
        assert_eq!(parse_size("64k"), Ok(65536));
        assert_eq!(parse_size("4M"), Ok(4 << 20));
        assert_eq!(parse_size("1G"), Ok(1 << 30));
        for bad in ["", "K", "1.5K", "-1", "1KB", "abc", "99999999999999999999G"] {
            assert!(parse_size(bad).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn ranges_parse_and_refuse_what_is_empty_or_too_large() {
        assert_eq!("1..64K".parse(), Ok(SizeRange::new(1, 65536)));
        assert_eq!("8".parse(), Ok(SizeRange::new(8, 8)));
        assert_eq!("0..0".parse(), Ok(SizeRange::new(0, 0)));
        assert!("64K..1".parse::<SizeRange>().unwrap_err().contains("empty"));
        assert!("1..2G".parse::<SizeRange>().unwrap_err().contains("1G"));
        assert!("1...4".parse::<SizeRange>().is_err());
        assert!("..4".parse::<SizeRange>().is_err());
        assert!("1..x".parse::<SizeRange>().is_err());
    }

    #[test]
    fn doubling_matches_the_programs_sweep() {
        assert_eq!(SizeRange::new(0, 8).doubling(), [0, 1, 2, 4, 8]);
        assert_eq!(SizeRange::new(1, 1000).doubling().last(), Some(&512));
        assert_eq!(SizeRange::new(3, 24).doubling(), [3, 6, 12, 24]);
        assert_eq!(SizeRange::new(5, 5).doubling(), [5]);
    }

    #[test]
    fn human_sizes() {
        assert_eq!(human(0), "0");
        assert_eq!(human(1000), "1000");
        assert_eq!(human(1024), "1K");
        assert_eq!(human(3 << 20), "3M");
        assert_eq!(human(1536), "1536");
        assert_eq!(format!("{}", SizeRange::new(1, 65536)), "1..64K");
    }
}
