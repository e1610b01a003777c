//! The paired tests against SciPy's values (`scripts/calibration_expected.py`).
#![allow(clippy::unwrap_used)]

use serde_json::Value;

fn fixture() -> Value {
    let text = include_str!("fixtures/paired_expected.json");
    serde_json::from_str(text).unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1e-300) || (a - b).abs() < 1e-12
}

#[test]
fn wilcoxon_matches_scipy() {
    let f = fixture();
    for (name, case) in f["wilcoxon"].as_object().unwrap() {
        let d: Vec<f64> = case["differences"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        let t = gavel_stats::wilcoxon(&d).unwrap();
        let (stat, p) = (
            case["statistic"].as_f64().unwrap(),
            case["p_value"].as_f64().unwrap(),
        );
        assert!(
            close(t.statistic, stat),
            "{name}: statistic {} vs {stat}",
            t.statistic
        );
        assert!(close(t.p_value, p), "{name}: p {} vs {p}", t.p_value);
    }
}

#[test]
fn sign_test_matches_scipy() {
    for case in fixture()["sign"].as_array().unwrap() {
        let (up, down) = (case["up"].as_u64().unwrap(), case["down"].as_u64().unwrap());
        let t = gavel_stats::sign_test(up, down).unwrap();
        let p = case["p_value"].as_f64().unwrap();
        assert!(close(t.p_value, p), "{up}/{down}: p {} vs {p}", t.p_value);
    }
}
