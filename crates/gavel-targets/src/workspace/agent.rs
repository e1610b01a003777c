//! One agent run: the CLI started in the workspace with the message as its
//! prompt, its stdout read line by line into an [`AgentStream`] under the
//! output cap and the timeout.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use gavel_core::TargetFailure;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWriteExt, BufReader};

use super::Spec;
use crate::agent_stream::{AgentRun, AgentStream};
use crate::process::{self, Group, Tail};
use crate::{permanent, transient};

/// The argument text replaced by the message.
const PROMPT: &str = "{prompt}";

/// Stderr lines kept for error messages.
const STDERR_LINES: usize = 20;

/// What one run of the agent gave.
pub(crate) struct Ran {
    /// What its stream said.
    pub(crate) run: AgentRun,
    /// Its exit code (`None`: killed or failed to start).
    pub(crate) exit_code: Option<i32>,
    /// Set when the run could not be used: it did not start, timed out, wrote
    /// too much, or exited with an error and said nothing.
    pub(crate) failure: Option<TargetFailure>,
    pub(crate) latency_ms: u64,
}

/// Runs the agent in `dir` on `message`.
pub(crate) async fn run(spec: &Spec, dir: &Path, message: &str) -> Ran {
    let started = Instant::now();
    let by_argument = spec.agent.iter().any(|a| a.contains(PROMPT));
    let argv: Vec<String> = spec
        .agent
        .iter()
        .map(|a| a.replace(PROMPT, message))
        .collect();
    let mut ran = Ran {
        run: AgentRun::default(),
        exit_code: None,
        failure: None,
        latency_ms: 0,
    };
    let mut cmd = super::exec::clean_command(&argv, dir, &spec.env);
    cmd.stdin(if by_argument {
        Stdio::null()
    } else {
        Stdio::piped()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => {
            ran.failure = Some(permanent(format!(
                "could not start the agent `{}`: {e}",
                argv[0]
            )));
            return ran;
        }
    };
    let group = Group::of(&child);
    let stderr = Tail::new(STDERR_LINES);
    if let Some(err) = child.stderr.take() {
        process::drain(err, stderr.clone(), |_| {});
    }
    if let Some(mut stdin) = child.stdin.take() {
        let prompt = message.to_owned();
        tokio::spawn(async move {
            // An agent that exits without reading its prompt is not an error here.
            let _ = stdin.write_all(prompt.as_bytes()).await;
        });
    }
    let mut stream = AgentStream::new(spec.format);
    let stdout = child.stdout.take();
    let outcome = tokio::time::timeout(spec.timeout, async {
        let read = match stdout {
            Some(out) => read_lines(out, spec.max_output, &mut stream).await,
            None => Ok(()),
        };
        let status = child.wait().await;
        (read, status)
    })
    .await;
    match outcome {
        Err(_) => {
            ran.failure = Some(transient(format!(
                "the agent did not finish within {} s",
                spec.timeout.as_secs_f64()
            )));
        }
        Ok((Err(over), _)) => {
            ran.failure = Some(permanent(format!(
                "the agent wrote over {over} bytes of output (max_output_bytes)"
            )));
        }
        Ok((Ok(()), Err(e))) => {
            ran.failure = Some(permanent(format!("waiting for the agent: {e}")));
        }
        Ok((Ok(()), Ok(status))) => ran.exit_code = status.code(),
    }
    group.stop(&mut child, Duration::from_millis(200)).await;
    ran.run = stream.finish();
    ran.latency_ms = started.elapsed().as_millis() as u64;
    let silent = ran.run.output.is_empty() && ran.run.tool_calls.is_empty();
    if ran.failure.is_none() && ran.exit_code != Some(0) && silent {
        let code = ran
            .exit_code
            .map_or("was stopped by a signal".to_owned(), |c| {
                format!("exited {c}")
            });
        let why = ran.run.error.clone().unwrap_or_default();
        ran.failure = Some(permanent(format!(
            "the agent {code} without doing anything{}; {}",
            if why.is_empty() {
                String::new()
            } else {
                format!(" ({why})")
            },
            stderr.render("stderr", 10)
        )));
    }
    ran
}

/// Feeds `out`'s lines to `stream`, each line cut at 4 MiB (then unreadable);
/// past `limit` bytes in all, stops with the limit.
async fn read_lines(
    out: impl AsyncRead + Unpin,
    limit: u64,
    stream: &mut AgentStream,
) -> Result<(), u64> {
    const LINE: usize = 4 << 20;
    let mut reader = BufReader::new(out);
    let mut line: Vec<u8> = Vec::new();
    let mut total: u64 = 0;
    loop {
        let chunk = match reader.fill_buf().await {
            Ok([]) | Err(_) => break,
            Ok(chunk) => chunk,
        };
        let (part, ends) = match chunk.iter().position(|b| *b == b'\n') {
            Some(i) => (&chunk[..i], i + 1),
            None => (chunk, chunk.len()),
        };
        let room = LINE.saturating_sub(line.len());
        line.extend_from_slice(&part[..part.len().min(room)]);
        let newline = ends > part.len();
        reader.consume(ends);
        total += ends as u64;
        if total > limit {
            return Err(limit);
        }
        if newline {
            push(stream, &line);
            line.clear();
        }
    }
    if !line.is_empty() {
        push(stream, &line);
    }
    Ok(())
}

/// Feeds one line to `stream`, its secrets redacted first: the stream cuts
/// long texts, and a cut must never leave part of a secret.
fn push(stream: &mut AgentStream, line: &[u8]) {
    stream.push_line(&gavel_core::secrets::redact(&String::from_utf8_lossy(line)));
}
