//! Renders a sample benchmark chart: `cargo run -p ferry-plot --example chart -- out.png`.

use ferry_plot::Chart;

fn main() {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "chart.svg".to_string());
    let sizes: Vec<f64> = (0..=22).map(|k| f64::from(1u32 << k)).collect();
    // Made-up alpha + n * beta costs, only to exercise the chart; not measurements.
    let curve = |alpha: f64, beta: f64| -> Vec<(f64, f64)> {
        sizes.iter().map(|&n| (n, alpha + n * beta)).collect()
    };
    let chart = Chart::new(
        "allreduce, 8 ranks over shared memory",
        "message size (bytes)",
        "time (us)",
    )
    .log_x()
    .log_y()
    .series("allreduce.ring", curve(14.0, 0.0009))
    .series("allreduce.recursive_doubling", curve(4.0, 0.0024))
    .series("allreduce.rabenseifner", curve(7.0, 0.0011))
    .series("allreduce.reduce_bcast", curve(6.0, 0.0035));
    if let Err(e) = chart.write(std::path::Path::new(&path)) {
        eprintln!("{e}");
        std::process::exit(1);
    }
}
