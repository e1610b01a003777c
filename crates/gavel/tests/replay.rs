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
    live_run_of(dir, &live_suite(&mock.url), 2, db).await
}

/// Runs `suite` (whose `passes` executions all pass) into `db`, exporting it
/// over OTLP/JSON; returns the trace export requests the receiver got.
async fn live_run_of(dir: &Path, suite: &str, passes: u64, db: &str) -> Vec<Value> {
    let receiver = MockServer::start().await;
    wiremock::Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200))
        .mount(&receiver)
        .await;
    let file = dir.join(format!("live-{}.yaml", uuid::Uuid::now_v7()));
    std::fs::write(&file, suite).unwrap();
    let endpoint = receiver.uri();
    let (report, stderr) = gavel(
        dir,
        &[
            "run",
            file.to_str().unwrap(),
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
    assert_eq!(report["summary"]["passed"], passes, "{stderr}\n{report:#}");
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

/// One suite on two chat targets whose answers differ: the mock's echo names
/// the model (`You said: … (agent-old)`).
fn two_target_suite(url: &str) -> String {
    format!(
        r#"
name: two-targets
targets:
  old: {{type: chat, model: "openai-compatible:agent-old@{url}/v1"}}
  new: {{type: chat, model: "openai-compatible:agent-new@{url}/v1"}}
cases:
  - id: hello
    input: Say hello.
    checks:
      - {{type: contains, value: hello}}
  - id: bye
    input: Say bye.
    checks:
      - {{type: contains, value: bye}}
"#
    )
}

/// Cases regrading the two-target recording through replay targets `old` and
/// `new`: each must read its own target's answers. The `each_conversation`
/// template runs on `also` too.
fn regrade_two(also: &str) -> String {
    format!(
        r#"
cases:
  - id: hello
    input: What the suite says, not what was recorded
    targets: [old, new]
    checks:
      - {{type: contains, value: "(agent-old)"}}
      - {{type: pairwise, against: {{target: new}}, biased_ties_pass: true}}
  - id: rest
    targets: [old, new{also}]
    each_conversation: true
    checks:
      - {{type: contains, value: "(agent-new)"}}
"#
    )
}

/// The regrade of the two-target recording: `old` and `new` each graded their
/// own transcripts, the pairwise check compared two different answers, and
/// the `each_conversation` copy of `bye` is one case on both targets.
fn assert_each_target_graded_its_own(report: &Value) {
    let actual = |case: &str, target: &str| result(report, case, target)["actual"].clone();
    assert!(
        actual("hello", "old").to_string().contains("(agent-old)"),
        "{report:#}"
    );
    assert!(
        actual("hello", "new").to_string().contains("(agent-new)"),
        "{report:#}"
    );
    assert_eq!(
        verdict(report, "hello", "old", "contains")["status"],
        "pass"
    );
    assert_eq!(
        verdict(report, "hello", "new", "contains")["status"],
        "fail"
    );
    let pairwise = verdict(report, "hello", "old", "pairwise");
    assert!(
        !pairwise.to_string().contains("identical"),
        "the pairwise check compared an answer with itself: {pairwise:#}"
    );
    assert_eq!(
        pairwise["evidence"]["position_bias"], true,
        "the judge compared the two answers in both orders (the mock always picks A): {pairwise:#}"
    );
    // The report's input is the recorded message, not the suite's text.
    assert_eq!(result(report, "hello", "new")["input"], "Say hello.");
    assert_eq!(verdict(report, "bye", "old", "contains")["status"], "fail");
    assert_eq!(verdict(report, "bye", "new", "contains")["status"], "pass");
    let ids: Vec<&str> = report["detailed_results"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["id"].as_str())
        .collect();
    assert!(!ids.iter().any(|i| i.contains('@')), "{ids:?}");
}

/// Runs gavel in `dir` for its exit code and stderr (`validate`).
fn status(dir: &Path, args: &[&str]) -> (Option<i32>, String) {
    let out = gavel_command(dir).args(args).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn a_case_recorded_on_two_targets_is_regraded_per_target_from_a_stored_run_and_otlp() {
    let mock = Mock::start();
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("g.db").display());
    let traces = live_run_of(dir.path(), &two_target_suite(&mock.url), 4, &db).await;
    let traces_file = dir.path().join("traces.json");
    write_lines(&traces_file, &traces);

    // From the stored run.
    let stored = dir.path().join("stored.yaml");
    let targets = "  old: {type: replay, run: latest}\n  new: {type: replay, run: latest}\n  picked: {type: replay, run: latest, target: new}";
    std::fs::write(
        &stored,
        replay_suite(&mock.url, targets) + &regrade_two(", picked"),
    )
    .unwrap();
    let (code, stderr) = status(
        dir.path(),
        &["validate", stored.to_str().unwrap(), "--db", &db],
    );
    assert_eq!(code, Some(0), "{stderr}");
    let (report, stderr) = gavel(dir.path(), &["run", stored.to_str().unwrap(), "--db", &db]).await;
    assert_each_target_graded_its_own(&report);
    assert_eq!(
        verdict(&report, "bye", "picked", "contains")["status"],
        "pass",
        "`target:` picks the recorded target: {stderr}"
    );

    // From gavel's own OTLP export of the live run.
    let traced = dir.path().join("traced.yaml");
    let file = traces_file.display();
    let targets =
        format!("  old: {{type: replay, file: {file}}}\n  new: {{type: replay, file: {file}}}");
    std::fs::write(
        &traced,
        replay_suite(&mock.url, &targets) + &regrade_two(""),
    )
    .unwrap();
    let (report, _) = gavel(dir.path(), &["run", traced.to_str().unwrap(), "--db", &db]).await;
    assert_each_target_graded_its_own(&report);
}

#[tokio::test(flavor = "multi_thread")]
async fn validate_reads_recordings_as_run_does() {
    let mock = Mock::start();
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("g.db").display());
    live_run_of(dir.path(), &two_target_suite(&mock.url), 4, &db).await;
    let case = "\ncases:\n  - id: hello\n    checks:\n      - {type: contains, value: hello}\n";
    // A stored run of two targets, neither called `lost`: which one is unsaid.
    let lost = dir.path().join("lost.yaml");
    std::fs::write(
        &lost,
        replay_suite(&mock.url, "  lost: {type: replay, run: latest}") + case,
    )
    .unwrap();
    for command in ["validate", "run"] {
        let (code, stderr) = status(dir.path(), &[command, lost.to_str().unwrap(), "--db", &db]);
        assert_eq!(code, Some(2), "{command}: {stderr}");
        assert!(
            stderr.contains("targets.lost.target") && stderr.contains("`new`, `old`"),
            "{command}: {stderr}"
        );
    }
    // A recording that does not parse.
    let broken = dir.path().join("broken.ndjson");
    std::fs::write(
        &broken,
        "{\"conversation_id\": \"hello\", \"ouput\": \"x\"}\n",
    )
    .unwrap();
    let suite = dir.path().join("broken.yaml");
    let target = format!("  logged: {{type: replay, file: {}}}", broken.display());
    std::fs::write(&suite, replay_suite(&mock.url, &target) + case).unwrap();
    let fresh = dir.path().join("fresh");
    std::fs::create_dir(&fresh).unwrap();
    let (code, stderr) = status(&fresh, &["validate", suite.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("broken.ndjson:1") && stderr.contains("ouput"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_dir(&fresh).unwrap().count(),
        0,
        "validate opened no store for a file recording"
    );
}
