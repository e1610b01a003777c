//! What a run came to, for the runs list, the run page and compare: counts, pass
//! rate, the gate's result, cost, judge model and duration, through the same
//! report (and gate) as `gavel report`.

use gavel_core::{RunRecord, RunStatus};
use gavel_session::SessionError;
use gavel_session::report::Decision;

use crate::error::WebError;
use gavel_store::Store;
use serde::Serialize;

/// One run, summed up.
#[derive(Debug, Serialize)]
pub(crate) struct RunSummary {
    pub(crate) run: RunRecord,
    /// Suite, start time and tags chosen: how people tell runs apart.
    pub(crate) label: String,
    /// Outcomes (case × target), by status.
    pub(crate) total: usize,
    pub(crate) passed: usize,
    pub(crate) failed: usize,
    pub(crate) errors: usize,
    pub(crate) skipped: usize,
    /// Percent passed of decided outcomes.
    pub(crate) pass_rate: Option<f64>,
    /// The minimum pass rate, percent.
    pub(crate) min_pass_rate: f64,
    /// `passed`, `failed`, `errored`, `interrupted`, `budget-stopped`,
    /// `incomplete`, `undecided` or `running`.
    pub(crate) gate: &'static str,
    /// Why the gate failed, one sentence per condition (a judge calibration
    /// that does not qualify the judge, required judges, the pass rate).
    pub(crate) gate_failures: Vec<String>,
    /// Summed cost of the agent's and the judges' calls, when any is known.
    pub(crate) cost_usd: Option<f64>,
    /// The judge model, as stored (its URL masked).
    pub(crate) judge: Option<String>,
    /// Wall time of a finished run.
    pub(crate) duration_ms: Option<u64>,
}

/// The summary of one run, gated by the session as every door gates it: the
/// decision kept with a finished run, so a page listing or showing it does not
/// read its executions.
pub(crate) async fn summarize(store: &Store, run: &RunRecord) -> Result<RunSummary, WebError> {
    let decision = gavel_session::report::decision(store, &run.id)
        .await
        .map_err(|e| match e {
            SessionError::Store(e) => WebError::Store(e),
            other => WebError::Internal(other.to_string()),
        })?;
    Ok(of(run.clone(), decision))
}

/// The summary of `run` from what it came to.
fn of(run: RunRecord, decision: Decision) -> RunSummary {
    let Decision {
        overall,
        cost_usd,
        gate,
    } = decision;
    let word = match run.status {
        RunStatus::Running => "running",
        RunStatus::Interrupted => "interrupted",
        RunStatus::BudgetStopped => "budget-stopped",
        RunStatus::Failed => "errored",
        RunStatus::Completed => match gate.word() {
            "PASS" => "passed",
            "FAIL" => "failed",
            "ERROR" => "errored",
            "INCOMPLETE" => "incomplete",
            _ => "undecided",
        },
    };
    RunSummary {
        label: label(&run),
        total: overall.total,
        passed: overall.passed,
        failed: overall.failed,
        errors: overall.errors,
        skipped: overall.skipped,
        pass_rate: overall.pass_rate.map(|r| (r * 10.0).round() / 10.0),
        min_pass_rate: gate.min_pass_rate,
        gate: word,
        gate_failures: gate.failures().iter().map(ToString::to_string).collect(),
        cost_usd,
        judge: gavel_session::RunLabels::of(&run).judge,
        duration_ms: run.wall_ms(),
        run,
    }
}

/// Suite, start time, and the tags chosen: how people tell runs apart.
pub(crate) fn label(run: &RunRecord) -> String {
    let mut label = vec![run.suite.clone(), short_time(&run.started_at)];
    let asked = gavel_session::RunLabels::of(run);
    if !asked.tags.is_empty() {
        label.push(format!("tags {}", asked.tags.join(", ")));
    }
    if !asked.targets.is_empty() {
        label.push(format!("targets {}", asked.targets.join(", ")));
    }
    if let Some(commit) = &asked.commit {
        label.push(commit.chars().take(12).collect());
    }
    label.join(" · ")
}

/// A run as a choice among many of the same suite: its label, what passed,
/// and the random tail of its id (`pm · 2026-11-27 13:40 · 2 of 3 passed (66.7%) · 9f3c21ab`).
pub(crate) fn choice(s: &RunSummary) -> String {
    let outcome = match (s.gate, s.pass_rate) {
        ("running", _) => "running".to_owned(),
        (_, Some(rate)) => format!("{} of {} passed ({rate}%)", s.passed, s.total),
        (gate, None) => format!("{} of {} passed, {gate}", s.passed, s.total),
    };
    format!("{} · {outcome} · {}", s.label, short_id(&s.run.id))
}

/// The random tail of a run id, as the pages show it.
fn short_id(id: &str) -> &str {
    id.get(id.len().saturating_sub(8)..).unwrap_or(id)
}

/// `2026-11-25T16:12:07.123Z` → `2026-11-25 16:12`: how pages show a time
/// (the `when` filter of templates).
pub(crate) fn short_time(rfc3339: &str) -> String {
    rfc3339.get(..16).unwrap_or(rfc3339).replace('T', " ")
}
