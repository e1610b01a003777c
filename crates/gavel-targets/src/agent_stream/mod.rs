//! Reads the machine-readable stdout of a coding-agent CLI into an [`AgentRun`]:
//! its messages, tool calls with their results, usage, session and error.
//!
//! Three formats ([`Format`]): Claude Code's `--output-format stream-json`,
//! Codex's `exec --json` and gavel's generic JSON lines. Feed the agent's stdout
//! one line at a time with [`AgentStream::push_line`], then [`AgentStream::finish`].
//! Reading never fails: a line that is not a JSON object, or an event the format
//! does not define, is counted in [`AgentRun::unreadable`]. Each text is capped at
//! [`MAX_TEXT`] bytes and the run at [`MAX_TOOL_CALLS`] tool calls and
//! [`MAX_MESSAGES`] messages. The formats and their mapping are described in
//! docs/coding-agents.md ("Agent output formats").
//!
//! ```
//! use gavel_targets::agent_stream::{AgentStream, Format};
//!
//! let mut stream = AgentStream::new(Format::Jsonl);
//! stream.push_line(r#"{"type":"tool_call","id":"1","name":"shell","arguments":{"command":"ls"}}"#);
//! stream.push_line(r#"{"type":"tool_result","id":"1","result":"README.md"}"#);
//! stream.push_line(r#"{"type":"final","content":"Done."}"#);
//! let run = stream.finish();
//! assert_eq!(run.output, "Done.");
//! assert_eq!(run.tool_calls[0].result, Some(serde_json::json!("README.md")));
//! ```

mod claude;
mod codex;
mod jsonl;

use std::collections::HashMap;

use gavel_core::{ToolCall, Usage};
use serde_json::{Map, Value};

/// The most bytes kept of one text: a message, the final answer, or a string
/// inside a tool call's arguments or result. Longer ones are cut on a character
/// boundary and end with `… [truncated N bytes]`.
pub const MAX_TEXT: usize = 64 * 1024;
/// The most tool calls kept from one run; later ones are counted in
/// [`AgentRun::dropped`].
pub const MAX_TOOL_CALLS: usize = 10_000;
/// The most messages kept from one run; later ones are counted in
/// [`AgentRun::dropped`].
pub const MAX_MESSAGES: usize = 10_000;

/// Which machine-readable output the agent CLI writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `claude -p --output-format stream-json --verbose`.
    ClaudeCode,
    /// `codex exec --json`.
    Codex,
    /// gavel's generic JSON lines, for any other agent.
    Jsonl,
}

/// What one agent run did, read from its stream.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AgentRun {
    /// The final answer: Claude's `result` event's `result`, Codex's last
    /// `agent_message`, the generic `final`; else the last assistant message.
    pub output: String,
    /// Each assistant message's text, in order.
    pub messages: Vec<String>,
    /// Every tool call in order, with its result when the stream reports one.
    pub tool_calls: Vec<ToolCall>,
    /// Tokens and cost, when the stream reports them.
    pub usage: Option<Usage>,
    /// The agent's own session (thread) id, when reported.
    pub session: Option<String>,
    /// Why the run failed, when the stream says it did.
    pub error: Option<String>,
    /// Events read and understood.
    pub events: u64,
    /// Non-blank lines that were not JSON objects or not understood.
    pub unreadable: u64,
    /// Tool calls and messages past [`MAX_TOOL_CALLS`] and [`MAX_MESSAGES`]:
    /// counted, not kept.
    pub dropped: u64,
}

/// Reads an agent's stdout one line at a time.
#[derive(Debug)]
pub struct AgentStream {
    out: Collector,
    parser: Parser,
}

#[derive(Debug)]
enum Parser {
    Claude(claude::Claude),
    Codex(codex::Codex),
    Jsonl,
}

impl AgentStream {
    /// A reader for `format`, before any line.
    pub fn new(format: Format) -> Self {
        let parser = match format {
            Format::ClaudeCode => Parser::Claude(claude::Claude::default()),
            Format::Codex => Parser::Codex(codex::Codex::default()),
            Format::Jsonl => Parser::Jsonl,
        };
        AgentStream {
            out: Collector::default(),
            parser,
        }
    }

    /// Feeds one line (without its newline). Never panics; a line that is not
    /// JSON or not understood is counted, not fatal. Blank lines are skipped.
    pub fn push_line(&mut self, line: &str) {
        let line = line.trim();
        if line.is_empty() {
            return;
        }
        let understood = match serde_json::from_str::<Value>(line) {
            Ok(Value::Object(event)) => match &mut self.parser {
                Parser::Claude(p) => p.event(&mut self.out, &event),
                Parser::Codex(p) => p.event(&mut self.out, &event),
                Parser::Jsonl => jsonl::event(&mut self.out, &event),
            },
            _ => false,
        };
        if understood {
            self.out.run.events += 1;
        } else {
            self.out.run.unreadable += 1;
        }
    }

    /// What the run did, from the lines read so far.
    pub fn finish(mut self) -> AgentRun {
        match self.parser {
            Parser::Claude(p) => p.finish(&mut self.out),
            Parser::Codex(p) => p.finish(&mut self.out),
            Parser::Jsonl => {}
        }
        let mut run = self.out.run;
        run.output = match self.out.final_output {
            Some(text) => text,
            None => run.messages.last().cloned().unwrap_or_default(),
        };
        run
    }
}

/// The run being read, shared by the formats.
#[derive(Debug, Default)]
struct Collector {
    run: AgentRun,
    /// Index into `run.tool_calls` by the agent's call id.
    calls: HashMap<String, usize>,
    /// The answer the stream named as final, if it did.
    final_output: Option<String>,
}

impl Collector {
    /// Adds an assistant message (capped); its index, `None` past the cap.
    fn message(&mut self, text: &str) -> Option<usize> {
        if self.run.messages.len() >= MAX_MESSAGES {
            self.run.dropped += 1;
            return None;
        }
        self.run.messages.push(cap_text(text));
        Some(self.run.messages.len() - 1)
    }

    /// Replaces the text of message `index` (capped).
    fn replace_message(&mut self, index: usize, text: &str) {
        if let Some(message) = self.run.messages.get_mut(index) {
            *message = cap_text(text);
        }
    }

    /// Adds a tool call (its arguments and result capped) with the agent's call
    /// `id`, remembered by it when it has one; its index, `None` past the cap.
    fn call(&mut self, id: Option<&str>, mut call: ToolCall) -> Option<usize> {
        if self.run.tool_calls.len() >= MAX_TOOL_CALLS {
            self.run.dropped += 1;
            return None;
        }
        cap_call(&mut call);
        call.id = id.map(str::to_owned);
        let index = self.run.tool_calls.len();
        self.run.tool_calls.push(call);
        if let Some(id) = id {
            self.calls.insert(id.to_owned(), index);
        }
        Some(index)
    }

    /// Replaces tool call `index` (capped), keeping its id.
    fn replace_call(&mut self, index: usize, mut call: ToolCall) {
        if let Some(slot) = self.run.tool_calls.get_mut(index) {
            cap_call(&mut call);
            call.id = slot.id.take();
            *slot = call;
        }
    }

    /// Sets the result (capped) of the call with `id`; false if there is none.
    fn result(&mut self, id: &str, mut result: Value) -> bool {
        match self.calls.get(id) {
            Some(&index) => {
                cap_value(&mut result);
                if let Some(call) = self.run.tool_calls.get_mut(index) {
                    call.result = Some(result);
                }
                true
            }
            None => false,
        }
    }

    /// Sets the result (capped) of the latest call; false if there is none.
    fn last_result(&mut self, mut result: Value) -> bool {
        cap_value(&mut result);
        match self.run.tool_calls.last_mut() {
            Some(call) => {
                call.result = Some(result);
                true
            }
            None => false,
        }
    }

    /// Adds `usage` to the run's.
    fn add_usage(&mut self, usage: &Usage) {
        self.run.usage.get_or_insert_default().add(usage);
    }

    /// Records the session id, the first one reported.
    fn session(&mut self, id: &str) {
        if self.run.session.is_none() && !id.is_empty() {
            self.run.session = Some(id.to_owned());
        }
    }

    /// The final answer (capped).
    fn final_output(&mut self, text: &str) {
        self.final_output = Some(cap_text(text));
    }
}

/// `s`, cut to [`MAX_TEXT`] bytes on a character boundary and marked if cut.
fn cap_text(s: &str) -> String {
    if s.len() <= MAX_TEXT {
        return s.to_owned();
    }
    let mut end = MAX_TEXT;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… [truncated {} bytes]", &s[..end], s.len() - end)
}

/// Caps the strings in a call's arguments and result.
fn cap_call(call: &mut ToolCall) {
    cap_value(&mut call.arguments);
    if let Some(result) = &mut call.result {
        cap_value(result);
    }
}

/// Caps every string inside `value` with [`cap_text`].
fn cap_value(value: &mut Value) {
    match value {
        Value::String(s) if s.len() > MAX_TEXT => *s = cap_text(s),
        Value::Array(items) => items.iter_mut().for_each(cap_value),
        Value::Object(fields) => fields.values_mut().for_each(cap_value),
        _ => {}
    }
}

/// The string field `key` of `object`.
fn str_field<'a>(object: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    object.get(key).and_then(Value::as_str)
}

/// The unsigned integer field `key` of `object`, 0 when absent or not one.
fn u64_field(object: &Map<String, Value>, key: &str) -> u64 {
    object.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// A tool call the agent made itself (`agent: None`; its id is set by
/// [`Collector::call`]).
fn tool_call(name: impl Into<String>, arguments: Value, result: Option<Value>) -> ToolCall {
    ToolCall {
        name: name.into(),
        arguments,
        result,
        ..ToolCall::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_text_is_cut_on_a_char_boundary_and_marked() {
        let text = format!("{}é{}", "a".repeat(MAX_TEXT - 1), "b".repeat(10));
        let cut = cap_text(&text);
        assert!(cut.starts_with(&"a".repeat(MAX_TEXT - 1)));
        assert!(
            cut.ends_with("… [truncated 12 bytes]"),
            "{}",
            &cut[cut.len() - 40..]
        );
        assert_eq!(cap_text("short"), "short");
    }

    #[test]
    fn strings_inside_values_are_capped() {
        let mut value = serde_json::json!({"a": ["x".repeat(MAX_TEXT + 5)], "n": 1});
        cap_value(&mut value);
        let a = value["a"][0].as_str().unwrap_or_default();
        assert!(a.ends_with("… [truncated 5 bytes]"));
        assert_eq!(value["n"], 1);
    }
}
