//! What `ferry bench` leaves in `--out`: results.csv and results.json in the schema of
//! ferry-model (what `ferry fit` reads), and every run's raw output under raw/.

use std::fs;
use std::path::{Path, PathBuf};

use ferry_model::results::{to_csv, to_json};
use ferry_model::Row;

/// Writes results.csv and results.json into `dir`; returns their paths.
pub fn write_results(dir: &Path, rows: &[Row]) -> Result<[PathBuf; 2], String> {
    fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let csv = dir.join("results.csv");
    let json = dir.join("results.json");
    for (path, text) in [(&csv, to_csv(rows)), (&json, to_json(rows) + "\n")] {
        fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok([csv, json])
}

/// Keeps a run's output as `raw/<impl>.<program>.n<ranks>.r<run>.txt` (and `.err` for a
/// non-empty stderr), so that a figure can be traced back to the run that gave it.
pub fn write_raw(
    dir: &Path,
    implementation: &str,
    program: &str,
    ranks: u32,
    run: u32,
    stdout: &str,
    stderr: &str,
) -> Result<(), String> {
    let raw = dir.join("raw");
    fs::create_dir_all(&raw).map_err(|e| format!("cannot create {}: {e}", raw.display()))?;
    let stem = format!("{implementation}.{program}.n{ranks}.r{run}");
    let out = raw.join(format!("{stem}.txt"));
    fs::write(&out, stdout).map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    let err = raw.join(format!("{stem}.err"));
    if stderr.trim().is_empty() {
        let _ = fs::remove_file(&err);
    } else {
        fs::write(&err, stderr).map_err(|e| format!("cannot write {}: {e}", err.display()))?;
    }
    Ok(())
}
