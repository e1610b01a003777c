//! Codex's `exec --json`: `thread.started`, `turn.*`, `error`, and
//! `item.started` / `item.updated` / `item.completed` carrying thread items
//! (`agent_message`, `command_execution`, `file_change`, `mcp_tool_call`,
//! `web_search`, …). Each item is recorded once, at its first appearance, and
//! rewritten by its later events; once completed, it no longer changes.

use std::collections::HashMap;

use gavel_core::{ToolCall, Usage};
use serde_json::{Map, Value, json};

use super::{Collector, str_field, tool_call, u64_field};

#[derive(Debug, Default)]
pub(super) struct Codex {
    /// Where each item id went, and whether it completed.
    items: HashMap<String, (Slot, bool)>,
    /// The last `error` event not yet followed by a completed turn: Codex also
    /// reports errors it retries, so one only fails the run if nothing recovers.
    pending_error: Option<String>,
}

#[derive(Debug, Clone, Copy)]
enum Slot {
    Message(usize),
    Call(usize),
    /// Reasoning, to-do lists, warnings, or a call or message past the cap.
    Skipped,
}

impl Codex {
    /// Reads one event; false if it is not one Codex writes.
    pub(super) fn event(&mut self, out: &mut Collector, event: &Map<String, Value>) -> bool {
        match str_field(event, "type") {
            Some("thread.started") => {
                out.session(str_field(event, "thread_id").unwrap_or_default());
                true
            }
            Some("turn.started" | "item.plan.delta" | "request_user_input") => true,
            Some("turn.completed") => {
                self.pending_error = None;
                if let Some(usage) = event.get("usage").and_then(Value::as_object) {
                    out.add_usage(&Usage {
                        input_tokens: u64_field(usage, "input_tokens"),
                        output_tokens: u64_field(usage, "output_tokens"),
                        cost_usd: None,
                    });
                }
                true
            }
            Some("turn.failed") => {
                self.pending_error = None;
                let message = event.get("error").and_then(|e| e.get("message"));
                let message = message.and_then(Value::as_str).unwrap_or("turn failed");
                out.run.error = Some(message.to_owned());
                true
            }
            Some("error") => {
                let message = str_field(event, "message").unwrap_or("error");
                self.pending_error = Some(message.to_owned());
                true
            }
            Some(kind @ ("item.started" | "item.updated" | "item.completed")) => {
                match event.get("item").and_then(Value::as_object) {
                    Some(item) => self.item(out, item, kind == "item.completed"),
                    None => false,
                }
            }
            _ => false,
        }
    }

    /// An `error` that no later turn recovered from fails the run.
    pub(super) fn finish(self, out: &mut Collector) {
        if out.run.error.is_none() {
            out.run.error = self.pending_error;
        }
    }

    fn item(&mut self, out: &mut Collector, item: &Map<String, Value>, completed: bool) -> bool {
        let Some(id) = str_field(item, "id") else {
            return false;
        };
        let seen = self.items.get(id).copied();
        if matches!(seen, Some((_, true))) {
            return true;
        }
        let kind = str_field(item, "type").unwrap_or_default();
        let slot = match (kind, seen.map(|(slot, _)| slot)) {
            ("agent_message", seen) => {
                let text = str_field(item, "text").unwrap_or_default();
                match seen {
                    Some(Slot::Message(index)) => {
                        out.replace_message(index, text);
                        Slot::Message(index)
                    }
                    Some(slot) => slot,
                    None => out.message(text).map_or(Slot::Skipped, Slot::Message),
                }
            }
            ("reasoning" | "todo_list" | "error" | "plan", _) => Slot::Skipped,
            (_, seen) => {
                let Some(call) = call(kind, item) else {
                    return false;
                };
                match seen {
                    Some(Slot::Call(index)) => {
                        out.replace_call(index, call);
                        Slot::Call(index)
                    }
                    Some(slot) => slot,
                    None => out.call(Some(id), call).map_or(Slot::Skipped, Slot::Call),
                }
            }
        };
        self.items.insert(id.to_owned(), (slot, completed));
        true
    }
}

/// The tool call a thread item stands for; `None` for item types gavel does
/// not read.
fn call(kind: &str, item: &Map<String, Value>) -> Option<ToolCall> {
    let status = str_field(item, "status").unwrap_or("in_progress");
    let field = |key: &str| item.get(key).cloned().unwrap_or_default();
    Some(match kind {
        "command_execution" => {
            let output = str_field(item, "aggregated_output").unwrap_or_default();
            let result = (status != "in_progress" || !output.is_empty()).then(|| {
                let mut result = json!({ "exit_code": field("exit_code"), "output": output });
                if status == "declined" {
                    result["error"] = json!("the command was declined");
                }
                result
            });
            tool_call("shell", json!({ "command": field("command") }), result)
        }
        "file_change" => {
            let result = (status != "in_progress").then(|| match status {
                "failed" => json!({ "status": status, "error": "the patch failed" }),
                _ => json!({ "status": status }),
            });
            tool_call(
                "file_change",
                json!({ "changes": field("changes") }),
                result,
            )
        }
        "mcp_tool_call" => {
            let server = str_field(item, "server").unwrap_or_default();
            let tool = str_field(item, "tool").unwrap_or_default();
            let name = match server {
                "" => tool.to_owned(),
                server => format!("{server}.{tool}"),
            };
            let error = item.get("error").and_then(|e| e.get("message"));
            let result = match (error, item.get("result")) {
                (Some(message), _) => Some(json!({ "error": message })),
                (None, Some(result)) if !result.is_null() => Some(result.clone()),
                _ => None,
            };
            tool_call(name, field("arguments"), result)
        }
        "web_search" => {
            let mut arguments = json!({ "query": field("query") });
            if let Some(action) = item.get("action") {
                arguments["action"] = action.clone();
            }
            tool_call("web_search", arguments, None)
        }
        _ => return None,
    })
}
