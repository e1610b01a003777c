//! What a calibration must show before its judge may gate.

use serde::{Deserialize, Serialize};

/// The criteria of "fit to gate". Every shortfall is named in the report.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
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
}

impl Default for GatePolicy {
    fn default() -> Self {
        GatePolicy {
            min_items: 30,
            min_coverage: 0.95,
            min_agreement: 0.8,
            min_kappa: 0.4,
        }
    }
}

/// A share as a percentage with one decimal.
pub(crate) fn pct(v: f64) -> String {
    format!("{:.1}%", v * 100.0)
}

impl GatePolicy {
    /// Why `items` labelled items of which `judged` got a verdict are too few to
    /// gate on, whatever the judge's statistics; empty when they suffice.
    pub fn shortfalls(&self, items: usize, judged: usize) -> Vec<String> {
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
