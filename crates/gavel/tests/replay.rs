//! The `replay` target end to end: recorded conversations (gavel's JSONL
//! transcripts, gavel's own OTLP/JSON export, another emitter's GenAI spans, a
//! stored run) graded with judges and tool checks against the local
//! mock-openai judge, without any agent being called.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};

use serde_json::Value;
use support::{Mock, gavel_command, on_fresh_postgres, workspace};
use wiremock::matchers::method;
use wiremock::{MockServer, ResponseTemplate};

/// A live suite: a `chat` agent on the mock that calls `lookup` when asked.
fn live_suite(url: &str) -> String {
    format!(
        r#"
name: live
judge:
  model: openai-compatible:judge@{url}/v1
targets:
  agent:
    type: chat
    model: openai-compatible:agent@{url}/v1
    system: You manage stock.
    tools:
      - name: lookup
        description: Stock of a SKU.
        result: {{stock: 3}}
cases:
  - id: stock
    input: 'Use lookup with {{"sku": "A1"}}'
    checks:
      - {{type: tools-called, tools: [lookup]}}
  - id: hello
    input: Say hello.
    checks:
      - {{type: contains, value: hello}}
"#
    )
}

/// Cases graded against the `replay` targets in `targets` (YAML lines).
fn replay_suite(url: &str, targets: &str) -> String {
    format!(
        r#"
name: replayed
judge:
  model: openai-compatible:judge@{url}/v1
targets:
{targets}
"#
    )
}

/// Runs gavel in `dir`; returns the JSON report and stderr.
async fn gavel(dir: &Path, args: &[&str]) -> (Value, String) {
    let dir = dir.to_path_buf();
    let report = dir.join(format!("report-{}.json", uuid::Uuid::now_v7()));
    let mut args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    args.extend(["--quiet".into(), "-o".into(), report.display().to_string()]);
    let out =
        tokio::task::spawn_blocking(move || gavel_command(&dir).args(&args).output().unwrap())
            .await
            .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    // 0: gate passed; 1: it failed (cases here fail on purpose). Nothing else.
    assert!(matches!(out.status.code(), Some(0 | 1)), "{stderr}");
    let report = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    (report, stderr)
}

/// The first execution of `case` against `target`.
fn result<'a>(report: &'a Value, case: &str, target: &str) -> &'a Value {
    report["detailed_results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["id"] == case && d["target"] == target)
        .unwrap_or_else(|| panic!("no {case} on {target} in {report:#}"))
}

/// The status of `case`'s verdict of `kind`, its whole verdict shown on failure.
fn verdict<'a>(report: &'a Value, case: &str, target: &str, kind: &str) -> &'a Value {
    let r = result(report, case, target);
    r["repeats"][0]["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} verdict for {case}: {r:#}"))
}

/// The judge was really asked (tokens spent) and passed.
fn judged_pass(report: &Value, case: &str, target: &str) {
    let v = verdict(report, case, target, "judge");
    assert_eq!(v["status"], "pass", "{v:#}");
    assert!(v["evidence"]["input_tokens"].as_u64().unwrap() > 0, "{v:#}");
}

/// Writes `spans` (OTLP/JSON export requests) to `path`, one per line.
fn write_lines(path: &Path, requests: &[Value]) {
    let text: String = requests
        .iter()
        .map(|r| format!("{}\n", serde_json::to_string(r).unwrap()))
        .collect();
    std::fs::write(path, text).unwrap();
}

/// Runs the live suite into `db`, exporting it over OTLP/JSON; returns the
/// trace export requests the receiver got.
async fn live_run(dir: &Path, mock: &Mock, db: &str) -> Vec<Value> {
    let receiver = MockServer::start().await;
    wiremock::Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200))
        .mount(&receiver)
        .await;
    let suite = dir.join("live.yaml");
    std::fs::write(&suite, live_suite(&mock.url)).unwrap();
    let endpoint = receiver.uri();
    let (report, stderr) = gavel(
        dir,
        &[
            "run",
            suite.to_str().unwrap(),
            "--db",
            db,
            "--otel",
            "--otel-endpoint",
            &endpoint,
            "--otel-protocol",
            "http/json",
            "--otel-no-logs",
        ],
    )
    .await;
    assert_eq!(report["summary"]["passed"], 2, "{stderr}\n{report:#}");
    receiver
        .received_requests()
        .await
        .unwrap()
        .iter()
        .filter(|r| r.url.path() == "/v1/traces")
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn jsonl_transcripts_and_otlp_json_traces_are_graded_with_judges_and_tool_checks() {
    let mock = Mock::start();
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("g.db").display());
    let traces = live_run(dir.path(), &mock, &db).await;
    assert!(!traces.is_empty(), "the live run exported no traces");
    let traces_file = dir.path().join("traces.json");
    write_lines(&traces_file, &traces);
    let examples: PathBuf = workspace().join("examples/replay");
    let targets = format!(
        "  logged: {{type: replay, file: {}}}\n  traced: {{type: replay, file: {}}}\n  emitted: {{type: replay, file: {}}}",
        examples.join("conversations.ndjson").display(),
        traces_file.display(),
        examples.join("genai-traces.otlp").display(),
    );
    let cases = r#"
cases:
  - id: prod-revenue
    targets: [logged]
    checks:
      - type: tool-verification
        calls: [{tool: get_revenue_data, arguments: {listing_id: 3, month: "2026-02"}}]
      - {type: judge, criteria: States the revenue., scale: "1-5", threshold: 4}
  - id: prod-listings
    targets: [logged]
    checks:
      - {type: tools-called, tools: [get_revenue_data]}
  - id: prod-streamed
    targets: [logged]
    checks:
      - {type: stream, min_deltas: 4}
  - id: never-recorded
    targets: [logged]
    checks:
      - {type: contains, value: anything}
  - id: revived
    targets: [logged]
    revival: true
    rounds: [{input: one}, {input: two}]
  - id: stock
    targets: [traced]
    checks:
      - type: tool-verification
        calls: [{tool: lookup, arguments: {sku: A1}, result: {stock: 3}}]
      - {type: judge, criteria: Reports the stock., scale: "1-5", threshold: 4}
  - id: conv-checkin
    targets: [emitted]
    checks:
      - {type: tools-called, tools: [get_property_details]}
      - {type: contains, value: 3 pm}
      - {type: latency, max_ms: 1500}
      - {type: judge, criteria: Gives the check-in time., scale: "1-5", threshold: 4}
  - id: every-other-trace
    targets: [traced]
    each_conversation: true
    checks:
      - {type: judge, criteria: Answers politely., scale: "1-5", threshold: 4}
"#;
    let suite = dir.path().join("replay.yaml");
    std::fs::write(&suite, replay_suite(&mock.url, &targets) + cases).unwrap();
    let (report, stderr) = gavel(dir.path(), &["run", suite.to_str().unwrap(), "--db", &db]).await;

    // JSONL: a tool check and a judge pass; a wrong tool fails; stream
    // structure is read from the recording and can fail too.
    assert_eq!(
        verdict(&report, "prod-revenue", "logged", "tool-verification")["status"],
        "pass"
    );
    judged_pass(&report, "prod-revenue", "logged");
    let wrong = verdict(&report, "prod-listings", "logged", "tools-called");
    assert_eq!(wrong["status"], "fail", "{wrong:#}");
    let stream = verdict(&report, "prod-streamed", "logged", "stream");
    assert_eq!(
        stream["status"], "fail",
        "3 deltas recorded, 4 required: {stream:#}"
    );
    // A case without a recording is an error, never a failure of the agent.
    let missing = result(&report, "never-recorded", "logged");
    assert_eq!(missing["status"], "error", "{missing:#}");
    assert!(
        missing
            .to_string()
            .contains("no recorded conversation `never-recorded`"),
        "{missing:#}"
    );
    // Revival needs the agent: skipped, with the reason.
    let revived = result(&report, "revived", "logged");
    assert_eq!(revived["status"], "skipped", "{revived:#}");
    assert!(
        revived.to_string().contains("revival needs a live agent"),
        "{revived:#}"
    );

    // gavel's own OTLP/JSON export: the tool span's arguments and result.
    let tools = verdict(&report, "stock", "traced", "tool-verification");
    assert_eq!(tools["status"], "pass", "{tools:#}");
    judged_pass(&report, "stock", "traced");
    // Another emitter's GenAI spans: tool span, messages, duration.
    for kind in ["tools-called", "contains", "latency"] {
        let v = verdict(&report, "conv-checkin", "emitted", kind);
        assert_eq!(v["status"], "pass", "{kind}: {v:#}");
    }
    judged_pass(&report, "conv-checkin", "emitted");
    // `each_conversation`: the trace no case names (`hello`) got its own case;
    // `stock` was not graded twice.
    judged_pass(&report, "hello", "traced");
    let ids: Vec<&str> = report["detailed_results"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["id"].as_str())
        .collect();
    assert_eq!(ids.iter().filter(|i| **i == "stock").count(), 1, "{ids:?}");
    assert!(
        !ids.contains(&"every-other-trace"),
        "the template itself is not run: {ids:?}\n{stderr}"
    );
}

/// Regrades the live run stored in `db` through a `run: latest` target.
async fn regrade_stored_run(dir: &Path, mock: &Mock, db: &str) {
    live_run(dir, mock, db).await;
    let suite = dir.join("regrade.yaml");
    let cases = r#"
cases:
  - id: stock
    checks:
      - type: tool-verification
        calls: [{tool: lookup, arguments: {sku: A1}, result: {stock: 3}}]
      - {type: tools-called, tools: [search]}
  - id: rest
    each_conversation: true
    checks:
      - {type: judge, criteria: Answers politely., scale: "1-5", threshold: 4}
"#;
    std::fs::write(
        &suite,
        replay_suite(&mock.url, "  stored: {type: replay, run: latest}") + cases,
    )
    .unwrap();
    let (report, _) = gavel(dir, &["run", suite.to_str().unwrap(), "--db", db]).await;
    assert_eq!(
        verdict(&report, "stock", "stored", "tool-verification")["status"],
        "pass"
    );
    assert_eq!(
        verdict(&report, "stock", "stored", "tools-called")["status"],
        "fail"
    );
    judged_pass(&report, "hello", "stored");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stored_run_is_regraded_on_sqlite() {
    let mock = Mock::start();
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("g.db").display());
    regrade_stored_run(dir.path(), &mock, &db).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stored_run_is_regraded_on_postgres() {
    on_fresh_postgres("regrading a stored run on PostgreSQL", |url| async move {
        let mock = Mock::start();
        let dir = tempfile::tempdir().unwrap();
        regrade_stored_run(dir.path(), &mock, &url).await;
    })
    .await;
}
