//! A judged run of `examples/conversations` (the example agent, judged by the
//! local mock-openai) exported to a local Arize Phoenix (the OTLP receiver) and
//! read back through Phoenix's REST API: traces, turn and tool spans, sessions
//! and one `gen_ai.evaluation.result` span event per verdict; live over
//! OTLP/HTTP protobuf, and after the fact over gRPC. Phoenix comes from scripts/setup.d/50-phoenix.sh;
//! without it the test skips and says why (under CI, or with
//! GAVEL_TEST_REQUIRE_PHOENIX set, that is a failure).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{Mock, example_targets, free_port, gavel_command, workspace};

/// Phoenix's own start-up (schema migrations) and ingestion are slow on a
/// loaded machine: waits are bounded by this, never asserted on.
const PATIENCE: Duration = Duration::from_secs(300);

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

    /// The spans of `project` once `ingested` says all have arrived.
    fn spans(&self, project: &str, ingested: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        wait_for(&format!("Phoenix to ingest project {project}"), || {
            let body = self.get(&format!("/v1/projects/{project}/spans?limit=1000"))?;
            let spans = body["data"].as_array()?.clone();
            ingested(&spans).then_some(spans)
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

/// The `gen_ai.evaluation.result` span events of `spans`.
fn evaluations(spans: &[Value]) -> Vec<&Value> {
    spans
        .iter()
        .flat_map(|s| s["events"].as_array().into_iter().flatten())
        .filter(|e| e["name"] == "gen_ai.evaluation.result")
        .collect()
}

/// What the JSON report says was recorded, to compare with what Phoenix kept.
struct Recorded {
    executions: usize,
    turns: usize,
    tool_calls: usize,
    verdicts: usize,
}

impl Recorded {
    fn of(report: &Value) -> Recorded {
        let repeats: Vec<&Value> = report["detailed_results"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|r| r["repeats"].as_array().unwrap())
            .collect();
        let turns: Vec<&Value> = repeats
            .iter()
            .flat_map(|r| r["transcript"]["turns"].as_array().unwrap())
            .collect();
        Recorded {
            executions: repeats.len(),
            turns: turns.len(),
            tool_calls: turns
                .iter()
                .filter_map(|t| t["tool_calls"].as_array())
                .map(Vec::len)
                .sum(),
            verdicts: repeats
                .iter()
                .map(|r| r["verdicts"].as_array().unwrap().len())
                .sum(),
        }
    }
}

/// The spans of the traces of run `run_id` among `spans` (its run span and
/// every execution's trace).
fn of_run(spans: &[Value], run_id: &str) -> Vec<Value> {
    let traces: std::collections::HashSet<&str> = spans
        .iter()
        .filter(|s| attr(&s["attributes"], "gavel.run.id").and_then(Value::as_str) == Some(run_id))
        .filter_map(|s| s["context"]["trace_id"].as_str())
        .collect();
    spans
        .iter()
        .filter(|s| {
            s["context"]["trace_id"]
                .as_str()
                .is_some_and(|t| traces.contains(t))
        })
        .cloned()
        .collect()
}

/// Whether `spans` hold all that was recorded of a run.
fn complete(spans: &[Value], recorded: &Recorded) -> bool {
    named(spans, "run ").len() == 1
        && named(spans, "case ").len() >= recorded.executions
        && named(spans, "invoke_agent ").len() >= recorded.turns
        && named(spans, "execute_tool ").len() >= recorded.tool_calls
        && !named(spans, "chat judge").is_empty()
        && evaluations(spans).len() >= recorded.verdicts
}

/// Checks what Phoenix kept of exported run `run_id` in `project`: one trace
/// per execution, a span per turn and tool call, one evaluation event per
/// verdict, and (on the first run: session ids are global) the sessions.
/// Returns the run's spans.
fn check_run(
    phoenix: &Phoenix,
    project: &str,
    run_id: &str,
    recorded: &Recorded,
    session_check: bool,
) -> Vec<Value> {
    // Ingestion is asynchronous: wait for as many as were sent, then compare.
    let all = phoenix.spans(project, |spans| complete(&of_run(spans, run_id), recorded));
    let spans = of_run(&all, run_id);
    let roots = named(&spans, "case ");
    assert_eq!(roots.len(), recorded.executions, "{spans:#?}");
    let traces: std::collections::HashSet<&str> = roots
        .iter()
        .map(|s| s["context"]["trace_id"].as_str().unwrap())
        .collect();
    assert_eq!(traces.len(), recorded.executions, "one trace per execution");
    assert_eq!(named(&spans, "run conversations").len(), 1);
    // Phoenix's Input and Output columns: OpenInference's values, on every
    // trace's root span and every turn.
    for span in roots.iter().chain(named(&spans, "invoke_agent ").iter()) {
        for key in ["input.value", "output.value"] {
            let value = attr(&span["attributes"], key).and_then(Value::as_str);
            assert!(value.is_some_and(|v| !v.is_empty()), "{key} of {span:#}");
        }
    }
    let turns = named(&spans, "invoke_agent ");
    assert_eq!(turns.len(), recorded.turns);
    let tools = named(&spans, "execute_tool ");
    assert_eq!(tools.len(), recorded.tool_calls);
    assert!(
        tools
            .iter()
            .any(|s| s["name"] == "execute_tool get_listings"),
        "{tools:#?}"
    );
    assert!(!named(&spans, "chat judge").is_empty(), "the judge's calls");
    let evaluations = evaluations(&spans);
    assert_eq!(evaluations.len(), recorded.verdicts, "one per verdict");
    let names: Vec<&str> = evaluations
        .iter()
        .filter_map(|e| attr(&e["attributes"], "gen_ai.evaluation.name").and_then(Value::as_str))
        .collect();
    assert!(names.iter().any(|n| n.starts_with("judge")), "{names:?}");
    assert!(evaluations.iter().all(|e| {
        attr(&e["attributes"], "gen_ai.evaluation.score.label")
            .and_then(Value::as_str)
            .is_some_and(|l| ["pass", "fail", "error", "skipped"].contains(&l))
    }));
    if session_check {
        // Phoenix groups traces by gen_ai.conversation.id (a trace joins the
        // session its first ingested span names: a case without branches has one).
        let session = roots
            .iter()
            .find(|s| s["name"] == "case multi-round")
            .and_then(|s| attr(&s["attributes"], "gen_ai.conversation.id"))
            .and_then(Value::as_str)
            .unwrap();
        let found = wait_for("Phoenix's session", || {
            phoenix.get(&format!("/v1/sessions/{session}"))
        });
        assert!(
            !found["data"]["traces"].as_array().unwrap().is_empty(),
            "{found}"
        );
    }
    spans
}

/// Phoenix's annotations of the spans of `spans` that hold evaluation events,
/// once there are at least `expected`.
fn annotations(phoenix: &Phoenix, project: &str, spans: &[Value], expected: usize) -> Vec<Value> {
    let judged: Vec<&str> = spans
        .iter()
        .filter(|s| !evaluations(std::slice::from_ref(*s)).is_empty())
        .filter_map(|s| s["context"]["span_id"].as_str())
        .collect();
    let query: String = judged.iter().map(|id| format!("&span_ids={id}")).collect();
    wait_for("Phoenix's annotations", || {
        let body = phoenix.get(&format!(
            "/v1/projects/{project}/span_annotations?limit=10000{query}"
        ))?;
        let found = body["data"].as_array()?.clone();
        (found.len() >= expected).then_some(found)
    })
}

/// The run id in a JSON report.
fn run_id(report: &Value) -> String {
    report["run"]["id"].as_str().unwrap().to_owned()
}

#[test]
fn a_judged_run_of_the_conversations_example_reads_back_from_phoenix_with_annotations_once() {
    let Some(bin) = phoenix_bin() else {
        return gavel_testkit::skip(
            gavel_testkit::Need::Phoenix,
            "Arize Phoenix is not installed (run scripts/setup)",
        );
    };
    let phoenix = Phoenix::start(bin);
    let mock = Mock::start();
    let dir = tempfile::tempdir().unwrap();
    let targets = example_targets("conversations", dir.path());
    let suite = workspace().join("examples/conversations/suite.yaml");
    let db = format!("sqlite://{}", dir.path().join("g.db").display());
    let judge = format!("openai-compatible:judge@{}/v1", mock.url);
    let gavel = |args: &[&str], env: &[(&str, &str)]| {
        let out = gavel_command(dir.path())
            .args(args)
            .args(["--db", &db, "--otel-no-logs"])
            .envs(env.iter().copied())
            .env("PROPERTY_AGENT_PORT", free_port().to_string())
            .env("PROPERTY_AGENT_REVIVAL_PORT", free_port().to_string())
            .env("TMPDIR", dir.path())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        assert!(!stderr.contains("warning"), "{stderr}");
    };
    // A run of the example with `export` flags; its JSON report.
    let run = |name: &str, export: &[&str], env: &[(&str, &str)]| {
        let report = dir.path().join(name);
        let mut args = vec![
            "run",
            targets.to_str().unwrap(),
            suite.to_str().unwrap(),
            "--judge",
            &judge,
            "--quiet",
            "-o",
            report.to_str().unwrap(),
        ];
        args.extend_from_slice(export);
        gavel(&args, env);
        let report: Value =
            serde_json::from_str(&std::fs::read_to_string(report).unwrap()).unwrap();
        report
    };
    // Over HTTP Phoenix takes the project from this header.
    let project = ("OTEL_EXPORTER_OTLP_HEADERS", "x-project-name=gavel");
    // Live, with the verdicts also as annotations.
    let export = [
        "--otel",
        "--otel-endpoint",
        &phoenix.http,
        "--otel-phoenix",
        &phoenix.http,
    ];
    let first = run("first.json", &export, &[project]);
    let recorded = Recorded::of(&first);
    assert_eq!(recorded.executions, 6, "{first:#}");
    let first_id = run_id(&first);
    let spans = check_run(&phoenix, "gavel", &first_id, &recorded, true);
    let events = evaluations(&spans).len();
    let annotated = annotations(&phoenix, "gavel", &spans, events);
    assert_eq!(annotated.len(), events, "one annotation per evaluation");
    for a in &annotated {
        let label = a["result"]["label"].as_str().unwrap_or_default();
        assert!(
            ["pass", "fail", "error", "skipped"].contains(&label),
            "{a:#}"
        );
        assert!(
            a["identifier"]
                .as_str()
                .is_some_and(|i| i.starts_with("gavel ")),
            "{a:#}"
        );
    }
    assert!(
        annotated.iter().any(|a| a["annotator_kind"] == "LLM"),
        "the judge's"
    );

    // The same run exported again (Phoenix's URL from the variable this
    // time): Phoenix keeps one copy of each span and annotation.
    gavel(
        &[
            "export",
            "otel",
            &first_id,
            "--otel-endpoint",
            &phoenix.http,
        ],
        &[project, ("GAVEL_OTEL_PHOENIX", &phoenix.http)],
    );

    // A second run, exported after the fact over gRPC (Phoenix reads no
    // header there: the project is a resource attribute) into the same
    // project: once it is in, what was sent before it is too.
    let second = run("second.json", &[], &[]);
    let second_id = run_id(&second);
    gavel(
        &[
            "export",
            "otel",
            &second_id,
            "--otel-protocol",
            "grpc",
            "--otel-endpoint",
            &phoenix.grpc,
        ],
        &[(
            "OTEL_RESOURCE_ATTRIBUTES",
            "openinference.project.name=gavel",
        )],
    );
    check_run(&phoenix, "gavel", &second_id, &Recorded::of(&second), false);
    let all = phoenix.spans("gavel", |_| true);
    assert_eq!(
        named(&all, "case ").len(),
        2 * recorded.executions,
        "no duplicates"
    );
    let traces: std::collections::HashSet<&str> = all
        .iter()
        .filter_map(|s| s["context"]["trace_id"].as_str())
        .collect();
    assert_eq!(
        traces.len(),
        2 * (recorded.executions + 1),
        "each run's traces once"
    );
    let spans_again = of_run(&all, &first_id);
    assert_eq!(spans_again.len(), spans.len(), "the first run's spans once");
    let annotated_again = annotations(&phoenix, "gavel", &spans, events);
    assert_eq!(
        annotated_again.len(),
        events,
        "annotations updated, not added"
    );
}
