//! `gavel mcp` end to end with a real MCP client: the official Python `mcp`
//! package (scripts/setup.d/45-mcp-python.sh installs it; without it the tests
//! skip and say why, or fail under CI) drives the built binary over stdio and over Streamable
//! HTTP: initialize, tools/list, `query_evaluations` with p95 grouped by check.
//! On a SQLite file always, on PostgreSQL too when `GAVEL_TEST_DATABASE_URL`
//! names a server (a fresh database per test).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use gavel::store::Store;
use gavel::{Execution, RunRecord, RunStatus, Status, Verdict};
use serde_json::{Value, json};

const CLIENT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp/client.py");

/// Why the Python client cannot run here, if it cannot.
fn python_mcp_missing() -> Option<String> {
    match Command::new("python3").args(["-c", "import mcp"]).output() {
        Err(e) => Some(format!("python3 cannot start: {e}")),
        Ok(out) if !out.status.success() => Some(format!(
            "the Python `mcp` package is not installed (scripts/setup.d/45-mcp-python.sh): {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )),
        Ok(_) => None,
    }
}

/// Scores of check `j` over the seeded executions.
fn scores(j: usize) -> Vec<f64> {
    (0..30)
        .map(|i| ((i * 29 + j * 7) % 97) as f64 / 96.0)
        .collect()
}

/// One run of 30 executions, each with a judge and a contains verdict.
async fn seed(url: &str) {
    let store = Store::open(url).await.unwrap();
    let run = RunRecord {
        id: "019a0000-0000-7000-8000-0000000000e2".into(),
        suite: "mcp".into(),
        status: RunStatus::Completed,
        started_at: "2026-11-25T00:00:00.000Z".into(),
        finished_at: None,
        config: json!({}),
        planned: None,
    };
    store.create_run(&run).await.unwrap();
    let executions: Vec<Execution> = (0..30)
        .map(|i| {
            let mut e: Execution = serde_json::from_value(json!({
                "case_id": format!("c{i}"), "case_name": "c", "target": "bot",
                "repeat_index": 0, "tags": ["t"], "status": "pass",
                "started_at": "2026-11-25T00:00:01.000Z", "duration_ms": 1,
                "transcript": {"session_id": "s", "turns": []}, "verdicts": []
            }))
            .unwrap();
            e.verdicts = [
                gavel_core::CheckKind::Judge,
                gavel_core::CheckKind::Contains,
            ]
            .into_iter()
            .enumerate()
            .map(|(j, kind)| {
                Verdict::new(kind.as_str(), kind, Status::Pass, "ok").with_score(scores(j)[i], None)
            })
            .collect();
            e
        })
        .collect();
    store.record_executions(&run.id, &executions).await.unwrap();
    store.close().await;
}

/// numpy's default percentile, written out here.
fn p95(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    let h = (xs.len() - 1) as f64 * 0.95;
    let (lo, hi) = (xs[h.floor() as usize], xs[h.ceil() as usize]);
    lo + (h - h.floor()) * (hi - lo)
}

fn client(args: &[&str]) -> Value {
    let out = Command::new("python3")
        .arg(CLIENT)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    serde_json::from_str(stdout.lines().last().unwrap()).unwrap()
}

/// What every transport must have answered.
fn check_answers(got: &Value) {
    assert_eq!(got["server"], "gavel");
    assert_eq!(
        got["tools"],
        json!([
            "compare_runs",
            "get_execution",
            "get_run",
            "list_runs",
            "query_evaluations"
        ])
    );
    let props = &got["schema"]["properties"];
    assert!(
        props["aggregation"].is_object() && props["group_by"].is_object(),
        "{props}"
    );
    let groups = got["p95"]["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 2, "{got}");
    for (j, check) in ["judge", "contains"].iter().enumerate() {
        let group = groups.iter().find(|g| g["key"]["check"] == *check).unwrap();
        let value = group["value"].as_f64().unwrap();
        assert!((value - p95(scores(j))).abs() < 1e-9, "{check}: {value}");
        assert_eq!(group["count"], 30);
    }
    assert_eq!(got["bad"]["code"], -32602, "{got}");
    let message = got["bad"]["message"].as_str().unwrap();
    assert!(message.contains("`aggregation`"), "{message}");
}

fn over_stdio(db: &str) {
    let bin = env!("CARGO_BIN_EXE_gavel");
    check_answers(&client(&["stdio", bin, db]));
}

fn over_http(dir: &Path, db: &str) {
    let mut server = support::gavel_command(dir)
        .args(["mcp", "--http", "127.0.0.1:0", "--db", db])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(server.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no URL in {line:?}"))
        .to_owned();
    let got = client(&["http", &url]);
    let _ = server.kill();
    let _ = server.wait();
    check_answers(&got);
    assert_eq!(got["high_level_tools"], got["tools"]);
}

/// A method the server does not know gets JSON-RPC -32601.
fn unknown_method(dir: &Path, db: &str) {
    let answer = support::mcp_stdio(
        dir,
        db,
        json!({"jsonrpc": "2.0", "id": 2, "method": "evaluations/explode", "params": {}}),
    );
    assert_eq!(answer["error"]["code"], -32601, "{answer}");
}

fn all_transports(dir: &Path, db: &str) {
    over_stdio(db);
    over_http(dir, db);
    unknown_method(dir, db);
}

#[tokio::test(flavor = "multi_thread")]
async fn mcp_server_on_sqlite() {
    if let Some(why) = python_mcp_missing() {
        return gavel_testkit::skip(gavel_testkit::Need::Python, why);
    }
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("mcp.db").display());
    seed(&db).await;
    let path = dir.path().to_owned();
    tokio::task::spawn_blocking(move || all_transports(&path, &db))
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn mcp_server_on_postgres() {
    if let Some(why) = python_mcp_missing() {
        return gavel_testkit::skip(gavel_testkit::Need::Python, why);
    }
    support::on_fresh_postgres("the PostgreSQL MCP test", |db| async move {
        seed(&db).await;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().to_owned();
        tokio::task::spawn_blocking(move || all_transports(&path, &db))
            .await
            .unwrap();
    })
    .await;
}
