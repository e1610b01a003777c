//! Verdicts as `gen_ai.evaluation.result` events: a log record linked to the
//! span judged and, when enabled, a span event with the same attributes. Round
//! verdicts land on the round's last turn, transcript verdicts on the case's
//! root span, step scores and tool verifications on their tool spans.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use gavel_core::{Execution, Verdict};
use opentelemetry::logs::{LogRecord, Logger, Severity};
use opentelemetry::trace::{SpanId, TraceContextExt};
use opentelemetry::{Context, KeyValue};
use opentelemetry_sdk::logs::SdkLogger;
use opentelemetry_sdk::trace::SdkTracer;

use crate::attrs::{EVALUATION_EVENT, int, text};
use crate::phoenix::Phoenix;
use crate::trace::ExecutionSpans;

/// One evaluation result, before it is attached. Its texts are shared by the
/// span event and the log record (a reference count, not a copy).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Evaluation {
    pub(crate) name: Arc<str>,
    pub(crate) score: Option<f64>,
    pub(crate) label: &'static str,
    pub(crate) explanation: Arc<str>,
}

impl Evaluation {
    /// The convention's attributes; with `redact`, no explanation (it quotes
    /// what the agent said).
    pub(crate) fn attributes(&self, redact: bool) -> Vec<KeyValue> {
        let mut kvs = Vec::with_capacity(6);
        kvs.push(text("gen_ai.evaluation.name", self.name.clone()));
        kvs.push(text("gen_ai.evaluation.score.label", self.label));
        if !redact {
            kvs.push(text(
                "gen_ai.evaluation.explanation",
                self.explanation.clone(),
            ));
        }
        if let Some(s) = self.score {
            kvs.push(KeyValue::new("gen_ai.evaluation.score.value", s));
        }
        // The check could not be run (the harness failed, not the agent).
        if self.label == "error" {
            kvs.push(text(crate::attrs::ERROR_TYPE, "_OTHER"));
        }
        kvs
    }
}

/// Span events one span holds (the tracer provider's limit too): past it, a
/// span's further evaluations go to log records only, and the span's
/// `gavel.evaluations.not_in_events` attribute says how many.
pub(crate) const EVENTS_PER_SPAN: usize = 1024;

/// Where evaluations go: the logger (when logs are on) and whether span events are added.
pub(crate) struct Targets<'a> {
    pub(crate) tracer: &'a SdkTracer,
    pub(crate) logger: Option<&'a SdkLogger>,
    pub(crate) span_events: bool,
    /// Leave agent-derived text (explanations) out (`--otel-redact`).
    pub(crate) redact: bool,
    /// Span events added so far, per span.
    pub(crate) events: RefCell<HashMap<SpanId, usize>>,
    /// Where verdicts also go as span annotations (`--otel-phoenix`).
    pub(crate) phoenix: Option<&'a Phoenix>,
    /// Evaluations emitted so far in this execution (annotation identifiers).
    pub(crate) emitted: Cell<usize>,
}

/// Attaches every verdict of `e` (and its per-tool parts) to `spans`.
pub(crate) fn attach(targets: &Targets<'_>, e: &Execution, spans: &mut ExecutionSpans) {
    for (n, verdict) in e.verdicts.iter().enumerate() {
        let (cx, at) = judged_span(e, spans, verdict);
        let eval = Evaluation {
            name: verdict.check.as_str().into(),
            score: verdict.score,
            label: verdict.status.as_str(),
            explanation: verdict.reason.as_str().into(),
        };
        let by_model = verdict.evidence.model.is_some();
        let kind = verdict.kind.as_str();
        emit(targets, &cx, at, &eval, kind, by_model);
        if let Some(model) = &verdict.evidence.model {
            let calls = verdict.evidence.calls.unwrap_or_default();
            let tokens = (calls.input_tokens, calls.output_tokens);
            let latency = Duration::from_millis(calls.latency_ms);
            spans.judge_chat(targets.tracer, &cx, n, model, tokens, latency);
        }
        for (index, eval) in per_tool(e, spans, verdict) {
            let tool = &spans.tools[index];
            emit(targets, &tool.cx, tool.at.end, &eval, kind, by_model);
        }
    }
}

/// The span a verdict judged, and when it ended.
fn judged_span(e: &Execution, spans: &ExecutionSpans, v: &Verdict) -> (Context, SystemTime) {
    let turn = v.round.and_then(|r| {
        e.transcript
            .turns
            .iter()
            .rposition(|t| t.round == r && t.branch.is_none())
    });
    match turn.and_then(|i| spans.turns.get(i)) {
        Some((cx, at)) => (cx.clone(), at.end),
        None => (spans.root.clone(), spans.whole.end),
    }
}

/// Step scores (`step-score`) and per-call grades (`tool-verification`) that
/// belong to a tool span: (index into `spans.tools`, evaluation).
fn per_tool(e: &Execution, spans: &ExecutionSpans, v: &Verdict) -> Vec<(usize, Evaluation)> {
    let mut used = vec![false; spans.tools.len()];
    let steps = v.evidence.steps().iter().filter_map(|step| {
        let tool = step.tool.as_deref()?;
        let index = (0..spans.tools.len()).find(|&i| {
            !used[i] && spans.tools[i].round == step.round && spans.tools[i].name == tool
        })?;
        used[index] = true;
        Some((
            index,
            Evaluation {
                name: format!("{} step {}", v.check, step.step).into(),
                score: step.score,
                label: if step.score.is_some() {
                    "scored"
                } else {
                    "error"
                },
                explanation: step
                    .explanation
                    .as_deref()
                    .or(step.failure.as_deref())
                    .unwrap_or_default()
                    .into(),
            },
        ))
    });
    let mut graded: Vec<(usize, Evaluation)> = steps.collect();
    let calls = v.evidence.tools().map_or(&[][..], |t| t.calls.as_slice());
    graded.extend(calls.iter().filter_map(|call| {
        let index = call.call_index?;
        (index < e.transcript.tool_calls().count()).then_some(())?;
        let passed = call.tool_correct && call.args_correct && call.result_correct != Some(false);
        Some((
            index,
            Evaluation {
                name: format!("{}: {}", v.check, call.expected).into(),
                score: Some(call.score),
                label: if passed { "pass" } else { "fail" },
                explanation: call.problems.join("; ").into(),
            },
        ))
    }));
    graded
}

/// Sends one evaluation (a judge model's when `by_model`): the log record,
/// the span event when enabled, the Phoenix annotation when asked.
fn emit(
    targets: &Targets<'_>,
    cx: &Context,
    at: SystemTime,
    eval: &Evaluation,
    kind: &'static str,
    by_model: bool,
) {
    let mut attrs = eval.attributes(targets.redact);
    attrs.push(text("gavel.check.kind", kind));
    let span = cx.span();
    let n = targets.emitted.replace(targets.emitted.get() + 1);
    if let Some(phoenix) = targets.phoenix {
        let id = span.span_context().span_id();
        phoenix.annotate(id, eval, by_model, targets.redact, &format!("gavel {n}"));
    }
    if let Some(logger) = targets.logger {
        let sc = span.span_context();
        let mut record = logger.create_log_record();
        record.set_event_name(EVALUATION_EVENT);
        record.set_timestamp(at);
        record.set_observed_timestamp(SystemTime::now());
        record.set_severity_number(Severity::Info);
        record.set_trace_context(sc.trace_id(), sc.span_id(), Some(sc.trace_flags()));
        record.add_attributes(
            attrs
                .iter()
                .map(|kv| (kv.key.clone(), any_value(&kv.value))),
        );
        logger.emit(record);
    }
    if targets.span_events {
        let mut events = targets.events.borrow_mut();
        let added = events.entry(span.span_context().span_id()).or_default();
        *added += 1;
        if *added <= EVENTS_PER_SPAN {
            span.add_event_with_timestamp(EVALUATION_EVENT, at, attrs);
        } else {
            let beyond = *added - EVENTS_PER_SPAN;
            span.set_attribute(int("gavel.evaluations.not_in_events", beyond));
        }
    }
}

/// A span attribute value as a log attribute value (a string's text shared,
/// not copied).
fn any_value(v: &opentelemetry::Value) -> opentelemetry::logs::AnyValue {
    use opentelemetry::logs::AnyValue;
    match v {
        opentelemetry::Value::F64(f) => AnyValue::Double(*f),
        opentelemetry::Value::I64(i) => AnyValue::Int(*i),
        opentelemetry::Value::Bool(b) => AnyValue::Boolean(*b),
        opentelemetry::Value::String(s) => AnyValue::String(s.clone()),
        other => AnyValue::String(other.as_str().into_owned().into()),
    }
}
