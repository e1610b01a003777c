//! The spans of one execution: a root span for the case, `invoke_agent` per
//! turn, `execute_tool` per tool call and `chat` for the model calls gavel made
//! around a turn. Spans are started here and ended by [`ExecutionSpans::end`],
//! after the evaluations are attached.

use std::sync::Arc;
use std::time::Duration;

use gavel_core::{
    Execution, ModelCall, ModelCaller, TargetFailure, ToolCall, Transcript, Turn, Usage,
};
use opentelemetry::trace::{
    Link, SpanBuilder, SpanContext, SpanKind, Status, TraceContextExt, TraceId, Tracer,
};
use opentelemetry::{Context, KeyValue};
use opentelemetry_sdk::trace::SdkTracer;

use crate::attrs::{CONVERSATION, ERROR_TYPE, OPENINFERENCE_KIND, OPERATION, PROVIDER, int, text};
use crate::ids::{self, Place};
use crate::timeline::Interval;

/// The output type a request asked for (judges and the harness ask for JSON).
const OUTPUT_TYPE: &str = "gen_ai.output.type";

/// Where the run's identity comes from, for every case's root span.
#[derive(Debug, Clone)]
pub(crate) struct RunContext {
    /// The run id.
    pub(crate) run_id: Arc<str>,
    /// The suite's name.
    pub(crate) suite: Arc<str>,
    /// The run span, linked from every case.
    pub(crate) span: Option<SpanContext>,
}

/// What every span of one execution repeats, shared rather than copied.
struct Shared {
    /// The execution's session id.
    session: Arc<str>,
    /// Its target's name.
    target: Arc<str>,
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
    /// The trace's id (from the run and the execution).
    trace: TraceId,
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
        let session: Arc<str> = e.transcript.session_id.as_str().into();
        let target: Arc<str> = e.target.as_str().into();
        let mut attrs = Vec::with_capacity(16);
        attrs.extend([
            text("gavel.run.id", run.run_id.clone()),
            text("gavel.suite", run.suite.clone()),
            text("gavel.case.id", e.case_id.clone()),
            text("gavel.target", target.clone()),
            int("gavel.repeat_index", e.repeat_index),
            text("gavel.status", e.status.as_str()),
            text(CONVERSATION, session.clone()),
        ]);
        // A case without a name of its own is named by its id.
        if e.case_name != e.case_id {
            attrs.push(text("gavel.case.name", e.case_name.clone()));
        }
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
        let trace = ids::trace_id(&run.run_id, Some((&e.case_id, &e.target, e.repeat_index)));
        let builder = tracer
            .span_builder(format!("case {}", e.case_id))
            .with_kind(SpanKind::Internal)
            .with_start_time(whole.start)
            .with_attributes(attrs)
            .with_links(links);
        let root = start(tracer, builder, &Context::new(), trace, Place::Root);
        if e.status == gavel_core::Status::Error {
            root.span().set_attribute(text(ERROR_TYPE, "_OTHER"));
            root.span()
                .set_status(error_status(e.reason.as_deref(), redact));
        }
        let mut spans = ExecutionSpans {
            trace,
            root,
            whole,
            turns: Vec::with_capacity(turns.len()),
            tools: Vec::new(),
            others: Vec::with_capacity(turns.len() + e.verdicts.len()),
        };
        let shared = Shared { session, target };
        for (turn, at) in e.transcript.turns.iter().zip(turn_times) {
            spans.turn(tracer, &shared, turn, *at, redact);
        }
        spans
    }

    /// Starts `builder`'s span under `parent`, with the id of `place` in
    /// this execution's trace.
    fn child(
        &self,
        tracer: &SdkTracer,
        builder: SpanBuilder,
        parent: &Context,
        place: Place,
    ) -> Context {
        start(tracer, builder, parent, self.trace, place)
    }

    /// Starts a turn's `invoke_agent` span and its children.
    fn turn(
        &mut self,
        tracer: &SdkTracer,
        shared: &Shared,
        turn: &Turn,
        at: Interval,
        redact: bool,
    ) {
        let index = self.turns.len();
        let session: Arc<str> = match &turn.branch {
            Some(b) => Transcript::branch_session(&shared.session, b).into(),
            None => shared.session.clone(),
        };
        let agent: Arc<str> = match &turn.agent {
            Some(a) => a.as_str().into(),
            None => shared.target.clone(),
        };
        let mut attrs = Vec::with_capacity(16);
        attrs.extend([
            text(OPERATION, "invoke_agent"),
            // The agent under test is the user's own: no provider of the
            // conventions' list applies.
            text(PROVIDER, "_OTHER"),
            text("gen_ai.agent.name", agent.clone()),
            text(CONVERSATION, session.clone()),
            text(OPENINFERENCE_KIND, "AGENT"),
            int("gavel.round", turn.round),
        ]);
        if turn.followup {
            attrs.push(KeyValue::new("gavel.followup", true));
        }
        if let Some(b) = &turn.branch {
            attrs.push(text("gavel.branch", b.clone()));
        }
        if let Some(u) = &turn.usage {
            attrs.extend(usage(u));
        }
        // A `chat` target's model: the one its own calls went to.
        let target_model = turn
            .model_calls
            .iter()
            .find(|c| c.caller == ModelCaller::Target);
        if let Some(call) = target_model {
            let [model, _] = crate::attrs::model(&call.model);
            attrs.push(model);
        }
        if !redact {
            attrs.extend(messages(&turn.input, &turn.output));
        }
        if let Some(f) = &turn.failure {
            attrs.push(text(ERROR_TYPE, error_type(f)));
        }
        let builder = tracer
            .span_builder(format!("invoke_agent {agent}"))
            .with_kind(SpanKind::Client)
            .with_start_time(at.start)
            .with_attributes(attrs);
        let cx = self.child(tracer, builder, &self.root, Place::Turn(index));
        if let Some(f) = &turn.failure {
            cx.span()
                .set_status(error_status(Some(f.message.as_str()), redact));
        }
        let n = turn.tool_calls.len();
        for (i, call) in turn.tool_calls.iter().enumerate() {
            let slot = at.slice(i, n);
            let builder = tracer
                .span_builder(format!("execute_tool {}", call.name))
                .with_kind(SpanKind::Internal)
                .with_start_time(slot.start)
                .with_attributes(tool_attrs(call, redact));
            let place = Place::Tool(self.tools.len());
            self.tools.push(ToolSpan {
                cx: self.child(tracer, builder, &cx, place),
                at: slot,
                round: turn.round,
                name: call.name.clone(),
            });
        }
        self.model_calls(tracer, &cx, index, turn, at, &session);
        self.turns.push((cx, at));
    }

    /// Starts a `chat` span per model call gavel made for turn `index` (in
    /// conversation `session`): a `chat` target's own calls laid end to end
    /// from the turn's start, the harness's at its end. A turn stored before
    /// calls were kept has only its harness usage: one `chat` span without a
    /// model stands for them.
    fn model_calls(
        &mut self,
        tracer: &SdkTracer,
        cx: &Context,
        index: usize,
        turn: &Turn,
        at: Interval,
        session: &Arc<str>,
    ) {
        let mut next = at.start;
        for (k, call) in turn.model_calls.iter().enumerate() {
            let length = Duration::from_millis(call.latency_ms);
            let slot = match call.caller {
                ModelCaller::Target => {
                    let slot = Interval {
                        start: next.min(at.end),
                        end: (next + length).min(at.end).max(next.min(at.end)),
                    };
                    next = slot.end;
                    slot
                }
                ModelCaller::FollowupDetector | ModelCaller::SimulatedUser => at.tail(length),
            };
            let mut attrs = model_call_attrs(call);
            attrs.push(text(CONVERSATION, session.clone()));
            let builder = chat_span(&call.model, attrs);
            let span = self.child(
                tracer,
                builder.with_start_time(slot.start),
                cx,
                Place::Call(index, k),
            );
            if call.error.is_some() {
                span.span().set_status(Status::error("error"));
            }
            self.others.push((span, slot));
        }
        let harness_kept = turn
            .model_calls
            .iter()
            .any(|c| c.caller != ModelCaller::Target);
        if let (Some(u), false) = (&turn.harness_usage, harness_kept) {
            let slot = at.tail(Duration::ZERO);
            let mut attrs = vec![
                text(OPERATION, "chat"),
                text(PROVIDER, "_OTHER"),
                text(OPENINFERENCE_KIND, "LLM"),
                text(CONVERSATION, session.clone()),
                text("gavel.caller", "harness"),
            ];
            attrs.extend(usage(u));
            let builder = tracer
                .span_builder("chat")
                .with_kind(SpanKind::Client)
                .with_start_time(slot.start)
                .with_attributes(attrs);
            let span = self.child(tracer, builder, cx, Place::Harness(index));
            self.others.push((span, slot));
        }
    }

    /// Starts a `chat` span for the model calls of the judge of verdict
    /// `verdict` (its index) under `parent`, ending with the execution;
    /// `model` is the judge's model id.
    pub(crate) fn judge_chat(
        &mut self,
        tracer: &SdkTracer,
        parent: &Context,
        verdict: usize,
        model: &str,
        tokens: (u64, u64),
        latency: Duration,
    ) {
        let at = self.whole.tail(latency);
        let attrs = vec![
            text("gavel.caller", "judge"),
            text(OUTPUT_TYPE, "json"),
            int("gen_ai.usage.input_tokens", tokens.0),
            int("gen_ai.usage.output_tokens", tokens.1),
        ];
        let builder = chat_span(model, attrs).with_start_time(at.start);
        let span = self.child(tracer, builder, parent, Place::Judge(verdict));
        self.others.push((span, at));
    }

    /// How many spans this execution has.
    pub(crate) fn len(&self) -> usize {
        1 + self.turns.len() + self.tools.len() + self.others.len()
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

/// Starts `builder`'s span under `parent` with the ids of `place` in `trace`
/// (a child takes its parent's trace id).
pub(crate) fn start(
    tracer: &SdkTracer,
    builder: SpanBuilder,
    parent: &Context,
    trace: TraceId,
    place: Place,
) -> Context {
    let ids = (trace, ids::span_id(trace, place));
    let span = ids::planned(ids, || builder.start_with_context(tracer, parent));
    parent.with_span(span)
}

/// A `chat` span for model `model` (an id, `provider:name`): the operation,
/// the provider and model, and `attrs`.
fn chat_span(model: &str, attrs: Vec<KeyValue>) -> SpanBuilder {
    let named = crate::attrs::model(model);
    let name = format!("chat {}", named[0].value.as_str());
    let mut all = Vec::with_capacity(4 + attrs.len());
    all.extend([text(OPERATION, "chat"), text(OPENINFERENCE_KIND, "LLM")]);
    all.extend(named);
    all.extend(attrs);
    SpanBuilder::from_name(name)
        .with_kind(SpanKind::Client)
        .with_attributes(all)
}

/// A model call's own attributes: who made it, its tokens and its error class
/// (and the harness's structured answers' `json` output type).
fn model_call_attrs(call: &ModelCall) -> Vec<KeyValue> {
    let mut attrs = Vec::with_capacity(6);
    attrs.push(text("gavel.caller", call.caller.as_str()));
    if call.caller != ModelCaller::Target {
        attrs.push(text(OUTPUT_TYPE, "json"));
    }
    if let Some(u) = &call.usage {
        attrs.extend(usage(u));
    }
    if let Some(e) = &call.error {
        attrs.push(text(ERROR_TYPE, e.clone()));
    }
    attrs
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
fn usage(u: &Usage) -> [KeyValue; 2] {
    [
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
    if let Some(id) = &call.id {
        attrs.push(text("gen_ai.tool.call.id", id.clone()));
    }
    if let Some(agent) = &call.agent {
        attrs.push(text("gen_ai.agent.name", agent.clone()));
    }
    if !redact {
        let arguments: Arc<str> = call.arguments.to_string().into();
        attrs.push(text("gen_ai.tool.call.arguments", arguments.clone()));
        attrs.push(text("input.value", arguments));
        if let Some(r) = &call.result {
            let result: Arc<str> = r.to_string().into();
            attrs.push(text("gen_ai.tool.call.result", result.clone()));
            attrs.push(text("output.value", result));
        }
    }
    attrs
}

/// A turn's text as the GenAI conventions' `gen_ai.input.messages` and
/// `gen_ai.output.messages` (JSON), and as OpenInference's `input.value` and
/// `output.value`, which Arize Phoenix shows as a trace's Input and Output.
fn messages(input: &str, output: &str) -> [KeyValue; 4] {
    // Written out rather than built as a `serde_json::Value` (a map per
    // object, and a third of the export's CPU on the run's own threads).
    let message = |role: &str, content: &str| {
        // A string always serialises.
        let content = serde_json::to_string(content).unwrap_or_default();
        format!(r#"[{{"role":"{role}","parts":[{{"type":"text","content":{content}}}]}}]"#)
    };
    [
        text("gen_ai.input.messages", message("user", input)),
        text("gen_ai.output.messages", message("assistant", output)),
        text("input.value", input.to_owned()),
        text("output.value", output.to_owned()),
    ]
}
