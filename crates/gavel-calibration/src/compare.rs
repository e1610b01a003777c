//! Two judges on one labelled set: their stored reports side by side, and
//! paired tests on the items both were asked about.
//!
//! An item is *right* for a judge when it gave a verdict equal to the human
//! label; an abstention (error, refusal, skip, no verdict) is wrong, so a judge
//! cannot look better by abstaining on hard items. McNemar's exact test
//! ([`gavel_stats::sign_test`] on the discordant items) asks whether one judge
//! is right more often than the other; a paired percentile bootstrap
//! ([`COMPARE_BOOTSTRAP`]) bounds the difference in agreement, B − A.

use std::collections::HashMap;

use gavel_core::CalibrationRun;
use gavel_stats::{Bootstrap, Interval};
use serde::{Deserialize, Serialize};

use crate::{CalibrationError, ClassRecall};

/// The paired bootstrap of a comparison: 10,000 resamples of the paired items,
/// ChaCha8 seeded with 0, so the same runs always give the same interval.
pub const COMPARE_BOOTSTRAP: Bootstrap = Bootstrap {
    resamples: 10_000,
    seed: 0,
};

/// One calibration run's figures, as its stored report holds them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Side {
    /// The calibration run's id.
    #[serde(default)]
    pub id: String,
    /// The judge (model id or baseline).
    pub judge: String,
    /// Labelled items.
    pub items: usize,
    /// Items with a verdict.
    pub judged: usize,
    /// `judged / items`.
    pub coverage: f64,
    /// Exact agreement over the judged items.
    pub agreement: Option<f64>,
    /// Wilson 95% interval of `agreement`.
    pub agreement_ci: Option<Interval>,
    /// Agreement over every item, abstentions counted as disagreements.
    pub agreement_all_items: Option<f64>,
    /// Cohen's kappa.
    pub kappa: Option<f64>,
    /// Bootstrap 95% interval of `kappa`.
    pub kappa_ci: Option<Interval>,
    /// Spearman's ρ (pointwise sets).
    pub spearman: Option<f64>,
    /// Bootstrap 95% interval of `spearman`.
    pub spearman_ci: Option<Interval>,
    /// Kendall's τ-b (pointwise sets).
    pub kendall: Option<f64>,
    /// Bootstrap 95% interval of `kendall`.
    pub kendall_ci: Option<Interval>,
    /// Pearson's r (pointwise sets).
    pub pearson: Option<f64>,
    /// Per human label, the share the judge labelled the same.
    #[serde(default)]
    pub recall: Vec<ClassRecall>,
    /// Pairwise: the share of pairs judged the same in both orders.
    pub position_consistency: Option<f64>,
    /// Whether the run's own report found the judge fit to gate.
    pub fit_to_gate: bool,
    /// Why not, one reason each.
    #[serde(default)]
    pub not_fit: Vec<String>,
}

/// The paired figures over the items both runs hold.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Paired {
    /// Items in both runs with the same human label.
    pub items: usize,
    /// Of those, the items A got right.
    pub right_a: usize,
    /// Of those, the items B got right.
    pub right_b: usize,
    /// `right_a / items`.
    pub agreement_a: Option<f64>,
    /// `right_b / items`.
    pub agreement_b: Option<f64>,
    /// Discordant items A got right and B wrong.
    pub a_right_b_wrong: u64,
    /// Discordant items A got wrong and B right.
    pub a_wrong_b_right: u64,
    /// McNemar's exact two-sided p-value; `None` without discordant items.
    pub mcnemar_p: Option<f64>,
    /// `agreement_b − agreement_a`.
    pub difference: Option<f64>,
    /// Paired bootstrap 95% interval of `difference`.
    pub difference_ci: Option<Interval>,
}

/// Two calibration runs on one labelled set, compared.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// The labelled set.
    pub dataset: String,
    /// `pairwise`, `binary` or `likert`.
    pub kind: String,
    /// The first run (the baseline).
    pub a: Side,
    /// The second run (the candidate).
    pub b: Side,
    /// The paired tests.
    pub paired: Paired,
    /// Item ids only A holds: left out of the paired tests.
    pub only_a: Vec<String>,
    /// Item ids only B holds: left out of the paired tests.
    pub only_b: Vec<String>,
    /// Item ids whose human label differs between the runs (relabelled in
    /// between): left out of the paired tests.
    pub relabelled: Vec<String>,
    /// How the numbers were made.
    pub notes: Vec<String>,
}

/// One stored item, as far as pairing goes.
#[derive(Deserialize)]
struct StoredItem {
    id: String,
    human: String,
    judge: Option<String>,
    error: Option<String>,
}

impl StoredItem {
    fn right(&self) -> bool {
        self.error.is_none() && self.judge.as_deref() == Some(self.human.as_str())
    }
}

/// The part of a stored report a comparison reads.
#[derive(Deserialize)]
struct Stored {
    kind: String,
    #[serde(flatten)]
    side: Side,
    results: Vec<StoredItem>,
}

fn read(run: &CalibrationRun) -> Result<Stored, CalibrationError> {
    let mut stored: Stored = serde_json::from_value(run.report.clone()).map_err(|e| {
        CalibrationError::Set(format!(
            "calibration run `{}`: its stored report cannot be read ({e}); run `gavel calibrate` again",
            run.id
        ))
    })?;
    stored.side.id.clone_from(&run.id);
    Ok(stored)
}

/// Compares run `b` with run `a` on the items both hold, paired by item id.
/// Refused when the runs were made on different labelled sets (or kinds).
pub fn compare(a: &CalibrationRun, b: &CalibrationRun) -> Result<Comparison, CalibrationError> {
    let (sa, sb) = (read(a)?, read(b)?);
    if a.dataset != b.dataset || sa.kind != sb.kind {
        return Err(CalibrationError::DifferentSets {
            a: a.id.clone(),
            a_set: format!("{} ({})", a.dataset, sa.kind),
            b: b.id.clone(),
            b_set: format!("{} ({})", b.dataset, sb.kind),
        });
    }
    let in_b: HashMap<&str, &StoredItem> = sb.results.iter().map(|i| (i.id.as_str(), i)).collect();
    let in_a: HashMap<&str, &StoredItem> = sa.results.iter().map(|i| (i.id.as_str(), i)).collect();
    let mut right = Vec::new();
    let (mut only_a, mut relabelled) = (Vec::new(), Vec::new());
    for item in &sa.results {
        match in_b.get(item.id.as_str()) {
            None => only_a.push(item.id.clone()),
            Some(other) if other.human != item.human => relabelled.push(item.id.clone()),
            Some(other) => right.push((item.right(), other.right())),
        }
    }
    let only_b = sb
        .results
        .iter()
        .filter(|i| !in_a.contains_key(i.id.as_str()))
        .map(|i| i.id.clone())
        .collect();
    let notes = vec![
        "paired on the items both runs hold with the same human label; an item is right when the judge's verdict equals the human label, and an abstention counts as wrong".to_owned(),
        format!(
            "McNemar's exact two-sided test on the discordant items; 95% interval of B − A by a paired percentile bootstrap ({} resamples, ChaCha8 seed {})",
            COMPARE_BOOTSTRAP.resamples, COMPARE_BOOTSTRAP.seed
        ),
    ];
    Ok(Comparison {
        dataset: a.dataset.clone(),
        kind: sa.kind,
        a: sa.side,
        b: sb.side,
        paired: paired(&right),
        only_a,
        only_b,
        relabelled,
        notes,
    })
}

/// The paired figures of (A right, B right) per item.
pub(crate) fn paired(right: &[(bool, bool)]) -> Paired {
    let n = right.len();
    let count = |f: fn(&(bool, bool)) -> bool| right.iter().filter(|r| f(r)).count();
    let (right_a, right_b) = (count(|r| r.0), count(|r| r.1));
    let a_right_b_wrong = count(|r| r.0 && !r.1) as u64;
    let a_wrong_b_right = count(|r| !r.0 && r.1) as u64;
    let share = |k: usize| (n > 0).then(|| k as f64 / n as f64);
    let diff: Vec<f64> = right
        .iter()
        .map(|&(a, b)| f64::from(u8::from(b)) - f64::from(u8::from(a)))
        .collect();
    let difference_ci = COMPARE_BOOTSTRAP.percentile(n, 0.95, |idx| {
        Some(idx.iter().map(|&i| diff[i]).sum::<f64>() / idx.len() as f64)
    });
    Paired {
        items: n,
        right_a,
        right_b,
        agreement_a: share(right_a),
        agreement_b: share(right_b),
        a_right_b_wrong,
        a_wrong_b_right,
        mcnemar_p: gavel_stats::sign_test(a_right_b_wrong, a_wrong_b_right).map(|t| t.p_value),
        difference: share(right_b).zip(share(right_a)).map(|(b, a)| b - a),
        difference_ci,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(id: &str, items: &[(&str, &str, Option<&str>)]) -> CalibrationRun {
        let results: Vec<_> = items
            .iter()
            .map(|(id, human, judge)| {
                serde_json::json!({"id": id, "human": human, "judge": judge,
                    "error": judge.is_none().then_some("timed out")})
            })
            .collect();
        CalibrationRun {
            id: id.into(),
            created_at: String::new(),
            dataset: "set".into(),
            judge: "j".into(),
            items: items.len() as u64,
            judged: 0,
            agreement: None,
            kappa: None,
            fit_to_gate: false,
            fingerprint: None,
            report: serde_json::json!({"kind": "binary", "judge": "j", "items": items.len(),
                "judged": 0, "coverage": 0.0, "fit_to_gate": false, "results": results}),
        }
    }

    #[test]
    fn pairs_by_id_and_counts_abstentions_as_wrong() {
        let a = run(
            "a",
            &[
                ("x", "pass", Some("pass")),
                ("y", "fail", Some("fail")),
                ("z", "fail", Some("fail")),
                ("v", "pass", None),
            ],
        );
        let b = run(
            "b",
            &[
                ("w", "pass", Some("pass")),
                ("z", "fail", None),
                ("y", "pass", Some("pass")),
                ("x", "pass", Some("pass")),
                ("v", "pass", Some("pass")),
            ],
        );
        let c = compare(&a, &b).unwrap();
        assert_eq!(
            (c.only_a.len(), c.only_b.clone()),
            (0, vec!["w".to_owned()])
        );
        assert_eq!(c.relabelled, ["y"]);
        let p = &c.paired;
        // x: both right; z: B abstained; v: A abstained.
        assert_eq!((p.items, p.right_a, p.right_b), (3, 2, 2));
        assert_eq!((p.a_right_b_wrong, p.a_wrong_b_right), (1, 1));
        assert_eq!(p.mcnemar_p, Some(1.0));
        assert_eq!(p.difference, Some(0.0));
        assert!(
            c.text()
                .contains("relabelled in between (unpaired): 1 items: y")
        );
    }
}
