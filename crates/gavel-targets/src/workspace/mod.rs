//! The `workspace` target: a coding agent's CLI run non-interactively in a
//! fresh copy of a repository, one per session. Each message is one agent run;
//! its machine-readable output ([`crate::agent_stream`]) becomes the turn, and
//! what it left behind (changes, files, post-run commands) the turn's
//! [`WorkspaceState`], which `file`, `diff` and `command` checks grade.

mod agent;
mod exec;
mod fixture;
mod state;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use gavel_core::workspace::{
    AgentFormat, CaseWorkspace, Keep, Program, WorkspaceCommand, WorkspaceRequest, WorkspaceState,
    WorkspaceTarget,
};
use gavel_core::{TargetFailure, Turn};
use serde_json::json;

use crate::agent_stream::Format;
use crate::error::{self, TargetError};
use crate::{Session, Target, TurnRequest, permanent};
use exec::Env;
use fixture::Workspace;

/// How long a setup or post-run command may take unless it says.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(300);

/// A workspace target, its settings expanded.
#[derive(Debug)]
pub(crate) struct WorkspaceAdapter {
    spec: Arc<Spec>,
}

#[derive(Debug)]
struct Spec {
    fixture: PathBuf,
    commit: Option<String>,
    setup: Vec<Program>,
    agent: Vec<String>,
    format: Format,
    /// The agent's and commands' whole environment.
    env: Env,
    timeout: Duration,
    max_output: u64,
    after: Vec<WorkspaceCommand>,
    keep: Keep,
}

impl WorkspaceAdapter {
    /// Expands the settings and checks the fixture is there; sweeps away the
    /// workspaces of runs that were killed.
    pub(crate) fn build(name: &str, spec: &WorkspaceTarget) -> Result<Self, TargetError> {
        if spec.agent.first().is_none_or(|p| p.trim().is_empty()) {
            return Err(TargetError::config(name, "agent", "must name a program"));
        }
        let agent = spec
            .agent
            .iter()
            .enumerate()
            .map(|(i, arg)| error::expand(name, || format!("agent[{i}]"), arg))
            .collect::<Result<Vec<_>, _>>()?;
        let mut env = exec::path_only();
        for (key, value) in &spec.env {
            let value = error::expand_env_value(name, || format!("env.{key}"), key, value)?;
            env.retain(|(k, _)| k != key);
            env.push((key.clone(), value));
        }
        let fixture = PathBuf::from(&spec.fixture);
        if !fixture.is_dir() {
            return Err(TargetError::config(
                name,
                "fixture",
                format!("{} is not a directory", fixture.display()),
            ));
        }
        let max_output = spec.max_output_bytes.unwrap_or(16 << 20);
        if max_output == 0 {
            return Err(TargetError::config(
                name,
                "max_output_bytes",
                "must be positive",
            ));
        }
        fixture::sweep();
        Ok(WorkspaceAdapter {
            spec: Arc::new(Spec {
                fixture,
                commit: spec.commit.clone(),
                setup: spec.setup.clone(),
                agent,
                format: match spec.format {
                    AgentFormat::ClaudeCode => Format::ClaudeCode,
                    AgentFormat::Codex => Format::Codex,
                    AgentFormat::Jsonl => Format::Jsonl,
                },
                env,
                timeout: error::timeout(name, "timeout_s", spec.timeout_s, 600.0)?,
                max_output,
                after: spec.after.clone(),
                keep: spec.keep,
            }),
        })
    }
}

#[async_trait::async_trait]
impl Target for WorkspaceAdapter {
    /// A session whose workspace is made with its first message, when the
    /// case's own repository and commands are known.
    async fn open(&self, _session_id: &str) -> Result<Box<dyn Session>, TargetFailure> {
        Ok(Box::new(WorkspaceSession {
            spec: Arc::clone(&self.spec),
            workspace: None,
            keep: false,
        }))
    }

    fn kind(&self) -> &'static str {
        "workspace"
    }
}

/// One execution's workspace.
struct WorkspaceSession {
    spec: Arc<Spec>,
    workspace: Option<Workspace>,
    /// Whether the workspace is kept when the session closes.
    keep: bool,
}

#[async_trait::async_trait]
impl Session for WorkspaceSession {
    async fn send(&mut self, req: &TurnRequest<'_>) -> Turn {
        let mut turn = req.turn();
        let none = WorkspaceRequest::default();
        let wanted = req.workspace.unwrap_or(&none);
        if self.workspace.is_none() {
            match prepare(&self.spec, &wanted.case).await {
                Ok(ws) => self.workspace = Some(ws),
                Err(failure) => {
                    turn.failure = Some(failure);
                    return turn;
                }
            }
        }
        let Some(ws) = &self.workspace else {
            turn.failure = Some(permanent("the workspace could not be made"));
            return turn;
        };
        let ran = agent::run(&self.spec, ws.path(), req.message).await;
        turn.latency_ms = ran.latency_ms;
        if let Some(failure) = ran.failure {
            turn.failure = Some(failure);
            self.keep |= self.spec.keep != Keep::Never;
            return turn;
        }
        let mut state = WorkspaceState {
            agent_exit: ran.exit_code,
            ..WorkspaceState::default()
        };
        let commands = self
            .spec
            .after
            .iter()
            .chain(&wanted.case.after)
            .chain(&wanted.commands);
        for command in commands {
            let result = exec::run(command, ws.path(), &self.spec.env, COMMAND_TIMEOUT).await;
            state.commands.push(result);
        }
        if let Err(e) = state::changes(&exec::git_env(), ws.path(), &ws.base, &mut state).await {
            turn.failure = Some(permanent(format!("reading the agent's changes: {e}")));
            return turn;
        }
        state.files = wanted
            .files
            .iter()
            .map(|path| state::snapshot(ws.path(), path))
            .collect();
        let failed =
            ran.exit_code != Some(0) || state.commands.iter().any(|c| c.exit_code != Some(0));
        self.keep |= match self.spec.keep {
            Keep::Never => false,
            Keep::Failed => failed,
            Keep::Always => true,
        };
        if self.keep {
            state.kept = Some(ws.kept_path().display().to_string());
        }
        let run = ran.run;
        turn.output = run.output;
        turn.tool_calls = run.tool_calls;
        turn.usage = run.usage;
        turn.response = Some(json!({
            "messages": run.messages,
            "session": run.session,
            "error": run.error,
            "exit_code": ran.exit_code,
            "events": run.events,
            "unreadable": run.unreadable,
            "dropped": run.dropped,
        }));
        turn.workspace = Some(Box::new(state));
        turn
    }

    async fn close(self: Box<Self>) {
        if let Some(ws) = self.workspace {
            if self.keep {
                if let Some(kept) = ws.keep() {
                    tracing::info!(path = %kept.display(), "workspace kept");
                }
            } else {
                drop(ws);
            }
        }
    }
}

/// Makes the execution's workspace: the fixture (the case's, else the
/// target's) copied at its commit, then the setup commands, whose result is
/// the baseline the agent's changes are measured against.
async fn prepare(spec: &Spec, case: &CaseWorkspace) -> Result<Workspace, TargetFailure> {
    let fixture = case
        .fixture
        .as_deref()
        .map(Path::new)
        .unwrap_or(&spec.fixture);
    let commit = case.commit.as_deref().or(spec.commit.as_deref());
    let git_env = exec::git_env();
    let mut ws = fixture::create(fixture, commit, &git_env)
        .await
        .map_err(|e| permanent(format!("making the workspace: {e}")))?;
    let setup: Vec<&Program> = spec.setup.iter().chain(&case.setup).collect();
    for program in &setup {
        let command = WorkspaceCommand {
            name: None,
            run: (*program).clone(),
            timeout_s: None,
        };
        let result = exec::run(&command, ws.path(), &spec.env, COMMAND_TIMEOUT).await;
        if result.exit_code != Some(0) {
            let why = match (result.exit_code, &result.problem) {
                (Some(code), _) => format!("exited {code}"),
                (None, Some(problem)) => problem.clone(),
                (None, None) => "did not finish".to_owned(),
            };
            return Err(permanent(format!(
                "setup command `{}` {why}:\n{}",
                result.command, result.output
            )));
        }
    }
    if !setup.is_empty() {
        ws.base = fixture::commit_all(&git_env, ws.path(), "gavel: after setup")
            .await
            .map_err(|e| permanent(format!("recording the setup's result: {e}")))?;
    }
    Ok(ws)
}
