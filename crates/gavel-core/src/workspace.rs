//! Coding agents in a workspace: the `workspace` target's settings, what a case
//! adds to them (its own repository, commit and commands), and what the agent
//! left behind ([`WorkspaceState`]), which the workspace checks grade.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{Case, CheckSpec};

/// A coding agent's CLI run non-interactively in a fresh copy of a repository,
/// one copy per execution (docs/coding-agents.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkspaceTarget {
    /// The repository each execution starts from: a directory, or a git
    /// repository (relative to the suite file's folder). It is copied, never
    /// changed.
    pub fixture: String,
    /// The commit to check out, when the fixture is a git repository (default:
    /// its HEAD).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// Commands run in the fresh copy before the agent; each must exit 0.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub setup: Vec<Program>,
    /// The agent's program and arguments (expanded). `{prompt}` in an argument is
    /// replaced by the message; without it, the message is the agent's stdin.
    pub agent: Vec<String>,
    /// The machine-readable output the agent writes (default `jsonl`).
    #[serde(default)]
    pub format: AgentFormat,
    /// The agent's whole environment besides `PATH` (values expanded): nothing
    /// else of gavel's environment reaches it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Seconds one message may take the agent (default 600).
    #[serde(
        default,
        deserialize_with = "crate::bounds::de::timeout_s",
        skip_serializing_if = "Option::is_none"
    )]
    pub timeout_s: Option<f64>,
    /// Bytes of the agent's output read (default 16 MiB); past it the agent is
    /// stopped and the turn is an error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_bytes: Option<u64>,
    /// Commands run in the workspace after each message (a test suite); their
    /// exit codes and output are recorded for `command` checks and reports.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<WorkspaceCommand>,
    /// Which workspaces outlive their execution (default `never`).
    #[serde(default)]
    pub keep: Keep,
}

/// The agent CLI's machine-readable output.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum AgentFormat {
    /// Claude Code's `--output-format stream-json`.
    ClaudeCode,
    /// Codex CLI's `exec --json` events.
    Codex,
    /// gavel's generic JSON lines, for any other agent.
    #[default]
    Jsonl,
}

/// Which workspaces are kept for inspection after their execution.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Keep {
    /// None: each is removed when its execution ends.
    #[default]
    Never,
    /// Those where the agent or a setup or post-run command failed.
    Failed,
    /// All of them.
    Always,
}

/// A program: arguments, or one line run by `sh -c`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Program {
    /// A shell line.
    Shell(String),
    /// Program and arguments.
    Args(Vec<String>),
}

impl Program {
    /// The program and its arguments.
    pub fn argv(&self) -> Vec<String> {
        match self {
            Program::Shell(line) => vec!["sh".into(), "-c".into(), line.clone()],
            Program::Args(args) => args.clone(),
        }
    }

    /// How it reads, for reports and names.
    pub fn display(&self) -> String {
        match self {
            Program::Shell(line) => line.clone(),
            Program::Args(args) => args.join(" "),
        }
    }

    /// Whether there is nothing to run.
    pub fn is_empty(&self) -> bool {
        match self {
            Program::Shell(line) => line.trim().is_empty(),
            Program::Args(args) => args.first().is_none_or(|p| p.trim().is_empty()),
        }
    }
}

/// A named command run in the workspace after the agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkspaceCommand {
    /// The name checks and reports use (default: the command itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// What to run.
    pub run: Program,
    /// Seconds it may take (default 300).
    #[serde(
        default,
        deserialize_with = "crate::bounds::de::timeout_s",
        skip_serializing_if = "Option::is_none"
    )]
    pub timeout_s: Option<f64>,
}

impl WorkspaceCommand {
    /// Its name: the given one, else the command as written.
    pub fn label(&self) -> String {
        self.name.clone().unwrap_or_else(|| self.run.display())
    }
}

/// What a case adds to a `workspace` target: its own repository and commit (a
/// task set's cases each name theirs), setup and post-run commands.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CaseWorkspace {
    /// The repository for this case instead of the target's (relative to the
    /// suite file's folder).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixture: Option<String>,
    /// The commit to check out instead of the target's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// Commands run after the target's `setup`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub setup: Vec<Program>,
    /// Commands run after the target's `after` commands.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<WorkspaceCommand>,
}

/// What a workspace target must do for one case: the case's own settings, the
/// files its checks read and the commands its `command` checks run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WorkspaceRequest {
    /// The case's `workspace` block.
    pub case: CaseWorkspace,
    /// Paths (relative to the workspace) whose contents the checks read.
    pub files: Vec<String>,
    /// Commands the case's `command` checks run, after the `after` commands.
    pub commands: Vec<WorkspaceCommand>,
}

impl WorkspaceRequest {
    /// What `case` asks of a workspace, from its `workspace` block and the
    /// `file` and `command` checks of the case and its rounds.
    pub fn of(case: &Case) -> Self {
        let mut request = WorkspaceRequest {
            case: case.workspace.clone().unwrap_or_default(),
            ..Self::default()
        };
        let checks = case
            .checks
            .iter()
            .chain(case.rounds.iter().flat_map(|r| r.checks.iter()));
        for check in checks {
            match check {
                CheckSpec::File(file) if !request.files.contains(&file.path) => {
                    request.files.push(file.path.clone());
                }
                CheckSpec::Command(command) => {
                    if let Some(run) = &command.run {
                        let wanted = WorkspaceCommand {
                            name: Some(command.label()),
                            run: run.clone(),
                            timeout_s: command.timeout_s,
                        };
                        if !request.commands.contains(&wanted) {
                            request.commands.push(wanted);
                        }
                    }
                }
                _ => {}
            }
        }
        request
    }
}

/// A `file` check: a file the agent must leave (or remove), with what it holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileCheckSpec {
    /// The path, relative to the workspace.
    pub path: String,
    /// Whether the file must exist (default true).
    #[serde(default = "yes", skip_serializing_if = "Clone::clone")]
    pub exists: bool,
    /// Strings the file must contain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contains: Option<crate::OneOrMany>,
    /// Strings the file must not contain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_contains: Option<crate::OneOrMany>,
    /// A regular expression the file's text must match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matches: Option<String>,
}

fn yes() -> bool {
    true
}

/// A `diff` check: what the agent changed, against the fixture.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiffCheckSpec {
    /// Globs each of which some changed path must match (the files that had to
    /// change).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changed: Vec<String>,
    /// Globs every changed path must match (nothing else may be touched).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub only: Vec<String>,
    /// Globs no changed path may match.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unchanged: Vec<String>,
    /// At most this many files changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_files: Option<u64>,
    /// At most this many lines added and removed in all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_lines: Option<u64>,
}

/// A `command` check: a command run in the workspace after the agent, by its
/// exit code and output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CommandCheckSpec {
    /// What to run; without it, `name` names one of the target's or case's
    /// `after` commands.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<Program>,
    /// The command's name (default: the command as written).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The exit code it must end with (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Strings its output (stdout and stderr) must contain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contains: Option<crate::OneOrMany>,
    /// Seconds it may take (default 300).
    #[serde(
        default,
        deserialize_with = "crate::bounds::de::timeout_s",
        skip_serializing_if = "Option::is_none"
    )]
    pub timeout_s: Option<f64>,
}

impl CommandCheckSpec {
    /// The name its result is recorded under.
    pub fn label(&self) -> String {
        match (&self.name, &self.run) {
            (Some(name), _) => name.clone(),
            (None, Some(run)) => run.display(),
            (None, None) => String::new(),
        }
    }
}

/// What the agent left behind in its workspace after a message: the changes
/// against the fixture, the files the checks read and the post-run commands'
/// results.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WorkspaceState {
    /// Each changed path, in path order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<FileChange>,
    /// The unified diff against the fixture, cut at [`WorkspaceState::DIFF_LIMIT`].
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub diff: String,
    /// The whole diff's size in bytes (more than `diff` holds when cut).
    #[serde(default)]
    pub diff_bytes: u64,
    /// The files the checks read, as the agent left them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<FileSnapshot>,
    /// The post-run commands, in the order they ran.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<CommandResult>,
    /// The agent's exit code (`None`: stopped by a signal or a limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_exit: Option<i32>,
    /// Where the workspace was kept for inspection, when it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept: Option<String>,
}

impl WorkspaceState {
    /// Bytes of diff kept in a transcript.
    pub const DIFF_LIMIT: usize = 256 * 1024;
    /// Bytes of a file's text kept in a transcript.
    pub const FILE_LIMIT: usize = 256 * 1024;
    /// Bytes of a command's output kept (its end).
    pub const OUTPUT_LIMIT: usize = 64 * 1024;

    /// The result of the post-run command named `name`.
    pub fn command(&self, name: &str) -> Option<&CommandResult> {
        self.commands.iter().find(|c| c.name == name)
    }

    /// The snapshot of `path`.
    pub fn file(&self, path: &str) -> Option<&FileSnapshot> {
        self.files.iter().find(|f| f.path == path)
    }

    /// Lines added and removed in all.
    pub fn lines_changed(&self) -> u64 {
        self.changes.iter().map(|c| c.added + c.removed).sum()
    }
}

/// One changed path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileChange {
    /// The path, relative to the workspace.
    pub path: String,
    /// How it changed.
    pub kind: ChangeKind,
    /// Lines added (0 for binary files).
    pub added: u64,
    /// Lines removed (0 for binary files).
    pub removed: u64,
}

/// How a path changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChangeKind {
    /// New.
    Added,
    /// Edited.
    Modified,
    /// Removed.
    Deleted,
}

/// A file as the agent left it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileSnapshot {
    /// The path, relative to the workspace.
    pub path: String,
    /// Its text (`None`: it does not exist, or is not a readable file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Whether `text` was cut at [`WorkspaceState::FILE_LIMIT`] or is lossy
    /// (not UTF-8).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
}

/// One post-run command's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandResult {
    /// Its name.
    pub name: String,
    /// The command as written.
    pub command: String,
    /// Its exit code (`None`: it did not exit by itself: timed out, killed or
    /// could not start).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The end of its stdout and stderr, interleaved as written.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub output: String,
    /// Why it has no exit code, when it has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// Whether it was stopped at its timeout (the work's fault, unlike a
    /// command that could not start).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub timed_out: bool,
    /// Wall time.
    pub duration_ms: u64,
}
