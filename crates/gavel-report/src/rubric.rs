//! What `rubric` verdicts (seed 002's multi-dimension judge) add to a report:
//! per-dimension scores and the judge's improvement suggestions.

use gavel_core::{Outcome, RubricReading};

/// The rubric's dimensions, each with the key seed 002's `test-report.json` uses
/// for it under `scores` (`tool_usage` is its `mcp_usage`).
const DIMENSIONS: [(&str, &str); 6] = [
    ("accuracy", "accuracy"),
    ("completeness", "completeness"),
    ("format_compliance", "format_compliance"),
    ("scope_adherence", "scope_adherence"),
    ("context_usage", "context_usage"),
    ("tool_usage", "mcp_usage"),
];

/// The outcome's rubric verdicts that were scored (every repeat's).
fn scored(o: &Outcome) -> impl Iterator<Item = &RubricReading> {
    o.executions
        .iter()
        .flat_map(|e| &e.verdicts)
        .filter(|v| v.kind == gavel_core::CheckKind::Rubric)
        .filter_map(|v| v.evidence.rubric())
        .filter(|r| !r.dimensions.is_empty())
}

/// Each dimension's mean 1-5 score over the outcome's rubric verdicts, keyed the
/// seed's way; `None` for a dimension no verdict scored (tool usage without
/// expected tools). Empty when no rubric scored the outcome.
pub(crate) fn dimension_scores(o: &Outcome) -> Vec<(&'static str, Option<f64>)> {
    if scored(o).next().is_none() {
        return Vec::new();
    }
    DIMENSIONS
        .iter()
        .map(|(name, key)| {
            let scores: Vec<f64> = scored(o)
                .filter_map(|r| r.dimensions.get(*name).map(|d| d.score))
                .collect();
            let mean =
                (!scores.is_empty()).then(|| scores.iter().sum::<f64>() / scores.len() as f64);
            (*key, mean)
        })
        .collect()
}

/// The rubric dimensions of an outcome for people: `accuracy 4/5 · completeness
/// 3.5/5 · … · mcp_usage n/a` (means over repeats on the rubric's 1-5 scale);
/// `None` when no rubric scored it.
pub(crate) fn dimension_line(o: &Outcome) -> Option<String> {
    let scores = dimension_scores(o);
    if scores.is_empty() {
        return None;
    }
    let parts: Vec<String> = scores
        .into_iter()
        .map(|(key, mean)| match mean {
            Some(m) => format!("{key} {}/5", crate::text::num(m, 2)),
            None => format!("{key} n/a"),
        })
        .collect();
    Some(parts.join(" · "))
}

/// The outcomes a rubric scored, with their dimension line and suggestions, in
/// report order: what the terminal, Markdown and HTML reports list.
pub(crate) fn rows(report: &crate::Report) -> Vec<RubricRow<'_>> {
    report
        .outcomes
        .iter()
        .filter_map(|o| {
            Some(RubricRow {
                outcome: o,
                dimensions: dimension_line(o)?,
                suggestions: suggestions(o),
            })
        })
        .collect()
}

/// One outcome's rubric results, for display.
pub(crate) struct RubricRow<'a> {
    pub(crate) outcome: &'a Outcome,
    pub(crate) dimensions: String,
    pub(crate) suggestions: Option<String>,
}

/// A 1-5 rubric score on the report's 0-1 scale.
pub(crate) fn normalised(score: f64) -> f64 {
    ((score - 1.0) / 4.0).clamp(0.0, 1.0)
}

/// The rubric judges' improvement suggestions, each distinct one once, in order.
pub(crate) fn suggestions(o: &Outcome) -> Option<String> {
    let mut seen: Vec<&str> = Vec::new();
    for r in scored(o) {
        if let Some(s) = &r.improvement_suggestions {
            let s = s.trim();
            if !s.is_empty() && !seen.contains(&s) {
                seen.push(s);
            }
        }
    }
    (!seen.is_empty()).then(|| seen.join("\n"))
}
