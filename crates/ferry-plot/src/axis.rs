//! One axis: its range, its ticks and their labels, and the map from data values to a
//! fraction of the axis length. Ranges come from the data alone, so an empty or degenerate
//! series still yields a usable axis.

use crate::Scale;

/// A tick: where it sits (data units) and what it says.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Tick {
    pub value: f64,
    pub label: String,
}

#[derive(Clone, Debug)]
pub(crate) struct Axis {
    pub scale: Scale,
    lo: f64,
    hi: f64,
    pub ticks: Vec<Tick>,
}

/// At most this many labelled ticks; denser decades on a log axis are thinned.
const MAX_TICKS: i32 = 10;

/// Whether `v` can be placed on an axis of this scale at all.
pub(crate) fn usable(scale: Scale, v: f64) -> bool {
    v.is_finite() && (scale == Scale::Linear || v > 0.0)
}

impl Axis {
    /// An axis covering `values`; unusable values must already be filtered out.
    pub fn new(scale: Scale, values: impl IntoIterator<Item = f64>) -> Axis {
        let (min, max) = values
            .into_iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                (a.min(v), b.max(v))
            });
        match scale {
            Scale::Linear => linear(min, max),
            Scale::Log => log(min, max),
        }
    }

    /// Position of `v` along the axis, 0 at the low end and 1 at the high end.
    pub fn fraction(&self, v: f64) -> f64 {
        let f = |v: f64| match self.scale {
            Scale::Linear => v,
            Scale::Log => v.log10(),
        };
        // Halved so that a range spanning most of f64 does not overflow to infinity.
        (f(v) / 2.0 - f(self.lo) / 2.0) / (f(self.hi) / 2.0 - f(self.lo) / 2.0)
    }
}

fn linear(min: f64, max: f64) -> Axis {
    let (min, max) = if min > max {
        (0.0, 1.0)
    } else if min == max {
        // One value (or all equal): give it some room around it.
        let pad = if min == 0.0 { 1.0 } else { min.abs() * 0.1 };
        (min - pad, max + pad)
    } else {
        (min, max)
    };
    // Step m * 10^k with m in {1, 2, 5}, aiming at about five intervals.
    let raw = max / 5.0 - min / 5.0;
    let mut k = raw.log10().floor() as i32;
    let f = raw / 10f64.powi(k);
    let m = if f <= 1.0 {
        1
    } else if f <= 2.0 {
        2
    } else if f <= 5.0 {
        5
    } else {
        k += 1;
        1
    };
    let step = m as f64 * 10f64.powi(k);
    // The tolerance keeps a bound that is already round (up to rounding) from growing a step.
    let first = (min / step + 1e-9).floor() as i64;
    let last = (max / step - 1e-9).ceil() as i64;
    let ticks = (first..=last)
        .map(|i| Tick {
            value: i as f64 * step,
            label: label(i * m, k),
        })
        .collect();
    Axis {
        scale: Scale::Linear,
        lo: first as f64 * step,
        hi: last as f64 * step,
        ticks,
    }
}

fn log(min: f64, max: f64) -> Axis {
    let (lo, hi) = if min > max {
        (0, 1)
    } else {
        (min.log10().floor() as i32, max.log10().ceil() as i32)
    };
    // Decades whose powers of ten f64 can hold.
    let (lo, mut hi) = (lo.clamp(-307, 307), hi.clamp(-307, 308));
    if hi == lo {
        hi = lo + 1;
    }
    let every = ((hi - lo) + MAX_TICKS - 1) / MAX_TICKS;
    let ticks = (lo..=hi)
        .filter(|k| (k - lo) % every == 0)
        .map(|k| Tick {
            value: 10f64.powi(k),
            label: label(1, k),
        })
        .collect();
    Axis {
        scale: Scale::Log,
        lo: 10f64.powi(lo),
        hi: 10f64.powi(hi),
        ticks,
    }
}

/// The label for `mant * 10^exp`, exact because it is built from integers: SI suffixes from
/// a thousand up (`2k`, `1M`), plain decimals down to 0.0001, `e` notation beyond.
fn label(mant: i64, exp: i32) -> String {
    const SUFFIX: [&str; 7] = ["", "k", "M", "G", "T", "P", "E"];
    // Zero takes the decimals of its neighbours ("0.0" among "0.5"s), and no suffix.
    if mant == 0 && !(-4..0).contains(&exp) {
        return "0".to_string();
    }
    if exp >= 0 {
        let group = (exp / 3).min(SUFFIX.len() as i32 - 1);
        let rest = exp - 3 * group;
        if rest <= 2 {
            if let Some(n) = mant.checked_mul(10i64.pow(rest as u32)) {
                return format!("{n}{}", SUFFIX[group as usize]);
            }
        }
    } else if exp >= -4 {
        let scale = 10i64.pow(exp.unsigned_abs());
        let sign = if mant < 0 { "-" } else { "" };
        let (int, frac) = (mant.abs() / scale, mant.abs() % scale);
        let digits = exp.unsigned_abs() as usize;
        return format!("{sign}{int}.{frac:0digits$}");
    }
    let (mut mant, mut exp) = (mant, exp);
    while mant % 10 == 0 {
        mant /= 10;
        exp += 1;
    }
    format!("{mant}e{exp}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(a: &Axis) -> Vec<&str> {
        a.ticks.iter().map(|t| t.label.as_str()).collect()
    }

    #[test]
    fn log_ticks_sit_on_decades_at_equal_spacing() {
        let a = Axis::new(Scale::Log, [3.0, 2.0e6]);
        assert_eq!(
            labels(&a),
            ["1", "10", "100", "1k", "10k", "100k", "1M", "10M"]
        );
        for (i, t) in a.ticks.iter().enumerate() {
            assert!(
                (a.fraction(t.value) - i as f64 / 7.0).abs() < 1e-12,
                "{t:?}"
            );
        }
        assert!((a.fraction(1000.0f64.sqrt()) - 1.5 / 7.0).abs() < 1e-12);
    }

    #[test]
    fn log_axis_below_one_and_thinned_when_wide() {
        let a = Axis::new(Scale::Log, [0.002, 0.5]);
        assert_eq!(labels(&a), ["0.001", "0.01", "0.1", "1"]);
        let a = Axis::new(Scale::Log, [1e-6, 1e15]);
        assert!(a.ticks.len() as i32 <= MAX_TICKS + 1);
        assert_eq!(a.ticks[0].label, "1e-6");
        assert_eq!(a.ticks.last().unwrap().label, "1P");
    }

    #[test]
    fn linear_ticks_are_round_and_cover_the_data() {
        let a = Axis::new(Scale::Linear, [0.3, 9.2]);
        assert_eq!(labels(&a), ["0", "2", "4", "6", "8", "10"]);
        assert_eq!(a.fraction(0.0), 0.0);
        assert_eq!(a.fraction(10.0), 1.0);
        let a = Axis::new(Scale::Linear, [-0.25, 0.05]);
        assert_eq!(labels(&a), ["-0.3", "-0.2", "-0.1", "0.0", "0.1"]);
        let a = Axis::new(Scale::Linear, [-0.2, 0.0]);
        assert_eq!(labels(&a), ["-0.20", "-0.15", "-0.10", "-0.05", "0.00"]);
        let a = Axis::new(Scale::Linear, [0.0, 40_000.0]);
        assert_eq!(labels(&a), ["0", "10k", "20k", "30k", "40k"]);
    }

    #[test]
    fn degenerate_ranges_still_make_an_axis() {
        for a in [
            Axis::new(Scale::Linear, []),
            Axis::new(Scale::Linear, [5.0, 5.0]),
            Axis::new(Scale::Linear, [0.0]),
            Axis::new(Scale::Log, []),
            Axis::new(Scale::Log, [100.0]),
        ] {
            assert!(a.ticks.len() >= 2, "{a:?}");
            for t in &a.ticks {
                assert!(a.fraction(t.value).is_finite(), "{a:?}");
            }
        }
        assert_eq!(labels(&Axis::new(Scale::Log, [100.0])), ["100", "1k"]);
    }
}
