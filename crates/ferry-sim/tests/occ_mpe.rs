//! The status-based collectives study (SEEDS.md S1) holds the shape the paper reports.

use ferry_model::ModelParams;
use ferry_sim::occ_mpe::{run, theoretical_max, Study, PAIRS};

#[test]
fn the_study_has_the_papers_shape() {
    let study = Study::new(vec![4, 8, 16], ModelParams::preset("soc-mpe").unwrap(), 0.05);
    let report = run(&study).unwrap();
    for (coll, _, _) in PAIRS {
        let best: Vec<f64> = report
            .best
            .iter()
            .filter(|b| b.collective == coll)
            .map(|b| {
                assert!(b.improvement > 0.0, "{coll} {}: status never wins: {}", b.nodes, b.case);
                assert!(
                    b.improvement <= theoretical_max(coll, b.nodes),
                    "{coll} {}: {} beats the theoretical maximum ({})",
                    b.nodes,
                    b.improvement,
                    b.case
                );
                b.improvement
            })
            .collect();
        assert_eq!(best.len(), 3);
        assert!(best.windows(2).all(|w| w[0] < w[1]), "{coll}: best improvements {best:?} do not grow with N");
        for &n in &study.nodes {
            let deg: Vec<f64> = report
                .worst_no_interference
                .iter()
                .filter(|w| w.collective == coll && w.nodes == n)
                .map(|w| w.degradation)
                .collect();
            assert_eq!(deg.len(), study.payloads.len());
            assert!(deg.iter().all(|&d| d > 0.0), "{coll} {n}: {deg:?}");
            assert!(deg.windows(2).all(|w| w[1] < w[0]), "{coll} {n}: {deg:?} does not shrink with the payload");
        }
    }
    let theory: Vec<f64> = report.theoretical_max.iter().map(|t| t.value).collect();
    assert!((theory[0] - 0.5).abs() < 1e-12 && (theory[5] - 13.0 / 15.0).abs() < 1e-12);
    // The JSON has the documented shape.
    let v = serde_json::to_value(&report).unwrap();
    for (key, fields) in [
        ("best", &["collective", "nodes", "improvement", "case"][..]),
        ("worst_no_interference", &["collective", "nodes", "bytes", "degradation"][..]),
        ("theoretical_max", &["collective", "nodes", "value"][..]),
    ] {
        let first = &v[key][0];
        let obj = first.as_object().unwrap_or_else(|| panic!("{key} is a list of objects"));
        assert_eq!(obj.len(), fields.len(), "{key}: {obj:?}");
        assert!(fields.iter().all(|f| obj.contains_key(*f)), "{key}: {obj:?}");
    }
}
