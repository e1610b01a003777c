//! file, diff and command: what a coding agent left in its workspace, read
//! from the answer's [`WorkspaceState`] (recorded by `workspace` targets).

use gavel_core::workspace::{CommandCheckSpec, DiffCheckSpec, FileCheckSpec};
use gavel_core::{CheckKind, OneOrMany, Status};
use globset::{Glob, GlobMatcher};
use regex::Regex;
use serde_json::json;

use crate::check::CodeCheck;
use crate::error::FieldError;
use crate::finding::Finding;
use crate::subject::Subject;

/// The finding of a check on a turn that recorded no workspace: an `error`,
/// since the suite pointed the check at the wrong target.
fn no_workspace(kind: CheckKind) -> Finding {
    Finding {
        score: None,
        status: Status::Error,
        reason: format!(
            "no workspace was recorded for this turn: `{kind}` checks grade a `workspace` target"
        ),
        evidence: json!({}),
    }
}

fn strings(value: Option<&OneOrMany>) -> Vec<String> {
    value.map(|v| v.as_slice().to_vec()).unwrap_or_default()
}

/// A compiled `file` check.
pub(crate) struct FileCheck {
    path: String,
    exists: bool,
    contains: Vec<String>,
    not_contains: Vec<String>,
    matches: Option<Regex>,
}

impl FileCheck {
    /// Compiles the spec: a relative path inside the workspace, a valid regex.
    pub(crate) fn compile(spec: &FileCheckSpec) -> Result<Self, FieldError> {
        relative(&spec.path).map_err(|m| FieldError::new("path", m))?;
        let matches = spec
            .matches
            .as_deref()
            .map(crate::compiled::regex)
            .transpose()
            .map_err(|e| FieldError::new("matches", e.to_string()))?;
        let contains = strings(spec.contains.as_ref());
        let not_contains = strings(spec.not_contains.as_ref());
        if !spec.exists && (matches.is_some() || !contains.is_empty() || !not_contains.is_empty()) {
            return Err(FieldError::new(
                "exists",
                "a file that must not exist has no contents to check",
            ));
        }
        Ok(FileCheck {
            path: spec.path.clone(),
            exists: spec.exists,
            contains,
            not_contains,
            matches,
        })
    }
}

/// Why `path` cannot name a file inside the workspace, if it cannot.
fn relative(path: &str) -> Result<(), String> {
    let p = std::path::Path::new(path);
    if path.trim().is_empty() {
        return Err("give a path inside the workspace".into());
    }
    if p.is_absolute() || p.components().any(|c| c == std::path::Component::ParentDir) {
        return Err(format!(
            "`{path}` leaves the workspace: give a path relative to it"
        ));
    }
    Ok(())
}

impl CodeCheck for FileCheck {
    /// Display name, e.g. `file src/app.py`.
    fn name(&self) -> String {
        if self.exists {
            format!("file {}", self.path)
        } else {
            format!("file {} absent", self.path)
        }
    }

    fn kind(&self) -> CheckKind {
        CheckKind::File
    }

    fn evaluate(&self, subject: &Subject<'_>) -> Finding {
        let Some(state) = subject.answer.workspace.as_deref() else {
            return no_workspace(CheckKind::File);
        };
        let path = &self.path;
        let text = state.file(path).and_then(|f| f.text.as_deref());
        let evidence = json!({ "path": path, "exists": text.is_some() });
        let Some(text) = text else {
            return if self.exists {
                Finding::fail(format!("`{path}` does not exist"), evidence)
            } else {
                Finding::pass(format!("`{path}` does not exist"), evidence)
            };
        };
        if !self.exists {
            return Finding::fail(format!("`{path}` exists"), evidence);
        }
        let mut problems: Vec<String> = self
            .contains
            .iter()
            .filter(|s| !text.contains(s.as_str()))
            .map(|s| format!("lacks {s:?}"))
            .collect();
        problems.extend(
            self.not_contains
                .iter()
                .filter(|s| text.contains(s.as_str()))
                .map(|s| format!("contains {s:?}")),
        );
        if let Some(re) = &self.matches
            && !re.is_match(text)
        {
            problems.push(format!("does not match /{}/", re.as_str()));
        }
        if problems.is_empty() {
            Finding::pass(format!("`{path}` is as expected"), evidence)
        } else {
            Finding::fail(format!("`{path}` {}", problems.join("; ")), evidence)
        }
    }
}

/// A compiled `diff` check.
pub(crate) struct DiffCheck {
    changed: Vec<GlobMatcher>,
    only: Vec<GlobMatcher>,
    unchanged: Vec<GlobMatcher>,
    max_files: Option<u64>,
    max_lines: Option<u64>,
}

fn globs(field: &str, list: &[String]) -> Result<Vec<GlobMatcher>, FieldError> {
    list.iter()
        .enumerate()
        .map(|(i, g)| {
            Glob::new(g)
                .map(|g| g.compile_matcher())
                .map_err(|e| FieldError::new(format!("{field}[{i}]"), e.to_string()))
        })
        .collect()
}

impl DiffCheck {
    /// Compiles the globs; at least one condition must be given.
    pub(crate) fn compile(spec: &DiffCheckSpec) -> Result<Self, FieldError> {
        let check = DiffCheck {
            changed: globs("changed", &spec.changed)?,
            only: globs("only", &spec.only)?,
            unchanged: globs("unchanged", &spec.unchanged)?,
            max_files: spec.max_files,
            max_lines: spec.max_lines,
        };
        if spec == &DiffCheckSpec::default() {
            return Err(FieldError::new(
                "",
                "give `changed`, `only`, `unchanged`, `max_files` or `max_lines`",
            ));
        }
        Ok(check)
    }
}

impl CodeCheck for DiffCheck {
    fn name(&self) -> String {
        let mut parts = Vec::new();
        let list = |g: &[GlobMatcher]| {
            g.iter()
                .map(|g| g.glob().glob())
                .collect::<Vec<_>>()
                .join(", ")
        };
        if !self.changed.is_empty() {
            parts.push(format!("changes {}", list(&self.changed)));
        }
        if !self.only.is_empty() {
            parts.push(format!("only {}", list(&self.only)));
        }
        if !self.unchanged.is_empty() {
            parts.push(format!("not {}", list(&self.unchanged)));
        }
        if let Some(n) = self.max_files {
            parts.push(format!("<= {n} files"));
        }
        if let Some(n) = self.max_lines {
            parts.push(format!("<= {n} lines"));
        }
        format!("diff {}", parts.join(", "))
    }

    fn kind(&self) -> CheckKind {
        CheckKind::Diff
    }

    fn evaluate(&self, subject: &Subject<'_>) -> Finding {
        let Some(state) = subject.answer.workspace.as_deref() else {
            return no_workspace(CheckKind::Diff);
        };
        let paths: Vec<&str> = state.changes.iter().map(|c| c.path.as_str()).collect();
        let lines = state.lines_changed();
        let evidence = json!({ "changed": paths, "files": paths.len(), "lines": lines });
        let mut problems = Vec::new();
        for glob in &self.changed {
            if !paths.iter().any(|p| glob.is_match(p)) {
                problems.push(format!("nothing matching `{}` changed", glob.glob()));
            }
        }
        let outside: Vec<&str> = paths
            .iter()
            .copied()
            .filter(|p| !self.only.is_empty() && !self.only.iter().any(|g| g.is_match(p)))
            .collect();
        if !outside.is_empty() {
            problems.push(format!(
                "changed outside the allowed paths: {}",
                outside.join(", ")
            ));
        }
        let touched: Vec<&str> = paths
            .iter()
            .copied()
            .filter(|p| self.unchanged.iter().any(|g| g.is_match(p)))
            .collect();
        if !touched.is_empty() {
            problems.push(format!("changed protected paths: {}", touched.join(", ")));
        }
        if let Some(max) = self.max_files.filter(|m| paths.len() as u64 > *m) {
            problems.push(format!("{} files changed, over {max}", paths.len()));
        }
        if let Some(max) = self.max_lines.filter(|m| lines > *m) {
            problems.push(format!("{lines} lines changed, over {max}"));
        }
        let summary = format!("{} files, {lines} lines changed", paths.len());
        if problems.is_empty() {
            Finding::pass(summary, evidence)
        } else {
            Finding::fail(format!("{summary}: {}", problems.join("; ")), evidence)
        }
    }
}

/// A compiled `command` check.
pub(crate) struct CommandCheck {
    name: String,
    exit_code: i32,
    contains: Vec<String>,
}

impl CommandCheck {
    /// Compiles the spec: it must run a command or name one.
    pub(crate) fn compile(spec: &CommandCheckSpec) -> Result<Self, FieldError> {
        if spec.run.as_ref().is_some_and(|r| r.is_empty()) {
            return Err(FieldError::new("run", "give a command to run"));
        }
        let name = spec.label();
        if name.trim().is_empty() {
            return Err(FieldError::new(
                "run",
                "give `run` (a command), or `name` (one of the target's `after` commands)",
            ));
        }
        Ok(CommandCheck {
            name,
            exit_code: spec.exit_code.unwrap_or(0),
            contains: strings(spec.contains.as_ref()),
        })
    }
}

impl CodeCheck for CommandCheck {
    /// Display name, e.g. `command python3 -m pytest`.
    fn name(&self) -> String {
        format!("command {}", self.name)
    }

    fn kind(&self) -> CheckKind {
        CheckKind::Command
    }

    fn evaluate(&self, subject: &Subject<'_>) -> Finding {
        let Some(state) = subject.answer.workspace.as_deref() else {
            return no_workspace(CheckKind::Command);
        };
        let name = &self.name;
        let Some(result) = state.command(name) else {
            let known: Vec<&str> = state.commands.iter().map(|c| c.name.as_str()).collect();
            return Finding {
                score: None,
                status: Status::Error,
                reason: format!(
                    "no command `{name}` ran in the workspace (ran: {})",
                    if known.is_empty() {
                        "none".to_owned()
                    } else {
                        known.join(", ")
                    }
                ),
                evidence: json!({ "command": name }),
            };
        };
        let evidence = json!({
            "command": name,
            "exit_code": result.exit_code,
            "expected_exit_code": self.exit_code,
            "duration_ms": result.duration_ms,
        });
        let Some(code) = result.exit_code else {
            let why = result.problem.as_deref().unwrap_or("it did not exit");
            let reason = format!("`{name}`: {why}");
            return if result.timed_out {
                Finding::fail(reason, evidence)
            } else {
                Finding {
                    score: None,
                    status: Status::Error,
                    reason,
                    evidence,
                }
            };
        };
        let mut problems = Vec::new();
        if code != self.exit_code {
            problems.push(format!("exited {code}, expected {}", self.exit_code));
        }
        problems.extend(
            self.contains
                .iter()
                .filter(|s| !result.output.contains(s.as_str()))
                .map(|s| format!("output lacks {s:?}")),
        );
        if problems.is_empty() {
            Finding::pass(format!("`{name}` exited {code}"), evidence)
        } else {
            Finding::fail(format!("`{name}` {}", problems.join("; ")), evidence)
        }
    }
}
