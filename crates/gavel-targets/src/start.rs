//! Starting a target's process (e.g. an agent's HTTP server) before the run and
//! stopping it after.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use gavel_core::target::StartSpec;
use regex::Regex;
use tokio::process::Child;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::error::{self, TargetError};
use crate::process::{self, Group, Tail};

/// Output lines kept for error messages.
const OUTPUT_LINES: usize = 50;

/// How often readiness is checked and `ready_url` polled.
const POLL: Duration = Duration::from_millis(100);

/// How long `stop` waits after SIGTERM before killing the group.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// A running start process. Its output is drained for as long as it runs.
/// [`Started::stop`] ends it gracefully; dropping it kills its process group.
pub struct Started {
    name: String,
    child: Child,
    group: Option<Group>,
    output: Arc<Tail>,
    drains: Vec<JoinHandle<()>>,
}

impl fmt::Debug for Started {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Started")
            .field("name", &self.name)
            .field("pid", &self.child.id())
            .finish()
    }
}

impl Started {
    /// The process id (also its process group id), while it runs.
    pub fn id(&self) -> Option<u32> {
        self.child.id()
    }

    /// The last lines the process printed on stdout and stderr, oldest first.
    pub fn recent_output(&self) -> Vec<String> {
        self.output.lines()
    }

    /// Stops the process and everything it started: SIGTERM to its process group,
    /// up to 5 s to exit, then SIGKILL.
    pub async fn stop(mut self) {
        if let Some(group) = self.group.take() {
            group.stop(&mut self.child, STOP_GRACE).await;
        }
        for drain in self.drains.drain(..) {
            drain.abort();
        }
        tracing::debug!(target = %self.name, "start process stopped");
    }

    /// Waits a little for the output of an exited process to be read.
    async fn collect_output(&mut self) {
        for drain in self.drains.drain(..) {
            let _ = tokio::time::timeout(Duration::from_millis(300), drain).await;
        }
    }
}

/// Starts the process of target `name` and waits until it is ready: a line of its
/// output matches `ready_line` and/or a GET to `ready_url` answers 2xx (both when
/// both are given; at once when neither is). `${VAR}` is expanded in the command,
/// `cwd`, `env` values and `ready_url`; a relative `cwd` is taken from the current
/// directory, so callers resolve it against the suite's folder first.
///
/// Fails with [`TargetError::Start`], including the last lines of its output, when
/// the process cannot be spawned, exits before it is ready, or is not ready within
/// `timeout_s` (default 120).
pub async fn start(name: &str, spec: &StartSpec) -> Result<Started, TargetError> {
    if spec.command.is_empty() {
        return Err(TargetError::config(
            name,
            "start.command",
            "must name a program",
        ));
    }
    let argv = spec
        .command
        .iter()
        .enumerate()
        .map(|(i, arg)| error::expand(name, || format!("start.command[{i}]"), arg))
        .collect::<Result<Vec<_>, _>>()?;
    let cwd = spec
        .cwd
        .as_deref()
        .map(|c| error::expand(name, || "start.cwd".into(), c))
        .transpose()?;
    let env = spec
        .env
        .iter()
        .map(|(k, v)| {
            Ok((
                k.clone(),
                error::expand_env_value(name, || format!("start.env.{k}"), k, v)?,
            ))
        })
        .collect::<Result<Vec<_>, TargetError>>()?;
    let ready_url = match &spec.ready_url {
        None => None,
        Some(u) => {
            let text = error::expand(name, || "start.ready_url".into(), u)?;
            gavel_core::secrets::register_url(&text);
            Some(ReadyUrl::parse(name, &text)?)
        }
    };
    let ready_line = match &spec.ready_line {
        None => None,
        Some(r) => Some(
            Regex::new(r)
                .map_err(|e| TargetError::config(name, "start.ready_line", e.to_string()))?,
        ),
    };
    let timeout = error::timeout(name, "start.timeout_s", spec.timeout_s, 120.0)?;

    let mut cmd = process::command(&argv, cwd.as_deref(), &env);
    cmd.stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd
        .spawn()
        .map_err(|e| TargetError::start(name, format!("cannot run `{}`: {e}", argv[0])))?;
    let group = Group::of(&child);
    let output = Tail::new(OUTPUT_LINES);
    let (line_seen, mut line_rx) = watch::channel(false);
    let line_seen = Arc::new(line_seen);
    let ready_line = ready_line.map(Arc::new);
    let mut drains = Vec::new();
    let pipes: [Option<Box<dyn tokio::io::AsyncRead + Unpin + Send>>; 2] = [
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn tokio::io::AsyncRead + Unpin + Send>),
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn tokio::io::AsyncRead + Unpin + Send>),
    ];
    for pipe in pipes.into_iter().flatten() {
        let (target, ready_line, line_seen) =
            (name.to_owned(), ready_line.clone(), Arc::clone(&line_seen));
        drains.push(process::drain(pipe, Arc::clone(&output), move |line| {
            tracing::debug!(target = %target, "{line}");
            if ready_line.as_ref().is_some_and(|r| r.is_match(line)) {
                line_seen.send_replace(true);
            }
        }));
    }
    tracing::debug!(target = %name, pid = ?child.id(), "start process spawned");
    let mut started = Started {
        name: name.to_owned(),
        child,
        group: Some(group),
        output,
        drains,
    };

    let deadline = Instant::now() + timeout;
    let mut url_ok = ready_url.is_none();
    let mut lines_open = true;
    loop {
        let line_ok = ready_line.is_none() || *line_rx.borrow();
        if !url_ok && let Some(url) = &ready_url {
            let wait = deadline
                .saturating_duration_since(Instant::now())
                .clamp(Duration::from_millis(1), Duration::from_secs(1));
            url_ok = url.answers(wait).await;
        }
        if line_ok && url_ok {
            tracing::debug!(target = %name, "start process ready");
            return Ok(started);
        }
        match started.child.try_wait() {
            Ok(None) => {}
            Ok(Some(status)) => {
                started.collect_output().await;
                let output = started.output.render("output", OUTPUT_LINES);
                return Err(TargetError::start(
                    name,
                    format!("the process exited ({status}) before it was ready; {output}"),
                ));
            }
            Err(e) => {
                return Err(TargetError::start(
                    name,
                    format!("cannot check the process: {e}"),
                ));
            }
        }
        if Instant::now() >= deadline {
            let mut waiting = Vec::new();
            if !line_ok && let Some(r) = &ready_line {
                waiting.push(format!("a line matching `{}`", r.as_str()));
            }
            if !url_ok && let Some(u) = &ready_url {
                waiting.push(format!("a 2xx answer from {u}"));
            }
            let output = started.output.render("output", OUTPUT_LINES);
            let secs = timeout.as_secs_f64();
            started.stop().await;
            return Err(TargetError::start(
                name,
                format!(
                    "not ready after {secs}s (waited for {}); {output}",
                    waiting.join(" and ")
                ),
            ));
        }
        tokio::select! {
            _ = tokio::time::sleep(POLL) => {}
            changed = line_rx.changed(), if lines_open => lines_open = changed.is_ok(),
        }
    }
}

/// A `ready_url` and the client that polls it.
#[cfg(feature = "http")]
struct ReadyUrl {
    url: reqwest::Url,
    client: reqwest::Client,
}

#[cfg(feature = "http")]
impl ReadyUrl {
    fn parse(name: &str, text: &str) -> Result<Self, TargetError> {
        let url = reqwest::Url::parse(text)
            .map_err(|e| TargetError::config(name, "start.ready_url", e.to_string()))?;
        Ok(ReadyUrl {
            url,
            client: reqwest::Client::new(),
        })
    }

    /// Whether a GET answers 2xx within `wait`.
    async fn answers(&self, wait: Duration) -> bool {
        let answer = self.client.get(self.url.clone()).timeout(wait).send().await;
        matches!(answer, Ok(r) if r.status().is_success())
    }
}

#[cfg(feature = "http")]
impl fmt::Display for ReadyUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.url.fmt(f)
    }
}

/// Without the `http` feature there is no client to poll a `ready_url` with.
#[cfg(not(feature = "http"))]
enum ReadyUrl {}

#[cfg(not(feature = "http"))]
impl ReadyUrl {
    fn parse(name: &str, _text: &str) -> Result<Self, TargetError> {
        Err(TargetError::config(
            name,
            "start.ready_url",
            "this build has no HTTP client (gavel-eval's `http` feature): wait for a `ready_line` instead",
        ))
    }

    async fn answers(&self, _wait: Duration) -> bool {
        match *self {}
    }
}

#[cfg(not(feature = "http"))]
impl fmt::Display for ReadyUrl {
    fn fmt(&self, _f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {}
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use std::collections::BTreeMap;

    fn spec(command: &[&str]) -> StartSpec {
        StartSpec {
            command: command.iter().map(|s| (*s).to_owned()).collect(),
            cwd: None,
            env: BTreeMap::new(),
            ready_url: None,
            ready_line: None,
            timeout_s: Some(10.0),
        }
    }

    /// Whether `pid` names a live process (zombies count as gone).
    fn alive(pid: u32) -> bool {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => false,
            // The state follows the parenthesised command name.
            Ok(stat) => stat
                .rsplit_once(')')
                .is_some_and(|(_, rest)| !rest.trim_start().starts_with(['Z', 'X'])),
        }
    }

    #[tokio::test]
    async fn ready_line_waits_for_the_line() {
        // The process marks the moment it reaches the ready line by creating a
        // file just before printing it: start must not return before that.
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("reached");
        let code = "import time, sys\nprint('booting', flush=True)\ntime.sleep(0.3)\nopen(sys.argv[1], 'w').close()\nprint('server ready on 1234', flush=True)\ntime.sleep(60)";
        let marker_arg = marker.to_string_lossy();
        let mut spec = spec(&["python3", "-c", code, &marker_arg]);
        spec.ready_line = Some(r"ready on \d+".into());
        let started = start("agent", &spec).await.unwrap();
        assert!(marker.exists(), "start returned before the ready line");
        assert!(
            started
                .recent_output()
                .contains(&"server ready on 1234".to_owned())
        );
        let pid = started.id().unwrap();
        started.stop().await;
        assert!(!alive(pid));
    }

    #[tokio::test]
    async fn ready_url_polls_until_the_server_answers() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let dir = tempfile::tempdir().unwrap();
        let port_arg = port.to_string();
        let mut spec = spec(&[
            "python3",
            "-m",
            "http.server",
            "--bind",
            "127.0.0.1",
            &port_arg,
        ]);
        spec.env.insert("PYTHONUNBUFFERED".into(), "1".into());
        spec.cwd = Some(dir.path().to_string_lossy().into_owned());
        // `${VAR:-default}` is expanded in the URL.
        spec.ready_url = Some(format!(
            "http://${{GAVEL_TEST_SURELY_UNSET:-127.0.0.1}}:{port}/"
        ));
        let started = start("agent", &spec).await.unwrap();
        let answer = reqwest::get(format!("http://127.0.0.1:{port}/"))
            .await
            .unwrap();
        assert!(answer.status().is_success());
        started.stop().await;
        assert!(
            reqwest::get(format!("http://127.0.0.1:{port}/"))
                .await
                .is_err()
        );
    }

    #[tokio::test]
    async fn both_conditions_are_required() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        // `sh` prints the line within milliseconds even on a loaded machine
        // (Python's start-up could outlast a short timeout), so only the URL
        // is missing when the timeout strikes.
        let mut spec = spec(&["sh", "-c", "echo ready; exec sleep 60"]);
        spec.ready_line = Some("ready".into());
        spec.ready_url = Some(format!("http://127.0.0.1:{port}/"));
        spec.timeout_s = Some(1.5);
        let err = start("agent", &spec).await.unwrap_err().to_string();
        assert!(err.contains("not ready after 1.5s"), "{err}");
        assert!(
            err.contains("a 2xx answer from") && !err.contains("a line matching"),
            "{err}"
        );
        assert!(err.contains("ready"), "{err}");
    }

    #[tokio::test]
    async fn early_exit_reports_status_and_output() {
        let code = "import sys\nprint('loading config')\nprint('fatal: no API key', file=sys.stderr)\nsys.exit(3)";
        let mut spec = spec(&["python3", "-c", code]);
        spec.ready_line = Some("never".into());
        let err = start("agent", &spec).await.unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, TargetError::Start { .. }));
        assert!(
            text.starts_with("target `agent`: start: the process exited (exit status: 3)"),
            "{text}"
        );
        assert!(
            text.contains("loading config") && text.contains("fatal: no API key"),
            "{text}"
        );
    }

    #[tokio::test]
    async fn no_condition_means_ready_at_once_and_spawn_errors_are_reported() {
        let started = start("agent", &spec(&["sleep", "30"])).await.unwrap();
        started.stop().await;
        let err = start("agent", &spec(&["/nonexistent/gavel-agent"]))
            .await
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("target `agent`: start: cannot run `/nonexistent/gavel-agent`"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn config_errors_name_the_field() {
        let mut bad = spec(&["x", "${GAVEL_TEST_SURELY_UNSET}"]);
        let err = start("agent", &bad).await.unwrap_err().to_string();
        assert_eq!(
            err,
            "target `agent`: start.command[1]: `${GAVEL_TEST_SURELY_UNSET}`: environment variable GAVEL_TEST_SURELY_UNSET is not set"
        );
        bad.command[1] = "ok".into();
        bad.ready_line = Some("(".into());
        let err = start("agent", &bad).await.unwrap_err().to_string();
        assert!(
            err.starts_with("target `agent`: start.ready_line: "),
            "{err}"
        );
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn stop_kills_the_whole_process_group() {
        // A wrapper (like `cargo run`) whose child ignores nothing but outlives it
        // unless the group is signalled.
        let script = "sleep 60 & echo child=$!; wait";
        let mut spec = spec(&["sh", "-c", script]);
        spec.ready_line = Some(r"^child=\d+$".into());
        let started = start("agent", &spec).await.unwrap();
        let line = started
            .recent_output()
            .into_iter()
            .find(|l| l.starts_with("child="))
            .unwrap();
        let child: u32 = line["child=".len()..].parse().unwrap();
        let leader = started.id().unwrap();
        assert!(alive(child) && alive(leader));
        started.stop().await;
        for _ in 0..50 {
            if !alive(child) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(!alive(child), "the wrapper's child {child} survived");
        assert!(!alive(leader));
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn dropping_kills_the_group() {
        let mut spec = spec(&["sh", "-c", "sleep 60 & echo child=$!; wait"]);
        spec.ready_line = Some(r"^child=\d+$".into());
        let started = start("agent", &spec).await.unwrap();
        let line = started
            .recent_output()
            .into_iter()
            .find(|l| l.starts_with("child="))
            .unwrap();
        let child: u32 = line["child=".len()..].parse().unwrap();
        drop(started);
        for _ in 0..50 {
            if !alive(child) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(!alive(child));
    }
}
