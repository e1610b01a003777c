//! The statistics on every shared calibration file against an independent
//! computation (scikit-learn and SciPy, `scripts/calibration_expected.py`), with
//! the `length` baseline judge whose verdicts the script restates.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

use gavel_calibration::{Judge, Report, judge_all, load_jsonl};
use gavel_checks::{JudgeRuntime, NoJudgeModels};
use serde_json::Value;

/// The public human-labelled calibration sets, committed under `testdata/calibration`
/// (a copy of the shared calibration data, with its README).
fn calibration_dir() -> PathBuf {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    here.ancestors()
        .map(|a| a.join("testdata/calibration"))
        .find(|p| p.join("README.md").exists())
        .expect("testdata/calibration in the repository")
}

fn close(a: Option<f64>, b: &Value) -> bool {
    match (a, b.as_f64()) {
        (None, None) => true,
        (Some(a), Some(b)) => (a - b).abs() < 1e-9,
        _ => false,
    }
}

/// A judge that always picks the answer shown first: `A` in one order, `B`
/// (mapped back) in the other.
fn first_shown(records: &[gavel_calibration::Record]) -> Vec<gavel_calibration::ItemVerdict> {
    records
        .iter()
        .map(|_| gavel_calibration::ItemVerdict {
            label: Some("inconsistent".into()),
            score: None,
            orders: Some(["A".into(), "B".into()]),
            error: None,
            reasoning: None,
            cost_usd: None,
        })
        .collect()
}

#[test]
fn a_judge_that_always_picks_the_first_answer_gets_no_credit_for_ties() {
    let records = load_jsonl(&calibration_dir().join("autoj_pairwise.jsonl")).unwrap();
    let ties: Vec<_> = records
        .into_iter()
        .filter(|r| r.human_label.as_deref() == Some("tie"))
        .collect();
    assert_eq!(ties.len(), 60);
    let r = Report::new(
        "ties",
        "first",
        &ties,
        &first_shown(&ties),
        &Default::default(),
    )
    .unwrap();
    assert_eq!(r.agreement, Some(0.0));
    assert_eq!(r.position_consistency, Some(0.0));
    assert!(!r.fit_to_gate);
    assert!(
        r.not_fit.iter().any(|w| w.contains("agreement 0.000")),
        "{:?}",
        r.not_fit
    );
}

#[test]
fn every_shared_file_matches_sklearn_and_scipy() {
    let expected: Value =
        serde_json::from_str(include_str!("fixtures/calibration_expected.json")).unwrap();
    let datasets = expected["datasets"].as_object().unwrap();
    let dir = calibration_dir();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    assert_eq!(
        files.len(),
        datasets.len(),
        "one expectation per shared file"
    );
    let rt = JudgeRuntime::new(&NoJudgeModels);
    for path in files {
        let name = path.file_stem().unwrap().to_str().unwrap().to_owned();
        let want = &datasets[&name];
        let records = load_jsonl(&path).unwrap();
        let verdicts = futures::executor::block_on(judge_all(&Judge::Length, &records, &rt, 8));
        let r = Report::new(
            &name,
            "baseline:length",
            &records,
            &verdicts,
            &Default::default(),
        )
        .unwrap();
        assert_eq!(r.kind, want["kind"], "{name}");
        assert_eq!(r.items as u64, want["items"].as_u64().unwrap(), "{name}");
        assert_eq!(r.judged as u64, want["judged"].as_u64().unwrap(), "{name}");
        for (field, got) in [
            ("agreement", r.agreement),
            ("kappa", r.kappa),
            ("spearman", r.spearman),
            ("pearson", r.pearson),
            ("position_consistency", r.position_consistency),
        ] {
            assert!(
                close(got, &want[field]),
                "{name} {field}: {got:?} vs {}",
                want[field]
            );
        }
        let counts: Vec<Vec<u64>> = serde_json::from_value(want["confusion"].clone()).unwrap();
        assert_eq!(r.confusion.counts, counts, "{name} confusion");
        let recall = want["recall"].as_object().unwrap();
        assert_eq!(r.recall.len(), recall.len(), "{name} recall");
        for got in &r.recall {
            assert!(
                close(Some(got.recall), &recall[&got.label]),
                "{name} recall of {}: {} vs {}",
                got.label,
                got.recall,
                recall[&got.label]
            );
        }
        assert!(!r.fit_to_gate, "{name}: {:?}", r.not_fit);
    }
}
