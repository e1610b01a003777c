//! gavel's generic JSON lines, one event per line:
//! `message`, `tool_call`, `tool_result`, `usage`, `final`, `error`, `session`.

use gavel_core::Usage;
use serde_json::{Map, Value};

use super::{Collector, str_field, tool_call, u64_field};

/// Reads one event; false if its type is unknown or a required field is missing.
pub(super) fn event(out: &mut Collector, event: &Map<String, Value>) -> bool {
    match str_field(event, "type") {
        Some("message") => str_field(event, "content")
            .map(|text| out.message(text))
            .is_some(),
        Some("tool_call") => {
            let Some(name) = str_field(event, "name") else {
                return false;
            };
            let arguments = event.get("arguments").cloned().unwrap_or_default();
            let result = event.get("result").cloned();
            out.call(str_field(event, "id"), tool_call(name, arguments, result));
            true
        }
        Some("tool_result") => {
            let result = event.get("result").cloned().unwrap_or_default();
            match str_field(event, "id") {
                Some(id) => out.result(id, result),
                None => out.last_result(result),
            }
        }
        Some("usage") => {
            out.add_usage(&Usage {
                input_tokens: u64_field(event, "input_tokens"),
                output_tokens: u64_field(event, "output_tokens"),
                cost_usd: event.get("cost_usd").and_then(Value::as_f64),
            });
            true
        }
        Some("final") => str_field(event, "content")
            .map(|text| out.final_output(text))
            .is_some(),
        Some("error") => {
            let message = str_field(event, "message").unwrap_or("error");
            out.run.error.get_or_insert_with(|| message.to_owned());
            true
        }
        Some("session") => str_field(event, "id").map(|id| out.session(id)).is_some(),
        _ => false,
    }
}
