//! Programs run in a workspace: git for gavel's own bookkeeping, and the
//! suite's setup and post-run commands, each in its own process group under a
//! timeout, with a cleaned environment and the end of its output kept.

use std::io::Read;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use gavel_core::workspace::{CommandResult, WorkspaceCommand, WorkspaceState};

use crate::process::{self, Group};

/// A process's whole environment (it starts from nothing).
pub(crate) type Env = Vec<(String, String)>;

/// The environment for git run by gavel: `PATH`, `HOME` and a fixed identity,
/// with system and global configuration ignored so hooks, signing and the
/// user's settings play no part.
pub(crate) fn git_env() -> Env {
    let mut env = path_only();
    env.extend(
        [
            ("GIT_CONFIG_NOSYSTEM", "1"),
            ("GIT_CONFIG_GLOBAL", "/dev/null"),
            ("GIT_AUTHOR_NAME", "gavel"),
            ("GIT_AUTHOR_EMAIL", "gavel@localhost"),
            ("GIT_COMMITTER_NAME", "gavel"),
            ("GIT_COMMITTER_EMAIL", "gavel@localhost"),
            ("GIT_TERMINAL_PROMPT", "0"),
        ]
        .map(|(k, v)| (k.to_owned(), v.to_owned())),
    );
    env
}

/// `PATH` alone, as gavel has it.
pub(crate) fn path_only() -> Env {
    std::env::var("PATH")
        .map(|p| vec![("PATH".to_owned(), p)])
        .unwrap_or_default()
}

/// A command for `argv` run in `dir` with `env` as its whole environment, in
/// its own process group, killed when dropped.
pub(crate) fn clean_command(argv: &[String], dir: &Path, env: &Env) -> tokio::process::Command {
    let mut cmd = process::command(argv, None, &[]);
    cmd.env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(dir);
    cmd
}

/// Runs git with `args` in `dir`; its stdout, or why it failed.
pub(crate) async fn git(env: &Env, dir: &Path, args: &[&str]) -> Result<String, String> {
    let argv: Vec<String> = std::iter::once("git")
        .chain(args.iter().copied())
        .map(str::to_owned)
        .collect();
    let mut cmd = clean_command(&argv, dir, env);
    cmd.stdin(Stdio::null());
    let out = tokio::time::timeout(Duration::from_secs(120), cmd.output())
        .await
        .map_err(|_| format!("`git {}` took over 120 s", args.join(" ")))?
        .map_err(|e| format!("running git: {e} (is git installed?)"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "`git {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Runs `command` in `dir` with `env`, stopping it at its timeout (default
/// `default`); the result keeps the end of its stdout and stderr, interleaved.
pub(crate) async fn run(
    command: &WorkspaceCommand,
    dir: &Path,
    env: &Env,
    default: Duration,
) -> CommandResult {
    let timeout = command
        .timeout_s
        .map(Duration::from_secs_f64)
        .unwrap_or(default);
    let started = Instant::now();
    let mut result = CommandResult {
        name: command.label(),
        command: command.run.display(),
        exit_code: None,
        output: String::new(),
        problem: None,
        timed_out: false,
        duration_ms: 0,
    };
    let argv = command.run.argv();
    let pipe = std::io::pipe().and_then(|(reader, writer)| {
        let err = writer.try_clone()?;
        Ok((reader, writer, err))
    });
    let (reader, out, err) = match pipe {
        Ok(parts) => parts,
        Err(e) => {
            result.problem = Some(format!("could not start: {e}"));
            return result;
        }
    };
    let mut cmd = clean_command(&argv, dir, env);
    cmd.stdin(Stdio::null()).stdout(out).stderr(err);
    let spawned = cmd.spawn();
    // The parent's ends of the pipe go with the command, so the reader sees
    // the end once the process group has gone.
    drop(cmd);
    let mut child = match spawned {
        Ok(child) => child,
        Err(e) => {
            result.problem = Some(format!("could not start `{}`: {e}", argv[0]));
            return result;
        }
    };
    let group = Group::of(&child);
    let reading = tokio::task::spawn_blocking(move || tail(reader, WorkspaceState::OUTPUT_LIMIT));
    match tokio::time::timeout(timeout, child.wait()).await {
        Ok(Ok(status)) => {
            result.exit_code = status.code();
            if status.code().is_none() {
                result.problem = Some(format!("stopped by a signal ({status})"));
            }
        }
        Ok(Err(e)) => result.problem = Some(format!("waiting for it: {e}")),
        Err(_) => {
            result.timed_out = true;
            result.problem = Some(format!("timed out after {} s", timeout.as_secs_f64()));
        }
    }
    // Whatever the command left running in its group stops with it.
    group.stop(&mut child, Duration::from_millis(200)).await;
    result.output = reading.await.unwrap_or_default();
    result.duration_ms = started.elapsed().as_millis() as u64;
    result
}

/// Reads `reader` to its end, keeping the last `limit` bytes as text (secrets
/// redacted before the cut; a cut is marked).
pub(crate) fn tail(mut reader: impl Read, limit: usize) -> String {
    let mut kept: Vec<u8> = Vec::new();
    let mut dropped = 0usize;
    let mut buf = [0u8; 8192];
    loop {
        match reader.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => kept.extend_from_slice(&buf[..n]),
        }
        // Twice the limit is kept so that a secret across the cut is whole when
        // redacted.
        if kept.len() > 2 * limit {
            let cut = kept.len() - limit;
            dropped += cut;
            kept.drain(..cut);
        }
    }
    let text = gavel_core::secrets::redact(&String::from_utf8_lossy(&kept)).into_owned();
    let cut = text.len().saturating_sub(limit);
    let mut start = cut;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    if dropped + cut == 0 {
        text
    } else {
        format!("[… {} bytes before]\n{}", dropped + start, &text[start..])
    }
}
