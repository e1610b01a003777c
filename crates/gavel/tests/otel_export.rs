//! `gavel run --otel` and `gavel export otel` against a local OTLP/HTTP
//! receiver: the requests are decoded with opentelemetry-proto's generated
//! types; log records link to the spans they judge, and a canary API key
//! appears in none of the bytes sent.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod otel;
mod support;

use std::collections::HashSet;

use opentelemetry_proto::tonic::trace::v1::Span;
use otel::{Received, received, receiver, string};
use support::{Mock, gavel_command};

/// Runs gavel with the canary as every provider key; fails the test on a non-zero exit.
async fn gavel(dir: &std::path::Path, args: Vec<String>) -> String {
    let dir = dir.to_path_buf();
    tokio::task::spawn_blocking(move || {
        let out = gavel_command(&dir)
            .args(&args)
            .env("OPENAI_API_KEY", otel::CANARY)
            .env("OPENAI_COMPATIBLE_API_KEY", otel::CANARY)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        stderr
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_judged_run_exports_linked_evaluation_logs_and_no_key_live_and_after_the_fact() {
    let mock = Mock::start();
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("suite.yaml");
    std::fs::write(&suite, otel::suite(&mock.url)).unwrap();
    let db = format!("sqlite://{}", dir.path().join("g.db").display());
    let live = receiver().await;
    let stderr = gavel(
        dir.path(),
        [
            "run",
            suite.to_str().unwrap(),
            "--db",
            &db,
            "--quiet",
            "--otel",
            "--otel-endpoint",
            &live.uri(),
        ]
        .map(String::from)
        .to_vec(),
    )
    .await;
    assert!(!stderr.contains("warning"), "{stderr}");
    let got = received(&live).await;

    let roots: Vec<&Span> = got
        .spans
        .iter()
        .filter(|s| s.name.starts_with("case "))
        .collect();
    assert_eq!(roots.len(), 2, "one trace per execution");
    let run = got
        .spans
        .iter()
        .find(|s| s.name == "run otel-export")
        .unwrap();
    assert!(string(&run.attributes, "gavel.gate.result").is_some());
    let tools: Vec<&Span> = got
        .spans
        .iter()
        .filter(|s| s.name.starts_with("execute_tool "))
        .collect();
    assert_eq!(tools.len(), 4);
    // Every evaluation log record points at a span gavel sent, in the same trace.
    let ids: HashSet<(&[u8], &[u8])> = got
        .spans
        .iter()
        .map(|s| (s.trace_id.as_slice(), s.span_id.as_slice()))
        .collect();
    assert!(!got.logs.is_empty());
    for log in &got.logs {
        assert_eq!(log.event_name, "gen_ai.evaluation.result");
        assert!(
            ids.contains(&(log.trace_id.as_slice(), log.span_id.as_slice())),
            "{log:?}"
        );
    }
    let on_tools = got
        .logs
        .iter()
        .filter(|l| tools.iter().any(|t| t.span_id == l.span_id))
        .filter_map(|l| string(&l.attributes, "gen_ai.evaluation.name"))
        .collect::<Vec<_>>();
    assert!(
        on_tools.iter().any(|n| n.starts_with("step-score")),
        "{on_tools:?}"
    );
    assert!(
        on_tools.iter().any(|n| n.contains("get_revenue_data")),
        "{on_tools:?}"
    );
    let judge = got.spans.iter().find(|s| s.name == "chat judge").unwrap();
    assert_eq!(
        string(&judge.attributes, "gen_ai.provider.name").as_deref(),
        Some("openai-compatible")
    );

    // The stored run, sent again after the fact, gives the same spans.
    let after = receiver().await;
    gavel(
        dir.path(),
        [
            "export",
            "otel",
            "latest",
            "--db",
            &db,
            "--otel-endpoint",
            &after.uri(),
        ]
        .map(String::from)
        .to_vec(),
    )
    .await;
    let again = received(&after).await;
    let names = |r: &Received| {
        let mut n: Vec<String> = r.spans.iter().map(|s| s.name.clone()).collect();
        n.sort();
        n
    };
    assert_eq!(names(&again), names(&got));
    assert_eq!(again.logs.len(), got.logs.len());

    for r in [&got, &again] {
        let needle = otel::CANARY.as_bytes();
        assert_eq!(
            r.bytes
                .windows(needle.len())
                .filter(|w| *w == needle)
                .count(),
            0,
            "the key was exported"
        );
    }
}

/// Runs gavel (with the judge's key) for its exit code and standard error.
async fn exit_of(dir: &std::path::Path, args: &[&str]) -> (Option<i32>, String) {
    let dir = dir.to_path_buf();
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    tokio::task::spawn_blocking(move || {
        let out = gavel_command(&dir)
            .args(&args)
            .env("OPENAI_COMPATIBLE_API_KEY", otel::CANARY)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        (out.status.code(), stderr)
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_export_that_fails_warns_naming_the_receiver_and_exits_3() {
    let mock = Mock::start();
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("suite.yaml");
    std::fs::write(&suite, otel::suite(&mock.url)).unwrap();
    let db = format!("sqlite://{}", dir.path().join("g.db").display());
    // A port nothing listens on: bound, then let go.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    let refusing = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(wiremock::ResponseTemplate::new(415))
        .mount(&refusing)
        .await;
    let warned = |stderr: &str, endpoint: &str| {
        let line =
            format!("warning: OpenTelemetry export of traces to {endpoint}/v1/traces failed");
        assert!(stderr.contains(&line), "no `{line}` in: {stderr}");
    };

    // Live: the run passed its gate and is stored; the failed export makes it 3.
    let suite = suite.to_str().unwrap();
    let run = [
        "run",
        suite,
        "--db",
        &db,
        "--quiet",
        "--otel",
        "--otel-endpoint",
    ];
    let (code, stderr) = exit_of(dir.path(), &[&run[..], &[closed.as_str()]].concat()).await;
    assert_eq!(code, Some(3), "{stderr}");
    warned(&stderr, &closed);

    // After the fact: nothing listening, a name that never resolves, a 415.
    let unresolvable = "http://otlp-receiver.invalid:4318".to_owned();
    for endpoint in [&closed, &unresolvable, &refusing.uri()] {
        let (code, stderr) = exit_of(
            dir.path(),
            &[
                "export",
                "otel",
                "latest",
                "--db",
                &db,
                "--otel-endpoint",
                endpoint,
            ],
        )
        .await;
        assert_eq!(code, Some(3), "{endpoint}: {stderr}");
        warned(&stderr, endpoint);
        assert!(!stderr.contains("exported "), "{stderr}");
    }
    let (_, stderr) = exit_of(
        dir.path(),
        &[
            "export",
            "otel",
            "latest",
            "--db",
            &db,
            "--otel-endpoint",
            &refusing.uri(),
        ],
    )
    .await;
    assert!(
        stderr.contains("415"),
        "the receiver's answer is named: {stderr}"
    );

    // A failed gate keeps its exit code 1, with the warning.
    let failing = dir.path().join("failing.yaml");
    std::fs::write(
        &failing,
        otel::suite(&mock.url).replace("value: February", "value: nowhere"),
    )
    .unwrap();
    let failing = failing.to_str().unwrap();
    let run = [
        "run",
        failing,
        "--db",
        &db,
        "--quiet",
        "--otel",
        "--otel-endpoint",
    ];
    let (code, stderr) = exit_of(dir.path(), &[&run[..], &[closed.as_str()]].concat()).await;
    assert_eq!(code, Some(1), "{stderr}");
    warned(&stderr, &closed);
}

#[test]
fn a_bad_protocol_is_refused_at_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let out = gavel_command(dir.path())
        .args([
            "export",
            "otel",
            "latest",
            "--otel-protocol",
            "smoke-signals",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("`smoke-signals` is not an OTLP protocol"),
        "{stderr}"
    );
}

#[test]
fn a_bad_protocol_variable_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let out = gavel_command(dir.path())
        .args(["export", "otel", "latest"])
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "smoke-signals")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("OTEL_EXPORTER_OTLP_PROTOCOL: `smoke-signals` is not an OTLP protocol"),
        "{stderr}"
    );
}

/// A suite whose run makes every kind of span gavel exports: a command target
/// reporting tool calls with ids, a `chat` target calling a tool (its own
/// model calls), one whose model refuses the key (a failed turn and model
/// call), the follow-up detector reading an answer with a question mark, and
/// judges.
fn semconv_suite(url: &str) -> String {
    format!(
        r#"
name: otel-semconv
judge:
  model: openai-compatible:judge@{url}/v1
targets:
  tools:
    type: command
    command: [sh, -c, 'while IFS= read -r line; do printf "%s\n" "{{\"output\": \"Stock is 3.\", \"tool_calls\": [{{\"id\": \"toolu_01\", \"name\": \"lookup\", \"arguments\": {{\"sku\": \"A1\"}}, \"result\": {{\"stock\": 3}}}}]}}"; done']
    response: {{output: /output, tool_calls: /tool_calls}}
  chat:
    type: chat
    model: openai-compatible:agent@{url}/v1
    tools:
      - name: lookup
        description: Stock of a SKU.
        result: {{stock: 3}}
  refused:
    type: chat
    model: openai-compatible:reject-key@{url}/v1
cases:
  - id: stock
    input: 'Use lookup with {{"sku": "A1"}}'
    criteria: States the stock.
  - id: question
    input: Are you there?
    max_followups: 1
    checks:
      - {{type: contains, value: there}}
"#
    )
}

/// One row of the vendored requirement list (tests/otel/semconv-genai-required.tsv).
struct Requirement {
    operation: String,
    attribute: String,
    conditional: bool,
    condition: String,
}

fn requirements() -> Vec<Requirement> {
    let text = include_str!("otel/semconv-genai-required.tsv");
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            assert_eq!(f.len(), 4, "bad fixture line: {l}");
            Requirement {
                operation: f[0].to_owned(),
                attribute: f[1].to_owned(),
                conditional: f[2] == "conditionally_required",
                condition: f[3].to_owned(),
            }
        })
        .collect()
}

/// Whether `span` (of a run of [`semconv_suite`], against `target`) must
/// carry the attribute of `r`: Required always; Conditionally Required when
/// its condition holds for what gavel knows. A condition this test does not
/// know fails it: a new requirement needs a decision.
fn needed(r: &Requirement, span: &Span, target: &str) -> bool {
    let caller = string(&span.attributes, "gavel.caller");
    let judge = caller.as_deref() == Some("judge");
    let failed = span.status.as_ref().is_some_and(|s| s.code == 2);
    if !r.conditional {
        return true;
    }
    match (r.attribute.as_str(), r.condition.as_str()) {
        ("error.type", "if the operation ended in an error") => failed,
        // gavel knows the model of every model call it makes, and of the
        // turns of the targets whose model it drives.
        ("gen_ai.request.model", "If available.") => {
            r.operation == "chat" || ["chat", "refused"].contains(&target)
        }
        // A judge's calls are not part of the conversation judged.
        ("gen_ai.conversation.id", "when available") => !judge,
        ("gen_ai.agent.name", "when available") => true,
        // Judges and the harness ask for JSON; a target's calls for text.
        ("gen_ai.output.type", c) if c.starts_with("when applicable") => {
            r.operation == "chat" && caller.as_deref() != Some("target")
        }
        ("server.port", "If `server.address` is set.") => {
            string(&span.attributes, "server.address").is_some()
        }
        // gavel's agents have no id, description or version, use no data
        // source, and its model calls ask for one choice, send no seed and
        // do not stream.
        ("gen_ai.agent.description" | "gen_ai.agent.version", "when available")
        | ("gen_ai.agent.id" | "gen_ai.data_source.id", "if applicable.")
        | ("gen_ai.request.choice.count", "if available, in the request, and !=1")
        | ("gen_ai.request.seed", "if applicable and if the request includes a seed") => false,
        ("gen_ai.request.stream", c)
            if c.starts_with("If and only if the request is streaming") =>
        {
            false
        }
        (a, c) => {
            panic!("the conventions' list has a condition this test does not know: {a} ({c})")
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn exported_spans_carry_every_required_genai_attribute() {
    let mock = Mock::start();
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("suite.yaml");
    std::fs::write(&suite, semconv_suite(&mock.url)).unwrap();
    let db = format!("sqlite://{}", dir.path().join("g.db").display());
    let live = receiver().await;
    let args = [
        "run",
        suite.to_str().unwrap(),
        "--db",
        &db,
        "--quiet",
        "--otel",
        "--otel-endpoint",
        &live.uri(),
    ];
    // The refused target errs: exit 1, the export itself succeeds.
    let (code, stderr) = exit_of(dir.path(), &args).await;
    assert_eq!(code, Some(1), "{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
    let got = received(&live).await;
    let rows = requirements();
    assert!(
        rows.iter().any(|r| r.operation == "execute_tool"),
        "fixture read"
    );
    // Each trace is one execution: its root span names the target.
    let targets: std::collections::HashMap<&[u8], String> = got
        .spans
        .iter()
        .filter(|s| s.name.starts_with("case "))
        .filter_map(|s| {
            Some((
                s.trace_id.as_slice(),
                string(&s.attributes, "gavel.target")?,
            ))
        })
        .collect();
    let mut seen = std::collections::BTreeMap::<String, usize>::new();
    for span in &got.spans {
        let Some(op) = string(&span.attributes, "gen_ai.operation.name") else {
            continue;
        };
        let kind = match string(&span.attributes, "gavel.caller") {
            Some(caller) => format!("{op} by {caller}"),
            None => op.clone(),
        };
        let failed = span.status.as_ref().is_some_and(|s| s.code == 2);
        *seen
            .entry(if failed {
                format!("{kind}, failed")
            } else {
                kind
            })
            .or_default() += 1;
        for r in rows.iter().filter(|r| r.operation == op) {
            let target = targets
                .get(span.trace_id.as_slice())
                .map_or("", String::as_str);
            if needed(r, span, target) {
                assert!(
                    span.attributes.iter().any(|kv| kv.key == r.attribute),
                    "{} lacks {} ({}): {span:#?}",
                    span.name,
                    r.attribute,
                    if r.conditional {
                        &r.condition
                    } else {
                        "required"
                    }
                );
            }
        }
    }
    // Every kind of span was there to check.
    for kind in [
        "invoke_agent",
        "invoke_agent, failed",
        "execute_tool",
        "chat by target",
        "chat by target, failed",
        "chat by followup-detector",
        "chat by judge",
    ] {
        assert!(seen.contains_key(kind), "no {kind} span: {seen:?}");
    }
    // Tool call ids: the command target's own, and the chat model's.
    let ids: Vec<String> = got
        .spans
        .iter()
        .filter_map(|s| string(&s.attributes, "gen_ai.tool.call.id"))
        .collect();
    assert!(ids.iter().any(|i| i == "toolu_01"), "{ids:?}");
    assert!(ids.iter().any(|i| i.starts_with("call-")), "{ids:?}");
    let refused = got
        .spans
        .iter()
        .find(|s| {
            string(&s.attributes, "gen_ai.request.model").as_deref() == Some("reject-key")
                && s.name.starts_with("chat")
        })
        .unwrap();
    assert_eq!(
        string(&refused.attributes, "error.type").as_deref(),
        Some("auth")
    );
}
