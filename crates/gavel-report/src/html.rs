//! One self-contained HTML page (inline CSS, no scripts, no external assets).
//!
//! The page is rendered by minijinja with HTML auto-escaping forced on for every
//! template, from views of plain strings built here: no value is ever marked safe,
//! so all agent and model text reaches the page escaped.
//!
//! The page stays usable whatever the run's size: failures and errors come
//! first, each in full (up to [`BAD_DETAILED`]); skips, passes with skipped
//! checks and passes follow, the first few of each in full and the rest as one
//! compact row each, up to [`ROWS_MAX`] rows a section (the JSON report has
//! every outcome). Outcomes are rendered as they come, each section spooled,
//! and the page put together once the summary is known.

use std::collections::BTreeMap;

use gavel_core::{Case, Execution, Outcome, RunRecord, Status, TagStats, Turn, Verdict};
use minijinja::{AutoEscape, Environment, UndefinedBehavior, Value};
use serde::Serialize;

use crate::files::{Out, Spool, Writer};
use crate::text;
use crate::{Report, ReportError};

/// Failures and errors shown in full; those after them get a compact row.
const BAD_DETAILED: usize = 1_000;
/// Skips, passes with skipped checks and passes shown in full, each.
const OTHERS_DETAILED: usize = 100;
/// Compact rows a section lists at most.
const ROWS_MAX: usize = 2_000;
/// Cases with no execution named in the page.
const UNRUN_NAMED: usize = 200;
/// The longest reason in a compact row, in characters.
const WHY_MAX: usize = 300;

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
    /// The first [`UNRUN_NAMED`] of them.
    cases: Vec<String>,
    more: Option<String>,
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

/// A compact row: one outcome on one line.
#[derive(Serialize)]
struct RowView {
    id: String,
    target: String,
    tags: Vec<String>,
    status: &'static str,
    word: &'static str,
    score: String,
    why: String,
}

/// One section of outcomes: those shown in full, then compact rows.
struct Section {
    title: &'static str,
    class: &'static str,
    detailed_max: usize,
    details: Spool,
    rows: Spool,
    count: usize,
}

impl Section {
    fn new(
        title: &'static str,
        class: &'static str,
        detailed_max: usize,
    ) -> Result<Section, ReportError> {
        Ok(Section {
            title,
            class,
            detailed_max,
            details: Spool::new()?,
            rows: Spool::new()?,
            count: 0,
        })
    }
}

/// The HTML page, written as the outcomes come ([`crate::files`]).
pub(crate) struct HtmlWriter {
    env: Environment<'static>,
    bad: Section,
    skipped: Section,
    with_skips: Section,
    passed: Section,
}

impl HtmlWriter {
    pub(crate) fn new() -> Result<HtmlWriter, ReportError> {
        let mut env = Environment::new();
        env.set_auto_escape_callback(|_| AutoEscape::Html);
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        env.add_template("report.html", PAGE)?;
        env.add_template("report.css", STYLE)?;
        Ok(HtmlWriter {
            env,
            bad: Section::new("Failures and errors", "bad", BAD_DETAILED)?,
            skipped: Section::new("Skipped", "skipped", OTHERS_DETAILED)?,
            with_skips: Section::new("Passed with skipped checks", "with-skips", OTHERS_DETAILED)?,
            passed: Section::new("Passed", "pass", OTHERS_DETAILED)?,
        })
    }
}

/// A view as a template value.
fn serde(view: impl Serialize) -> Value {
    Value::from(minijinja::value::Serde(view))
}

/// Calls macro `name` of the page template with `args`.
fn part(env: &Environment<'static>, name: &str, args: &[Value]) -> Result<String, ReportError> {
    let mut page = env.get_template("report.html")?.render_captured(())?;
    Ok(page.with_state_mut(|state| state.call_macro(name, args))?)
}

impl Writer for HtmlWriter {
    fn outcome(
        &mut self,
        _run: &RunRecord,
        o: &Outcome,
        case: Option<&Case>,
    ) -> Result<(), ReportError> {
        let section = match o.status {
            Status::Fail | Status::Error => &mut self.bad,
            Status::Skipped => &mut self.skipped,
            Status::Pass if o.passed_with_skips() => &mut self.with_skips,
            Status::Pass => &mut self.passed,
        };
        section.count += 1;
        if section.details.count < section.detailed_max {
            let view = serde(outcome(case, o));
            section
                .details
                .push(&part(&self.env, "outcome", &[view])?)?;
        } else if section.rows.count < ROWS_MAX {
            let view = serde(row(o));
            section.rows.push(&part(&self.env, "row", &[view])?)?;
        }
        Ok(())
    }

    fn finish(self: Box<Self>, report: &Report, out: &mut dyn Out) -> Result<(), ReportError> {
        let w = *self;
        let env = &w.env;
        let head = serde(view(report));
        out.write_all(part(env, "head", &[head])?.as_bytes())?;
        let sections = [w.bad, w.skipped, w.with_skips, w.passed];
        if sections.iter().all(|s| s.count == 0) {
            out.write_all(part(env, "empty", &[])?.as_bytes())?;
        }
        for s in sections.into_iter().filter(|s| s.count > 0) {
            let args = [s.title.into(), s.count.into(), s.class.into()];
            out.write_all(part(env, "section_open", &args)?.as_bytes())?;
            let shown = s.details.count + s.rows.count;
            s.details.copy_to(out)?;
            if s.rows.count > 0 {
                out.write_all(part(env, "rows_open", &[])?.as_bytes())?;
                s.rows.copy_to(out)?;
                out.write_all(part(env, "rows_close", &[])?.as_bytes())?;
            }
            let more = (s.count > shown).then(|| {
                format!(
                    "…and {} more, not shown here: the JSON report and the web UI have every outcome.",
                    s.count - shown
                )
            });
            out.write_all(part(env, "section_close", &[more.into()])?.as_bytes())?;
        }
        out.write_all(part(env, "tail", &[])?.as_bytes())?;
        Ok(())
    }
}

/// An outcome's compact row.
fn row(o: &Outcome) -> RowView {
    let why = match o.status {
        Status::Fail | Status::Error => {
            let problems = text::problems(o);
            text::headline(o, &problems).map_or_else(String::new, |p| p.line(WHY_MAX))
        }
        Status::Skipped => text::one_line(&text::skip_reason(o), WHY_MAX),
        Status::Pass if o.passed_with_skips() => text::one_line(&text::skipped_checks(o), WHY_MAX),
        Status::Pass => String::new(),
    };
    RowView {
        id: o.case_id.clone(),
        target: o.target.clone(),
        tags: o.tags.clone(),
        status: o.status.as_str(),
        word: text::status_word(o.status),
        score: text::score(o.score),
        why,
    }
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
            cases: u.unrun_cases.iter().take(UNRUN_NAMED).cloned().collect(),
            more: (u.unrun_cases.len() > UNRUN_NAMED)
                .then(|| format!("…and {} more", u.unrun_cases.len() - UNRUN_NAMED)),
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

fn outcome(case: Option<&Case>, o: &Outcome) -> OutcomeView {
    let expected = text::expected_of(case);
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
        input: text::json_text(&text::input_of(case, o)),
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
