//! The JSON report: a superset of the seeds' `test-report.json`.
//!
//! Keys come in a fixed order (structs, not maps, except `by_tag`, `by_target` and
//! `scores`, whose keys are sorted or in check order). Rates are percentages and
//! scores 0..=1; `null` means "nothing to compute it from". `summary.duration_ms` is
//! the summed time of every execution; `run.duration_ms` is the run's wall time.

use std::collections::BTreeMap;

use gavel_core::{Case, Outcome, RunRecord, Status, TagStats, Transcript, Verdict};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::files::{Out, Spool, Writer};
use crate::text;
use crate::{Report, ReportError};

/// Bumped when a key changes meaning or goes away (adding keys does not bump it).
const REPORT_VERSION: u32 = 1;

#[derive(Serialize)]
struct JsonReport<'a> {
    report_version: u32,
    summary: JsonSummary,
    gate: JsonGate<'a>,
    run: JsonRun<'a>,
    by_tag: BTreeMap<&'a str, JsonStats>,
    by_target: BTreeMap<&'a str, JsonStats>,
    /// The targets side by side (null with fewer than two).
    targets_compared: Option<&'a crate::TargetComparison>,
    /// Left empty here: [`JsonWriter`] streams the results into it.
    detailed_results: &'a [JsonResult<'a>],
}

#[derive(Serialize)]
struct JsonSummary {
    total: usize,
    /// Every pass, those with skipped checks included (the pass rate's numerator).
    passed: usize,
    /// Of `passed`, outcomes that passed with one or more skipped checks.
    passed_with_skipped_checks: usize,
    failed: usize,
    errors: usize,
    skipped: usize,
    /// Executions the run planned; null when the run did not record its plan.
    planned: Option<u64>,
    /// Planned executions that did not run (null when the plan is unknown).
    not_run: Option<u64>,
    /// Percent over decided outcomes; null when nothing was decided.
    pass_rate: Option<f64>,
    /// Mean score 0..=1; null when nothing scored.
    average_score: Option<f64>,
    cost_usd: Option<f64>,
    /// Summed execution time.
    duration_ms: u64,
    /// Pairwise comparisons and how many showed position bias.
    pairwise: gavel_core::PairwiseStats,
    /// Select-best comparisons and how often each shown position was chosen.
    select_best: gavel_core::SelectBestStats,
    /// Transport tries (attempts, retries, rate_limited, malformed) of the calls
    /// to targets and to judge models.
    transport: crate::Transport,
}

#[derive(Serialize)]
struct JsonGate<'a> {
    min_pass_rate: f64,
    pass_rate: Option<f64>,
    decided: bool,
    passed: bool,
    errors: usize,
    /// What the run left undone (null when it finished its plan): reason
    /// (`budget-stopped`, `interrupted`, `crashed`, `failed`, `incomplete`),
    /// planned, recorded, unrun, unrun_cases.
    unfinished: Option<&'a crate::Unfinished>,
    exit_code: i32,
    verdict: &'static str,
    /// Why the gate failed, one sentence per condition (empty when it did not).
    failures: Vec<String>,
    /// The gate counts only cases with one of these tags (empty: every case).
    tags: &'a [String],
    /// The calibrated-judge requirement (null when the suite sets none).
    calibration: Option<&'a crate::CalibrationGate>,
    /// Judges required (null when not asked): passed, unjudged, checks.
    judges: Option<&'a crate::RequiredJudges>,
}

#[derive(Serialize)]
struct JsonRun<'a> {
    id: &'a str,
    suite: &'a str,
    status: &'static str,
    started_at: &'a str,
    finished_at: Option<&'a str>,
    /// Wall time from start to finish, when finished.
    duration_ms: Option<u64>,
    config: &'a Value,
}

#[derive(Serialize)]
struct JsonStats {
    /// Passed (the seed's key).
    pass: usize,
    total: usize,
    passed_with_skipped_checks: usize,
    failed: usize,
    errors: usize,
    skipped: usize,
    pass_rate: Option<f64>,
    average_score: Option<f64>,
}

impl From<&TagStats> for JsonStats {
    fn from(s: &TagStats) -> Self {
        JsonStats {
            pass: s.passed,
            total: s.total,
            passed_with_skipped_checks: s.passed_with_skips,
            failed: s.failed,
            errors: s.errors,
            skipped: s.skipped,
            pass_rate: s.pass_rate,
            average_score: s.average_score,
        }
    }
}

#[derive(Serialize)]
struct JsonResult<'a> {
    id: &'a str,
    name: &'a str,
    target: &'a str,
    tags: &'a [String],
    input: Value,
    expected: Value,
    actual: Option<&'a str>,
    status: Status,
    pass: bool,
    score: Option<f64>,
    /// Share of the repeats that passed, 0..=1.
    repeat_pass_rate: f64,
    /// Mean, stddev, pass@k and pass^k over repeats (null for a single run).
    repeat_stats: Option<crate::repeats::RepeatStats>,
    /// The judges' own spread on the first repeat's output (`rejudge`; null without).
    judge_noise: Option<crate::noise::JudgeNoise>,
    /// Mean and spread over every input of a case with `variants` (null without).
    robustness: Option<crate::robust::Robustness>,
    scores: Map<String, Value>,
    reasoning: String,
    suggestions: Option<String>,
    repeats: Vec<JsonRepeat<'a>>,
}

#[derive(Serialize)]
struct JsonRepeat<'a> {
    repeat_index: u32,
    status: Status,
    score: Option<f64>,
    started_at: &'a str,
    duration_ms: u64,
    cost_usd: Option<f64>,
    reason: Option<&'a str>,
    transcript: &'a Transcript,
    verdicts: &'a [Verdict],
}

/// The JSON report, pretty-printed, its `detailed_results` written as the
/// outcomes come: each result is spooled at its depth in the document, and the
/// head (summary, gate, tables) is written before them at the end.
pub(crate) struct JsonWriter {
    results: Spool,
}

/// How deep a result sits in the document (`detailed_results` of the root).
const RESULT_INDENT: &str = "    ";

impl JsonWriter {
    pub(crate) fn new() -> Result<JsonWriter, ReportError> {
        Ok(JsonWriter {
            results: Spool::new()?,
        })
    }
}

impl Writer for JsonWriter {
    fn outcome(
        &mut self,
        _run: &RunRecord,
        o: &Outcome,
        case: Option<&Case>,
    ) -> Result<(), ReportError> {
        let text = serde_json::to_string_pretty(&result(case, o))?;
        // A JSON text has no raw line break inside a string: every line
        // is indented alike.
        let mut item = String::with_capacity(text.len() + text.len() / 8);
        if self.results.count > 0 {
            item.push(',');
        }
        for line in text.lines() {
            item.push('\n');
            item.push_str(RESULT_INDENT);
            item.push_str(line);
        }
        self.results.push(&item)
    }

    fn finish(self: Box<Self>, report: &Report, out: &mut dyn Out) -> Result<(), ReportError> {
        let head = serde_json::to_string_pretty(&document(report))?;
        let open = head
            .strip_suffix("[]\n}")
            .filter(|_| self.results.count > 0);
        match open {
            None => writeln!(out, "{head}")?,
            Some(open) => {
                write!(out, "{open}[")?;
                self.results.copy_to(out)?;
                out.write_all(b"\n  ]\n}\n")?;
            }
        }
        Ok(())
    }
}

/// The document without its results.
fn document(report: &Report) -> JsonReport<'_> {
    let s = &report.summary;
    let g = &report.gate;
    JsonReport {
        report_version: REPORT_VERSION,
        summary: JsonSummary {
            total: s.overall.total,
            passed: s.overall.passed,
            passed_with_skipped_checks: s.overall.passed_with_skips,
            failed: s.overall.failed,
            errors: s.overall.errors,
            skipped: s.overall.skipped,
            planned: report.run.planned,
            not_run: match &g.unfinished {
                Some(u) => u.unrun,
                None => report.run.planned.map(|_| 0),
            },
            pass_rate: s.overall.pass_rate,
            average_score: s.overall.average_score,
            cost_usd: s.cost_usd,
            duration_ms: report.execution_ms(),
            pairwise: s.pairwise,
            select_best: s.select_best.clone(),
            transport: report.transport,
        },
        gate: JsonGate {
            min_pass_rate: g.min_pass_rate,
            pass_rate: g.pass_rate,
            decided: g.decided(),
            passed: g.passed,
            errors: g.errors,
            unfinished: g.unfinished.as_ref(),
            exit_code: g.exit_code(),
            verdict: g.word(),
            failures: g.failures().iter().map(ToString::to_string).collect(),
            tags: &g.tags,
            calibration: g.calibration.as_ref(),
            judges: g.judges.as_ref(),
        },
        run: JsonRun {
            id: &report.run.id,
            suite: &report.run.suite,
            status: report.run.status.as_str(),
            started_at: &report.run.started_at,
            finished_at: report.run.finished_at.as_deref(),
            duration_ms: report.wall_ms(),
            config: &report.run.config,
        },
        by_tag: s
            .by_tag
            .iter()
            .map(|(k, v)| (k.as_str(), v.into()))
            .collect(),
        by_target: s
            .by_target
            .iter()
            .map(|(k, v)| (k.as_str(), v.into()))
            .collect(),
        targets_compared: report.targets.as_ref(),
        detailed_results: &[],
    }
}

fn result<'a>(case: Option<&Case>, o: &'a Outcome) -> JsonResult<'a> {
    JsonResult {
        id: &o.case_id,
        name: &o.case_name,
        target: &o.target,
        tags: &o.tags,
        input: text::input_of(case, o),
        expected: text::expected_of(case),
        actual: text::actual_of(o),
        status: o.status,
        pass: o.status == Status::Pass,
        score: o.score,
        repeat_pass_rate: o.pass_rate,
        repeat_stats: crate::repeats::RepeatStats::of(o),
        judge_noise: crate::noise::JudgeNoise::of(o),
        robustness: case.and_then(|c| crate::robust::Robustness::of(c, o)),
        scores: scores(o),
        reasoning: text::reasoning(o),
        suggestions: crate::rubric::suggestions(o),
        repeats: o
            .executions
            .iter()
            .map(|e| JsonRepeat {
                repeat_index: e.repeat_index,
                status: e.status,
                score: e.score,
                started_at: &e.started_at,
                duration_ms: e.duration_ms,
                cost_usd: e.cost_usd(),
                reason: e.reason.as_deref(),
                transcript: &e.transcript,
                verdicts: &e.verdicts,
            })
            .collect(),
    }
}

/// Seed 002's rubric keys (`accuracy` … `mcp_usage`), each dimension's mean on
/// the 0-1 scale (`null` when it did not apply), when a rubric scored the outcome.
fn rubric_scores(o: &Outcome, map: &mut Map<String, Value>) {
    for (key, mean) in crate::rubric::dimension_scores(o) {
        map.insert(key.to_owned(), mean.map(crate::rubric::normalised).into());
    }
}

/// `overall`, then (after a rubric) its dimensions, then each scored check's mean score over the repeats, in check order.
/// A check name used in several rounds gets one key per round (`name (round 2)`).
fn scores(o: &Outcome) -> Map<String, Value> {
    let verdicts = || {
        o.executions
            .iter()
            .flat_map(|e| &e.verdicts)
            .filter(|v| v.score.is_some())
    };
    let mut rounds: BTreeMap<&str, Vec<Option<usize>>> = BTreeMap::new();
    for v in verdicts() {
        let seen = rounds.entry(&v.check).or_default();
        if !seen.contains(&v.round) {
            seen.push(v.round);
        }
    }
    let mut order: Vec<String> = Vec::new();
    let mut sums: BTreeMap<String, (f64, usize)> = BTreeMap::new();
    for v in verdicts() {
        let mut key = if rounds[v.check.as_str()].len() > 1 {
            match v.round {
                Some(r) => format!("{} (round {})", v.check, r + 1),
                None => format!("{} (transcript)", v.check),
            }
        } else {
            v.check.clone()
        };
        if key == "overall" {
            key = "overall (check)".to_owned();
        }
        let entry = sums.entry(key.clone()).or_insert_with(|| {
            order.push(key);
            (0.0, 0)
        });
        entry.0 += v.score.unwrap_or_default();
        entry.1 += 1;
    }
    let mut map = Map::new();
    map.insert("overall".to_owned(), o.score.into());
    rubric_scores(o, &mut map);
    for key in order {
        let (sum, n) = sums[&key];
        map.insert(key, (sum / n as f64).into());
    }
    map
}
