//! What a calibration must show before its judge may gate.

use std::collections::BTreeMap;

use gavel_core::{
    CalibrationRequirement, DEFAULT_MIN_AGREEMENT, DEFAULT_MIN_COVERAGE, DEFAULT_MIN_ITEMS,
    DEFAULT_MIN_KAPPA,
};
use serde::{Deserialize, Serialize};

use crate::report::ClassRecall;

/// The criteria of "fit to gate". Every shortfall is named in the report.
/// `gavel calibrate` reports by them; a suite's gate holds the stored figures
/// to its own ([`GatePolicy::of`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GatePolicy {
    /// The fewest labelled items a calibration may rest on (default 30).
    pub min_items: usize,
    /// The least share of items the judge must give a verdict on (default 0.95):
    /// abstentions (errors, refusals, no verdict) count against the judge.
    pub min_coverage: f64,
    /// The least exact agreement with people (default 0.8).
    pub min_agreement: f64,
    /// The least Cohen's kappa (default 0.4): a judge that says the same thing
    /// every time scores 0, however skewed the labels.
    pub min_kappa: f64,
    /// The least recall per human label (none by default).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub min_recall: BTreeMap<String, f64>,
}

impl Default for GatePolicy {
    fn default() -> Self {
        GatePolicy {
            min_items: DEFAULT_MIN_ITEMS,
            min_coverage: DEFAULT_MIN_COVERAGE,
            min_agreement: DEFAULT_MIN_AGREEMENT,
            min_kappa: DEFAULT_MIN_KAPPA,
            min_recall: BTreeMap::new(),
        }
    }
}

/// A share as a percentage with one decimal.
pub(crate) fn pct(v: f64) -> String {
    format!("{:.1}%", v * 100.0)
}

impl GatePolicy {
    /// The bar of a suite's `judge.calibration`: its minimums, the defaults
    /// where it sets none.
    pub fn of(requirement: &CalibrationRequirement) -> GatePolicy {
        let default = GatePolicy::default();
        GatePolicy {
            min_items: requirement.min_items.unwrap_or(default.min_items),
            min_coverage: requirement.min_coverage.unwrap_or(default.min_coverage),
            min_recall: requirement.min_recall.clone(),
            ..default
        }
    }

    /// Why `items` labelled items of which `judged` got a verdict, with these
    /// per-class recalls, are not enough to gate on, whatever the judge's
    /// agreement; empty when they suffice.
    pub fn shortfalls(&self, items: usize, judged: usize, recall: &[ClassRecall]) -> Vec<String> {
        let mut out = Vec::new();
        if items < self.min_items {
            out.push(format!(
                "only {items} labelled items; at least {} are needed",
                self.min_items
            ));
        }
        let coverage = coverage(items, judged);
        if coverage < self.min_coverage {
            out.push(format!(
                "coverage {} ({judged} of {items} items judged) is under {}: abstentions count against the judge",
                pct(coverage),
                pct(self.min_coverage)
            ));
        }
        for (label, min) in &self.min_recall {
            let found = recall.iter().find(|r| &r.label == label);
            let what = format!("recall of `{label}`");
            match found {
                None => out.push(format!(
                    "{what} is undefined: no judged item is labelled `{label}`"
                )),
                Some(r) if r.recall < *min => out.push(format!(
                    "{what} {} ({} of {}) is under {}",
                    pct(r.recall),
                    r.matched,
                    r.items,
                    pct(*min)
                )),
                Some(_) => {}
            }
        }
        out
    }

    /// Every reason the figures do not meet this policy without a metric:
    /// [`shortfalls`](Self::shortfalls), then agreement and kappa.
    pub(crate) fn judge(
        &self,
        items: usize,
        judged: usize,
        recall: &[ClassRecall],
        agreement: Option<f64>,
        kappa: Option<f64>,
    ) -> Vec<String> {
        let mut out = self.shortfalls(items, judged, recall);
        out.extend(below("agreement", agreement, self.min_agreement));
        out.extend(below("kappa", kappa, self.min_kappa));
        out
    }
}

/// The share of items judged (0 when there are none).
pub(crate) fn coverage(items: usize, judged: usize) -> f64 {
    if items == 0 {
        0.0
    } else {
        judged as f64 / items as f64
    }
}

/// Why `value` of `metric` does not reach `min`; `None` when it does.
/// `what` names the figure (e.g. `kappa` or `kappa lower bound`).
pub(crate) fn below(what: &str, value: Option<f64>, min: f64) -> Option<String> {
    match value {
        None => Some(format!("{what} is undefined on this set")),
        Some(v) if v < min => Some(format!("{what} {v:.3} is under {min}")),
        Some(_) => None,
    }
}
