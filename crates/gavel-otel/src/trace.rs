//! The spans of one execution: a root span for the case, `invoke_agent` per
//! turn, `execute_tool` per tool call and `chat` for the model calls gavel made
//! around a turn. Spans are started here and ended by [`ExecutionSpans::end`],
//! after the evaluations are attached.

use std::time::Duration;

use gavel_core::{Execution, TargetFailure, ToolCall, Transcript, Turn, Usage};
use opentelemetry::trace::{Link, SpanContext, SpanKind, Status, TraceContextExt, Tracer};
use opentelemetry::{Context, KeyValue};
use opentelemetry_sdk::trace::SdkTracer;

use crate::attrs::{CONVERSATION, ERROR_TYPE, OPENINFERENCE_KIND, OPERATION, PROVIDER, int, text};
use crate::timeline::Interval;

/// Where the run's identity comes from, for every case's root span.
#[derive(Debug, Clone)]
pub(crate) struct RunContext {
    /// The run id.
    pub(crate) run_id: String,
    /// The suite's name.
    pub(crate) suite: String,
    /// The run span, linked from every case.
    pub(crate) span: Option<SpanContext>,
}

/// One tool call's span.
pub(crate) struct ToolSpan {
    pub(crate) cx: Context,
    pub(crate) at: Interval,
    /// The turn's round and the call's name, to find it from a step score.
    pub(crate) round: usize,
    pub(crate) name: String,
}

/// The open spans of one execution.
pub(crate) struct ExecutionSpans {
    pub(crate) root: Context,
    pub(crate) whole: Interval,
    /// Per turn: its span and interval.
    pub(crate) turns: Vec<(Context, Interval)>,
    /// Every tool call, in transcript order (`Transcript::tool_calls`).
    pub(crate) tools: Vec<ToolSpan>,
    /// Spans with nothing to add, ended last with the others.
    others: Vec<(Context, Interval)>,
}

impl ExecutionSpans {
    /// Starts every span of `e`'s trace.
    pub(crate) fn start(
        tracer: &SdkTracer,
        run: &RunContext,
        e: &Execution,
        whole: Interval,
        turn_times: &[Interval],
        redact: bool,
    ) -> ExecutionSpans {
        let mut attrs = vec![
            text("gavel.run.id", run.run_id.clone()),
            text("gavel.suite", run.suite.clone()),
            text("gavel.case.id", e.case_id.clone()),
            text("gavel.case.name", e.case_name.clone()),
            text("gavel.target", e.target.clone()),
            int("gavel.repeat_index", e.repeat_index),
            text("gavel.status", e.status.to_string()),
            text(CONVERSATION, e.transcript.session_id.clone()),
        ];
        if let Some(score) = e.score {
            attrs.push(KeyValue::new("gavel.score", score));
        }
        if !e.tags.is_empty() {
            attrs.push(KeyValue::new(
                "gavel.case.tags",
                opentelemetry::Value::Array(
                    e.tags
                        .iter()
                        .map(|t| opentelemetry::StringValue::from(t.clone()))
                        .collect::<Vec<_>>()
                        .into(),
                ),
            ));
        }
        if let Some(reason) = e.reason.as_ref().filter(|_| !redact) {
            attrs.push(text("gavel.reason", reason.clone()));
        }
        // What Arize Phoenix shows as the trace's (and session's) Input and
        // Output: the conversation's first message and last answer.
        attrs.push(text(OPENINFERENCE_KIND, "CHAIN"));
        let turns = &e.transcript.turns;
        if let (Some(first), Some(last), false) = (turns.first(), turns.last(), redact) {
            attrs.push(text("input.value", first.input.clone()));
            attrs.push(text("output.value", last.output.clone()));
        }
        let links = run
            .span
            .iter()
            .map(|s| Link::with_context(s.clone()))
            .collect();
        let root = tracer
            .span_builder(format!("case {}", e.case_id))
            .with_kind(SpanKind::Internal)
            .with_start_time(whole.start)
            .with_attributes(attrs)
            .with_links(links)
            .start_with_context(tracer, &Context::new());
        let root = Context::new().with_span(root);
        if e.status == gavel_core::Status::Error {
            root.span().set_attribute(text(ERROR_TYPE, "_OTHER"));
            root.span()
                .set_status(error_status(e.reason.as_deref(), redact));
        }
        let mut spans = ExecutionSpans {
            root,
            whole,
            turns: Vec::new(),
            tools: Vec::new(),
            others: Vec::new(),
        };
        for (turn, at) in e.transcript.turns.iter().zip(turn_times) {
            spans.turn(tracer, e, turn, *at, redact);
        }
        spans
    }

    /// Starts a turn's `invoke_agent` span and its children.
    fn turn(&mut self, tracer: &SdkTracer, e: &Execution, turn: &Turn, at: Interval, redact: bool) {
        let session = match &turn.branch {
            Some(b) => Transcript::branch_session(&e.transcript.session_id, b),
            None => e.transcript.session_id.clone(),
        };
        let agent = turn.agent.clone().unwrap_or_else(|| e.target.clone());
        let mut attrs = vec![
            text(OPERATION, "invoke_agent"),
            // The agent under test is the user's own: no provider of the
            // conventions' list applies.
            text(PROVIDER, "_OTHER"),
            text("gen_ai.agent.name", agent.clone()),
            text(CONVERSATION, session),
            text(OPENINFERENCE_KIND, "AGENT"),
            text("gavel.target", e.target.clone()),
            int("gavel.round", turn.round),
            KeyValue::new("gavel.followup", turn.followup),
        ];
        if let Some(b) = &turn.branch {
            attrs.push(text("gavel.branch", b.clone()));
        }
        if let Some(u) = &turn.usage {
            attrs.extend(usage(u));
        }
        if !redact {
            attrs.extend(messages(&turn.input, &turn.output));
        }
        if let Some(f) = &turn.failure {
            attrs.push(text(ERROR_TYPE, error_type(f)));
        }
        let span = tracer
            .span_builder(format!("invoke_agent {agent}"))
            .with_kind(SpanKind::Client)
            .with_start_time(at.start)
            .with_attributes(attrs)
            .start_with_context(tracer, &self.root);
        let cx = self.root.with_span(span);
        if let Some(f) = &turn.failure {
            cx.span()
                .set_status(error_status(Some(f.message.as_str()), redact));
        }
        let n = turn.tool_calls.len();
        for (i, call) in turn.tool_calls.iter().enumerate() {
            let slot = at.slice(i, n);
            let span = tracer
                .span_builder(format!("execute_tool {}", call.name))
                .with_kind(SpanKind::Internal)
                .with_start_time(slot.start)
                .with_attributes(tool_attrs(call, redact))
                .start_with_context(tracer, &cx);
            self.tools.push(ToolSpan {
                cx: cx.with_span(span),
                at: slot,
                round: turn.round,
                name: call.name.clone(),
            });
        }
        if let Some(u) = &turn.harness_usage {
            let slot = at.tail(Duration::ZERO);
            let mut attrs = vec![
                text(OPERATION, "chat"),
                text(PROVIDER, "_OTHER"),
                text(OPENINFERENCE_KIND, "LLM"),
                text("gavel.caller", "harness"),
            ];
            attrs.extend(usage(u));
            let span = tracer
                .span_builder("chat")
                .with_kind(SpanKind::Client)
                .with_start_time(slot.start)
                .with_attributes(attrs)
                .start_with_context(tracer, &cx);
            self.others.push((cx.with_span(span), slot));
        }
        self.turns.push((cx, at));
    }

    /// Starts a `chat` span for a judge's model calls under `parent`, ending
    /// with the execution; `model` is the judge's model id.
    pub(crate) fn judge_chat(
        &mut self,
        tracer: &SdkTracer,
        parent: &Context,
        model: &str,
        tokens: (u64, u64),
        latency: Duration,
    ) {
        let at = self.whole.tail(latency);
        let mut attrs = vec![
            text(OPERATION, "chat"),
            text(OPENINFERENCE_KIND, "LLM"),
            text("gavel.caller", "judge"),
        ];
        attrs.extend(crate::attrs::model(model));
        attrs.push(int("gen_ai.usage.input_tokens", tokens.0));
        attrs.push(int("gen_ai.usage.output_tokens", tokens.1));
        let name = match model.split_once(':') {
            Some((_, m)) => format!("chat {}", m.split_once('@').map_or(m, |(n, _)| n)),
            None => format!("chat {model}"),
        };
        let span = tracer
            .span_builder(name)
            .with_kind(SpanKind::Client)
            .with_start_time(at.start)
            .with_attributes(attrs)
            .start_with_context(tracer, parent);
        self.others.push((parent.with_span(span), at));
    }

    /// Ends every span, children before parents, at its recorded end.
    pub(crate) fn end(self) {
        for (cx, at) in &self.others {
            cx.span().end_with_timestamp(at.end);
        }
        for tool in &self.tools {
            tool.cx.span().end_with_timestamp(tool.at.end);
        }
        for (cx, at) in &self.turns {
            cx.span().end_with_timestamp(at.end);
        }
        self.root.span().end_with_timestamp(self.whole.end);
    }
}

/// An error status: with `redact`, its message (agent or provider text) is
/// left out.
fn error_status(message: Option<&str>, redact: bool) -> Status {
    match message {
        Some(m) if !redact => Status::error(m.to_owned()),
        _ => Status::error("error"),
    }
}

/// A target failure's low-cardinality class, for `error.type`: `timeout`
/// when the target did not answer in time, else the conventions' `_OTHER`.
fn error_type(f: &TargetFailure) -> &'static str {
    if f.message.contains("timed out") {
        "timeout"
    } else {
        "_OTHER"
    }
}

/// Token usage attributes.
fn usage(u: &Usage) -> Vec<KeyValue> {
    vec![
        int("gen_ai.usage.input_tokens", u.input_tokens),
        int("gen_ai.usage.output_tokens", u.output_tokens),
    ]
}

/// An `execute_tool` span's attributes; arguments and result only unredacted.
fn tool_attrs(call: &ToolCall, redact: bool) -> Vec<KeyValue> {
    let mut attrs = vec![
        text(OPERATION, "execute_tool"),
        text(OPENINFERENCE_KIND, "TOOL"),
        text("gen_ai.tool.name", call.name.clone()),
        text("gen_ai.tool.type", "function"),
    ];
    if let Some(agent) = &call.agent {
        attrs.push(text("gen_ai.agent.name", agent.clone()));
    }
    if !redact {
        let arguments = call.arguments.to_string();
        attrs.push(text("gen_ai.tool.call.arguments", arguments.clone()));
        attrs.push(text("input.value", arguments));
        if let Some(r) = &call.result {
            attrs.push(text("gen_ai.tool.call.result", r.to_string()));
            attrs.push(text("output.value", r.to_string()));
        }
    }
    attrs
}

/// A turn's text as the GenAI conventions' `gen_ai.input.messages` and
/// `gen_ai.output.messages` (JSON), and as OpenInference's `input.value` and
/// `output.value`, which Arize Phoenix shows as a trace's Input and Output.
fn messages(input: &str, output: &str) -> Vec<KeyValue> {
    let message = |role: &str, content: &str| {
        serde_json::json!([{
            "role": role,
            "parts": [{"type": "text", "content": content}],
        }])
        .to_string()
    };
    vec![
        text("gen_ai.input.messages", message("user", input)),
        text("gen_ai.output.messages", message("assistant", output)),
        text("input.value", input),
        text("output.value", output),
    ]
}
