//! The summary printed at the end of a run.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use comfy_table::{CellAlignment, Table, presets};
use gavel_core::{Case, Outcome, Status, TagStats};

use crate::Report;
use crate::text;

/// Reasons are cut to this many characters, on one line.
const REASON_MAX: usize = 300;
/// At most this many non-passing outcomes are listed.
const LISTED_MAX: usize = 30;

/// The end-of-run summary as plain text: a header, totals, per-tag and per-target
/// tables, the failures with their reasons, the skips, the passes with skipped
/// checks, what did not run, and the gate line last.
/// With `color`, the status words carry ANSI colours; without, the text has no
/// escape codes at all.
pub fn terminal(report: &Report, color: bool) -> String {
    let paint = Painter(color);
    let mut out = String::new();
    let s = &report.summary.overall;

    let mut header = format!(
        "gavel run {} · suite {} · {}",
        text::one_line(&report.run.id, 40),
        text::one_line(&report.run.suite, 80),
        report.run.status.as_str()
    );
    if let Some(ms) = report.wall_ms() {
        let _ = write!(header, " · {}", text::duration(ms));
    }
    let _ = writeln!(out, "{}", paint.bold(&header));
    if let Some(note) = text::run_note(report) {
        let _ = writeln!(out, "{}", paint.yellow(note));
    }
    out.push('\n');

    let mut totals = table(&[
        "Total",
        "Passed",
        "Passed w/ skips",
        "Failed",
        "Errors",
        "Skipped",
        "Pass rate",
        "Avg score",
        "Cost",
        "Time",
    ]);
    totals.add_row(vec![
        s.total.to_string(),
        s.plain_passes().to_string(),
        s.passed_with_skips.to_string(),
        s.failed.to_string(),
        s.errors.to_string(),
        s.skipped.to_string(),
        text::pct(s.pass_rate),
        text::score(s.average_score),
        text::cost(report.summary.cost_usd),
        text::duration(report.execution_ms()),
    ]);
    right_align(&mut totals, 0..10);
    let _ = writeln!(out, "{totals}");
    if let Some(line) = report.transport.line() {
        let _ = writeln!(out, "{line}");
    }
    let pairwise = report.summary.pairwise;
    if pairwise.comparisons > 0 {
        let _ = writeln!(
            out,
            "Pairwise: {} comparisons judged in both orders, {} with position bias (the orders disagreed; scored as ties, which fail unless the check sets biased_ties_pass)",
            pairwise.comparisons, pairwise.position_bias
        );
    }
    if let Some(line) = text::select_best_line(&report.summary.select_best) {
        let _ = writeln!(out, "{line}");
    }

    if !report.summary.by_tag.is_empty() {
        let _ = writeln!(
            out,
            "\nBy tag\n{}",
            stats_table("Tag", &report.summary.by_tag)
        );
    }
    if report.summary.by_target.len() > 1 {
        let _ = writeln!(
            out,
            "\nBy target\n{}",
            stats_table("Target", &report.summary.by_target)
        );
    }

    if let Some(targets) = &report.targets {
        for (title, rows) in [
            ("Targets compared", targets.target_table()),
            ("Targets compared, case by case", targets.pair_table()),
        ] {
            let header: Vec<&str> = rows[0].iter().map(String::as_str).collect();
            let mut t = table(&header);
            for row in &rows[1..] {
                t.add_row(row.clone());
            }
            right_align(&mut t, 1..header.len());
            let _ = writeln!(out, "\n{title}\n{t}");
        }
    }

    let spread = crate::noise::spread_rows(report);
    if !spread.is_empty() {
        let mut t = table(&crate::noise::SPREAD_HEADER);
        for row in spread {
            t.add_row(row.to_vec());
        }
        right_align(&mut t, 2..10);
        let _ = writeln!(out, "\nRepeats and judge noise\n{t}");
    }
    let robust = crate::robust::robust_rows(report);
    if !robust.is_empty() {
        let mut t = table(&crate::robust::ROBUST_HEADER);
        for row in robust {
            t.add_row(row.to_vec());
        }
        let _ = writeln!(out, "\nRobustness (variants of the input)\n{t}");
    }

    rubric(&mut out, report);

    let bad: Vec<_> = report
        .outcomes
        .iter()
        .filter(|o| matches!(o.status, Status::Fail | Status::Error))
        .collect();
    if !bad.is_empty() {
        out.push_str("\nFailures\n");
        for o in bad.iter().take(LISTED_MAX) {
            let problems = text::problems(o);
            let many = o.executions.len() > 1;
            for e in o
                .executions
                .iter()
                .filter(|e| matches!(e.status, Status::Fail | Status::Error))
            {
                let mut line = format!(
                    "  {} {} [{}]",
                    paint.status(e.status),
                    plain(&o.case_id),
                    plain(&o.target)
                );
                if many {
                    let _ = write!(
                        line,
                        " (repeat {}/{})",
                        e.repeat_index + 1,
                        o.executions.len()
                    );
                }
                let _ = writeln!(out, "{line}");
                let mine: Vec<_> = problems
                    .iter()
                    .filter(|p| std::ptr::eq(p.execution, e))
                    .collect();
                if mine.is_empty() {
                    let reason = e.reason.as_deref().unwrap_or("no reason recorded");
                    let _ = writeln!(out, "    - {}", text::one_line(reason, REASON_MAX));
                }
                for p in mine {
                    let _ = writeln!(out, "    - {}", p.line(REASON_MAX));
                }
                if let Some(ws) = crate::workspace::of_turns(&e.transcript.turns) {
                    for line in ws.lines("") {
                        let _ = writeln!(out, "    {}", text::one_line(&line, REASON_MAX));
                    }
                }
            }
        }
        let all_bad = s.failed + s.errors;
        if all_bad > LISTED_MAX {
            let _ = writeln!(
                out,
                "  …and {} more (see the JSON or HTML report)",
                all_bad - LISTED_MAX
            );
        }
    }

    let skipped: Vec<_> = report
        .outcomes
        .iter()
        .filter(|o| o.status == Status::Skipped)
        .collect();
    if !skipped.is_empty() {
        out.push_str("\nSkipped\n");
        for o in skipped.iter().take(LISTED_MAX) {
            let reason = text::one_line(&text::skip_reason(o), REASON_MAX);
            let _ = writeln!(
                out,
                "  {} {} [{}]: {reason}",
                paint.status(Status::Skipped),
                plain(&o.case_id),
                plain(&o.target)
            );
        }
        if s.skipped > LISTED_MAX {
            let _ = writeln!(out, "  …and {} more", s.skipped - LISTED_MAX);
        }
    }

    let with_skips: Vec<_> = report
        .outcomes
        .iter()
        .filter(|o| o.passed_with_skips())
        .collect();
    if !with_skips.is_empty() {
        out.push_str("\nPassed with skipped checks\n");
        for o in with_skips.iter().take(LISTED_MAX) {
            let reason = text::one_line(&text::skipped_checks(o), REASON_MAX);
            let _ = writeln!(
                out,
                "  {} {} [{}]: {reason}",
                paint.status(Status::Pass),
                plain(&o.case_id),
                plain(&o.target)
            );
        }
        if s.passed_with_skips > LISTED_MAX {
            let _ = writeln!(out, "  …and {} more", s.passed_with_skips - LISTED_MAX);
        }
    }

    if let Some(u) = &report.gate.unfinished {
        let _ = writeln!(out, "\nNot run\n  {}", text::one_line(&u.sentence(), 400));
        if !u.unrun_cases.is_empty() {
            let _ = writeln!(
                out,
                "  cases with no execution: {}",
                text::unrun_cases(&u.unrun_cases, LISTED_MAX)
            );
        }
    }

    out.push('\n');
    let line = text::gate_line(report);
    let word = report.gate.word();
    let rest = line.strip_prefix(word).unwrap_or(&line);
    let word = match report.gate.exit_code() {
        crate::EXIT_GATE_FAILED => paint.red(word),
        crate::EXIT_ERRORS => paint.yellow(word),
        _ if report.gate.decided() => paint.green(word),
        _ => paint.yellow(word),
    };
    let _ = writeln!(out, "{}{rest}", paint.bold(&word));
    out
}

/// How many outcomes of each listed kind a report kept so far: tells which
/// further outcome [`terminal`] shows ([`crate::Detail::Summary`]). The counts
/// of what is not shown come from the report's summary.
#[derive(Debug, Default)]
pub(crate) struct Listed {
    failures: usize,
    skipped: usize,
    with_skips: usize,
}

impl Listed {
    /// Whether the summary shows `o` (of the snapshot's `case`): among the first
    /// failures, skips or passes with skipped checks, or in the spread,
    /// robustness or rubric tables. Counts it.
    pub(crate) fn shows(&mut self, o: &Outcome, case: Option<&Case>) -> bool {
        let first = |n: &mut usize| {
            *n += 1;
            *n <= LISTED_MAX
        };
        let listed = match o.status {
            Status::Fail | Status::Error => first(&mut self.failures),
            Status::Skipped => first(&mut self.skipped),
            Status::Pass if o.passed_with_skips() => first(&mut self.with_skips),
            Status::Pass => false,
        };
        listed
            || crate::noise::spread_row(o).is_some()
            || case.is_some_and(|c| crate::robust::robust_row(c, o).is_some())
            || crate::rubric::dimension_line(o).is_some()
    }
}

/// Each rubric-scored outcome's dimension scores (1-5) and the judge's
/// improvement suggestions.
fn rubric(out: &mut String, report: &Report) {
    let rows = crate::rubric::rows(report);
    if rows.is_empty() {
        return;
    }
    out.push_str("\nRubric (dimensions 1-5)\n");
    for row in rows.iter().take(LISTED_MAX) {
        let o = row.outcome;
        let _ = writeln!(
            out,
            "  {} [{}]: {}",
            plain(&o.case_id),
            plain(&o.target),
            row.dimensions
        );
        if let Some(s) = &row.suggestions {
            let _ = writeln!(out, "    suggestions: {}", text::one_line(s, REASON_MAX));
        }
    }
    if rows.len() > LISTED_MAX {
        let _ = writeln!(out, "  …and {} more", rows.len() - LISTED_MAX);
    }
}

/// A name on one line with no control characters.
fn plain(name: &str) -> String {
    text::one_line(name, 120)
}

/// A table as plain text: comfy-table is built without its `tty` feature, so
/// the width is never the terminal's and cells carry no styling.
fn table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_preset(presets::UTF8_FULL_CONDENSED)
        .set_header(header.to_vec());
    t
}

fn stats_table(what: &str, stats: &BTreeMap<String, TagStats>) -> Table {
    let mut t = table(&[
        what,
        "Total",
        "Passed",
        "Passed w/ skips",
        "Failed",
        "Errors",
        "Skipped",
        "Pass rate",
        "Avg score",
    ]);
    for (name, s) in stats {
        t.add_row(vec![
            text::one_line(name, 60),
            s.total.to_string(),
            s.plain_passes().to_string(),
            s.passed_with_skips.to_string(),
            s.failed.to_string(),
            s.errors.to_string(),
            s.skipped.to_string(),
            text::pct(s.pass_rate),
            text::score(s.average_score),
        ]);
    }
    right_align(&mut t, 1..9);
    t
}

fn right_align(t: &mut Table, columns: std::ops::Range<usize>) {
    for i in columns {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
}

/// ANSI colours when asked for, plain text otherwise.
#[derive(Clone, Copy)]
struct Painter(bool);

impl Painter {
    fn paint(self, code: &str, text: &str) -> String {
        if self.0 {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }
    fn bold(self, text: &str) -> String {
        self.paint("1", text)
    }
    fn red(self, text: &str) -> String {
        self.paint("31", text)
    }
    fn green(self, text: &str) -> String {
        self.paint("32", text)
    }
    fn yellow(self, text: &str) -> String {
        self.paint("33", text)
    }
    fn status(self, status: Status) -> String {
        let word = text::status_word(status);
        match status {
            Status::Pass => self.green(word),
            Status::Fail => self.red(word),
            Status::Error => self.yellow(word),
            Status::Skipped => self.paint("2", word),
        }
    }
}
