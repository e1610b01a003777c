//! Two judges compared on every shared calibration file against an independent
//! computation (statsmodels' McNemar, SciPy's paired bootstrap:
//! `scripts/calibration_compare_expected.py`), with the two judges it restates.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

use gavel_calibration::{
    CalibrationError, ItemVerdict, Judge, Record, Report, ScaleSpec, Task, compare, judge_all,
    load_jsonl,
};
use gavel_checks::{JudgeRuntime, NoJudgeModels};
use gavel_core::CalibrationRun;
use serde_json::Value;

fn calibration_dir() -> PathBuf {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    here.ancestors()
        .map(|a| a.join("testdata/calibration"))
        .find(|p| p.join("README.md").exists())
        .expect("testdata/calibration in the repository")
}

/// Judge B of the script: abstains on line index `i % 11 == 3`; else the
/// longer response in characters (both orders), pass from 40 words up, or
/// 1 + words / 40 on Likert sets.
fn rule_b(record: &Record, i: usize) -> ItemVerdict {
    let mut v = ItemVerdict {
        label: None,
        score: None,
        orders: None,
        error: None,
        reasoning: None,
        cost_usd: None,
    };
    if i % 11 == 3 {
        v.error = Some("abstained".into());
        return v;
    }
    let words = |t: &Option<String>| {
        t.as_deref()
            .unwrap_or_default()
            .split_ascii_whitespace()
            .count()
    };
    let chars = |t: &Option<String>| t.as_deref().unwrap_or_default().chars().count();
    match (&record.task, &record.scale) {
        (Task::Pairwise, _) => {
            let label = match chars(&record.response_a).cmp(&chars(&record.response_b)) {
                std::cmp::Ordering::Greater => "A",
                std::cmp::Ordering::Less => "B",
                std::cmp::Ordering::Equal => "tie",
            };
            v.label = Some(label.into());
            v.orders = Some([label.into(), label.into()]);
        }
        (_, ScaleSpec::Likert { .. }) => {
            v.score = Some((1 + words(&record.response) / 40).min(5) as f64)
        }
        _ => {
            let pass = words(&record.response) >= 40;
            v.label = Some(if pass { "pass" } else { "fail" }.into());
            v.score = Some(if pass { 1.0 } else { 0.0 });
        }
    }
    v
}

fn stored(id: &str, dataset: &str, report: &Report) -> CalibrationRun {
    CalibrationRun {
        id: id.into(),
        created_at: "2026-11-28T00:00:00Z".into(),
        dataset: dataset.into(),
        judge: report.judge.clone(),
        items: report.items as u64,
        judged: report.judged as u64,
        agreement: report.agreement,
        kappa: report.kappa,
        fit_to_gate: report.fit_to_gate,
        fingerprint: None,
        report: serde_json::to_value(report).unwrap(),
    }
}

/// Runs A (the `length` baseline, every item) and B (`rule_b`, every item
/// but the first) of one file.
fn runs(name: &str) -> (CalibrationRun, CalibrationRun) {
    let records = load_jsonl(&calibration_dir().join(format!("{name}.jsonl"))).unwrap();
    let rt = JudgeRuntime::new(&NoJudgeModels);
    let a = futures::executor::block_on(judge_all(&Judge::Length, &records, &rt, 4));
    let policy = Default::default();
    let a = Report::new(name, "baseline:length", &records, &a, &policy).unwrap();
    let b: Vec<ItemVerdict> = records
        .iter()
        .enumerate()
        .skip(1)
        .map(|(i, r)| rule_b(r, i))
        .collect();
    let b = Report::new(name, "rule-b", &records[1..], &b, &policy).unwrap();
    (stored("run-a", name, &a), stored("run-b", name, &b))
}

fn close(a: f64, b: &Value, tolerance: f64) -> bool {
    b.as_f64().is_some_and(|b| (a - b).abs() <= tolerance)
}

#[test]
fn every_shared_file_matches_statsmodels_and_scipy() {
    let expected: Value =
        serde_json::from_str(include_str!("fixtures/compare_expected.json")).unwrap();
    let datasets = expected["datasets"].as_object().unwrap();
    assert_eq!(datasets.len(), 13);
    let (mut worst, mut same): (f64, usize) = (0.0, 0);
    for (name, want) in datasets {
        let (a, b) = runs(name);
        let c = compare(&a, &b).unwrap();
        let p = &c.paired;
        assert_eq!(c.kind, want["kind"].as_str().unwrap(), "{name}");
        assert_eq!(p.items as u64, want["paired"].as_u64().unwrap(), "{name}");
        assert_eq!(
            serde_json::to_value(&c.only_a).unwrap(),
            want["only_a"],
            "{name}"
        );
        assert!(c.only_b.is_empty() && c.relabelled.is_empty(), "{name}");
        assert_eq!(
            p.right_a as u64,
            want["right_a"].as_u64().unwrap(),
            "{name}"
        );
        assert_eq!(
            p.right_b as u64,
            want["right_b"].as_u64().unwrap(),
            "{name}"
        );
        assert_eq!(
            p.a_right_b_wrong,
            want["a_right_b_wrong"].as_u64().unwrap(),
            "{name}"
        );
        assert_eq!(
            p.a_wrong_b_right,
            want["a_wrong_b_right"].as_u64().unwrap(),
            "{name}"
        );
        let mcnemar = p.mcnemar_p.unwrap();
        assert!(
            close(mcnemar, &want["mcnemar_p"], 1e-12),
            "{name}: p {mcnemar} vs {}",
            want["mcnemar_p"]
        );
        assert!(
            close(p.difference.unwrap(), &want["difference"], 1e-12),
            "{name}"
        );
        // A bootstrap interval is a Monte Carlo estimate of the quantiles of a
        // discrete distribution (steps of 1/n): an endpoint near a step may
        // land on either side of it, so gavel's 10,000 resamples must land
        // within one step of SciPy's 200,000.
        let ci = p.difference_ci.unwrap();
        let step = 1.0 / p.items as f64 + 1e-12;
        for (got, want) in [
            (ci.low, &want["difference_ci"][0]),
            (ci.high, &want["difference_ci"][1]),
        ] {
            let off = (got - want.as_f64().unwrap()).abs();
            worst = worst.max(off);
            same += usize::from(off < 1e-9);
            assert!(
                close(got, want, step),
                "{name}: interval {ci:?} vs {}",
                expected["datasets"][name]["difference_ci"]
            );
        }
        // The side-by-side figures are the stored reports' own.
        assert_eq!(c.a.agreement, a.agreement, "{name}");
        assert_eq!(c.b.kappa, b.kappa, "{name}");
        assert_eq!((c.a.id.as_str(), c.b.id.as_str()), ("run-a", "run-b"));
        let text = c.text();
        assert!(
            text.contains(&format!("McNemar exact test p = {mcnemar:.4}")),
            "{text}"
        );
    }
    eprintln!("interval endpoints equal to SciPy's: {same} of 26; largest difference {worst:.4}");
}

#[test]
fn runs_of_different_sets_are_refused_naming_both() {
    let (a, _) = runs("qags");
    let (_, b) = runs("halueval_general");
    let e = compare(&a, &b).unwrap_err();
    assert!(matches!(e, CalibrationError::DifferentSets { .. }), "{e:?}");
    let message = e.to_string();
    assert!(message.contains("`run-a` is on qags (binary)"), "{message}");
    assert!(
        message.contains("`run-b` is on halueval_general (binary)"),
        "{message}"
    );
}
