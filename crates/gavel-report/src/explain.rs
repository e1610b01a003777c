//! One execution explained for a test failure message: status, each failing
//! check with its reason, a line diff of the expected output against the
//! answer, and the transcript.

use std::fmt::Write as _;

use gavel_core::{Case, Execution, Status};
use serde_json::Value;

use crate::text;

/// A readable account of `execution` of `case`: what failed and why, then
/// `- expected` / `+ actual` lines when the case has an expected output, then the
/// transcript with every verdict.
pub fn explain(case: &Case, execution: &Execution) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "case `{}` against `{}`: {}",
        execution.case_id, execution.target, execution.status
    );
    if let Some(reason) = execution
        .reason
        .as_deref()
        .filter(|_| execution.status == Status::Error)
    {
        let _ = writeln!(out, "  error: {reason}");
    }
    for v in execution
        .verdicts
        .iter()
        .filter(|v| matches!(v.status, Status::Fail | Status::Error))
    {
        let _ = writeln!(out, "  {} {}{}:", v.status, v.check, text::verdict_score(v));
        for line in v.reason.lines() {
            let _ = writeln!(out, "      {line}");
        }
    }
    if let (Some(expected), Some(turn)) = (&case.expected_output, execution.transcript.last()) {
        let expected = match expected {
            Value::String(s) => s.clone(),
            other => text::json_text(other),
        };
        if expected.trim() != turn.output.trim() {
            let _ = writeln!(out, "\nexpected output (-) vs answer (+):");
            out.push_str(&line_diff(&expected, &turn.output));
        }
    }
    out.push('\n');
    out.push_str(&text::transcript_text(execution, 1));
    out
}

/// `- ` lines only in `expected`, `+ ` lines only in `actual`, `  ` shared ones.
fn line_diff(expected: &str, actual: &str) -> String {
    let diff = similar::TextDiff::from_lines(expected, actual);
    let mut out = String::new();
    for change in diff.iter_all_changes() {
        let sign = match change.tag() {
            similar::ChangeTag::Delete => "- ",
            similar::ChangeTag::Insert => "+ ",
            similar::ChangeTag::Equal => "  ",
        };
        let _ = writeln!(out, "{sign}{}", change.value().trim_end_matches('\n'));
    }
    out
}
