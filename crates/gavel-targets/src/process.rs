//! Child processes shared by the command target and start processes: spawned in
//! their own process group so that wrappers (`cargo run`, `sh -c`) die with their
//! children, with a bounded tail of their output kept for error messages.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::process::{Child, Command};
use tokio::task::JoinHandle;

/// Longest line kept in a tail, in bytes; longer lines are cut.
const MAX_LINE: usize = 1000;

/// Builds a command for `argv` that runs in its own process group and is killed
/// when dropped.
pub(crate) fn command(argv: &[String], cwd: Option<&str>, env: &[(String, String)]) -> Command {
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..])
        .envs(env.iter().map(|(k, v)| (k, v)))
        .kill_on_drop(true);
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    #[cfg(unix)]
    cmd.process_group(0);
    cmd
}

/// The process group of a spawned child; dropping it kills the whole group.
#[derive(Debug)]
pub(crate) struct Group {
    /// The group id (the child's pid), until the group has been stopped.
    pgid: Option<u32>,
}

impl Group {
    /// The group led by `child` (spawned with [`command`]).
    pub(crate) fn of(child: &Child) -> Self {
        Group { pgid: child.id() }
    }

    /// Asks the group to stop (SIGTERM), waits up to `grace` for `child` to exit,
    /// then kills what is left of the group.
    pub(crate) async fn stop(mut self, child: &mut Child, grace: Duration) {
        if let Some(pgid) = self.pgid {
            signal_group(pgid, Signal::Term);
            if tokio::time::timeout(grace, child.wait()).await.is_err() {
                tracing::debug!(pgid, "process group did not stop in time; killing it");
            }
            signal_group(pgid, Signal::Kill);
            self.pgid = None;
        }
        // Kills the child itself where process groups do not exist, and reaps it.
        let _ = child.kill().await;
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if let Some(pgid) = self.pgid.take() {
            signal_group(pgid, Signal::Kill);
        }
    }
}

#[derive(Clone, Copy)]
enum Signal {
    Term,
    Kill,
}

#[cfg(unix)]
fn signal_group(pgid: u32, signal: Signal) {
    let Ok(pgid) = libc::pid_t::try_from(pgid) else {
        return;
    };
    if pgid <= 1 {
        return;
    }
    let sig = match signal {
        Signal::Term => libc::SIGTERM,
        Signal::Kill => libc::SIGKILL,
    };
    // SAFETY: kill(2) takes plain integers; a negative pid addresses the group we
    // created with process_group(0). A group that is already gone yields ESRCH.
    unsafe {
        libc::kill(-pgid, sig);
    }
}

#[cfg(not(unix))]
fn signal_group(_pgid: u32, _signal: Signal) {}

/// The last lines a process printed, bounded in count and line length.
#[derive(Debug)]
pub(crate) struct Tail {
    lines: Mutex<VecDeque<String>>,
    capacity: usize,
}

impl Tail {
    pub(crate) fn new(capacity: usize) -> Arc<Self> {
        Arc::new(Tail {
            lines: Mutex::new(VecDeque::with_capacity(capacity)),
            capacity,
        })
    }

    fn push(&self, line: String) {
        let mut lines = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        if lines.len() == self.capacity {
            lines.pop_front();
        }
        lines.push_back(line);
    }

    /// The kept lines, oldest first.
    pub(crate) fn lines(&self) -> Vec<String> {
        self.lines
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .cloned()
            .collect()
    }

    /// The last `n` lines as an indented block for an error message, or a note that
    /// the process printed nothing.
    pub(crate) fn render(&self, what: &str, n: usize) -> String {
        let lines = self.lines();
        if lines.is_empty() {
            return format!("it printed nothing on {what}");
        }
        let start = lines.len().saturating_sub(n);
        let mut out = format!("last {what} lines:");
        for line in &lines[start..] {
            out.push_str("\n  ");
            out.push_str(line);
        }
        out
    }
}

/// Reads `reader` line by line until EOF (so the pipe never fills), keeping each
/// line in `tail` and handing it to `on_line`. Invalid UTF-8 is replaced, never fatal.
pub(crate) fn drain<R>(
    reader: R,
    tail: Arc<Tail>,
    on_line: impl Fn(&str) + Send + 'static,
) -> JoinHandle<()>
where
    R: AsyncRead + Unpin + Send + 'static,
{
    tokio::spawn(async move {
        let mut reader = BufReader::new(reader);
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match reader.read_until(b'\n', &mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let text = String::from_utf8_lossy(&buf);
            let line = text.trim_end_matches(['\n', '\r']);
            // Kept before it is handled, so a line that signals readiness is
            // already in the tail when the waiter looks.
            tail.push(truncate(line, MAX_LINE));
            on_line(line);
        }
    })
}

/// `s` with its secrets redacted, then cut to at most `max` bytes on a character
/// boundary, marked with `…` if cut: the cut never leaves part of a secret.
pub(crate) fn truncate(s: &str, max: usize) -> String {
    let s = gavel_core::secrets::redact(s);
    if s.len() <= max {
        return s.into_owned();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_keeps_the_last_lines() {
        let tail = Tail::new(2);
        assert_eq!(tail.render("stderr", 5), "it printed nothing on stderr");
        for l in ["a", "b", "c"] {
            tail.push(l.to_owned());
        }
        assert_eq!(tail.lines(), ["b", "c"]);
        assert_eq!(tail.render("output", 1), "last output lines:\n  c");
    }

    #[test]
    fn truncate_respects_char_boundaries() {
        assert_eq!(truncate("héllo", 2), "h…");
        assert_eq!(truncate("abc", 3), "abc");
    }
}
