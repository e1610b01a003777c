//! What a coding agent left in its workspace, as reports show it: the changed
//! files, the diff (bounded) and the post-run commands with the end of their
//! output.

use gavel_core::Turn;
use gavel_core::workspace::{ChangeKind, CommandResult, WorkspaceState};
use serde::Serialize;

/// Diff lines a report shows before pointing at the rest.
const DIFF_LINES: usize = 400;
/// Output lines of a post-run command shown in the terminal and Markdown.
const OUTPUT_LINES: usize = 12;

/// A turn's workspace, ready to show.
#[derive(Debug, Serialize)]
pub(crate) struct WorkspaceView {
    /// `3 files changed, +10 -2`.
    pub(crate) summary: String,
    /// One `M path (+a -r)` line per changed path.
    pub(crate) changes: Vec<String>,
    /// The first [`DIFF_LINES`] lines of the diff.
    pub(crate) diff: String,
    /// What the shown diff leaves out (`None`: nothing).
    pub(crate) diff_rest: Option<String>,
    pub(crate) commands: Vec<CommandView>,
    /// Where the workspace was kept, when it was.
    pub(crate) kept: Option<String>,
}

/// A post-run command, ready to show.
#[derive(Debug, Serialize)]
pub(crate) struct CommandView {
    pub(crate) name: String,
    /// `exit 0`, `exit 1`, `timed out after 300 s`.
    pub(crate) ended: String,
    pub(crate) passed: bool,
    pub(crate) output: String,
}

/// The workspace of the last turn that has one.
pub(crate) fn of_turns(turns: &[Turn]) -> Option<WorkspaceView> {
    turns
        .iter()
        .rev()
        .find_map(|t| t.workspace.as_deref())
        .map(view)
}

fn view(state: &WorkspaceState) -> WorkspaceView {
    let changes = state
        .changes
        .iter()
        .map(|c| {
            let kind = match c.kind {
                ChangeKind::Added => "A",
                ChangeKind::Modified => "M",
                ChangeKind::Deleted => "D",
            };
            format!("{kind} {} (+{} -{})", c.path, c.added, c.removed)
        })
        .collect();
    let added: u64 = state.changes.iter().map(|c| c.added).sum();
    let removed: u64 = state.changes.iter().map(|c| c.removed).sum();
    let n = state.changes.len();
    let summary = format!(
        "{n} file{} changed, +{added} -{removed}",
        if n == 1 { "" } else { "s" }
    );
    let lines: Vec<&str> = state.diff.lines().collect();
    let shown = lines.len().min(DIFF_LINES);
    let stored = state.diff.len() as u64;
    let diff_rest = if shown < lines.len() || stored < state.diff_bytes {
        Some(format!(
            "{} more diff lines stored; the whole diff is {} bytes{}",
            lines.len() - shown,
            state.diff_bytes,
            match &state.kept {
                Some(path) => format!(" (`git diff HEAD` in {path})"),
                None => String::new(),
            }
        ))
    } else {
        None
    };
    WorkspaceView {
        summary,
        changes,
        diff: lines[..shown].join("\n"),
        diff_rest,
        commands: state.commands.iter().map(command).collect(),
        kept: state.kept.clone(),
    }
}

fn command(c: &CommandResult) -> CommandView {
    let ended = match (c.exit_code, &c.problem) {
        (Some(code), _) => format!("exit {code}"),
        (None, Some(problem)) => problem.clone(),
        (None, None) => "did not finish".to_owned(),
    };
    CommandView {
        name: c.name.clone(),
        ended,
        passed: c.exit_code == Some(0),
        output: c.output.clone(),
    }
}

impl WorkspaceView {
    /// Indented lines for the terminal and Markdown: the summary, the changed
    /// paths, and each failed command with the end of its output.
    pub(crate) fn lines(&self, indent: &str) -> Vec<String> {
        let mut out = vec![format!("{indent}workspace: {}", self.summary)];
        out.extend(self.changes.iter().map(|c| format!("{indent}- {c}")));
        for c in &self.commands {
            out.push(format!("{indent}command `{}`: {}", c.name, c.ended));
            if !c.passed {
                let lines: Vec<&str> = c.output.lines().collect();
                let start = lines.len().saturating_sub(OUTPUT_LINES);
                out.extend(lines[start..].iter().map(|l| format!("{indent}  | {l}")));
            }
        }
        if let Some(kept) = &self.kept {
            out.push(format!("{indent}kept at {kept}"));
        }
        out
    }
}
