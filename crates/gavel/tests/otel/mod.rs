//! What the OpenTelemetry tests share: the judged suite they export (a command
//! target that calls two tools, judged by the local OpenAI-compatible mock), and
//! a local OTLP/HTTP receiver whose requests are decoded with the official
//! protobuf definitions (opentelemetry-proto's generated types). gavel-web's
//! tests include this file too.
#![allow(dead_code)]

use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::KeyValue;
use opentelemetry_proto::tonic::common::v1::any_value::Value;
use opentelemetry_proto::tonic::logs::v1::LogRecord;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use wiremock::matchers::method;
use wiremock::{MockServer, ResponseTemplate};

/// A key that must appear in no exported byte.
pub(crate) const CANARY: &str = "sk-canary-0tel-5e1f";

/// The suite: a step score per tool call, a tool verification, a judged
/// criterion, and the run's session ids from the command target.
pub(crate) fn suite(url: &str) -> String {
    format!(
        r#"
name: otel-export
judge:
  model: openai-compatible:judge@{url}/v1
targets:
  agent:
    type: command
    command: [sh, -c, 'while IFS= read -r line; do printf "%s\n" "{{\"output\": \"February earned 1 dollar.\", \"tool_calls\": [{{\"name\": \"get_revenue_data\", \"arguments\": {{\"month\": \"2026-02\"}}, \"result\": {{\"total\": 1}}}}, {{\"name\": \"format_money\", \"arguments\": {{\"amount\": 1}}, \"result\": \"1 dollar\"}}]}}"; done']
    response: {{output: /output, tool_calls: /tool_calls}}
cases:
  - id: revenue
    input: How much revenue did the City Apartment make in February?
    criteria: States the February revenue.
    checks:
      - type: step-score
        criteria: Each call fetches or formats what the question needs.
      - type: tool-verification
        calls:
          - tool: get_revenue_data
            arguments: {{month: "2026-02"}}
  - id: revenue-again
    input: And in February again?
    checks:
      - type: contains
        value: February
"#
    )
}

/// Everything one receiver got.
#[derive(Default)]
pub(crate) struct Received {
    pub(crate) spans: Vec<Span>,
    pub(crate) logs: Vec<LogRecord>,
    /// Every body and header byte, for canary searches.
    pub(crate) bytes: Vec<u8>,
}

/// A receiver answering 200 to every POST.
pub(crate) async fn receiver() -> MockServer {
    let server = MockServer::start().await;
    wiremock::Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200))
        .mount(&server)
        .await;
    server
}

/// Everything `server` was sent so far, decoded.
pub(crate) async fn received(server: &MockServer) -> Received {
    let mut out = Received::default();
    for r in server.received_requests().await.unwrap() {
        out.bytes.extend_from_slice(&r.body);
        for (name, value) in &r.headers {
            out.bytes.extend_from_slice(name.as_str().as_bytes());
            out.bytes.extend_from_slice(value.as_bytes());
        }
        match r.url.path() {
            "/v1/traces" => {
                let req = ExportTraceServiceRequest::decode(r.body.as_slice()).unwrap();
                for rs in req.resource_spans {
                    out.spans
                        .extend(rs.scope_spans.into_iter().flat_map(|s| s.spans));
                }
            }
            "/v1/logs" => {
                let req = ExportLogsServiceRequest::decode(r.body.as_slice()).unwrap();
                for rl in req.resource_logs {
                    out.logs
                        .extend(rl.scope_logs.into_iter().flat_map(|s| s.log_records));
                }
            }
            other => panic!("unexpected request to {other}"),
        }
    }
    out
}

/// A string attribute.
pub(crate) fn string(attrs: &[KeyValue], key: &str) -> Option<String> {
    attrs.iter().find(|kv| kv.key == key).and_then(|kv| {
        match kv.value.as_ref()?.value.as_ref()? {
            Value::StringValue(s) => Some(s.clone()),
            _ => None,
        }
    })
}
