//! LogGP parameters, optionally by number of communicating processes (nLogP), and the TOML
//! file that carries them. Times are in microseconds; `G` is microseconds per byte.
//!
//! ```toml
//! name = "gige-2000"            # optional
//! source = "what they describe"  # optional
//! [loggp]                        # required: the values used where no table applies
//! L = 40.0      # latency: wire and switch time of one message
//! o = 8.0       # overhead: processor time to send or to receive one message
//! g = 12.0      # gap: least time between two message injections of one node
//! G = 0.0085    # gap per byte: time per byte on a node's port
//! [nlogp]                        # optional: tables by n, linear between points, clamped outside
//! n = [2, 4, 8]
//! L = [40.0, 42.0, 47.0]
//! o = [8.0, 8.5, 9.5]            # any of L, o, g, G may be left out: [loggp] then applies
//! [hockney]                      # optional, written by `ferry fit`, informational
//! t0 = 50.0     # us
//! r_inf = 117.0 # MB/s
//! m_half = 5850.0  # bytes
//! pi0 = 0.02    # 1/us
//! ```

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// LogGP parameters at one process count.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogGp {
    #[serde(rename = "L")]
    pub l: f64,
    pub o: f64,
    pub g: f64,
    #[serde(rename = "G")]
    pub big_g: f64,
}

/// Tables of LogGP parameters by the number of communicating processes `n`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NLogP {
    pub n: Vec<u32>,
    #[serde(rename = "L", default, skip_serializing_if = "Option::is_none")]
    pub l: Option<Vec<f64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub o: Option<Vec<f64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub g: Option<Vec<f64>>,
    #[serde(rename = "G", default, skip_serializing_if = "Option::is_none")]
    pub big_g: Option<Vec<f64>>,
}

/// Hockney's model t(m) = t0 + m / r_inf, as `ferry fit` found it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Hockney {
    /// Start-up time, microseconds.
    pub t0: f64,
    /// Asymptotic bandwidth, MB/s (10^6 bytes per second, i.e. bytes per microsecond).
    pub r_inf: f64,
    /// Half-performance message length, bytes (t0 * r_inf).
    pub m_half: f64,
    /// Specific performance 1 / t0, per microsecond.
    pub pi0: f64,
}

/// A parameter file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    pub loggp: LogGp,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nlogp: Option<NLogP>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hockney: Option<Hockney>,
}

#[derive(Debug, Error, PartialEq)]
pub enum ParamsError {
    #[error("parameter file: {0}")]
    Syntax(String),
    #[error("parameter {name} = {}: must be a number from 0 to {max:e}", show(*.value))]
    Value { name: String, value: f64, max: f64 },
    #[error("[nlogp] {column} has {got} values for {want} process counts")]
    Length {
        column: &'static str,
        got: usize,
        want: usize,
    },
    #[error("[nlogp] n must be increasing process counts >= 1, got {0:?}")]
    Counts(Vec<u32>),
    #[error("unknown preset {0:?}; presets: {1}")]
    UnknownPreset(String, String),
}

/// Largest L, o or g a file may give, microseconds (1000 s).
pub const MAX_TIME: f64 = 1e9;
/// Largest G a file may give, microseconds per byte (1 s per byte).
pub const MAX_PER_BYTE: f64 = 1e6;

/// A number as a person wrote it: plain when moderate, in exponent form when huge or tiny.
fn show(v: f64) -> String {
    if v.is_finite() && v != 0.0 && !(1e-6..1e9).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// Built-in parameter sets: (name, TOML text).
pub const PRESETS: &[(&str, &str)] = &[
    ("gige-2000", include_str!("presets/gige-2000.toml")),
    ("shm-local", include_str!("presets/shm-local.toml")),
    ("soc-mpe", include_str!("presets/soc-mpe.toml")),
];

impl ModelParams {
    /// Plain LogGP, the same at every process count.
    pub fn loggp(p: LogGp) -> ModelParams {
        ModelParams {
            name: None,
            source: None,
            loggp: p,
            nlogp: None,
            hockney: None,
        }
    }

    /// Parses and checks a parameter file.
    pub fn from_toml(text: &str) -> Result<ModelParams, ParamsError> {
        let p: ModelParams = toml::from_str(text).map_err(|e| ParamsError::Syntax(e.to_string()))?;
        p.check()?;
        Ok(p)
    }

    /// The file text (round-trips through [`ModelParams::from_toml`]).
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("parameters are plain numbers and strings")
    }

    /// A built-in parameter set.
    pub fn preset(name: &str) -> Result<ModelParams, ParamsError> {
        let (_, text) = PRESETS.iter().find(|(n, _)| *n == name).ok_or_else(|| {
            let names: Vec<&str> = PRESETS.iter().map(|(n, _)| *n).collect();
            ParamsError::UnknownPreset(name.to_owned(), names.join(", "))
        })?;
        Ok(ModelParams::from_toml(text).expect("presets are valid"))
    }

    fn check(&self) -> Result<(), ParamsError> {
        // Bounds far beyond any machine keep every simulated time finite.
        let value = |name: &str, v: f64| {
            let max = if name.ends_with('G') { MAX_PER_BYTE } else { MAX_TIME };
            if v.is_finite() && (0.0..=max).contains(&v) {
                Ok(())
            } else {
                Err(ParamsError::Value {
                    name: name.to_owned(),
                    value: v,
                    max,
                })
            }
        };
        let p = &self.loggp;
        for (name, v) in [("L", p.l), ("o", p.o), ("g", p.g), ("G", p.big_g)] {
            value(name, v)?;
        }
        if let Some(t) = &self.nlogp {
            if t.n.is_empty() || t.n[0] == 0 || t.n.windows(2).any(|w| w[0] >= w[1]) {
                return Err(ParamsError::Counts(t.n.clone()));
            }
            for (column, col) in t.columns() {
                let Some(col) = col else { continue };
                if col.len() != t.n.len() {
                    return Err(ParamsError::Length {
                        column,
                        got: col.len(),
                        want: t.n.len(),
                    });
                }
                for v in col {
                    value(&format!("[nlogp] {column}"), *v)?;
                }
            }
        }
        Ok(())
    }

    /// The parameters that apply when `n` processes communicate.
    pub fn at(&self, n: usize) -> LogGp {
        let mut p = self.loggp;
        if let Some(t) = &self.nlogp {
            let pick = |col: &Option<Vec<f64>>, dflt: f64| {
                col.as_deref().map_or(dflt, |c| interpolate(&t.n, c, n as f64))
            };
            p = LogGp {
                l: pick(&t.l, p.l),
                o: pick(&t.o, p.o),
                g: pick(&t.g, p.g),
                big_g: pick(&t.big_g, p.big_g),
            };
        }
        p
    }
}

impl NLogP {
    fn columns(&self) -> [(&'static str, &Option<Vec<f64>>); 4] {
        [("L", &self.l), ("o", &self.o), ("g", &self.g), ("G", &self.big_g)]
    }
}

/// Piecewise-linear through (xs, ys), constant beyond the ends.
fn interpolate(xs: &[u32], ys: &[f64], x: f64) -> f64 {
    let first = xs[0] as f64;
    if x <= first {
        return ys[0];
    }
    for i in 1..xs.len() {
        let (x0, x1) = (xs[i - 1] as f64, xs[i] as f64);
        if x <= x1 {
            return ys[i - 1] + (ys[i] - ys[i - 1]) * ((x - x0) / (x1 - x0));
        }
    }
    ys[ys.len() - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> ModelParams {
        ModelParams::from_toml(
            "[loggp]\nL = 10.0\no = 2.0\ng = 3.0\nG = 0.01\n\
             [nlogp]\nn = [2, 4, 8]\nL = [10.0, 20.0, 40.0]\no = [2.0, 2.0, 6.0]\n",
        )
        .unwrap()
    }

    #[test]
    fn tables_interpolate_and_clamp_and_fall_back() {
        let p = table();
        assert_eq!(p.at(2).l, 10.0);
        assert_eq!(p.at(3).l, 15.0);
        assert_eq!(p.at(6).l, 30.0);
        assert_eq!(p.at(6).o, 4.0);
        assert_eq!(p.at(1).l, 10.0);
        assert_eq!(p.at(1000).l, 40.0);
        assert_eq!(p.at(5).g, 3.0, "no g column: [loggp] applies");
        assert_eq!(p.at(5).big_g, 0.01);
    }

    #[test]
    fn files_round_trip() {
        let mut p = table();
        p.name = Some("t".into());
        p.hockney = Some(Hockney {
            t0: 1.0,
            r_inf: 2.0,
            m_half: 2.0,
            pi0: 1.0,
        });
        assert_eq!(ModelParams::from_toml(&p.to_toml()).unwrap(), p);
        for (name, _) in PRESETS {
            let q = ModelParams::preset(name).unwrap();
            assert_eq!(ModelParams::from_toml(&q.to_toml()).unwrap(), q);
        }
    }

    #[test]
    fn bad_files_are_refused_with_the_reason() {
        let bad = |t: &str| ModelParams::from_toml(t).unwrap_err().to_string();
        assert!(bad("").contains("loggp"), "{}", bad(""));
        assert!(bad("[loggp]\nL = 1.0\no = 1.0\ng = 1.0\n").contains("G"));
        assert!(bad("[loggp]\nL = -1.0\no = 1.0\ng = 1.0\nG = 0.0\n").contains("L = -1"));
        assert!(bad("[loggp]\nL = nan\no = 1.0\ng = 1.0\nG = 0.0\n").contains("from 0 to"));
        assert!(bad("[loggp]\nL = 1.0\no = 1.0\ng = 1.0\nG = 1e308\n").contains("G = 1e308"));
        assert!(bad("[loggp]\nL = 1e308\no = 1.0\ng = 1.0\nG = 0.0\n").contains("L = 1e308"));
        let base = "[loggp]\nL = 1.0\no = 1.0\ng = 1.0\nG = 0.0\n";
        assert!(bad(&format!("{base}[nlogp]\nn = [2, 4]\nL = [1.0]\n")).contains("1 values for 2"));
        assert!(bad(&format!("{base}[nlogp]\nn = [4, 2]\n")).contains("increasing"));
        assert!(bad(&format!("{base}[nlogp]\nn = [2]\nx = [1.0]\n")).contains("x"));
        assert!(bad(&format!("{base}colour = 3\n")).contains("colour"));
        assert!(bad("colour = 3\n[loggp]\nL = 1.0\no = 1.0\ng = 1.0\nG = 0.0\n").contains("colour"));
        assert!(ModelParams::preset("nope").unwrap_err().to_string().contains("gige-2000"));
    }
}
