//! Exports a run to a local OTLP/HTTP receiver (wiremock) and decodes what
//! gavel sent with opentelemetry-proto's generated types: traces, spans, span
//! events and `gen_ai.evaluation.result` log records linked to their spans.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;

use gavel_core::{Execution, RunRecord};
use gavel_otel::{Exporter, Protocol, Settings};
use gavel_report::Gate;
use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value::Value};
use opentelemetry_proto::tonic::logs::v1::LogRecord;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use serde_json::json;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

/// A secret that must never be exported, placed where configuration could leak it.
const CANARY: &str = "sk-canary-7f3a9d";

fn run() -> RunRecord {
    serde_json::from_value(json!({
        "id": "0190-run", "suite": "otel-suite", "status": "completed",
        "started_at": "2026-03-01T10:00:00Z", "finished_at": "2026-03-01T10:00:09Z",
        "config": {"api_key": CANARY}
    }))
    .unwrap()
}

/// A judged two-turn execution with two tool calls, a judge verdict on round
/// 1, a step score and a tool verification.
fn execution(case: &str, session: &str) -> Execution {
    serde_json::from_value(json!({
        "case_id": case, "case_name": "Books a flight", "target": "agent", "repeat_index": 0,
        "tags": ["smoke"], "status": "pass", "score": 0.9, "reason": null,
        "started_at": "2026-03-01T10:00:01Z", "duration_ms": 3000,
        "transcript": {"session_id": session, "turns": [
            {"round": 0, "input": "hi", "output": "hello", "latency_ms": 500,
             "usage": {"input_tokens": 11, "output_tokens": 7}},
            {"round": 1, "input": "book LHR", "output": "booked", "latency_ms": 1000,
             "harness_usage": {"input_tokens": 3, "output_tokens": 2},
             "tool_calls": [
                {"name": "search", "arguments": {"to": "LHR"}, "result": {"flights": 2}},
                {"name": "book", "arguments": {"flight": 1}, "result": "ok"}
             ]}
        ]},
        "verdicts": [
            {"check": "helpful", "kind": "llm-judge", "round": 1, "status": "pass",
             "score": 0.9, "threshold": 0.7, "reason": "answered the request",
             "evidence": {"model": format!("openai-compatible:judge-m@http://u:{CANARY}@host/v1"),
                          "input_tokens": 120, "output_tokens": 30, "latency_ms": 400}},
            {"check": "steps", "kind": "step-score", "status": "pass", "score": 0.8,
             "reason": "fine", "evidence": {"steps": [
                {"step": 1, "round": 1, "tool": "search", "score": 1.0, "explanation": "right search"},
                {"step": 2, "round": 1, "tool": "book", "score": 0.6, "explanation": "late"}
             ]}},
            {"check": "verify", "kind": "tool-verification", "status": "fail", "score": 0.5,
             "reason": "book: wrong flight", "evidence": {"calls": [
                {"expected": "search", "call_index": 0, "tool_correct": true, "args_correct": true, "score": 1.0, "problems": []},
                {"expected": "book", "call_index": 1, "tool_correct": true, "args_correct": false, "score": 0.0, "problems": ["flight: 1 != 2"]}
             ]}}
        ]
    }))
    .unwrap()
}

/// What the receiver got.
struct Received {
    spans: Vec<Span>,
    logs: Vec<LogRecord>,
    bytes: Vec<u8>,
}

/// Exports a stored run of two executions and decodes the requests.
async fn export(settings: impl FnOnce(String) -> Settings) -> Received {
    let executions = vec![
        execution("book", "session-1"),
        execution("cancel", "session-2"),
    ];
    export_executions(settings, executions).await
}

/// Exports a stored run of `executions` and decodes the requests.
async fn export_executions(
    settings: impl FnOnce(String) -> Settings,
    executions: Vec<Execution>,
) -> Received {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200))
        .mount(&server)
        .await;
    let settings = settings(server.uri());
    let json = settings.protocol == Protocol::HttpJson;
    let exporter = Exporter::new(settings).unwrap();
    let gate = Gate::new(
        &gavel_core::TagStats::of(std::iter::empty::<&gavel_core::Outcome>()),
        80.0,
        None,
    );
    tokio::task::spawn_blocking(move || {
        gavel_otel::export_stored(exporter, &run(), &executions, Some(&gate))
    })
    .await
    .unwrap()
    .unwrap();
    let mut out = Received {
        spans: Vec::new(),
        logs: Vec::new(),
        bytes: Vec::new(),
    };
    for request in server.received_requests().await.unwrap() {
        out.bytes.extend_from_slice(&request.body);
        out.bytes.extend(format!("{:?}", request.headers).bytes());
        let path = request.url.path().to_string();
        if path == "/v1/traces" {
            let req: ExportTraceServiceRequest = if json {
                serde_json::from_slice(&request.body).unwrap()
            } else {
                ExportTraceServiceRequest::decode(request.body.as_slice()).unwrap()
            };
            for rs in req.resource_spans {
                for ss in rs.scope_spans {
                    out.spans.extend(ss.spans);
                }
            }
        } else if path == "/v1/logs" {
            let req: ExportLogsServiceRequest = if json {
                serde_json::from_slice(&request.body).unwrap()
            } else {
                ExportLogsServiceRequest::decode(request.body.as_slice()).unwrap()
            };
            for rl in req.resource_logs {
                for sl in rl.scope_logs {
                    out.logs.extend(sl.log_records);
                }
            }
        } else {
            panic!("unexpected request to {path}");
        }
    }
    out
}

fn attr<'a>(attrs: &'a [KeyValue], key: &str) -> Option<&'a Value> {
    attrs
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref())
        .and_then(|v: &AnyValue| v.value.as_ref())
}

fn string(attrs: &[KeyValue], key: &str) -> Option<String> {
    match attr(attrs, key)? {
        Value::StringValue(s) => Some(s.clone()),
        _ => None,
    }
}

fn number(attrs: &[KeyValue], key: &str) -> Option<f64> {
    match attr(attrs, key)? {
        Value::IntValue(i) => Some(*i as f64),
        Value::DoubleValue(d) => Some(*d),
        _ => None,
    }
}

fn named<'a>(spans: &'a [Span], name: &str) -> Vec<&'a Span> {
    spans.iter().filter(|s| s.name == name).collect()
}

fn protobuf(uri: String) -> Settings {
    Settings {
        endpoint: Some(uri),
        ..Settings::default()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn each_execution_is_one_trace_of_genai_spans_with_explicit_times() {
    let got = export(protobuf).await;
    let roots: Vec<&Span> = got
        .spans
        .iter()
        .filter(|s| s.name.starts_with("case "))
        .collect();
    assert_eq!(roots.len(), 2);
    assert_ne!(
        roots[0].trace_id, roots[1].trace_id,
        "one trace per execution"
    );
    let run = &named(&got.spans, "run otel-suite")[0];
    assert_eq!(
        string(&run.attributes, "gavel.run.id").as_deref(),
        Some("0190-run")
    );
    assert_eq!(
        string(&run.attributes, "gavel.gate.result").as_deref(),
        Some("UNDECIDED")
    );
    assert_eq!(
        roots[0].links[0].span_id, run.span_id,
        "cases link to the run span"
    );

    let root = named(&got.spans, "case book")[0];
    assert_eq!(
        string(&root.attributes, "gavel.suite").as_deref(),
        Some("otel-suite")
    );
    // 2026-03-01T10:00:01Z, and 3 s later.
    assert_eq!(root.start_time_unix_nano, 1_772_359_201_000_000_000);
    assert_eq!(root.end_time_unix_nano, 1_772_359_204_000_000_000);
    let in_trace = |s: &&Span| s.trace_id == root.trace_id;
    let turns: Vec<&Span> = named(&got.spans, "invoke_agent agent")
        .into_iter()
        .filter(in_trace)
        .collect();
    assert_eq!(turns.len(), 2);
    for t in &turns {
        assert_eq!(t.parent_span_id, root.span_id);
        assert_eq!(
            string(&t.attributes, "gen_ai.conversation.id").as_deref(),
            Some("session-1")
        );
        assert_eq!(
            string(&t.attributes, "gen_ai.operation.name").as_deref(),
            Some("invoke_agent")
        );
    }
    assert_eq!(
        number(&turns[0].attributes, "gen_ai.usage.input_tokens"),
        Some(11.0)
    );
    // The conventions' required provider, their message attributes, and
    // OpenInference's, from which Arize Phoenix shows Input and Output.
    let first = &turns[0].attributes;
    assert_eq!(
        string(first, "gen_ai.provider.name").as_deref(),
        Some("_OTHER")
    );
    let input: serde_json::Value =
        serde_json::from_str(&string(first, "gen_ai.input.messages").unwrap()).unwrap();
    assert_eq!(
        input,
        json!([{"role": "user", "parts": [{"type": "text", "content": "hi"}]}])
    );
    let output: serde_json::Value =
        serde_json::from_str(&string(first, "gen_ai.output.messages").unwrap()).unwrap();
    assert_eq!(output[0]["parts"][0]["content"], "hello");
    assert_eq!(string(first, "input.value").as_deref(), Some("hi"));
    assert_eq!(string(first, "output.value").as_deref(), Some("hello"));
    assert_eq!(
        string(first, "openinference.span.kind").as_deref(),
        Some("AGENT")
    );
    // The second turn starts when the first (500 ms) ended.
    assert_eq!(
        turns[1].start_time_unix_nano,
        root.start_time_unix_nano + 500_000_000
    );
    let search = named(&got.spans, "execute_tool search")
        .into_iter()
        .find(in_trace)
        .unwrap();
    assert_eq!(search.parent_span_id, turns[1].span_id);
    assert_eq!(
        string(&search.attributes, "gen_ai.tool.call.arguments").as_deref(),
        Some(r#"{"to":"LHR"}"#)
    );
    assert_eq!(
        string(&search.attributes, "gen_ai.tool.call.result").as_deref(),
        Some(r#"{"flights":2}"#)
    );

    let judge = named(&got.spans, "chat judge-m")
        .into_iter()
        .find(in_trace)
        .unwrap();
    assert_eq!(
        judge.parent_span_id, turns[1].span_id,
        "the judge's call hangs off the turn it judged"
    );
    assert_eq!(
        string(&judge.attributes, "gen_ai.provider.name").as_deref(),
        Some("openai-compatible")
    );
    assert_eq!(
        string(&judge.attributes, "gen_ai.request.model").as_deref(),
        Some("judge-m")
    );
    assert_eq!(
        number(&judge.attributes, "gen_ai.usage.output_tokens"),
        Some(30.0)
    );
    let harness = named(&got.spans, "chat")
        .into_iter()
        .find(in_trace)
        .unwrap();
    assert_eq!(
        number(&harness.attributes, "gen_ai.usage.input_tokens"),
        Some(3.0)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn verdicts_are_evaluation_events_and_logs_on_the_spans_they_judged() {
    let got = export(protobuf).await;
    let root = named(&got.spans, "case book")[0];
    let in_trace = |s: &&Span| s.trace_id == root.trace_id;
    let turn = named(&got.spans, "invoke_agent agent")
        .into_iter()
        .filter(in_trace)
        .nth(1)
        .unwrap();
    let event = turn
        .events
        .iter()
        .find(|e| e.name == "gen_ai.evaluation.result")
        .unwrap();
    assert_eq!(
        string(&event.attributes, "gen_ai.evaluation.name").as_deref(),
        Some("helpful")
    );
    assert_eq!(
        number(&event.attributes, "gen_ai.evaluation.score.value"),
        Some(0.9)
    );
    assert_eq!(
        string(&event.attributes, "gen_ai.evaluation.score.label").as_deref(),
        Some("pass")
    );
    assert_eq!(
        string(&event.attributes, "gen_ai.evaluation.explanation").as_deref(),
        Some("answered the request")
    );
    // Transcript verdicts land on the root span; per-tool parts on the tools.
    let names = |s: &Span| -> Vec<String> {
        s.events
            .iter()
            .filter_map(|e| string(&e.attributes, "gen_ai.evaluation.name"))
            .collect()
    };
    assert_eq!(names(root), ["steps", "verify"]);
    let book = named(&got.spans, "execute_tool book")
        .into_iter()
        .find(in_trace)
        .unwrap();
    assert_eq!(names(book), ["steps step 2", "verify: book"]);
    let failed = book
        .events
        .iter()
        .find(|e| {
            string(&e.attributes, "gen_ai.evaluation.name").as_deref() == Some("verify: book")
        })
        .unwrap();
    assert_eq!(
        string(&failed.attributes, "gen_ai.evaluation.score.label").as_deref(),
        Some("fail")
    );
    assert_eq!(
        string(&failed.attributes, "gen_ai.evaluation.explanation").as_deref(),
        Some("flight: 1 != 2")
    );

    // The same results as log records, linked to the same spans.
    assert_eq!(
        got.logs.len(),
        2 * 7,
        "3 verdicts + 2 steps + 2 tool grades per execution"
    );
    let log = got
        .logs
        .iter()
        .find(|l| {
            l.trace_id == root.trace_id
                && string(&l.attributes, "gen_ai.evaluation.name").as_deref() == Some("helpful")
        })
        .unwrap();
    assert_eq!(log.event_name, "gen_ai.evaluation.result");
    assert_eq!(log.span_id, turn.span_id);
    assert_eq!(
        number(&log.attributes, "gen_ai.evaluation.score.value"),
        Some(0.9)
    );
    let on_tool = got
        .logs
        .iter()
        .filter(|l| l.span_id == book.span_id)
        .count();
    assert_eq!(on_tool, 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn settings_turn_off_span_events_and_redact_content() {
    // A third execution errored, its reason and its turn's failure quoting the agent.
    let mut broken = execution("broken", "session-3");
    broken.status = gavel_core::Status::Error;
    broken.reason = Some("the agent said B-1001".into());
    broken.transcript.turns[1].failure = Some(gavel_core::TargetFailure {
        message: "HTTP 500: B-1001".into(),
        transient: false,
    });
    let executions = vec![
        execution("book", "session-1"),
        execution("cancel", "session-2"),
        broken,
    ];
    let got = export_executions(
        |uri| Settings {
            endpoint: Some(uri),
            redact_content: true,
            span_events: false,
            ..Settings::default()
        },
        executions,
    )
    .await;
    // No agent-derived text: explanations, reasons and error messages included.
    let text = String::from_utf8_lossy(&got.bytes);
    for said in [
        "answered the request",
        "right search",
        "flight: 1 != 2",
        "B-1001",
        "hello",
        "LHR",
    ] {
        assert!(!text.contains(said), "{said:?} was exported");
    }
    assert!(
        got.logs
            .iter()
            .all(|l| attr(&l.attributes, "gen_ai.evaluation.explanation").is_none())
    );
    let errored = got
        .spans
        .iter()
        .filter(|s| s.status.as_ref().is_some_and(|st| st.message == "error"))
        .count();
    assert_eq!(
        errored, 2,
        "the broken case and its turn say `error`, no more"
    );
    assert!(got.spans.iter().all(|s| s.events.is_empty()));
    assert!(!got.logs.is_empty(), "the log records still go out");
    for s in &got.spans {
        for key in [
            "gen_ai.tool.call.arguments",
            "gen_ai.tool.call.result",
            "gen_ai.input.messages",
            "gen_ai.output.messages",
            "input.value",
            "output.value",
        ] {
            assert!(attr(&s.attributes, key).is_none(), "{key} on {}", s.name);
        }
    }
    assert!(!named(&got.spans, "execute_tool book").is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn json_protocol_sends_the_same_spans() {
    let got = export(|uri| Settings {
        endpoint: Some(uri),
        protocol: Protocol::HttpJson,
        ..Settings::default()
    })
    .await;
    assert_eq!(named(&got.spans, "execute_tool search").len(), 2);
    assert_eq!(got.logs.len(), 14);
}

#[tokio::test(flavor = "multi_thread")]
async fn no_secret_is_exported() {
    let got = export(protobuf).await;
    assert!(!got.spans.is_empty());
    let needle = CANARY.as_bytes();
    let hits = got
        .bytes
        .windows(needle.len())
        .filter(|w| *w == needle)
        .count();
    assert_eq!(hits, 0, "the canary key appears in the export");
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for s in &got.spans {
        *seen.entry(s.name.as_str()).or_default() += 1;
    }
    assert_eq!(seen.get("chat judge-m"), Some(&2));
}

/// The SDK's batch processors answer `Ok` from `shutdown` after a failed
/// export: gavel keeps the failure and reports it, naming the receiver.
#[tokio::test(flavor = "multi_thread")]
async fn a_refused_export_is_an_error_naming_the_receiver() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(415))
        .mount(&server)
        .await;
    let exporter = Exporter::new(protobuf(server.uri())).unwrap();
    let executions = vec![execution("book", "session-1")];
    let result = tokio::task::spawn_blocking(move || {
        gavel_otel::export_stored(exporter, &run(), &executions, None)
    })
    .await
    .unwrap();
    match result {
        Err(gavel_otel::OtelError::Export {
            signal,
            receiver,
            message,
        }) => {
            assert_eq!(signal, "traces");
            assert_eq!(receiver, format!("{}/v1/traces", server.uri()));
            assert!(message.contains("415"), "{message}");
        }
        other => panic!("expected an export error, got {other:?}"),
    }
    assert!(!server.received_requests().await.unwrap().is_empty());
}

/// A turn judged by 300 checks exports 300 evaluations, as log records and as
/// span events; a failed turn and an errored check say `error.type`.
#[tokio::test(flavor = "multi_thread")]
async fn a_turn_with_300_checks_exports_300_evaluations() {
    let mut e = execution("many", "session-9");
    let verdict = e.verdicts[0].clone();
    e.verdicts = (0..300)
        .map(|i| {
            let mut v = verdict.clone();
            v.check = format!("check-{i}");
            v.status = if i == 7 {
                gavel_core::Status::Error
            } else {
                gavel_core::Status::Pass
            };
            v
        })
        .collect();
    e.status = gavel_core::Status::Error;
    e.transcript.turns[1].failure = Some(gavel_core::TargetFailure {
        message: "timed out after 5s".into(),
        transient: true,
    });
    let got = export_executions(protobuf, vec![e]).await;
    let evaluations = got
        .logs
        .iter()
        .filter(|l| l.event_name == "gen_ai.evaluation.result")
        .count();
    assert_eq!(evaluations, 300);
    let turn = &named(&got.spans, "invoke_agent agent")[1];
    assert_eq!(turn.events.len(), 300);
    assert_eq!(turn.dropped_events_count, 0);
    assert_eq!(
        string(&turn.attributes, "error.type").as_deref(),
        Some("timeout")
    );
    let errored: Vec<&LogRecord> = got
        .logs
        .iter()
        .filter(|l| {
            string(&l.attributes, "gen_ai.evaluation.score.label").as_deref() == Some("error")
        })
        .collect();
    assert_eq!(errored.len(), 1);
    assert_eq!(
        string(&errored[0].attributes, "error.type").as_deref(),
        Some("_OTHER")
    );
    let root = &named(&got.spans, "case many")[0];
    assert_eq!(
        string(&root.attributes, "error.type").as_deref(),
        Some("_OTHER")
    );
}
