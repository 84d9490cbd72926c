//! Writes the `--plot` report: each figure drawn by ferry-plot as SVG and PNG, and
//! summary.md beside them (it links the images by file name).

use std::fs;
use std::path::Path;

use ferry_plot::Chart;

use super::report::Figure;

pub fn write(dir: &Path, figures: &[Figure], summary: &str) -> Result<(), String> {
    fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    for f in figures {
        let mut chart = Chart::new(&f.title, &f.x_label, &f.y_label).log_x().log_y();
        for (name, points) in &f.series {
            chart = chart.series(name, points.clone());
        }
        for ext in ["svg", "png"] {
            chart.write(&dir.join(format!("{}.{ext}", f.stem))).map_err(|e| e.to_string())?;
        }
    }
    let path = dir.join("summary.md");
    fs::write(&path, summary).map_err(|e| format!("cannot write {}: {e}", path.display()))
}
