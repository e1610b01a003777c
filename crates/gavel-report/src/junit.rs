//! JUnit XML: one `<testsuite>` per target, one `<testcase>` per outcome, named
//! `target/case` so that names stay unique across the per-target suites. The
//! output validates against Jenkins' `junit-10.xsd`: no attribute or element that
//! schema does not declare (`testcase@assertions`, `testcase/properties`,
//! `testsuites@skipped`).

use std::fmt::Write as _;
use std::time::Duration;

use gavel_core::{Outcome, Status};
use quick_junit::{NonSuccessKind, Property, TestCase, TestCaseStatus, TestSuite};

use crate::text::{self, Problem};
use crate::{GateFailure, Report, Unfinished};

/// The longest failure message attribute, in characters (the body has everything).
const MESSAGE_MAX: usize = 500;

/// Renders the JUnit XML report.
pub(crate) fn render(report: &Report) -> Result<String, crate::ReportError> {
    let suite = &report.run.suite;
    let mut junit = quick_junit::Report::new(format!("gavel {suite}"));
    junit.set_time(Duration::from_millis(report.execution_ms()));

    let mut targets: Vec<&str> = Vec::new();
    for o in &report.outcomes {
        if !targets.contains(&o.target.as_str()) {
            targets.push(&o.target);
        }
    }
    for target in targets {
        let mut ts = TestSuite::new(format!("{suite}/{target}"));
        ts.add_property(Property::new("gavel.run_id", report.run.id.as_str()));
        ts.add_property(Property::new("gavel.target", target));
        if let Some(stats) = report.summary.by_target.get(target) {
            ts.add_property(Property::new("gavel.pass_rate", text::pct(stats.pass_rate)));
        }
        let mut ms = 0;
        for o in report.outcomes.iter().filter(|o| o.target == target) {
            let (case, case_ms) = test_case(suite, o);
            ms += case_ms;
            ts.add_test_case(case);
        }
        ts.set_time(Duration::from_millis(ms));
        junit.add_test_suite(ts);
    }
    if let Some(u) = &report.gate.unfinished {
        junit.add_test_suite(not_run(report, u));
    }
    if let Some(ts) = gate(report) {
        junit.add_test_suite(ts);
    }
    Ok(without_root_skipped(&junit.to_string()?))
}

/// Removes the `skipped` attribute quick-junit always writes on `<testsuites>`
/// (junit-10.xsd has none there; each `<testsuite>` keeps its own count).
/// Attribute values are escaped, so neither `>` nor `"` can occur inside one:
/// the first `>` ends the root tag and ` skipped="` can only start the attribute.
fn without_root_skipped(xml: &str) -> String {
    let Some(start) = xml.find("<testsuites") else {
        return xml.to_owned();
    };
    let end = xml[start..].find('>').map_or(xml.len(), |i| start + i);
    let tag = &xml[start..end];
    let Some(at) = tag.find(" skipped=\"") else {
        return xml.to_owned();
    };
    let value = at + " skipped=\"".len();
    let close = tag[value..].find('"').map_or(tag.len(), |i| value + i + 1);
    format!("{}{}{}", &xml[..start + at], &tag[close..], &xml[end..])
}

/// The suite `<suite>/not run` of a run that did not finish its plan: one errored
/// test case per case that has no execution, else one for the run as a whole, so
/// that CI test tabs show the work that never ran.
fn not_run(report: &Report, u: &Unfinished) -> TestSuite {
    let suite = &report.run.suite;
    let mut ts = TestSuite::new(format!("{suite}/not run"));
    ts.add_property(Property::new("gavel.run_id", report.run.id.as_str()));
    ts.add_property(Property::new("gavel.unfinished", u.sentence()));
    let errored = |name: &str, message: String| {
        let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
        status.set_type("not-run");
        status.set_message(text::one_line(&message, MESSAGE_MAX));
        let mut case = TestCase::new(name, status);
        case.set_classname(suite.as_str());
        case
    };
    if u.unrun_cases.is_empty() {
        ts.add_test_case(errored("run", u.sentence()));
    }
    for id in &u.unrun_cases {
        ts.add_test_case(errored(id, format!("not run: {}", u.reason.describe())));
    }
    ts
}

/// The suite `<suite>/gate` of a run whose gate did not pass for a reason its
/// test cases do not show (a judge calibration, required judges, nothing
/// decided): one failed test case per such condition, so that a CI test tab
/// that counts failures agrees with gavel's exit code.
fn gate(report: &Report) -> Option<TestSuite> {
    let g = &report.gate;
    let mut hidden: Vec<(&str, String)> = g
        .failures()
        .into_iter()
        .filter_map(|f| match f {
            // The failed test cases show it.
            GateFailure::PassRate { .. } => None,
            GateFailure::Calibration { .. } => Some(("calibration", f.to_string())),
            GateFailure::Judges(_) => Some(("required-judges", f.to_string())),
        })
        .collect();
    if g.word() == "UNDECIDED" {
        hidden.push(("undecided", text::gate_line(report)));
    }
    if hidden.is_empty() {
        return None;
    }
    let suite = &report.run.suite;
    let mut ts = TestSuite::new(format!("{suite}/gate"));
    ts.add_property(Property::new("gavel.run_id", report.run.id.as_str()));
    ts.add_property(Property::new("gavel.gate", g.word()));
    for (kind, why) in hidden {
        let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
        status.set_type(kind);
        status.set_message(text::one_line(&why, MESSAGE_MAX));
        status.set_description(why);
        let mut case = TestCase::new(format!("gate: {kind}"), status);
        case.set_classname(suite.as_str());
        ts.add_test_case(case);
    }
    Some(ts)
}

fn test_case(suite: &str, o: &Outcome) -> (TestCase, u64) {
    let ms: u64 = o.executions.iter().map(|e| e.duration_ms).sum();
    let problems = text::problems(o);
    let status = match o.status {
        Status::Pass => TestCaseStatus::success(),
        Status::Fail | Status::Error => {
            let kind = if o.status == Status::Fail {
                NonSuccessKind::Failure
            } else {
                NonSuccessKind::Error
            };
            let mut status = TestCaseStatus::non_success(kind);
            let head = text::headline(o, &problems);
            let message = head.map_or_else(|| o.status.to_string(), |p| p.line(MESSAGE_MAX));
            status.set_message(message);
            status.set_type(
                head.and_then(|p| p.verdict)
                    .map_or("execution", |v| v.kind.as_str()),
            );
            status.set_description(body(o, &problems));
            status
        }
        Status::Skipped => {
            let mut status = TestCaseStatus::skipped();
            status.set_message(text::one_line(&text::skip_reason(o), MESSAGE_MAX));
            status
        }
    };
    let mut case = TestCase::new(format!("{}/{}", o.target, o.case_id), status);
    case.set_classname(suite);
    case.set_time(Duration::from_millis(ms));
    let mut out = String::new();
    if o.passed_with_skips() {
        let _ = writeln!(out, "skipped checks: {}", text::skipped_checks(o));
    }
    if o.case_name != o.case_id {
        let _ = writeln!(out, "case: {}", o.case_name);
    }
    let _ = writeln!(out, "target: {}", o.target);
    if !o.tags.is_empty() {
        let _ = writeln!(out, "tags: {}", o.tags.join(", "));
    }
    let _ = writeln!(out, "score: {}", text::score(o.score));
    for e in &o.executions {
        out.push('\n');
        out.push_str(&text::transcript_text(e, o.executions.len()));
    }
    case.set_system_out(out);
    (case, ms)
}

/// Every problem, one paragraph each, with its repeat, status, score and full reason.
fn body(o: &Outcome, problems: &[Problem<'_>]) -> String {
    let many = o.executions.len() > 1;
    let mut out = String::new();
    for p in problems {
        if many {
            let _ = write!(out, "[repeat {}] ", p.execution.repeat_index + 1);
        }
        let _ = writeln!(
            out,
            "{} {}{}:",
            p.status,
            p.check,
            p.verdict.map(text::verdict_score).unwrap_or_default()
        );
        for line in p.reason.lines() {
            let _ = writeln!(out, "    {line}");
        }
    }
    out
}
