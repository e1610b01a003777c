//! The `command` target: one process per session speaking JSON lines: one request
//! object per line on its stdin, one answer object per line on its stdout.

use std::sync::Arc;
use std::time::{Duration, Instant};

use gavel_core::target::{CommandTarget, ResponseMap};
use gavel_core::{TargetFailure, Turn};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio::task::JoinHandle;

use backon::BackoffBuilder;

use crate::error::{self, TargetError};
use crate::process::{self, Group, Tail};
use crate::retry::{self, RetryPolicy};
use crate::{Session, Target, TurnRequest, permanent, response, transient};

/// Stderr lines kept for error messages.
const STDERR_LINES: usize = 20;

/// How long `close` lets the process exit by itself after its stdin closes.
const CLOSE_GRACE: Duration = Duration::from_millis(500);

/// A command target: the expanded program, environment and answer pointers.
#[derive(Debug)]
pub(crate) struct CommandAdapter {
    spec: Arc<Spec>,
}

#[derive(Debug)]
struct Spec {
    name: String,
    argv: Vec<String>,
    cwd: Option<String>,
    env: Vec<(String, String)>,
    response: ResponseMap,
    timeout: Duration,
    /// Tries of a message that timed out (`retry:`; none: one try).
    retry: Option<RetryPolicy>,
}

impl CommandAdapter {
    pub(crate) fn build(name: &str, spec: &CommandTarget) -> Result<Self, TargetError> {
        if spec.command.is_empty() {
            return Err(TargetError::config(name, "command", "must name a program"));
        }
        let argv = spec
            .command
            .iter()
            .enumerate()
            .map(|(i, arg)| error::expand(name, || format!("command[{i}]"), arg))
            .collect::<Result<Vec<_>, _>>()?;
        let cwd = spec
            .cwd
            .as_deref()
            .map(|c| error::expand(name, || "cwd".into(), c))
            .transpose()?;
        let env = spec
            .env
            .iter()
            .map(|(k, v)| {
                Ok((
                    k.clone(),
                    error::expand_env_value(name, || format!("env.{k}"), k, v)?,
                ))
            })
            .collect::<Result<Vec<_>, TargetError>>()?;
        response::validate(name, &spec.response)?;
        let timeout = error::timeout(name, "timeout_s", spec.timeout_s, 60.0)?;
        let spec = Spec {
            name: name.to_owned(),
            argv,
            cwd,
            env,
            response: spec.response.clone(),
            timeout,
            retry: spec.retry.as_ref().map(RetryPolicy::from_spec),
        };
        Ok(CommandAdapter {
            spec: Arc::new(spec),
        })
    }
}

#[async_trait::async_trait]
impl Target for CommandAdapter {
    async fn open(&self, session_id: &str) -> Result<Box<dyn Session>, TargetFailure> {
        Ok(Box::new(spawn(&self.spec, session_id)?))
    }

    fn kind(&self) -> &'static str {
        "command"
    }
}

/// Starts the target's process for a session.
fn spawn(spec: &Arc<Spec>, session_id: &str) -> Result<CommandSession, TargetFailure> {
    let mut cmd = process::command(&spec.argv, spec.cwd.as_deref(), &spec.env);
    cmd.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| {
        permanent(format!(
            "target `{}`: cannot start `{}`: {e}",
            spec.name, spec.argv[0]
        ))
    })?;
    let group = Group::of(&child);
    let (Some(stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err(permanent(format!(
            "target `{}`: the process has no stdio pipes",
            spec.name
        )));
    };
    let tail = Tail::new(STDERR_LINES);
    let name = spec.name.clone();
    let session = session_id.to_owned();
    let drain = process::drain(stderr, Arc::clone(&tail), move |line| {
        tracing::debug!(target = %name, session = %session, "stderr: {line}");
    });
    tracing::debug!(target = %spec.name, session = %session_id, pid = ?child.id(), "command session opened");
    Ok(CommandSession {
        spec: Arc::clone(spec),
        session_id: session_id.to_owned(),
        child,
        group: Some(group),
        stdin: Some(stdin),
        stdout: BufReader::new(stdout),
        stderr: tail,
        drain: Some(drain),
        broken: None,
    })
}

/// One process and its pipes.
struct CommandSession {
    spec: Arc<Spec>,
    session_id: String,
    child: Child,
    /// Kills the process group on drop.
    group: Option<Group>,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    stderr: Arc<Tail>,
    drain: Option<JoinHandle<()>>,
    /// Set once the process is gone or out of step: every later message fails so.
    broken: Option<TargetFailure>,
}

/// Why no answer line came.
enum NoAnswer {
    /// Writing failed or stdout reached EOF: the process is gone.
    Gone,
    /// Reading stdout failed.
    Read(std::io::Error),
}

impl CommandSession {
    /// Writes one request line and reads the next non-blank line.
    async fn exchange(&mut self, line: &[u8]) -> Result<String, NoAnswer> {
        let stdin = self.stdin.as_mut().ok_or(NoAnswer::Gone)?;
        stdin.write_all(line).await.map_err(|_| NoAnswer::Gone)?;
        stdin.flush().await.map_err(|_| NoAnswer::Gone)?;
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match self.stdout.read_until(b'\n', &mut buf).await {
                Ok(0) => return Err(NoAnswer::Gone),
                Ok(_) if buf.iter().all(u8::is_ascii_whitespace) => continue,
                Ok(_) => return Ok(String::from_utf8_lossy(&buf).into_owned()),
                Err(e) => return Err(NoAnswer::Read(e)),
            }
        }
    }

    /// Describes a process that stopped answering: its exit status, if it exited,
    /// and its last stderr lines.
    async fn gone(&mut self) -> TargetFailure {
        let status = tokio::time::timeout(Duration::from_secs(1), self.child.wait()).await;
        if let Some(drain) = self.drain.take() {
            // Let the last stderr lines arrive; a grandchild may hold the pipe open.
            let _ = tokio::time::timeout(Duration::from_millis(200), drain).await;
        }
        let what = match status {
            Ok(Ok(status)) => format!("the process exited ({status})"),
            Ok(Err(e)) => format!("the process is gone ({e})"),
            Err(_) => "the process closed its stdout".to_owned(),
        };
        permanent(format!(
            "target `{}`: {what}; {}",
            self.spec.name,
            self.stderr.render("stderr", STDERR_LINES)
        ))
    }
}

#[async_trait::async_trait]
impl Session for CommandSession {
    async fn send(&mut self, req: &TurnRequest<'_>) -> Turn {
        // Secrets (header values, keys) an agent echoes are redacted before the
        // turn leaves the adapter: nothing downstream ever sees them.
        let Some(policy) = self.spec.retry else {
            return crate::redacted(self.send_once(req).await);
        };
        let mut waits = policy.backoff().build();
        let mut tries = 0;
        loop {
            tries += 1;
            let mut turn = self.send_once(req).await;
            let transient = turn.failure.as_ref().is_some_and(|f| f.transient);
            let again = match transient.then(|| waits.next()).flatten() {
                Some(wait) => {
                    tokio::time::sleep(wait).await;
                    self.restart().await
                }
                None => false,
            };
            if !again {
                turn.attempts = Some(retry::counted(tries, 0));
                return crate::redacted(turn);
            }
        }
    }

    async fn close(self: Box<Self>) {
        self.shut().await;
    }
}

impl CommandSession {
    /// Replaces the process (out of step after a timeout) with a fresh one, which
    /// the message's history brings up to date; false when it cannot start.
    async fn restart(&mut self) -> bool {
        let Ok(fresh) = spawn(&self.spec, &self.session_id) else {
            return false;
        };
        std::mem::replace(self, fresh).shut().await;
        true
    }

    /// Closes stdin, lets the process exit, then stops its process group.
    async fn shut(mut self) {
        // EOF on stdin asks a well-behaved process to exit.
        drop(self.stdin.take());
        let _ = tokio::time::timeout(CLOSE_GRACE, self.child.wait()).await;
        if let Some(group) = self.group.take() {
            group.stop(&mut self.child, CLOSE_GRACE).await;
        }
    }

    /// One try at a message.
    async fn send_once(&mut self, req: &TurnRequest<'_>) -> Turn {
        let mut turn = req.turn();
        if let Some(failure) = &self.broken {
            turn.failure = Some(failure.clone());
            return turn;
        }
        let mut line = req.to_json().to_string();
        line.push('\n');
        let started = Instant::now();
        let result = tokio::time::timeout(self.spec.timeout, self.exchange(line.as_bytes())).await;
        turn.latency_ms = crate::elapsed_ms(started);
        let answer = match result {
            Ok(Ok(answer)) => answer,
            Err(_) => {
                let secs = self.spec.timeout.as_secs_f64();
                // A late answer would be read as the next message's: the session
                // cannot go on.
                self.broken = Some(permanent(format!(
                    "target `{}`: an earlier message timed out after {secs}s; the process is out of step",
                    self.spec.name
                )));
                turn.failure = Some(transient(format!("timed out after {secs}s")));
                return turn;
            }
            Ok(Err(NoAnswer::Read(e))) => {
                let failure = permanent(format!(
                    "target `{}`: cannot read stdout: {e}",
                    self.spec.name
                ));
                self.broken = Some(failure.clone());
                turn.failure = Some(failure);
                return turn;
            }
            Ok(Err(NoAnswer::Gone)) => {
                let failure = self.gone().await;
                self.broken = Some(failure.clone());
                turn.failure = Some(failure);
                return turn;
            }
        };
        let json = match serde_json::from_str::<Value>(&answer) {
            Ok(json) => json,
            Err(e) => {
                let excerpt = process::truncate(answer.trim(), 200);
                turn.failure = Some(permanent(format!(
                    "response is not JSON: {e}; line: {excerpt}"
                )));
                return turn;
            }
        };
        if let Err(message) = response::extract(&json, &self.spec.response, &mut turn) {
            turn.failure = Some(permanent(message));
        }
        turn.response = Some(json);
        turn
    }
}
