//! The command target against a small Python agent speaking JSON lines.

#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use common::{alive, build_error, python};
use gavel_core::{Attempts, Turn};
use gavel_targets::{Session, Target, TurnRequest};
use serde_json::{Value, json};
use tempfile::TempDir;

const AGENT: &str = r#"
import json, os, signal, sys, time

mode = sys.argv[1]
if mode == "stubborn":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
print("agent starting", file=sys.stderr, flush=True)
while True:
    line = sys.stdin.readline()
    if not line:
        break
    req = json.loads(line)
    if mode == "hang":
        time.sleep(60)
    marker = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hung")
    if mode == "hang-once" and not os.path.exists(marker):
        open(marker, "w").close()
        time.sleep(60)
    if mode == "garbage":
        print("this is not json", flush=True)
        continue
    print(flush=True)  # a blank line, to be skipped
    print(json.dumps({
        "output": "echo: " + req["message"],
        "tool_calls": [{"name": "echo", "args": {"round": req["round"]}}],
        "request": req,
        "pid": os.getpid(),
        "cwd": os.getcwd(),
        "greeting": os.environ.get("AGENT_GREETING"),
    }), flush=True)
    if mode == "once":
        print("bye: crashing on purpose", file=sys.stderr, flush=True)
        sys.exit(4)
if mode == "stubborn":
    time.sleep(60)
"#;

/// A temp dir holding the agent script, and a command target running it in `mode`.
fn agent(mode: &str, extra: Value) -> (TempDir, std::sync::Arc<dyn Target>) {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("agent.py");
    std::fs::write(&script, AGENT).unwrap();
    let mut spec = json!({
        "type": "command",
        "command": [python(), "-u", script.to_string_lossy(), mode],
        "timeout_s": 10,
    });
    spec.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    let target = common::target(spec);
    (dir, target)
}

async fn send(
    session: &mut Box<dyn Session>,
    round: usize,
    message: &str,
    history: &[Turn],
) -> Turn {
    let context = json!({"user": "Ana"});
    session
        .send(&TurnRequest {
            round,
            message,
            context: Some(&context),
            history,
            ..TurnRequest::new("s-1", "case-1")
        })
        .await
}

fn pid(turn: &Turn) -> u32 {
    u32::try_from(turn.response.as_ref().unwrap()["pid"].as_u64().unwrap()).unwrap()
}

/// Closes `session` on tokio's paused clock, which skips ahead whenever the
/// test only waits: closing takes the grace after EOF and the grace after
/// SIGTERM (0.5 s each, which the timer rounds up to its next millisecond) at
/// most, then kills, whatever the process does.
async fn close_on_a_paused_clock(session: Box<dyn Session>) {
    tokio::time::pause();
    let started = tokio::time::Instant::now();
    session.close().await;
    let waited = started.elapsed();
    tokio::time::resume();
    assert!(waited <= Duration::from_millis(1010), "{waited:?}");
}

async fn wait_gone(pid: u32) -> bool {
    for _ in 0..100 {
        if !alive(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

#[tokio::test]
async fn json_lines_round_trip_with_history_context_env_and_cwd() {
    let (dir, target) = agent(
        "echo",
        json!({"env": {"AGENT_GREETING": "${GAVEL_TEST_SURELY_UNSET:-hola}"}, "cwd": "${GAVEL_TEST_SURELY_UNSET:-/}"}),
    );
    assert_eq!(target.kind(), "command");
    let mut session = target.open("s-1").await.unwrap();
    let first = send(&mut session, 0, "Hi", &[]).await;
    assert_eq!(first.failure, None);
    assert_eq!(
        (first.round, first.input.as_str(), first.output.as_str()),
        (0, "Hi", "echo: Hi")
    );
    assert_eq!(first.tool_calls[0].name, "echo");
    assert_eq!(first.tool_calls[0].arguments, json!({"round": 0}));
    let response = first.response.clone().unwrap();
    assert_eq!(response["greeting"], "hola");
    assert_eq!(response["cwd"], "/");
    assert_eq!(
        response["request"],
        json!({"session_id": "s-1", "message": "Hi", "context": {"user": "Ana"}, "history": [], "case_id": "case-1", "round": 0})
    );

    let second = send(&mut session, 1, "Again", std::slice::from_ref(&first)).await;
    assert_eq!(second.output, "echo: Again");
    assert_eq!(
        second.response.as_ref().unwrap()["request"]["history"],
        json!([{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "echo: Hi"}])
    );
    assert_eq!(pid(&first), pid(&second), "one process per session");

    let pid = pid(&first);
    session.close().await;
    assert!(wait_gone(pid).await);
    drop(dir);
}

#[tokio::test]
async fn each_session_has_its_own_process() {
    let (_dir, target) = agent("echo", json!({}));
    let mut a = target.open("a").await.unwrap();
    let mut b = target.open("b").await.unwrap();
    let (ta, tb) = (
        send(&mut a, 0, "x", &[]).await,
        send(&mut b, 0, "y", &[]).await,
    );
    assert_ne!(pid(&ta), pid(&tb));
    a.close().await;
    b.close().await;
}

#[tokio::test]
async fn a_process_that_exits_fails_the_turn_with_its_status_and_stderr() {
    let (_dir, target) = agent("once", json!({}));
    let mut session = target.open("s-1").await.unwrap();
    assert_eq!(send(&mut session, 0, "Hi", &[]).await.output, "echo: Hi");
    let turn = send(&mut session, 1, "Still there?", &[]).await;
    let failure = turn.failure.unwrap();
    assert!(!failure.transient);
    assert!(
        failure.message.contains("exited (exit status: 4)"),
        "{}",
        failure.message
    );
    assert!(
        failure.message.contains("bye: crashing on purpose"),
        "{}",
        failure.message
    );
    assert!(
        failure.message.contains("agent starting"),
        "{}",
        failure.message
    );
    let again = send(&mut session, 2, "Hello?", &[]).await;
    assert_eq!(again.failure.unwrap().message, failure.message);
    session.close().await;
}

#[tokio::test]
async fn a_hanging_process_times_out_transiently_then_the_session_is_out_of_step() {
    let (_dir, target) = agent("hang", json!({"timeout_s": 0.3}));
    let mut session = target.open("s-1").await.unwrap();
    // The agent would answer after 60 s: a failure now is the timeout's.
    let turn = send(&mut session, 0, "Hi", &[]).await;
    let failure = turn.failure.unwrap();
    assert!(failure.transient);
    assert_eq!(failure.message, "timed out after 0.3s");
    assert!(turn.latency_ms >= 300);
    let next = send(&mut session, 1, "Hi?", &[]).await.failure.unwrap();
    assert!(
        !next.transient && next.message.contains("out of step"),
        "{}",
        next.message
    );
    close_on_a_paused_clock(session).await;
}

#[tokio::test]
async fn with_retry_a_timed_out_message_goes_to_a_restarted_process() {
    let retry = json!({"timeout_s": 1.5, "retry": {"attempts": 3, "backoff_ms": 1}});
    let (_dir, target) = agent("hang-once", retry);
    let mut session = target.open("s-1").await.unwrap();
    let turn = send(&mut session, 0, "Hi", &[]).await;
    assert_eq!(turn.failure, None);
    assert_eq!(turn.output, "echo: Hi");
    assert_eq!(
        turn.attempts,
        Some(Attempts {
            attempts: 2,
            retries: 1,
            rate_limited: 0,
            malformed: 0
        })
    );
    // The conversation goes on in the new process.
    let next = send(&mut session, 1, "Again", std::slice::from_ref(&turn)).await;
    assert_eq!(next.output, "echo: Again");
    assert_eq!(next.response.unwrap()["pid"], turn.response.unwrap()["pid"]);
    session.close().await;
}

#[tokio::test]
async fn a_non_json_line_fails_the_turn() {
    let (_dir, target) = agent("garbage", json!({}));
    let mut session = target.open("s-1").await.unwrap();
    let failure = send(&mut session, 0, "Hi", &[]).await.failure.unwrap();
    assert!(!failure.transient);
    assert!(
        failure.message.starts_with("response is not JSON: "),
        "{}",
        failure.message
    );
    assert!(
        failure.message.contains("this is not json"),
        "{}",
        failure.message
    );
    session.close().await;
}

#[tokio::test]
async fn close_kills_a_process_that_ignores_eof_and_sigterm() {
    let (_dir, target) = agent("stubborn", json!({}));
    let mut session = target.open("s-1").await.unwrap();
    let pid = pid(&send(&mut session, 0, "Hi", &[]).await);
    close_on_a_paused_clock(session).await;
    assert!(!alive(pid), "the process is reaped when close returns");
}

#[tokio::test]
async fn dropping_a_session_kills_its_process() {
    let (_dir, target) = agent("stubborn", json!({}));
    let mut session = target.open("s-1").await.unwrap();
    let pid = pid(&send(&mut session, 0, "Hi", &[]).await);
    drop(session);
    assert!(wait_gone(pid).await);
}

#[tokio::test]
async fn a_missing_program_fails_to_open() {
    let target =
        common::target(json!({"type": "command", "command": ["/nonexistent/gavel-agent"]}));
    let failure = target.open("s").await.err().unwrap();
    assert!(!failure.transient);
    assert!(
        failure
            .message
            .starts_with("target `agent`: cannot start `/nonexistent/gavel-agent`: "),
        "{}",
        failure.message
    );
}

#[test]
fn bad_specs_name_the_target_and_field() {
    let cases = [
        (
            json!({"type": "command", "command": []}),
            "target `agent`: command: must name a program",
        ),
        (
            json!({"type": "command", "command": ["x", "${GAVEL_TEST_SURELY_UNSET}"]}),
            "target `agent`: command[1]: `${GAVEL_TEST_SURELY_UNSET}`: environment variable GAVEL_TEST_SURELY_UNSET is not set",
        ),
        (
            json!({"type": "command", "command": ["x"], "env": {"KEY": "${GAVEL_TEST_SURELY_UNSET}"}}),
            "target `agent`: env.KEY: `${GAVEL_TEST_SURELY_UNSET}`: environment variable GAVEL_TEST_SURELY_UNSET is not set",
        ),
    ];
    for (spec, expected) in cases {
        assert_eq!(build_error(spec), expected);
    }
}

#[tokio::test]
async fn only_braced_variables_expand_so_a_shell_gets_its_own_dollars() {
    // `$0` and `$1` are the shell's; `$$` is one `$`; `${…}` comes from the environment.
    let script = "read -r line; printf '{\"output\": \"%s|%s\"}\\n' \"$0\" \"$1\"";
    let target = common::target(json!({
        "type": "command",
        "command": ["sh", "-c", script, "zero", "$$5 ${GAVEL_TEST_SURELY_UNSET:-each}"],
    }));
    let mut session = target.open("s-1").await.unwrap();
    let turn = send(&mut session, 0, "Hi", &[]).await;
    assert_eq!(turn.failure, None);
    assert_eq!(turn.output, "zero|$5 each");
    session.close().await;
}
