//! OpenTelemetry GenAI spans in OTLP JSON (one `ExportTraceServiceRequest`
//! per file, or one per line as collectors' file exporters write them) mapped
//! to conversations:
//!
//! - a turn is an `invoke_agent` span (outermost); in a trace without any, an
//!   outermost `chat` span;
//! - its tool calls are the `execute_tool` spans under it, in start order;
//! - its input and output come from `gen_ai.input.messages` /
//!   `gen_ai.output.messages`, the older `gen_ai.user.message` / `gen_ai.choice`
//!   events, indexed `gen_ai.prompt.N` / `gen_ai.completion.N` attributes, or
//!   gavel's own `gavel.input` / `gavel.output`; failing those, from the first
//!   and last `chat` span under it;
//! - its latency is the span's duration, its usage the span's
//!   `gen_ai.usage.*` tokens or the sum over the `chat` spans under it;
//! - a span with status ERROR is a turn that broke (`error`);
//! - the conversation is `gavel.case.id` on the trace's root (gavel's own
//!   exports, `#N` appended for repeat N > 0, recorded on the root's
//!   `gavel.target`), else `gen_ai.conversation.id`, else the trace id; its
//!   turns are ordered by start time.

use std::collections::{BTreeMap, HashMap, HashSet};

use gavel_core::{TargetFailure, ToolCall, Transcript, Turn, Usage};
use serde_json::{Map, Value};

use super::{ConversationKey, RecordingError};

const OPERATION: &str = "gen_ai.operation.name";
/// The attribute naming the agent of an `invoke_agent` (or tool) span.
const AGENT: &str = "gen_ai.agent.name";

/// One span, its attributes as plain JSON values.
struct Span {
    trace: String,
    id: String,
    parent: String,
    name: String,
    start: u64,
    end: u64,
    attrs: Map<String, Value>,
    events: Vec<(String, Map<String, Value>)>,
    error: Option<String>,
}

impl Span {
    fn operation(&self) -> &str {
        match self.attrs.get(OPERATION).and_then(Value::as_str) {
            Some(op) => op,
            None => self.name.split(' ').next().unwrap_or_default(),
        }
    }

    fn text(&self, key: &str) -> Option<&str> {
        self.attrs.get(key).and_then(Value::as_str)
    }

    fn int(&self, key: &str) -> Option<u64> {
        self.attrs.get(key).and_then(Value::as_u64)
    }

    /// Made by gavel around a turn (judges, the harness), not by the agent.
    fn gavels_own(&self) -> bool {
        self.attrs.contains_key("gavel.caller")
    }
}

/// Parses OTLP JSON trace exports; errors name `file:line:col` or the field.
pub(super) fn parse(
    text: &str,
    file: &str,
) -> Result<BTreeMap<ConversationKey, Transcript>, RecordingError> {
    let mut spans = Vec::new();
    let first_line_is_json = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .is_some_and(|l| serde_json::from_str::<Value>(l).is_ok());
    let documents: Vec<(usize, &str)> = match serde_json::from_str::<Value>(text) {
        Ok(_) => vec![(0, text)],
        // Not one document, but its first line is one: one request per line.
        Err(_) if first_line_is_json => text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .collect(),
        Err(_) => vec![(0, text)],
    };
    let many = documents.len() > 1;
    for (line, doc) in documents {
        let value: Value = serde_json::from_str(doc).map_err(|e| {
            let at = match many {
                true => format!("{file}:{}:{}", line + 1, e.column().max(1)),
                false => format!("{file}:{}:{}", e.line(), e.column().max(1)),
            };
            RecordingError::new(at, e.to_string())
        })?;
        let at = match many {
            true => format!("{file}:{}", line + 1),
            false => file.to_owned(),
        };
        read_request(&value, &at, &mut spans)?;
    }
    Ok(conversations(spans))
}

/// `key` in camelCase (OTLP JSON) or snake_case (protobuf field names).
fn field<'a>(v: &'a Value, camel: &str, snake: &str) -> Option<&'a Value> {
    v.get(camel).or_else(|| v.get(snake))
}

fn list<'a>(v: &'a Value, camel: &str, snake: &str) -> &'a [Value] {
    field(v, camel, snake)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn read_request(request: &Value, at: &str, out: &mut Vec<Span>) -> Result<(), RecordingError> {
    let Some(resources) =
        field(request, "resourceSpans", "resource_spans").and_then(Value::as_array)
    else {
        return Err(RecordingError::new(
            at,
            "not an OTLP JSON trace export: `resourceSpans` is missing",
        ));
    };
    for (r, resource) in resources.iter().enumerate() {
        for (s, scope) in list(resource, "scopeSpans", "scope_spans")
            .iter()
            .enumerate()
        {
            for (i, span) in list(scope, "spans", "spans").iter().enumerate() {
                let path = format!("resourceSpans[{r}].scopeSpans[{s}].spans[{i}]");
                out.push(
                    read_span(span).map_err(|m| RecordingError::new(at, format!("{path}.{m}")))?,
                );
            }
        }
    }
    Ok(())
}

fn read_span(span: &Value) -> Result<Span, String> {
    let id = |camel: &str, snake: &str| -> String {
        field(span, camel, snake)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let trace = id("traceId", "trace_id");
    let span_id = id("spanId", "span_id");
    if trace.is_empty() || span_id.is_empty() {
        return Err("traceId/spanId: missing".into());
    }
    let status = field(span, "status", "status");
    let failed = status
        .and_then(|s| s.get("code"))
        .is_some_and(|c| c.as_u64() == Some(2) || c.as_str() == Some("STATUS_CODE_ERROR"));
    let error = failed.then(|| {
        status
            .and_then(|s| s.get("message"))
            .and_then(Value::as_str)
            .filter(|m| !m.is_empty())
            .unwrap_or("the span ended with status ERROR")
            .to_owned()
    });
    Ok(Span {
        trace,
        id: span_id,
        parent: id("parentSpanId", "parent_span_id"),
        name: id("name", "name"),
        start: nanos(field(span, "startTimeUnixNano", "start_time_unix_nano")),
        end: nanos(field(span, "endTimeUnixNano", "end_time_unix_nano")),
        attrs: attributes(list(span, "attributes", "attributes")),
        events: list(span, "events", "events")
            .iter()
            .map(|e| {
                (
                    e.get("name")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                    attributes(list(e, "attributes", "attributes")),
                )
            })
            .collect(),
        error,
    })
}

/// A time in nanoseconds: a number or a decimal string (proto3 JSON's int64).
fn nanos(v: Option<&Value>) -> u64 {
    match v {
        Some(Value::String(s)) => s.parse().unwrap_or(0),
        Some(v) => v.as_u64().unwrap_or(0),
        None => 0,
    }
}

fn attributes(kvs: &[Value]) -> Map<String, Value> {
    kvs.iter()
        .filter_map(|kv| {
            let key = kv.get("key")?.as_str()?;
            Some((key.to_owned(), any_value(kv.get("value")?)))
        })
        .collect()
}

/// An OTLP `AnyValue` as plain JSON.
fn any_value(v: &Value) -> Value {
    if let Some(s) = field(v, "stringValue", "string_value") {
        return s.clone();
    }
    if let Some(i) = field(v, "intValue", "int_value") {
        return match i {
            Value::String(s) => s.parse::<i64>().map_or(Value::Null, Value::from),
            other => other.clone(),
        };
    }
    if let Some(x) =
        field(v, "doubleValue", "double_value").or_else(|| field(v, "boolValue", "bool_value"))
    {
        return x.clone();
    }
    if let Some(a) = field(v, "arrayValue", "array_value") {
        return Value::Array(list(a, "values", "values").iter().map(any_value).collect());
    }
    if let Some(kv) = field(v, "kvlistValue", "kvlist_value") {
        return Value::Object(attributes(list(kv, "values", "values")));
    }
    Value::Null
}

/// The spans of every trace, grouped into conversations.
fn conversations(spans: Vec<Span>) -> BTreeMap<ConversationKey, Transcript> {
    let index: HashMap<(&str, &str), usize> = spans
        .iter()
        .enumerate()
        .map(|(i, s)| ((s.trace.as_str(), s.id.as_str()), i))
        .collect();
    let parent_of = |i: usize| -> Option<usize> {
        let s = &spans[i];
        index.get(&(s.trace.as_str(), s.parent.as_str())).copied()
    };
    let ancestors = |i: usize| {
        let mut chain = Vec::new();
        let mut seen = HashSet::from([i]);
        let mut at = parent_of(i);
        while let Some(p) = at.filter(|p| seen.insert(*p)) {
            chain.push(p);
            at = parent_of(p);
        }
        chain
    };
    let mut children: HashMap<usize, Vec<usize>> = HashMap::new();
    for i in 0..spans.len() {
        if let Some(p) = parent_of(i) {
            children.entry(p).or_default().push(i);
        }
    }
    let descendants = |i: usize| {
        let mut found = Vec::new();
        let mut seen = HashSet::from([i]);
        let mut stack = vec![i];
        while let Some(at) = stack.pop() {
            for &c in children.get(&at).map_or(&[][..], Vec::as_slice) {
                if seen.insert(c) {
                    found.push(c);
                    stack.push(c);
                }
            }
        }
        found.sort_by_key(|&d| spans[d].start);
        found
    };
    let is = |i: usize, op: &str| spans[i].operation() == op && !spans[i].gavels_own();
    let agent_traces: HashSet<&str> = (0..spans.len())
        .filter(|&i| is(i, "invoke_agent"))
        .map(|i| spans[i].trace.as_str())
        .collect();
    let mut turns: Vec<(ConversationKey, String, u64, Turn)> = Vec::new();
    for i in 0..spans.len() {
        let op = match agent_traces.contains(spans[i].trace.as_str()) {
            true => "invoke_agent",
            false => "chat",
        };
        if !is(i, op) {
            continue;
        }
        let up = ancestors(i);
        if up.iter().any(|&a| is(a, op)) {
            continue;
        }
        let below = descendants(i);
        let chats: Vec<&Span> = below
            .iter()
            .filter(|&&d| is(d, "chat"))
            .map(|&d| &spans[d])
            .collect();
        let (key, session) = conversation(&spans, i, &up);
        let s = &spans[i];
        // A tool call's agent: its own span's, else the nearest agent span's above it.
        let agent_of = |d: usize| {
            spans[d]
                .text(AGENT)
                .or_else(|| {
                    ancestors(d)
                        .into_iter()
                        .filter(|&a| is(a, "invoke_agent"))
                        .find_map(|a| spans[a].text(AGENT))
                })
                .map(str::to_owned)
        };
        let tools = below
            .iter()
            .filter(|&&d| is(d, "execute_tool"))
            .map(|&d| tool_call(&spans[d], agent_of(d)))
            .collect();
        let turn = Turn {
            input: input(s)
                .or_else(|| chats.first().and_then(|c| input(c)))
                .unwrap_or_default(),
            output: output(s)
                .or_else(|| chats.last().and_then(|c| output(c)))
                .unwrap_or_default(),
            tool_calls: tools,
            agent: s.text(AGENT).map(str::to_owned),
            latency_ms: s.end.saturating_sub(s.start) / 1_000_000,
            usage: usage(s).or_else(|| {
                chats.iter().filter_map(|c| usage(c)).reduce(|mut a, b| {
                    a.add(&b);
                    a
                })
            }),
            failure: s.error.clone().map(|message| TargetFailure {
                message,
                transient: false,
            }),
            ..Turn::default()
        };
        turns.push((key, session, s.start, turn));
    }
    turns.sort_by_key(|t| t.2);
    let mut out: BTreeMap<ConversationKey, Transcript> = BTreeMap::new();
    for (key, session, _, mut turn) in turns {
        let t = out.entry(key).or_insert_with(|| Transcript {
            session_id: session,
            turns: Vec::new(),
        });
        turn.round = t.turns.len();
        t.turns.push(turn);
    }
    out
}

/// The conversation key and session id of turn span `i` with ancestors `up`.
fn conversation(spans: &[Span], i: usize, up: &[usize]) -> (ConversationKey, String) {
    let chain = || {
        std::iter::once(i)
            .chain(up.iter().copied())
            .map(|a| &spans[a])
    };
    let session = chain().find_map(|s| s.text("gen_ai.conversation.id"));
    let root = up.last().map_or(&spans[i], |&r| &spans[r]);
    let key = match root.text("gavel.case.id") {
        Some(case) => match root.int("gavel.repeat_index") {
            Some(n) if n > 0 => format!("{case}#{n}"),
            _ => case.to_owned(),
        },
        None => session.unwrap_or(&spans[i].trace).to_owned(),
    };
    let session = session.map_or_else(|| key.clone(), str::to_owned);
    let target = root.text("gavel.target").map(str::to_owned);
    (ConversationKey::new(key, target), session)
}

/// A JSON value held in a string attribute, else the string itself.
fn json_text(v: &Value) -> Value {
    match v {
        Value::String(s) => serde_json::from_str(s).unwrap_or_else(|_| v.clone()),
        other => other.clone(),
    }
}

fn tool_call(s: &Span, agent: Option<String>) -> ToolCall {
    ToolCall {
        id: s.text("gen_ai.tool.call.id").map(str::to_owned),
        agent,
        name: s
            .text("gen_ai.tool.name")
            .map(str::to_owned)
            .unwrap_or_else(|| s.name.trim_start_matches("execute_tool").trim().to_owned()),
        arguments: s
            .attrs
            .get("gen_ai.tool.call.arguments")
            .map_or(Value::Null, json_text),
        result: s.attrs.get("gen_ai.tool.call.result").map(json_text),
    }
}

/// The text parts of one `gen_ai.*.messages` message.
fn message_text(m: &Value) -> Option<String> {
    if let Some(c) = m.get("content").and_then(Value::as_str) {
        return Some(c.to_owned());
    }
    let parts: Vec<&str> = m
        .get("parts")?
        .as_array()?
        .iter()
        .filter(|p| {
            p.get("type")
                .and_then(Value::as_str)
                .is_none_or(|t| t == "text")
        })
        .filter_map(|p| p.get("content").and_then(Value::as_str))
        .collect();
    (!parts.is_empty()).then(|| parts.join(""))
}

fn role(m: &Value) -> Option<&str> {
    m.get("role").and_then(Value::as_str)
}

/// The user's message: the last user message in the input.
fn input(s: &Span) -> Option<String> {
    if let Some(messages) = s.attrs.get("gen_ai.input.messages").map(json_text)
        && let Some(t) = messages
            .as_array()
            .and_then(|ms| ms.iter().rev().find(|m| role(m) == Some("user")))
            .and_then(message_text)
    {
        return Some(t);
    }
    if let Some(t) = s
        .events
        .iter()
        .rev()
        .find(|(n, _)| n == "gen_ai.user.message")
        .and_then(|(_, a)| a.get("content").and_then(Value::as_str).map(str::to_owned))
    {
        return Some(t);
    }
    let mut n = 0;
    let mut last = None;
    while let Some(content) = s.text(&format!("gen_ai.prompt.{n}.content")) {
        if s.text(&format!("gen_ai.prompt.{n}.role")) == Some("user") {
            last = Some(content.to_owned());
        }
        n += 1;
    }
    last.or_else(|| s.text("gavel.input").map(str::to_owned))
}

/// The agent's answer: the first output message.
fn output(s: &Span) -> Option<String> {
    if let Some(messages) = s.attrs.get("gen_ai.output.messages").map(json_text)
        && let Some(t) = messages
            .as_array()
            .and_then(|ms| ms.iter().find(|m| role(m).is_none_or(|r| r == "assistant")))
            .and_then(message_text)
    {
        return Some(t);
    }
    if let Some(t) = s
        .events
        .iter()
        .find(|(n, _)| n == "gen_ai.choice")
        .and_then(|(_, a)| match a.get("message").map(json_text) {
            Some(m) => message_text(&m),
            None => a.get("content").and_then(Value::as_str).map(str::to_owned),
        })
    {
        return Some(t);
    }
    s.text("gen_ai.completion.0.content")
        .or_else(|| s.text("gavel.output"))
        .map(str::to_owned)
}

fn usage(s: &Span) -> Option<Usage> {
    let input = s.int("gen_ai.usage.input_tokens");
    let output = s.int("gen_ai.usage.output_tokens");
    (input.is_some() || output.is_some()).then(|| Usage {
        input_tokens: input.unwrap_or(0),
        output_tokens: output.unwrap_or(0),
        cost_usd: None,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn kv(key: &str, v: Value) -> Value {
        let value = match v {
            Value::String(s) => json!({"stringValue": s}),
            Value::Number(n) => json!({"intValue": n.to_string()}),
            other => other,
        };
        json!({"key": key, "value": value})
    }

    /// Spans as another GenAI emitter writes them: one trace per turn, the
    /// conversation id on the agent span, messages as JSON attributes, the
    /// tool span under a chat span.
    #[test]
    fn genai_convention_spans_become_turns_with_tool_calls() {
        let turn = |trace: &str, start: u64, user: &str, answer: &str| {
            json!([
                {"traceId": trace, "spanId": "a1", "name": "invoke_agent shop",
                 "startTimeUnixNano": start.to_string(), "endTimeUnixNano": (start + 250_000_000).to_string(),
                 "attributes": [kv("gen_ai.operation.name", json!("invoke_agent")),
                                kv("gen_ai.conversation.id", json!("conv-7")),
                                kv("gen_ai.input.messages", json!(json!([{"role": "system", "parts": [{"type": "text", "content": "Be nice"}]}, {"role": "user", "parts": [{"type": "text", "content": user}]}]).to_string())),
                                kv("gen_ai.output.messages", json!(json!([{"role": "assistant", "parts": [{"type": "text", "content": answer}]}]).to_string()))]},
                {"traceId": trace, "spanId": "c1", "parentSpanId": "a1", "name": "chat gpt",
                 "startTimeUnixNano": (start + 1).to_string(), "endTimeUnixNano": (start + 2).to_string(),
                 "attributes": [kv("gen_ai.operation.name", json!("chat")),
                                kv("gen_ai.usage.input_tokens", json!(10)), kv("gen_ai.usage.output_tokens", json!(4))]},
                {"traceId": trace, "spanId": "t1", "parentSpanId": "c1", "name": "execute_tool lookup",
                 "startTimeUnixNano": (start + 3).to_string(), "endTimeUnixNano": (start + 4).to_string(),
                 "attributes": [kv("gen_ai.tool.name", json!("lookup")),
                                kv("gen_ai.tool.call.arguments", json!("{\"sku\":\"A1\"}")),
                                kv("gen_ai.tool.call.result", json!("{\"stock\":3}"))]}
            ])
        };
        let request = |spans: Value| {
            json!({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}).to_string()
        };
        let text = format!(
            "{}\n{}\n",
            request(turn("bb", 2_000_000_000, "And B1?", "Out of stock")),
            request(turn("aa", 1_000_000_000, "Stock of A1?", "3 left"))
        );
        let got = parse(&text, "t.json").unwrap();
        let conv = &got[&ConversationKey::new("conv-7", None)];
        assert_eq!(conv.session_id, "conv-7");
        assert_eq!(conv.turns.len(), 2);
        let first = &conv.turns[0];
        assert_eq!(
            (first.input.as_str(), first.output.as_str()),
            ("Stock of A1?", "3 left")
        );
        assert_eq!(first.latency_ms, 250);
        assert_eq!(first.usage.unwrap().input_tokens, 10);
        assert_eq!(first.tool_calls[0].name, "lookup");
        assert_eq!(first.tool_calls[0].arguments, json!({"sku": "A1"}));
        assert_eq!(first.tool_calls[0].result, Some(json!({"stock": 3})));
        assert_eq!(conv.turns[1].round, 1);
        assert_eq!(conv.turns[1].output, "Out of stock");
    }

    #[test]
    fn chat_spans_are_turns_when_no_agent_span_exists_and_errors_are_failures() {
        let text = json!({"resourceSpans": [{"scopeSpans": [{"spans": [
            {"traceId": "t", "spanId": "s", "name": "chat m", "startTimeUnixNano": 1, "endTimeUnixNano": 2,
             "status": {"code": 2, "message": "rate limited"},
             "attributes": [kv("gen_ai.prompt.0.role", json!("user")), kv("gen_ai.prompt.0.content", json!("Hi"))]}
        ]}]}]})
        .to_string();
        let got = parse(&text, "t.json").unwrap();
        let turn = &got[&ConversationKey::new("t", None)].turns[0];
        assert_eq!(turn.input, "Hi");
        assert_eq!(turn.failure.as_ref().unwrap().message, "rate limited");
    }

    /// gavel's own export of one case run on two targets: one conversation each.
    #[test]
    fn gavels_case_on_two_targets_is_two_conversations() {
        let trace = |trace: &str, target: &str, answer: &str| {
            json!({"resourceSpans": [{"scopeSpans": [{"spans": [
                {"traceId": trace, "spanId": "r", "name": "case stock", "startTimeUnixNano": 1, "endTimeUnixNano": 9,
                 "attributes": [kv("gavel.case.id", json!("stock")), kv("gavel.target", json!(target)),
                                kv("gen_ai.conversation.id", json!("s-1"))]},
                {"traceId": trace, "spanId": "a", "parentSpanId": "r", "name": "invoke_agent", "startTimeUnixNano": 2, "endTimeUnixNano": 8,
                 "attributes": [kv("gen_ai.operation.name", json!("invoke_agent")),
                                kv("gavel.input", json!("Stock?")), kv("gavel.output", json!(answer))]}
            ]}]}]})
            .to_string()
        };
        let text = format!(
            "{}\n{}\n",
            trace("t1", "old", "3 left"),
            trace("t2", "new", "none left")
        );
        let got = parse(&text, "t.json").unwrap();
        assert_eq!(got.len(), 2, "{:?}", got.keys());
        let turns =
            |target: &str| &got[&ConversationKey::new("stock", Some(target.to_owned()))].turns;
        assert_eq!(turns("old").len(), 1);
        assert_eq!(turns("old")[0].output, "3 left");
        assert_eq!(turns("new")[0].output, "none left");
    }

    #[test]
    fn bad_documents_name_the_place() {
        let e = parse("{\"resourceSpans\": [", "t.json").unwrap_err();
        assert!(e.at.starts_with("t.json:1:"), "{e}");
        let e = parse("{\"spans\": []}", "t.json").unwrap_err();
        assert!(e.message.contains("resourceSpans"), "{e}");
        let e = parse(
            &json!({"resourceSpans": [{"scopeSpans": [{"spans": [{"name": "x"}]}]}]}).to_string(),
            "t.json",
        )
        .unwrap_err();
        assert!(
            e.message
                .starts_with("resourceSpans[0].scopeSpans[0].spans[0].traceId"),
            "{e}"
        );
    }
}
