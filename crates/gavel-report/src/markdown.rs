//! Markdown for CI step summaries (GitHub-flavoured tables).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use gavel_core::{Case, Outcome, RunRecord, Status, TagStats};

use crate::files::{Out, Spool, Writer};
use crate::text;
use crate::{Report, ReportError};

/// Reasons longer than this (or spanning lines) are quoted in full under the table.
const CELL_MAX: usize = 120;
/// Quoted reasons are cut at this many characters.
const QUOTE_MAX: usize = 4_000;
/// At most this many non-passing outcomes are detailed (step summaries are capped at 1 MiB).
const DETAILED_MAX: usize = 50;

/// The Markdown report, written as the outcomes come: the tables of every
/// outcome (repeats and judge noise, robustness) and the lists capped at
/// [`DETAILED_MAX`] (rubric, failures, skips) are spooled section by section;
/// the head, which needs the summary and the gate, is written before them.
pub(crate) struct MarkdownWriter {
    spread: Spool,
    robust: Spool,
    rubric: Spool,
    bad: Spool,
    skipped: Spool,
    with_skips: Spool,
}

impl MarkdownWriter {
    pub(crate) fn new() -> Result<MarkdownWriter, ReportError> {
        Ok(MarkdownWriter {
            spread: Spool::new()?,
            robust: Spool::new()?,
            rubric: Spool::new()?,
            bad: Spool::new()?,
            skipped: Spool::new()?,
            with_skips: Spool::new()?,
        })
    }
}

/// Spools `text()` as the next item of a list shown up to [`DETAILED_MAX`]
/// (counting it either way).
fn listed(spool: &mut Spool, text: impl FnOnce() -> String) -> Result<(), ReportError> {
    if spool.count < DETAILED_MAX {
        spool.push(&text())
    } else {
        spool.count += 1;
        Ok(())
    }
}

impl Writer for MarkdownWriter {
    fn outcome(
        &mut self,
        _run: &RunRecord,
        o: &Outcome,
        case: Option<&Case>,
    ) -> Result<(), ReportError> {
        if let Some(row) = crate::noise::spread_row(o) {
            self.spread.push(&row_line(&row))?;
        }
        if let Some(row) = case.and_then(|c| crate::robust::robust_row(c, o)) {
            self.robust.push(&row_line(&row))?;
        }
        if let Some(dimensions) = crate::rubric::dimension_line(o) {
            listed(&mut self.rubric, || {
                rubric_line(o, &dimensions, crate::rubric::suggestions(o))
            })?;
        }
        match o.status {
            Status::Fail | Status::Error => listed(&mut self.bad, || failure(o))?,
            Status::Skipped => listed(&mut self.skipped, || reason_line(o, text::skip_reason))?,
            Status::Pass if o.passed_with_skips() => listed(&mut self.with_skips, || {
                reason_line(o, text::skipped_checks)
            })?,
            Status::Pass => {}
        }
        Ok(())
    }

    fn finish(self: Box<Self>, report: &Report, out: &mut dyn Out) -> Result<(), ReportError> {
        out.write_all(head(report).as_bytes())?;
        let w = *self;
        if w.spread.count > 0 {
            out.write_all(b"## Repeats and judge noise\n\n")?;
            writeln!(out, "| {} |", crate::noise::SPREAD_HEADER.join(" | "))?;
            out.write_all(
                b"| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
            )?;
            w.spread.copy_to(out)?;
            out.write_all(b"\n")?;
            if w.robust.count > 0 {
                out.write_all(b"## Robustness (variants of the input)\n\n")?;
                writeln!(out, "| {} |", crate::robust::ROBUST_HEADER.join(" | "))?;
                out.write_all(b"| --- | --- | --- | ---: | ---: | --- |\n")?;
                w.robust.copy_to(out)?;
                out.write_all(b"\n")?;
            }
        }
        capped(
            out,
            "## Rubric\n\n| Case | Target | Dimensions (1-5) | Suggestions |\n| --- | --- | --- | --- |\n",
            w.rubric,
            |more| format!("\n…and {more} more; see the JSON or HTML report.\n"),
            "\n",
        )?;
        capped(
            out,
            "## Failures and errors\n\n",
            w.bad,
            |more| format!("…and {more} more; see the JSON or HTML report.\n\n"),
            "",
        )?;
        let more = |more| format!("- …and {more} more\n");
        capped(out, "## Skipped\n\n", w.skipped, more, "\n")?;
        capped(
            out,
            "## Passed with skipped checks\n\n",
            w.with_skips,
            more,
            "\n",
        )?;
        let mut md = String::new();
        not_run(&mut md, report);
        out.write_all(md.as_bytes())?;
        Ok(())
    }
}

/// Everything before the outcomes' sections: the verdict, the summary and
/// the tables by tag, by target and of the targets compared.
fn head(report: &Report) -> String {
    let mut md = String::new();
    let g = &report.gate;
    let s = &report.summary.overall;
    let _ = writeln!(
        md,
        "# gavel: {} — {}\n",
        g.word(),
        inline(&report.run.suite)
    );
    let mut facts = vec![
        format!("Run `{}`", report.run.id),
        report.run.status.as_str().to_owned(),
        format!("started {}", inline(&report.run.started_at)),
    ];
    if let Some(ms) = report.wall_ms() {
        facts.push(format!("took {}", text::duration(ms)));
    }
    let _ = writeln!(md, "{}\n", facts.join(" · "));
    if let Some(note) = text::run_note(report) {
        let _ = writeln!(md, "> **Note:** {note}\n");
    }
    let _ = writeln!(md, "**{}**\n", inline(&text::gate_line(report)));

    md.push_str("## Summary\n\n");
    md.push_str("| Total | Passed | Passed with skipped checks | Failed | Errors | Skipped | Not run | Pass rate | Average score | Cost | Gate |\n");
    md.push_str("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n");
    let _ = writeln!(
        md,
        "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} (min {}) |\n",
        s.total,
        s.plain_passes(),
        s.passed_with_skips,
        s.failed,
        s.errors,
        s.skipped,
        text::not_run(report),
        text::pct(s.pass_rate),
        text::score(s.average_score),
        text::cost(report.summary.cost_usd),
        g.word(),
        text::pct(Some(g.min_pass_rate)),
    );
    if !g.decided() {
        md.push_str("No case was decided: every outcome errored or was skipped.\n\n");
    }
    if let Some(line) = report.transport.line() {
        let _ = writeln!(md, "{line}\n");
    }
    if let Some(line) = text::select_best_line(&report.summary.select_best) {
        let _ = writeln!(md, "{line}\n");
    }

    stats_table(&mut md, "By tag", "Tag", &report.summary.by_tag);
    stats_table(&mut md, "By target", "Target", &report.summary.by_target);
    if let Some(targets) = &report.targets {
        rows_table(&mut md, "Targets compared", &targets.target_table());
        rows_table(
            &mut md,
            "Targets compared, case by case",
            &targets.pair_table(),
        );
    }
    md
}

/// A failed or errored outcome in detail: its facts, a table of its
/// problems, their long reasons quoted, and the workspaces it left.
fn failure(o: &Outcome) -> String {
    let mut md = String::new();
    let _ = writeln!(
        md,
        "### {} {} · {}\n",
        text::status_word(o.status),
        inline(&o.case_id),
        inline(&o.target)
    );
    let mut facts = Vec::new();
    if o.case_name != o.case_id {
        facts.push(format!("Name: {}", inline(&o.case_name)));
    }
    if !o.tags.is_empty() {
        facts.push(format!("Tags: {}", inline(&o.tags.join(", "))));
    }
    facts.push(format!("Score: {}", text::score(o.score)));
    if o.executions.len() > 1 {
        let passed = o
            .executions
            .iter()
            .filter(|e| e.status == Status::Pass)
            .count();
        facts.push(format!("Repeats passed: {passed}/{}", o.executions.len()));
    }
    let _ = writeln!(md, "{}\n", facts.join(" · "));
    md.push_str("| Repeat | Check | Status | Score | Threshold | Reason |\n");
    md.push_str("| ---: | --- | --- | ---: | ---: | --- |\n");
    let problems = text::problems(o);
    let mut long = Vec::new();
    for p in &problems {
        let v = p.verdict;
        let one = text::one_line(p.reason, CELL_MAX);
        let reason = p.reason.trim();
        if reason.chars().count() > CELL_MAX || reason.contains('\n') {
            long.push(p);
        }
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} |",
            p.execution.repeat_index + 1,
            cell(p.check),
            p.status,
            v.map_or_else(|| "-".to_owned(), |v| text::verdict_value(v, v.score)),
            v.map_or_else(|| "-".to_owned(), |v| text::verdict_value(v, v.threshold)),
            cell(&one),
        );
    }
    md.push('\n');
    for p in long {
        let _ = writeln!(
            md,
            "> **{}** (repeat {}):",
            inline(p.check),
            p.execution.repeat_index + 1
        );
        md.push_str(">\n");
        for line in text::truncate(p.reason.trim(), QUOTE_MAX).lines() {
            let _ = writeln!(md, "> {}", quoted(line));
        }
        md.push('\n');
    }
    for e in o.executions.iter().filter(|e| e.status != Status::Pass) {
        if let Some(ws) = crate::workspace::of_turns(&e.transcript.turns) {
            let _ = writeln!(md, "Workspace of repeat {}:\n", e.repeat_index + 1);
            code_block(&mut md, &ws.lines(""));
        }
    }
    md
}

/// An outcome's line in a list of reasons.
fn reason_line(o: &Outcome, reason: fn(&Outcome) -> String) -> String {
    let reason = text::one_line(&reason(o), 300);
    format!(
        "- {} · {}: {}\n",
        inline(&o.case_id),
        inline(&o.target),
        inline(&reason)
    )
}

/// A section of spooled items shown up to [`DETAILED_MAX`]: `head`, the
/// items, `more` of how many were left out (if any), then `tail`; nothing
/// when there are none.
fn capped(
    out: &mut dyn Out,
    head: &str,
    items: Spool,
    more: fn(usize) -> String,
    tail: &str,
) -> Result<(), ReportError> {
    if items.count == 0 {
        return Ok(());
    }
    let left_out = items.count.saturating_sub(DETAILED_MAX);
    out.write_all(head.as_bytes())?;
    items.copy_to(out)?;
    if left_out > 0 {
        out.write_all(more(left_out).as_bytes())?;
    }
    out.write_all(tail.as_bytes())?;
    Ok(())
}

/// What the run left undone, and the cases that have no execution.
fn not_run(md: &mut String, report: &Report) {
    let Some(u) = &report.gate.unfinished else {
        return;
    };
    let _ = writeln!(md, "## Not run\n\n{}\n", inline(&u.sentence()));
    if !u.unrun_cases.is_empty() {
        let _ = writeln!(
            md,
            "Cases with no execution: {}\n",
            inline(&text::unrun_cases(&u.unrun_cases, DETAILED_MAX))
        );
    }
}

/// A rubric-scored outcome's row: its dimension scores (1-5) and
/// improvement suggestions.
fn rubric_line(o: &Outcome, dimensions: &str, suggestions: Option<String>) -> String {
    format!(
        "| {} | {} | {} | {} |\n",
        cell(&o.case_id),
        cell(&o.target),
        cell(dimensions),
        cell(&text::truncate(
            suggestions.as_deref().unwrap_or("-"),
            QUOTE_MAX
        )),
    )
}

/// One table row, cells escaped.
fn row_line(row: &[String]) -> String {
    let cells: Vec<String> = row.iter().map(|c| cell(c)).collect();
    format!("| {} |\n", cells.join(" | "))
}

fn stats_table(md: &mut String, title: &str, what: &str, stats: &BTreeMap<String, TagStats>) {
    if stats.is_empty() {
        return;
    }
    let _ = writeln!(md, "## {title}\n");
    let _ = writeln!(
        md,
        "| {what} | Total | Passed | Passed with skipped checks | Failed | Errors | Skipped | Pass rate | Average score |"
    );
    md.push_str("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for (name, s) in stats {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            cell(name),
            s.total,
            s.plain_passes(),
            s.passed_with_skips,
            s.failed,
            s.errors,
            s.skipped,
            text::pct(s.pass_rate),
            text::score(s.average_score)
        );
    }
    md.push('\n');
}

/// A table of `rows` (the first is the header) under `title`, every column but
/// the first aligned right.
fn rows_table(md: &mut String, title: &str, rows: &[Vec<String>]) {
    let Some((header, body)) = rows.split_first() else {
        return;
    };
    let _ = writeln!(md, "## {title}\n");
    let cells = |row: &[String]| row.iter().map(|c| cell(c)).collect::<Vec<_>>().join(" | ");
    let _ = writeln!(md, "| {} |", cells(header));
    let align: Vec<&str> = (0..header.len())
        .map(|i| if i == 0 { "---" } else { "---:" })
        .collect();
    let _ = writeln!(md, "| {} |", align.join(" | "));
    for row in body {
        let _ = writeln!(md, "| {} |", cells(row));
    }
    md.push('\n');
}

/// Text shown literally in Markdown: HTML and Markdown punctuation neutralised.
pub(crate) fn inline(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '#' | '~' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

/// A line of a block quote: [`inline`], leading indentation dropped (four spaces
/// would start a code block) and a leading list, heading-underline or numbered-list
/// marker escaped so the line stays a plain paragraph line.
fn quoted(line: &str) -> String {
    let escaped = inline(line.trim_start());
    let digits = escaped.chars().take_while(char::is_ascii_digit).count();
    if escaped.starts_with(['-', '+', '=']) {
        format!("\\{escaped}")
    } else if digits > 0 && escaped[digits..].starts_with(['.', ')']) {
        format!("{}\\{}", &escaped[..digits], &escaped[digits..])
    } else {
        escaped
    }
}

/// `lines` as a fenced code block, its fence longer than any run of
/// backticks in them so no line can end it.
fn code_block(md: &mut String, lines: &[String]) {
    let longest = lines
        .iter()
        .flat_map(|l| l.split(|c| c != '`'))
        .map(str::len)
        .max()
        .unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    let _ = writeln!(md, "{fence}text");
    for line in lines {
        let _ = writeln!(md, "{line}");
    }
    let _ = writeln!(md, "{fence}\n");
}

/// Text in a table cell: [`inline`] plus newlines as `<br>`.
pub(crate) fn cell(text: &str) -> String {
    let text = text.trim().replace("\r\n", "\n");
    text.split('\n')
        .map(inline)
        .collect::<Vec<_>>()
        .join("<br>")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_escape_pipes_newlines_and_html() {
        assert_eq!(cell("a | b\nc <b>"), "a \\| b<br>c &lt;b&gt;");
        assert_eq!(inline("*x* `y`"), "\\*x\\* \\`y\\`");
        assert_eq!(quoted("- item"), "\\- item");
        assert_eq!(quoted("      ---"), "\\---");
        assert_eq!(quoted("12. twelve"), "12\\. twelve");
        assert_eq!(quoted("2026 was"), "2026 was");
    }
}
