//! One self-contained HTML page (inline CSS, no scripts, no external assets).
//!
//! The page is rendered by minijinja with HTML auto-escaping forced on for every
//! template, from a view of plain strings built here: no value is ever marked safe,
//! so all agent and model text reaches the page escaped.

use std::collections::BTreeMap;

use gavel_core::{Execution, Outcome, Status, TagStats, Turn, Verdict};
use minijinja::value::Serde;
use minijinja::{AutoEscape, Environment, UndefinedBehavior};
use serde::Serialize;

use crate::Report;
use crate::text;

const PAGE: &str = include_str!("../templates/report.html");
const STYLE: &str = include_str!("../templates/report.css");

#[derive(Serialize)]
struct View {
    title: String,
    suite: String,
    run_id: String,
    run_status: &'static str,
    run_note: Option<&'static str>,
    started_at: String,
    finished_at: Option<String>,
    wall: Option<String>,
    gate: GateView,
    not_run: Option<NotRunView>,
    cards: Vec<Card>,
    by_tag: Vec<StatsRow>,
    by_target: Vec<StatsRow>,
    outcomes: Vec<OutcomeView>,
}

#[derive(Serialize)]
struct GateView {
    word: &'static str,
    class: &'static str,
    line: String,
    exit_code: i32,
}

#[derive(Serialize)]
struct NotRunView {
    sentence: String,
    cases: Vec<String>,
}

#[derive(Serialize)]
struct Card {
    label: &'static str,
    value: String,
    class: &'static str,
}

#[derive(Serialize)]
struct StatsRow {
    name: String,
    total: usize,
    passed: usize,
    passed_with_skips: usize,
    failed: usize,
    errors: usize,
    skipped: usize,
    pass_rate: String,
    average_score: String,
}

#[derive(Serialize)]
struct OutcomeView {
    id: String,
    name: Option<String>,
    target: String,
    tags: Vec<String>,
    status: &'static str,
    word: &'static str,
    open: bool,
    score: String,
    repeats_passed: Option<String>,
    description: Option<String>,
    input: String,
    expected: Option<String>,
    criteria: Option<String>,
    skip_reason: Option<String>,
    skipped_checks: Option<String>,
    /// Rubric dimension scores (1-5), when a rubric scored the outcome.
    rubric: Option<String>,
    /// The rubric judges' improvement suggestions.
    suggestions: Option<String>,
    repeats: Vec<RepeatView>,
}

#[derive(Serialize)]
struct RepeatView {
    label: String,
    status: &'static str,
    score: String,
    duration: String,
    cost: Option<String>,
    session_id: String,
    reason: Option<String>,
    turns: Vec<TurnView>,
    /// What a coding agent left in its workspace.
    workspace: Option<crate::workspace::WorkspaceView>,
    verdicts: Vec<VerdictView>,
}

#[derive(Serialize)]
struct TurnView {
    round: usize,
    who: String,
    /// `assistant`, or `assistant (agent)`.
    assistant: String,
    input: String,
    output: String,
    tool_calls: Vec<ToolView>,
    latency: String,
    usage: Option<String>,
    failure: Option<String>,
}

#[derive(Serialize)]
struct ToolView {
    /// The agent that made the call, when the target named it.
    agent: Option<String>,
    name: String,
    arguments: String,
    result: Option<String>,
}

#[derive(Serialize)]
struct VerdictView {
    check: String,
    kind: &'static str,
    round: String,
    status: &'static str,
    score: String,
    threshold: String,
    reason: String,
}

/// Renders the HTML page.
pub(crate) fn render(report: &Report) -> Result<String, crate::ReportError> {
    let mut env = Environment::new();
    env.set_auto_escape_callback(|_| AutoEscape::Html);
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.add_template("report.html", PAGE)?;
    env.add_template("report.css", STYLE)?;
    Ok(env
        .get_template("report.html")?
        .render(Serde(&view(report)))?)
}

fn view(report: &Report) -> View {
    let s = &report.summary.overall;
    let g = &report.gate;
    let gate_class = match g.exit_code() {
        crate::EXIT_GATE_FAILED => "fail",
        crate::EXIT_ERRORS => "error",
        _ if g.decided() => "pass",
        _ => "skipped",
    };
    let count_class = |n: usize, class| if n > 0 { class } else { "" };
    View {
        title: format!("gavel · {} · {}", report.run.suite, g.word()),
        suite: report.run.suite.clone(),
        run_id: report.run.id.clone(),
        run_status: report.run.status.as_str(),
        run_note: text::run_note(report),
        started_at: report.run.started_at.clone(),
        finished_at: report.run.finished_at.clone(),
        wall: report.wall_ms().map(text::duration),
        gate: GateView {
            word: g.word(),
            class: gate_class,
            line: text::gate_line(report),
            exit_code: g.exit_code(),
        },
        not_run: g.unfinished.as_ref().map(|u| NotRunView {
            sentence: u.sentence(),
            cases: u.unrun_cases.clone(),
        }),
        cards: vec![
            Card {
                label: "Pass rate",
                value: text::pct(s.pass_rate),
                class: gate_class,
            },
            Card {
                label: "Total",
                value: s.total.to_string(),
                class: "",
            },
            Card {
                label: "Passed",
                value: s.plain_passes().to_string(),
                class: count_class(s.plain_passes(), "pass"),
            },
            Card {
                label: "Passed with skipped checks",
                value: s.passed_with_skips.to_string(),
                class: count_class(s.passed_with_skips, "skipped"),
            },
            Card {
                label: "Failed",
                value: s.failed.to_string(),
                class: count_class(s.failed, "fail"),
            },
            Card {
                label: "Errors",
                value: s.errors.to_string(),
                class: count_class(s.errors, "error"),
            },
            Card {
                label: "Skipped",
                value: s.skipped.to_string(),
                class: count_class(s.skipped, "skipped"),
            },
            Card {
                label: "Not run",
                value: text::not_run(report),
                class: if g.unfinished.is_some() { "error" } else { "" },
            },
            Card {
                label: "Average score",
                value: text::score(s.average_score),
                class: "",
            },
            Card {
                label: "Min pass rate",
                value: text::pct(Some(g.min_pass_rate)),
                class: "",
            },
            Card {
                label: "Cost",
                value: text::cost(report.summary.cost_usd),
                class: "",
            },
            Card {
                label: "Retries (targets · judges)",
                value: format!(
                    "{} · {}",
                    report.transport.target.retries, report.transport.judges.retries
                ),
                class: if report.transport.retried() {
                    "skipped"
                } else {
                    ""
                },
            },
            Card {
                label: "Execution time",
                value: text::duration(report.execution_ms()),
                class: "",
            },
        ],
        by_tag: rows(&report.summary.by_tag),
        by_target: rows(&report.summary.by_target),
        outcomes: report.outcomes.iter().map(|o| outcome(report, o)).collect(),
    }
}

fn rows(stats: &BTreeMap<String, TagStats>) -> Vec<StatsRow> {
    stats
        .iter()
        .map(|(name, s)| StatsRow {
            name: name.clone(),
            total: s.total,
            passed: s.plain_passes(),
            passed_with_skips: s.passed_with_skips,
            failed: s.failed,
            errors: s.errors,
            skipped: s.skipped,
            pass_rate: text::pct(s.pass_rate),
            average_score: text::score(s.average_score),
        })
        .collect()
}

fn outcome(report: &Report, o: &Outcome) -> OutcomeView {
    let case = report.case(&o.case_id);
    let expected = text::expected_of(report, o);
    let passed = o
        .executions
        .iter()
        .filter(|e| e.status == Status::Pass)
        .count();
    OutcomeView {
        id: o.case_id.clone(),
        name: (o.case_name != o.case_id && !o.case_name.is_empty()).then(|| o.case_name.clone()),
        target: o.target.clone(),
        tags: o.tags.clone(),
        status: o.status.as_str(),
        word: text::status_word(o.status),
        open: matches!(o.status, Status::Fail | Status::Error),
        score: text::score(o.score),
        repeats_passed: (o.executions.len() > 1)
            .then(|| format!("{passed}/{} repeats passed", o.executions.len())),
        description: case.and_then(|c| c.description.clone()),
        input: text::json_text(&text::input_of(report, o)),
        expected: (!expected.is_null()).then(|| text::json_text(&expected)),
        criteria: case.and_then(|c| c.criteria.clone()),
        skip_reason: (o.status == Status::Skipped).then(|| text::skip_reason(o)),
        skipped_checks: o.passed_with_skips().then(|| text::skipped_checks(o)),
        rubric: crate::rubric::dimension_line(o),
        suggestions: crate::rubric::suggestions(o),
        repeats: o
            .executions
            .iter()
            .map(|e| repeat(e, o.executions.len()))
            .collect(),
    }
}

fn repeat(e: &Execution, of: usize) -> RepeatView {
    RepeatView {
        label: if of > 1 {
            format!("Repeat {}/{of}", e.repeat_index + 1)
        } else {
            "Run".to_owned()
        },
        status: e.status.as_str(),
        score: text::score(e.score),
        duration: text::duration(e.duration_ms),
        cost: e.cost_usd().map(|c| text::cost(Some(c))),
        session_id: e.transcript.session_id.clone(),
        reason: e.reason.clone(),
        turns: e.transcript.turns.iter().map(turn).collect(),
        workspace: crate::workspace::of_turns(&e.transcript.turns),
        verdicts: e.verdicts.iter().map(verdict).collect(),
    }
}

fn turn(t: &Turn) -> TurnView {
    TurnView {
        round: t.round + 1,
        who: text::who(t),
        assistant: text::assistant(t.agent.as_deref()),
        input: t.input.clone(),
        output: t.output.clone(),
        tool_calls: t
            .tool_calls
            .iter()
            .map(|c| ToolView {
                agent: c.agent.clone(),
                name: c.name.clone(),
                arguments: text::json_text(&c.arguments),
                result: c.result.as_ref().map(text::json_text),
            })
            .collect(),
        latency: text::duration(t.latency_ms),
        usage: t.usage.map(|u| {
            let mut s = format!("{} in / {} out tokens", u.input_tokens, u.output_tokens);
            if let Some(c) = u.cost_usd {
                s.push_str(&format!(" · {}", text::cost(Some(c))));
            }
            s
        }),
        failure: t.failure.as_ref().map(|f| {
            format!(
                "{} ({})",
                f.message,
                if f.transient {
                    "transient"
                } else {
                    "permanent"
                }
            )
        }),
    }
}

fn verdict(v: &Verdict) -> VerdictView {
    VerdictView {
        check: v.check.clone(),
        kind: v.kind.as_str(),
        round: v
            .round
            .map_or_else(|| "all".to_owned(), |r| (r + 1).to_string()),
        status: v.status.as_str(),
        score: text::verdict_value(v, v.score),
        threshold: text::verdict_value(v, v.threshold),
        reason: v.reason.clone(),
    }
}
