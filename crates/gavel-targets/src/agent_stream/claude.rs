//! Claude Code's `--output-format stream-json --verbose`: `system`, `assistant`
//! (text, thinking and `tool_use` blocks), `user` (`tool_result` blocks) and a
//! last `result` event with the answer, totals and outcome.

use std::collections::HashMap;

use gavel_core::Usage;
use serde_json::{Map, Value};

use super::{Collector, str_field, tool_call, u64_field};

/// What the stream told so far beyond the collector.
#[derive(Debug, Default)]
pub(super) struct Claude {
    /// The `result` event reported usage or cost.
    result_usage: bool,
    /// Each API message's usage by message id: Claude Code repeats a message's
    /// usage on every event holding one of its blocks. Summed when no `result`
    /// event reports totals.
    message_usage: HashMap<String, Usage>,
}

impl Claude {
    /// Reads one event; false if it is not one Claude Code writes.
    pub(super) fn event(&mut self, out: &mut Collector, event: &Map<String, Value>) -> bool {
        if let Some(id) = str_field(event, "session_id") {
            out.session(id);
        }
        match str_field(event, "type") {
            Some("assistant") => self.assistant(out, event),
            Some("user") => user(out, event),
            Some("result") => self.result(out, event),
            // Init, retries, partial deltas (the whole messages follow them).
            Some("system" | "stream_event" | "rate_limit_event") => true,
            _ => false,
        }
    }

    /// Sums the messages' usage when no `result` event reported totals.
    pub(super) fn finish(self, out: &mut Collector) {
        if !self.result_usage {
            for usage in self.message_usage.values() {
                out.add_usage(usage);
            }
        }
    }

    fn assistant(&mut self, out: &mut Collector, event: &Map<String, Value>) -> bool {
        let Some(message) = event.get("message").and_then(Value::as_object) else {
            return false;
        };
        let Some(blocks) = message.get("content").and_then(Value::as_array) else {
            return false;
        };
        let mut text = Vec::new();
        for block in blocks.iter().filter_map(Value::as_object) {
            match str_field(block, "type") {
                Some("text") => text.extend(str_field(block, "text")),
                Some("tool_use") => {
                    let name = str_field(block, "name").unwrap_or_default();
                    let input = block.get("input").cloned().unwrap_or_default();
                    out.call(str_field(block, "id"), tool_call(name, input, None));
                }
                _ => {}
            }
        }
        if !text.is_empty() {
            out.message(&text.join("\n"));
        }
        if let (Some(id), Some(usage)) = (
            str_field(message, "id"),
            message.get("usage").and_then(Value::as_object),
        ) {
            self.message_usage.insert(id.to_owned(), tokens(usage));
        }
        true
    }

    fn result(&mut self, out: &mut Collector, event: &Map<String, Value>) -> bool {
        let answer = str_field(event, "result");
        if let Some(text) = answer {
            out.final_output(text);
        }
        let cost = event.get("total_cost_usd").and_then(Value::as_f64);
        let usage = event.get("usage").and_then(Value::as_object);
        if usage.is_some() || cost.is_some() {
            self.result_usage = true;
            out.run.usage = Some(Usage {
                cost_usd: cost,
                ..usage.map(tokens).unwrap_or_default()
            });
        }
        let subtype = str_field(event, "subtype").unwrap_or("success");
        let flagged = event.get("is_error").and_then(Value::as_bool) == Some(true);
        if flagged || subtype != "success" {
            let errors: Vec<&str> = event
                .get("errors")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            let detail = if errors.is_empty() {
                answer.unwrap_or_default().to_owned()
            } else {
                errors.join("; ")
            };
            out.run.error = Some(match (subtype, detail.is_empty()) {
                (_, true) => subtype.to_owned(),
                ("success", false) => detail,
                (_, false) => format!("{subtype}: {detail}"),
            });
        }
        true
    }
}

/// A `user` event: the results of earlier tool calls (or the prompt echoed).
fn user(out: &mut Collector, event: &Map<String, Value>) -> bool {
    let Some(content) = event.get("message").and_then(|m| m.get("content")) else {
        return false;
    };
    for block in content.as_array().into_iter().flatten() {
        let Some(block) = block.as_object() else {
            continue;
        };
        let Some(id) = str_field(block, "tool_use_id") else {
            continue;
        };
        if str_field(block, "type") != Some("tool_result") {
            continue;
        }
        let text = block.get("content").map(result_text).unwrap_or_default();
        let result = if block.get("is_error").and_then(Value::as_bool) == Some(true) {
            serde_json::json!({ "error": text })
        } else {
            text
        };
        out.result(id, result);
    }
    true
}

/// A `tool_result`'s content: a string as is, text blocks joined into one
/// string, anything else (images) as given.
fn result_text(content: &Value) -> Value {
    let Some(blocks) = content.as_array() else {
        return content.clone();
    };
    let texts: Option<Vec<&str>> = blocks
        .iter()
        .map(|b| match b.get("type").and_then(Value::as_str) {
            Some("text") => b.get("text").and_then(Value::as_str),
            _ => None,
        })
        .collect();
    match texts {
        Some(texts) => Value::String(texts.join("\n")),
        None => content.clone(),
    }
}

/// Anthropic usage: prompt tokens are the uncached, cache-written and
/// cache-read ones together.
fn tokens(usage: &Map<String, Value>) -> Usage {
    Usage {
        input_tokens: u64_field(usage, "input_tokens")
            + u64_field(usage, "cache_creation_input_tokens")
            + u64_field(usage, "cache_read_input_tokens"),
        output_tokens: u64_field(usage, "output_tokens"),
        cost_usd: None,
    }
}
