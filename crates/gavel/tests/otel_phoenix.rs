//! A judged run exported to a local Arize Phoenix (the OTLP receiver) and read
//! back through Phoenix's REST API: traces, spans, tool spans, sessions and
//! `gen_ai.evaluation.result` span events; live over OTLP/HTTP protobuf, and
//! after the fact over gRPC. Phoenix comes from scripts/phoenix.sh;
//! without it the test skips and says why (GAVEL_TEST_REQUIRE_PHOENIX=1 makes
//! that a failure).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod otel;
mod support;

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{Mock, free_port, gavel_command, workspace};

/// Phoenix's own start-up (schema migrations) and ingestion are slow on a
/// loaded machine: waits are bounded by this, never asserted on.
const PATIENCE: Duration = Duration::from_secs(600);

/// The `phoenix` executable: $GAVEL_PHOENIX, the setup script's virtualenv, or PATH.
fn phoenix_bin() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("GAVEL_PHOENIX") {
        return Some(PathBuf::from(p));
    }
    let local = workspace().join(".gavel/phoenix/bin/phoenix");
    if local.exists() {
        return Some(local);
    }
    let on_path = Command::new("phoenix")
        .arg("--help")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    on_path
        .is_ok_and(|s| s.success())
        .then(|| PathBuf::from("phoenix"))
}

/// A Phoenix server on free ports, killed on drop.
struct Phoenix {
    child: Child,
    http: String,
    grpc: String,
    _dir: tempfile::TempDir,
}

impl Phoenix {
    fn start(bin: PathBuf) -> Phoenix {
        let dir = tempfile::tempdir().unwrap();
        let (port, grpc) = (free_port(), free_port());
        let log = std::fs::File::create(dir.path().join("phoenix.log")).unwrap();
        let child = Command::new(bin)
            .arg("serve")
            .env("PHOENIX_WORKING_DIR", dir.path())
            .env("PHOENIX_HOST", "127.0.0.1")
            .env("PHOENIX_PORT", port.to_string())
            .env("PHOENIX_GRPC_PORT", grpc.to_string())
            .env("PHOENIX_ALLOW_EXTERNAL_RESOURCES", "false")
            .env("PHOENIX_TELEMETRY_ENABLED", "false")
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        let phoenix = Phoenix {
            child,
            http: format!("http://127.0.0.1:{port}"),
            grpc: format!("http://127.0.0.1:{grpc}"),
            _dir: dir,
        };
        let health = format!("{}/healthz", phoenix.http);
        wait_for("Phoenix to start", || {
            reqwest::blocking::get(&health)
                .is_ok_and(|r| r.status().is_success())
                .then_some(())
        });
        phoenix
    }

    fn get(&self, path: &str) -> Option<Value> {
        let r = reqwest::blocking::get(format!("{}{path}", self.http)).ok()?;
        r.status().is_success().then(|| r.json().ok()).flatten()
    }

    /// The spans of `project` once at least `count` have been ingested.
    fn spans(&self, project: &str, count: usize) -> Vec<Value> {
        wait_for("Phoenix to ingest the spans", || {
            let body = self.get(&format!("/v1/projects/{project}/spans?limit=1000"))?;
            let spans = body["data"].as_array()?.clone();
            (spans.len() >= count).then_some(spans)
        })
    }
}

impl Drop for Phoenix {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Polls `f` every half second until it returns something, up to [`PATIENCE`].
fn wait_for<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(start.elapsed() < PATIENCE, "gave up waiting for {what}");
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// A span attribute, flat (`a.b.c`) or nested (`{a: {b: {c}}}`) as Phoenix keeps it.
fn attr<'a>(attrs: &'a Value, key: &str) -> Option<&'a Value> {
    attrs
        .get(key)
        .or_else(|| attrs.pointer(&format!("/{}", key.replace('.', "/"))))
}

fn named<'a>(spans: &'a [Value], prefix: &str) -> Vec<&'a Value> {
    spans
        .iter()
        .filter(|s| s["name"].as_str().is_some_and(|n| n.starts_with(prefix)))
        .collect()
}

/// Checks what Phoenix kept of the exported run.
fn check_project(phoenix: &Phoenix, project: &str, session_check: bool) {
    // 2 cases × (root + turn + 2 tools + judge chats) + the run span.
    let spans = phoenix.spans(project, 10);
    let roots = named(&spans, "case ");
    assert_eq!(roots.len(), 2, "{spans:#?}");
    let traces: std::collections::HashSet<&str> = roots
        .iter()
        .map(|s| s["context"]["trace_id"].as_str().unwrap())
        .collect();
    assert_eq!(traces.len(), 2, "one trace per execution");
    assert_eq!(named(&spans, "run otel-export").len(), 1);
    let turns = named(&spans, "invoke_agent agent");
    assert_eq!(turns.len(), 2);
    let session = attr(&turns[0]["attributes"], "gen_ai.conversation.id")
        .and_then(Value::as_str)
        .unwrap();
    let tools = named(&spans, "execute_tool ");
    assert_eq!(tools.len(), 4);
    let fetch = tools
        .iter()
        .find(|s| s["name"] == "execute_tool get_revenue_data")
        .unwrap();
    assert_eq!(
        attr(&fetch["attributes"], "gen_ai.tool.call.arguments").and_then(Value::as_str),
        Some(r#"{"month":"2026-02"}"#)
    );
    let evaluations: Vec<&Value> = spans
        .iter()
        .flat_map(|s| s["events"].as_array().into_iter().flatten())
        .filter(|e| e["name"] == "gen_ai.evaluation.result")
        .collect();
    let names: Vec<&str> = evaluations
        .iter()
        .filter_map(|e| attr(&e["attributes"], "gen_ai.evaluation.name").and_then(Value::as_str))
        .collect();
    assert!(names.iter().any(|n| n.starts_with("judge ")), "{names:?}");
    assert!(
        names
            .iter()
            .any(|n| n.starts_with("step-score") && n.ends_with(" step 1")),
        "{names:?}"
    );
    let on_tool = fetch["events"].as_array().unwrap();
    assert!(
        on_tool
            .iter()
            .any(|e| attr(&e["attributes"], "gen_ai.evaluation.score.value").is_some()),
        "{on_tool:?}"
    );
    // Phoenix groups traces by gen_ai.conversation.id (session ids are global:
    // checked on the first project only).
    if !session_check {
        return;
    }
    let found = wait_for("Phoenix's session", || {
        phoenix.get(&format!("/v1/sessions/{session}"))
    });
    assert!(
        !found["data"]["traces"].as_array().unwrap().is_empty(),
        "{found}"
    );
}

#[test]
fn a_judged_run_reads_back_from_phoenix_over_http_and_grpc() {
    let Some(bin) = phoenix_bin() else {
        let why = "skipped: Arize Phoenix is not installed (run scripts/phoenix.sh)";
        assert!(
            std::env::var("GAVEL_TEST_REQUIRE_PHOENIX").as_deref() != Ok("1"),
            "{why}"
        );
        eprintln!("{why}");
        return;
    };
    let phoenix = Phoenix::start(bin);
    let mock = Mock::start();
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("suite.yaml");
    std::fs::write(&suite, otel::suite(&mock.url)).unwrap();
    let db = format!("sqlite://{}", dir.path().join("g.db").display());
    let gavel = |args: &[&str], project: &str| {
        let out = gavel_command(dir.path())
            .args(args)
            .args(["--db", &db, "--otel-no-logs"])
            .env(
                "OTEL_EXPORTER_OTLP_HEADERS",
                format!("x-project-name={project}"),
            )
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        assert!(!stderr.contains("warning"), "{stderr}");
    };
    gavel(
        &[
            "run",
            suite.to_str().unwrap(),
            "--quiet",
            "--otel",
            "--otel-endpoint",
            &phoenix.http,
        ],
        "gavel-live",
    );
    check_project(&phoenix, "gavel-live", true);
    gavel(
        &[
            "export",
            "otel",
            "latest",
            "--otel-protocol",
            "grpc",
            "--otel-endpoint",
            &phoenix.grpc,
        ],
        "gavel-grpc",
    );
    check_project(&phoenix, "gavel-grpc", false);
}
