//! JUnit XML: one `<testsuite>` per target, one `<testcase>` per outcome, named
//! `target/case` so that names stay unique across the per-target suites. The
//! output validates against Jenkins' `junit-10.xsd`: no attribute or element that
//! schema does not declare (`testcase@assertions`, `testcase/properties`,
//! `testsuites@skipped`).

use std::fmt::Write as _;
use std::time::Duration;

use gavel_core::{Case, Outcome, RunRecord, Status};
use quick_junit::{NonSuccessKind, Property, TestCase, TestCaseStatus, TestSuite};

use crate::files::{Out, Spool, Writer};
use crate::text::{self, Problem};
use crate::{GateFailure, Report, ReportError, Unfinished};

/// The longest failure message attribute, in characters (the body has everything).
const MESSAGE_MAX: usize = 500;

/// Test cases serialised per chunk of a target's outcomes: what a writer holds.
const CHUNK: usize = 64;

/// The end of a `<testsuite>` as quick-junit indents it (depth 1).
const SUITE_END: &str = "\n    </testsuite>";

/// The JUnit XML report, written as the outcomes come: each target's test
/// cases are serialised by quick-junit a chunk at a time and spooled; at the
/// end quick-junit writes the document with each target's suite (its counts,
/// time and properties, no cases) and the spooled cases go in before each
/// suite's end tag. The document is the one quick-junit writes for the whole
/// report at once.
#[derive(Default)]
pub(crate) struct JunitWriter {
    /// Each target's suite, in the order targets first appear.
    targets: Vec<TargetSuite>,
}

/// One target's suite being written.
struct TargetSuite {
    target: String,
    /// The suite's counts so far, and the cases not spooled yet.
    suite: TestSuite,
    /// The cases spooled, serialised.
    cases: Spool,
    ms: u64,
}

impl TargetSuite {
    /// Serialises the cases held and spools them.
    fn flush(&mut self) -> Result<(), ReportError> {
        if self.suite.test_cases.is_empty() {
            return Ok(());
        }
        let mut chunk = TestSuite::new("chunk");
        chunk.test_cases = std::mem::take(&mut self.suite.test_cases);
        let mut scratch = quick_junit::Report::new("chunk");
        scratch.test_suites.push(chunk);
        let xml = scratch.to_string()?;
        let cases = xml
            .find("<testsuite ")
            .and_then(|start| Some(start + xml[start..].find('>')? + 1))
            .and_then(|start| Some(&xml[start..xml.rfind(SUITE_END)?]))
            .ok_or_else(|| unexpected("a suite's test cases"))?;
        self.cases.push(cases)
    }
}

/// quick-junit wrote something other than what this module splices.
fn unexpected(what: &str) -> ReportError {
    ReportError::Write(std::io::Error::other(format!(
        "cannot find {what} in the JUnit XML quick-junit wrote"
    )))
}

impl Writer for JunitWriter {
    fn outcome(
        &mut self,
        run: &RunRecord,
        o: &Outcome,
        _case: Option<&Case>,
    ) -> Result<(), ReportError> {
        let at = match self.targets.iter().position(|t| t.target == o.target) {
            Some(at) => at,
            None => {
                self.targets.push(TargetSuite {
                    target: o.target.clone(),
                    suite: TestSuite::new("cases"),
                    cases: Spool::new()?,
                    ms: 0,
                });
                self.targets.len() - 1
            }
        };
        let t = &mut self.targets[at];
        let (case, ms) = test_case(&run.suite, o);
        t.ms += ms;
        t.suite.add_test_case(case);
        if t.suite.test_cases.len() >= CHUNK {
            t.flush()?;
        }
        Ok(())
    }

    fn finish(self: Box<Self>, report: &Report, out: &mut dyn Out) -> Result<(), ReportError> {
        let suite = &report.run.suite;
        let mut junit = quick_junit::Report::new(format!("gavel {suite}"));
        junit.set_time(Duration::from_millis(report.execution_ms()));
        let mut spools = Vec::new();
        for mut t in self.targets {
            t.flush()?;
            let mut ts = TestSuite::new(format!("{suite}/{}", t.target));
            ts.add_property(Property::new("gavel.run_id", report.run.id.as_str()));
            ts.add_property(Property::new("gavel.target", t.target.as_str()));
            if let Some(stats) = report.summary.by_target.get(&t.target) {
                ts.add_property(Property::new("gavel.pass_rate", text::pct(stats.pass_rate)));
            }
            ts.tests = t.suite.tests;
            ts.failures = t.suite.failures;
            ts.errors = t.suite.errors;
            ts.skipped = t.suite.skipped;
            ts.set_time(Duration::from_millis(t.ms));
            junit.add_test_suite(ts);
            spools.push(Some(t.cases));
        }
        if let Some(u) = &report.gate.unfinished {
            junit.add_test_suite(not_run(report, u));
            spools.push(None);
        }
        if let Some(ts) = gate(report) {
            junit.add_test_suite(ts);
            spools.push(None);
        }
        let xml = without_root_skipped(&junit.to_string()?);
        // Attribute values and text are escaped: each suite's end tag is
        // the first one left.
        let mut rest = xml.as_str();
        for spool in spools {
            let end = rest
                .find(SUITE_END)
                .ok_or_else(|| unexpected("a suite's end"))?;
            out.write_all(&rest.as_bytes()[..end])?;
            if let Some(cases) = spool {
                cases.copy_to(out)?;
            }
            out.write_all(SUITE_END.as_bytes())?;
            rest = &rest[end + SUITE_END.len()..];
        }
        out.write_all(rest.as_bytes())?;
        Ok(())
    }
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
