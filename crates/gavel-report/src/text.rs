//! Helpers every format shares: number formatting, the case's input and expected
//! output, the problems of an outcome and a plain-text transcript.

use std::fmt::Write as _;

use gavel_core::{Case, Execution, Outcome, Scale, Status, TagStats, Verdict};
use serde_json::Value;

use crate::Report;

/// `Select-best: 6 comparisons; the judge chose the answer shown 1st 4 times
/// (67%), 2nd 2 (33%), 3rd 0 (0%) …`, or `None` when no comparison was decided.
pub(crate) fn select_best_line(stats: &gavel_core::SelectBestStats) -> Option<String> {
    if stats.comparisons == 0 {
        return None;
    }
    let shares: Vec<String> = stats
        .chosen_by_position
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let share = 100.0 * *n as f64 / stats.comparisons as f64;
            format!("position {} {n} ({})", i + 1, pct(Some(share)))
        })
        .collect();
    Some(format!(
        "Select-best: {} comparisons, the answers shown in a shuffled order; the judge chose {} (a judge that reads the answers spreads its choices by merit, not by position)",
        stats.comparisons,
        shares.join(", ")
    ))
}

/// A percentage with at most one decimal: `85.7%`, `80%`; `n/a` when undecided.
pub(crate) fn pct(rate: Option<f64>) -> String {
    rate.map_or_else(|| "n/a".to_owned(), |r| format!("{}%", num(r, 1)))
}

/// A number with at most `decimals` decimals and no trailing zeros.
pub(crate) fn num(x: f64, decimals: usize) -> String {
    let s = format!("{x:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        s
    }
}

/// A 0..=1 score with two decimals, `-` when absent.
pub(crate) fn score(score: Option<f64>) -> String {
    score.map_or_else(|| "-".to_owned(), |s| format!("{s:.2}"))
}

/// A 0..=1 value shown on its own scale beside the normalised value: `3/5 (0.50)`,
/// `7/10 (0.70)`, `pass` or `fail` on the binary scale, `0.82` on 0–1 (or with no
/// scale known).
pub(crate) fn on_scale(scale: Option<Scale>, x: f64) -> String {
    match scale {
        None | Some(Scale::ZeroToOne) => format!("{x:.2}"),
        Some(Scale::Binary) => if x >= 0.5 { "pass" } else { "fail" }.to_owned(),
        Some(scale) => {
            let (lo, hi) = scale.bounds();
            format!("{}/{} ({x:.2})", num(lo + x * (hi - lo), 2), num(hi, 0))
        }
    }
}

/// A verdict's score or threshold on its own scale ([`on_scale`]), `-` when absent.
pub(crate) fn verdict_value(v: &Verdict, x: Option<f64>) -> String {
    x.map_or_else(|| "-".to_owned(), |x| on_scale(v.scale(), x))
}

/// A cost in US dollars as reports show it (`$0.0012`, `$1.50`), `-` when unknown.
pub fn cost(cost: Option<f64>) -> String {
    match cost {
        None => "-".to_owned(),
        Some(c) if c != 0.0 && c.abs() < 0.01 => format!("${c:.4}"),
        Some(c) => format!("${c:.2}"),
    }
}

/// A duration for people: `850ms`, `1.2s`, `3m 04s`, `1h 02m`.
pub(crate) fn duration(ms: u64) -> String {
    match ms {
        0..1_000 => format!("{ms}ms"),
        1_000..60_000 => format!("{}s", num(ms as f64 / 1000.0, 1)),
        60_000..3_600_000 => format!("{}m {:02}s", ms / 60_000, ms % 60_000 / 1000),
        _ => format!("{}h {:02}m", ms / 3_600_000, ms % 3_600_000 / 60_000),
    }
}

/// Whitespace collapsed to single spaces, control characters (terminal escapes)
/// dropped, and cut to `max` characters with `…`.
pub(crate) fn one_line(text: &str, max: usize) -> String {
    let mut out = String::new();
    let text: String = text
        .chars()
        .filter(|c| !c.is_control() || c.is_whitespace())
        .collect();
    for (i, word) in text.split_whitespace().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(word);
    }
    truncate(&out, max)
}

/// Cut to `max` characters, ending with `…` when cut.
pub(crate) fn truncate(text: &str, max: usize) -> String {
    match text.char_indices().nth(max.saturating_sub(1)) {
        Some((i, _)) if text[i..].chars().nth(1).is_some() => format!("{}…", &text[..i]),
        _ => text.to_owned(),
    }
}

/// JSON shown to people: strings as they are, anything else pretty-printed.
pub(crate) fn json_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => serde_json::to_string_pretty(other).unwrap_or_else(|_| other.to_string()),
    }
}

/// The first round's input: the first message the agent got, as its first
/// transcript recorded it (a replayed case's is the recording's, whatever the
/// suite says), else the case snapshot's; a structured (non-text) input as the
/// case gives it.
pub(crate) fn input_of(case: Option<&Case>, outcome: &Outcome) -> Value {
    let from_case = case.and_then(|c| {
        c.rounds
            .first()
            .map(|r| r.input.clone())
            .or_else(|| c.input.clone())
    });
    let sent = outcome
        .executions
        .iter()
        .find_map(|e| e.transcript.turns.first())
        .map(|t| t.input.clone())
        .filter(|input| !input.is_empty());
    match (from_case, sent) {
        (Some(structured), _) if !structured.is_string() => structured,
        (_, Some(sent)) => Value::String(sent),
        (from_case, None) => from_case.unwrap_or(Value::Null),
    }
}

/// The case's expected output (else the last round's that has one), or null.
pub(crate) fn expected_of(case: Option<&Case>) -> Value {
    case.and_then(|c| {
        c.expected_output.clone().or_else(|| {
            c.rounds
                .iter()
                .rev()
                .find_map(|r| r.expected_output.clone())
        })
    })
    .unwrap_or(Value::Null)
}

/// The last turn's output of the first execution.
pub(crate) fn actual_of(outcome: &Outcome) -> Option<&str> {
    outcome
        .executions
        .first()?
        .transcript
        .last()
        .map(|t| t.output.as_str())
}

/// One thing that went wrong in an outcome.
#[derive(Debug, Clone)]
pub(crate) struct Problem<'a> {
    /// The execution it belongs to.
    pub(crate) execution: &'a Execution,
    /// The verdict, or `None` for the execution's own error.
    pub(crate) verdict: Option<&'a Verdict>,
    /// `fail` or `error`.
    pub(crate) status: Status,
    /// The check's name, or `execution` for the execution's own error.
    pub(crate) check: &'a str,
    /// Why.
    pub(crate) reason: &'a str,
}

impl Problem<'_> {
    /// `check [score 3/5 (0.50), threshold 4/5 (0.75)]: reason` on one line of at
    /// most `max` characters (the score first, so that cutting keeps it).
    pub(crate) fn line(&self, max: usize) -> String {
        one_line(
            &format!(
                "{}{}: {}",
                self.check,
                self.verdict.map(verdict_score).unwrap_or_default(),
                self.reason
            ),
            max,
        )
    }
}

/// What went wrong in an outcome, repeat by repeat: an errored execution's own
/// reason and its erroring checks (its failing checks are left out: they judged a
/// broken conversation), and every failing or erroring check of the others.
pub(crate) fn problems(outcome: &Outcome) -> Vec<Problem<'_>> {
    let mut out = Vec::new();
    for e in &outcome.executions {
        if e.status == Status::Error
            && let Some(reason) = &e.reason
        {
            out.push(Problem {
                execution: e,
                verdict: None,
                status: Status::Error,
                check: "execution",
                reason,
            });
        }
        for v in &e.verdicts {
            let shown = match v.status {
                Status::Fail => e.status != Status::Error,
                Status::Error => true,
                _ => false,
            };
            if shown {
                out.push(Problem {
                    execution: e,
                    verdict: Some(v),
                    status: v.status,
                    check: &v.check,
                    reason: &v.reason,
                });
            }
        }
    }
    out
}

/// The first problem matching the outcome's status, else the first at all.
pub(crate) fn headline<'a>(
    outcome: &Outcome,
    problems: &'a [Problem<'a>],
) -> Option<&'a Problem<'a>> {
    problems
        .iter()
        .find(|p| p.status == outcome.status)
        .or(problems.first())
}

/// Why an outcome was skipped: the distinct reasons of its executions.
pub(crate) fn skip_reason(outcome: &Outcome) -> String {
    let mut reasons: Vec<&str> = Vec::new();
    for e in &outcome.executions {
        let mine: Vec<&str> = match &e.reason {
            Some(r) => vec![r.as_str()],
            None => e
                .verdicts
                .iter()
                .filter(|v| v.status == Status::Skipped)
                .map(|v| v.reason.as_str())
                .collect(),
        };
        for r in mine {
            if !r.is_empty() && !reasons.contains(&r) {
                reasons.push(r);
            }
        }
    }
    if reasons.is_empty() {
        "no reason given".to_owned()
    } else {
        reasons.join("; ")
    }
}

/// The reasons of the non-passing verdicts, else of all verdicts, one per line.
pub(crate) fn reasoning(outcome: &Outcome) -> String {
    let problems = problems(outcome);
    let many = outcome.executions.len() > 1;
    let tag = |e: &Execution| {
        if many {
            format!("[repeat {}] ", e.repeat_index + 1)
        } else {
            String::new()
        }
    };
    let mut lines: Vec<String> = problems
        .iter()
        .map(|p| format!("{}{}: {}", tag(p.execution), p.check, p.reason))
        .collect();
    if lines.is_empty() && outcome.status == Status::Skipped {
        lines.push(format!("skipped: {}", skip_reason(outcome)));
    }
    if lines.is_empty() {
        for e in &outcome.executions {
            lines.extend(
                e.verdicts
                    .iter()
                    .map(|v| format!("{}{}: {}", tag(e), v.check, v.reason)),
            );
        }
    }
    let mut seen = Vec::new();
    lines.retain(|l| {
        let new = !seen.contains(l);
        seen.push(l.clone());
        new
    });
    lines.join("\n")
}

/// A plain-text transcript of one execution with its verdicts, for logs.
pub(crate) fn transcript_text(e: &Execution, of: usize) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "== repeat {}/{} · {} · {} · session {} ==",
        e.repeat_index + 1,
        of,
        e.status,
        duration(e.duration_ms),
        if e.transcript.session_id.is_empty() {
            "-"
        } else {
            &e.transcript.session_id
        }
    );
    if let Some(reason) = &e.reason {
        let _ = writeln!(out, "reason: {reason}");
    }
    for turn in &e.transcript.turns {
        let _ = writeln!(out, "{}: {}", who(turn), turn.input);
        for call in &turn.tool_calls {
            let _ = write!(out, "tool: ");
            if let Some(agent) = &call.agent {
                let _ = write!(out, "[{agent}] ");
            }
            let _ = write!(out, "{}({})", call.name, call.arguments);
            if let Some(result) = &call.result {
                let _ = write!(out, " -> {result}");
            }
            out.push('\n');
        }
        if let Some(f) = &turn.failure {
            let kind = if f.transient {
                "transient"
            } else {
                "permanent"
            };
            let _ = writeln!(out, "target error ({kind}): {}", f.message);
        } else {
            let _ = writeln!(out, "{}: {}", assistant(turn.agent.as_deref()), turn.output);
        }
    }
    if !e.verdicts.is_empty() {
        out.push_str("verdicts:\n");
        for v in &e.verdicts {
            let _ = writeln!(
                out,
                "  {:<7} {}{}: {}",
                v.status.as_str(),
                v.check,
                verdict_score(v),
                v.reason
            );
        }
    }
    out
}

/// ` [score 3/5 (0.50), threshold 4/5 (0.75)]`: a verdict's score and threshold
/// on its own scale ([`on_scale`]), or nothing when it has no score. The binary
/// scale shows its score alone (` [score fail]`): its threshold is always `pass`.
pub(crate) fn verdict_score(v: &Verdict) -> String {
    let Some(score) = v.score else {
        return String::new();
    };
    let scale = v.scale();
    match v.threshold {
        Some(t) if scale != Some(Scale::Binary) => format!(
            " [score {}, threshold {}]",
            on_scale(scale, score),
            on_scale(scale, t)
        ),
        _ => format!(" [score {}]", on_scale(scale, score)),
    }
}

/// The distinct `check: reason` of an outcome's skipped checks, joined by `; `.
pub(crate) fn skipped_checks(outcome: &Outcome) -> String {
    let mut lines: Vec<String> = Vec::new();
    for (_, v) in outcome.skipped_checks() {
        let line = format!("{}: {}", v.check, v.reason);
        if !lines.contains(&line) {
            lines.push(line);
        }
    }
    lines.join("; ")
}

/// `3 passed, 1 passed with skipped checks, 1 failed, 0 errors, 0 skipped`: plain
/// passes apart from passes with skipped checks (named only when there are any).
pub(crate) fn counts(s: &TagStats) -> String {
    let with_skips = if s.passed_with_skips > 0 {
        format!(", {} passed with skipped checks", s.passed_with_skips)
    } else {
        String::new()
    };
    format!(
        "{} passed{with_skips}, {} failed, {} errors, {} skipped",
        s.plain_passes(),
        s.failed,
        s.errors,
        s.skipped
    )
}

/// Executions that did not run, for summary tables: `0` for a run that finished
/// its plan, the count when the plan is known, else `unknown`.
pub(crate) fn not_run(report: &Report) -> String {
    match &report.gate.unfinished {
        None => "0".to_owned(),
        Some(u) => u
            .unrun
            .map_or_else(|| "unknown".to_owned(), |n| n.to_string()),
    }
}

/// The case ids that did not run, at most `max` of them, then `…and N more`.
pub(crate) fn unrun_cases(ids: &[String], max: usize) -> String {
    let mut shown: Vec<String> = ids.iter().take(max).map(|id| one_line(id, 120)).collect();
    if ids.len() > max {
        shown.push(format!("…and {} more", ids.len() - max));
    }
    shown.join(", ")
}

/// The status word in capitals, as the terminal and Markdown print it.
pub(crate) fn status_word(status: Status) -> &'static str {
    match status {
        Status::Pass => "PASS",
        Status::Fail => "FAIL",
        Status::Error => "ERROR",
        Status::Skipped => "SKIP",
    }
}

/// The sentence that ends every summary: `PASS: pass rate 85.7% (min 80%), …`.
pub(crate) fn gate_line(report: &Report) -> String {
    let g = &report.gate;
    let counts = counts(&report.summary.overall);
    let mut line = if g.decided() {
        format!(
            "{}: pass rate {} (min {}), {counts}",
            g.word(),
            pct(g.pass_rate),
            pct(Some(g.min_pass_rate))
        )
    } else {
        format!("{}: no case was decided ({counts})", g.word())
    };
    if let Some(u) = &g.unfinished {
        line.push_str(&format!(" — {}", u.sentence()));
    }
    if g.errors > 0 && g.exit_code() == crate::EXIT_ERRORS {
        line.push_str(" — errors kept cases from a verdict");
    }
    if let Some(why) = g.calibration.as_ref().and_then(|c| c.reason.as_ref()) {
        line.push_str(&format!(" — {why}"));
    }
    if let Some(why) = g.judges.as_ref().and_then(|j| j.reason()) {
        line.push_str(&format!(" — {why}"));
    }
    line
}

/// A sentence about the run's status when it did not complete, else `None`.
pub(crate) fn run_note(report: &Report) -> Option<&'static str> {
    match report.run.status {
        gavel_core::RunStatus::Completed => None,
        gavel_core::RunStatus::Interrupted => {
            Some("The run was interrupted: these results are partial.")
        }
        gavel_core::RunStatus::BudgetStopped => Some(
            "The run stopped scheduling new work when its spend reached --max-cost: these results are partial.",
        ),
        gavel_core::RunStatus::Running => {
            Some("The run is still running: these results are partial.")
        }
        gavel_core::RunStatus::Failed => {
            Some("The run failed before finishing: these results are partial.")
        }
    }
}

/// Who answered or called a tool: `assistant`, or `assistant (billing)` when the
/// target named the agent.
pub(crate) fn assistant(agent: Option<&str>) -> String {
    match agent {
        Some(agent) => format!("assistant ({agent})"),
        None => "assistant".to_owned(),
    }
}

/// Who sent a turn's message, as the transcript shows it: `user`, `user
/// (follow-up)` for an answer to the agent's clarifying question, and the branch
/// when the turn belongs to one.
pub(crate) fn who(turn: &gavel_core::Turn) -> String {
    let mut who = String::from("user");
    if turn.followup {
        who.push_str(" (follow-up)");
    }
    if let Some(branch) = &turn.branch {
        who.push_str(&format!(" [branch {branch}]"));
    }
    who
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_well() {
        assert_eq!(pct(Some(85.714_285)), "85.7%");
        assert_eq!(pct(Some(80.0)), "80%");
        assert_eq!(pct(None), "n/a");
        assert_eq!(duration(850), "850ms");
        assert_eq!(duration(1_250), "1.2s");
        assert_eq!(duration(184_000), "3m 04s");
        assert_eq!(cost(Some(0.001_23)), "$0.0012");
    }

    #[test]
    fn scores_show_on_their_own_scale() {
        assert_eq!(on_scale(Some(Scale::OneToFive), 0.5), "3/5 (0.50)");
        assert_eq!(on_scale(Some(Scale::OneToFive), 0.35), "2.4/5 (0.35)");
        assert_eq!(on_scale(Some(Scale::ZeroToTen), 0.7), "7/10 (0.70)");
        assert_eq!(on_scale(Some(Scale::OneToFour), 1.0), "4/4 (1.00)");
        assert_eq!(on_scale(Some(Scale::ZeroToOne), 0.823), "0.82");
        assert_eq!(on_scale(None, 0.823), "0.82");
        assert_eq!(on_scale(Some(Scale::Binary), 0.0), "fail");
        assert_eq!(on_scale(Some(Scale::Binary), 1.0), "pass");

        let judged = |scale: &str, score: f64, threshold: f64| {
            Verdict::new("judge", gavel_core::CheckKind::Judge, Status::Fail, "meh")
                .with_score(score, Some(threshold))
                .with_evidence(serde_json::json!({ "scale": scale }))
        };
        assert_eq!(
            verdict_score(&judged("1-5", 0.5, 0.75)),
            " [score 3/5 (0.50), threshold 4/5 (0.75)]"
        );
        assert_eq!(verdict_score(&judged("binary", 0.0, 1.0)), " [score fail]");
        assert_eq!(
            verdict_score(&judged("0-1", 0.82, 0.7)),
            " [score 0.82, threshold 0.70]"
        );
        let rubric = Verdict::new(
            "rubric",
            gavel_core::CheckKind::Rubric,
            Status::Fail,
            "thin",
        )
        .with_score(0.5, None);
        assert_eq!(verdict_score(&rubric), " [score 3/5 (0.50)]");
        assert_eq!(verdict_value(&rubric, None), "-");
        assert_eq!(
            verdict_score(&Verdict::new(
                "c",
                gavel_core::CheckKind::Contains,
                Status::Pass,
                ""
            )),
            ""
        );
    }

    #[test]
    fn one_line_collapses_and_truncates() {
        assert_eq!(one_line("a\n  b\tc", 100), "a b c");
        assert_eq!(one_line("\x1b[31mred\x1b[0m", 100), "[31mred[0m");
        assert_eq!(one_line("abcdefghij", 5), "abcd…");
        assert_eq!(one_line("abcde", 5), "abcde");
        assert_eq!(truncate("héllo wörld", 6), "héllo…");
    }
}
