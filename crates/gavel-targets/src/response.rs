//! Reading an answer's parts out of a JSON response, shared by the http and command
//! adapters.

use gavel_core::target::ResponseMap;
use gavel_core::{ToolCall, Turn};
use serde_json::Value;

use crate::error::TargetError;

/// The pointer read for tool calls when `response.tool_calls` is not set; a missing
/// value there simply means no tool calls.
const DEFAULT_TOOL_CALLS: &str = "/tool_calls";

/// The pointer read for the answering agent's name when `response.agent` is not
/// set; a missing value there means the target names no agent.
const DEFAULT_AGENT: &str = "/agent";

/// Checks the pointers of a response map at build time.
pub(crate) fn validate(target: &str, map: &ResponseMap) -> Result<(), TargetError> {
    let pointers = [
        ("response.output", Some(&map.output)),
        ("response.tool_calls", map.tool_calls.as_ref()),
        ("response.agent", map.agent.as_ref()),
    ];
    for (field, pointer) in pointers {
        if let Some(p) = pointer
            && !p.is_empty()
            && !p.starts_with('/')
        {
            return Err(TargetError::config(
                target,
                field,
                format!(
                    "`{p}` is not a JSON pointer: it must be empty or start with `/` (e.g. `/{p}`)"
                ),
            ));
        }
    }
    Ok(())
}

/// Sets the turn's answer text, tool calls and answering agent from one JSON
/// response.
pub(crate) fn extract(body: &Value, map: &ResponseMap, turn: &mut Turn) -> Result<(), String> {
    let output = match body.pointer(&map.output) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) => String::new(),
        Some(other) => other.to_string(),
        None => {
            return Err(format!(
                "response has no value at `response.output` pointer `{}`; {}",
                map.output,
                describe_top_level(body)
            ));
        }
    };
    let tool_calls = match &map.tool_calls {
        Some(pointer) => match body.pointer(pointer) {
            Some(value) => tool_calls(value, pointer)?,
            None => {
                return Err(format!(
                    "response has no value at `response.tool_calls` pointer `{pointer}`; {}",
                    describe_top_level(body)
                ));
            }
        },
        None => match body.pointer(DEFAULT_TOOL_CALLS) {
            Some(value) => tool_calls(value, DEFAULT_TOOL_CALLS)?,
            None => Vec::new(),
        },
    };
    let agent = match &map.agent {
        Some(pointer) => match body.pointer(pointer) {
            Some(value) => agent(value, "`response.agent`", pointer)?,
            None => {
                return Err(format!(
                    "response has no value at `response.agent` pointer `{pointer}`; {}",
                    describe_top_level(body)
                ));
            }
        },
        None => match body.pointer(DEFAULT_AGENT) {
            Some(value) => agent(value, "`response.agent`", DEFAULT_AGENT)?,
            None => None,
        },
    };
    turn.output = output;
    turn.tool_calls = tool_calls;
    turn.agent = agent;
    Ok(())
}

/// An agent name: a non-empty string, or null for none.
fn agent(value: &Value, what: &str, pointer: &str) -> Result<Option<String>, String> {
    match value {
        Value::Null => Ok(None),
        Value::String(name) if !name.trim().is_empty() => Ok(Some(name.clone())),
        other => Err(format!(
            "{what} pointer `{pointer}`: expected an agent name (a non-empty string), found {}",
            gavel_core::json_type(other)
        )),
    }
}

/// Names the top-level keys present, to help fix a wrong pointer.
fn describe_top_level(body: &Value) -> String {
    match body {
        Value::Object(map) if map.is_empty() => "the response is an empty object".to_owned(),
        Value::Object(map) => {
            let keys: Vec<String> = map.keys().map(|k| format!("`{k}`")).collect();
            format!("top-level keys present: {}", keys.join(", "))
        }
        other => format!(
            "the response is {}, not an object",
            gavel_core::json_type(other)
        ),
    }
}

/// Reads an array of `{name, arguments|args|input, result|output}` objects (also the
/// OpenAI shape `{function: {name, arguments}}`, with arguments as JSON text).
fn tool_calls(value: &Value, pointer: &str) -> Result<Vec<ToolCall>, String> {
    let items = match value {
        Value::Null => return Ok(Vec::new()),
        Value::Array(items) => items,
        other => {
            return Err(format!(
                "`response.tool_calls` pointer `{pointer}`: expected an array of tool calls, found {}",
                gavel_core::json_type(other)
            ));
        }
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            tool_call(item)
                .map_err(|e| format!("`response.tool_calls` pointer `{pointer}`: item {i}: {e}"))
        })
        .collect()
}

fn tool_call(item: &Value) -> Result<ToolCall, String> {
    let Value::Object(outer) = item else {
        return Err(format!(
            "expected an object, found {}",
            gavel_core::json_type(item)
        ));
    };
    // OpenAI-style calls nest name and arguments under `function`.
    let fields = match outer.get("function") {
        Some(Value::Object(inner)) => inner,
        _ => outer,
    };
    let name = match fields.get("name") {
        Some(Value::String(name)) if !name.is_empty() => name.clone(),
        Some(other) => {
            return Err(format!(
                "`name` must be a non-empty string, found {}",
                gavel_core::json_type(other)
            ));
        }
        None => return Err("missing `name`".to_owned()),
    };
    let first = |keys: &[&str]| {
        keys.iter()
            .find_map(|k| fields.get(*k).or_else(|| outer.get(*k)))
            .cloned()
    };
    let arguments = match first(&["arguments", "args", "input"]) {
        // Arguments sent as JSON text (OpenAI) are parsed when they are an object or array.
        Some(Value::String(text)) => match serde_json::from_str::<Value>(&text) {
            Ok(parsed @ (Value::Object(_) | Value::Array(_))) => parsed,
            _ => Value::String(text),
        },
        Some(value) => value,
        None => Value::Null,
    };
    let result = first(&["result", "output"]);
    let agent = match outer.get("agent") {
        Some(value) => agent(value, "tool call", "agent")?,
        None => None,
    };
    // OpenAI's `id` (Responses API: `call_id`), Anthropic's `tool_use` id.
    let id = ["call_id", "id", "tool_call_id"]
        .iter()
        .find_map(|k| match outer.get(*k) {
            Some(Value::String(id)) if !id.is_empty() => Some(id.clone()),
            _ => None,
        });
    Ok(ToolCall {
        id,
        agent,
        name,
        arguments,
        result,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    fn map(output: &str, tools: Option<&str>) -> ResponseMap {
        ResponseMap {
            output: output.to_owned(),
            tool_calls: tools.map(str::to_owned),
            agent: None,
        }
    }

    /// The answer text and tool calls `super::extract` sets.
    fn extract(body: &Value, map: &ResponseMap) -> Result<(String, Vec<ToolCall>), String> {
        let mut turn = Turn::default();
        super::extract(body, map, &mut turn).map(|()| (turn.output, turn.tool_calls))
    }

    #[test]
    fn reads_the_answering_agent_and_each_tool_calls_agent() {
        let body = json!({
            "output": "Refunded.",
            "agent": "billing",
            "meta": {"speaker": "triage"},
            "tool_calls": [
                {"name": "transfer", "agent": "triage"},
                {"name": "refund", "agent": "billing"},
                {"name": "log"},
            ],
        });
        let mut turn = Turn::default();
        super::extract(&body, &ResponseMap::default(), &mut turn).unwrap();
        assert_eq!(
            turn.agent.as_deref(),
            Some("billing"),
            "read at /agent by default"
        );
        let agents: Vec<Option<&str>> =
            turn.tool_calls.iter().map(|c| c.agent.as_deref()).collect();
        assert_eq!(agents, [Some("triage"), Some("billing"), None]);

        let at_pointer = ResponseMap {
            agent: Some("/meta/speaker".into()),
            ..ResponseMap::default()
        };
        super::extract(&body, &at_pointer, &mut turn).unwrap();
        assert_eq!(turn.agent.as_deref(), Some("triage"));

        let err = super::extract(
            &json!({"output": "", "agent": 3}),
            &ResponseMap::default(),
            &mut turn,
        )
        .unwrap_err();
        assert!(
            err.contains("`/agent`") && err.contains("a number"),
            "{err}"
        );
        let missing = ResponseMap {
            agent: Some("/who".into()),
            ..ResponseMap::default()
        };
        let err = super::extract(&json!({"output": ""}), &missing, &mut turn).unwrap_err();
        assert!(err.contains("`response.agent` pointer `/who`"), "{err}");
        let err = super::extract(
            &json!({"output": "", "tool_calls": [{"name": "a", "agent": ""}]}),
            &ResponseMap::default(),
            &mut turn,
        )
        .unwrap_err();
        assert!(
            err.contains("item 0") && err.contains("agent name"),
            "{err}"
        );
    }

    #[test]
    fn reads_output_and_tool_calls_in_every_spelling() {
        let body = json!({
            "data": {"text": "Hi"},
            "calls": [
                {"name": "a", "arguments": {"x": 1}, "result": "r"},
                {"name": "b", "args": [1]},
                {"name": "c", "input": {"q": "s"}, "output": {"ok": true}},
                {"type": "function", "function": {"name": "d", "arguments": "{\"y\": 2}"}},
            ],
        });
        let (output, calls) = extract(&body, &map("/data/text", Some("/calls"))).unwrap();
        assert_eq!(output, "Hi");
        let names: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "c", "d"]);
        assert_eq!(calls[0].arguments, json!({"x": 1}));
        assert_eq!(calls[0].result, Some(json!("r")));
        assert_eq!(calls[1].arguments, json!([1]));
        assert_eq!(calls[1].result, None);
        assert_eq!(calls[2].result, Some(json!({"ok": true})));
        assert_eq!(calls[3].arguments, json!({"y": 2}));
    }

    #[test]
    fn non_string_output_is_its_json_text_and_null_is_empty() {
        let (output, calls) =
            extract(&json!({"output": {"a": 1}}), &ResponseMap::default()).unwrap();
        assert_eq!(output, r#"{"a":1}"#);
        assert!(calls.is_empty());
        let (output, _) = extract(&json!({"output": null}), &ResponseMap::default()).unwrap();
        assert_eq!(output, "");
    }

    #[test]
    fn default_tool_calls_pointer_is_read_when_present() {
        let body = json!({"output": "x", "tool_calls": [{"name": "t"}]});
        let (_, calls) = extract(&body, &ResponseMap::default()).unwrap();
        assert_eq!(calls[0].name, "t");
        assert_eq!(calls[0].arguments, Value::Null);
    }

    #[test]
    fn missing_output_names_the_pointer_and_the_keys_present() {
        let err = extract(&json!({"answer": "x", "id": 1}), &ResponseMap::default()).unwrap_err();
        assert!(err.contains("`/output`"), "{err}");
        assert!(err.contains("`answer`, `id`"), "{err}");
        let err = extract(&json!([1]), &ResponseMap::default()).unwrap_err();
        assert!(err.contains("an array, not an object"), "{err}");
    }

    #[test]
    fn malformed_tool_calls_name_the_pointer() {
        let err = extract(
            &json!({"output": "", "calls": "x"}),
            &map("/output", Some("/calls")),
        )
        .unwrap_err();
        assert!(
            err.contains("`/calls`") && err.contains("found a string"),
            "{err}"
        );
        let err = extract(
            &json!({"output": "", "calls": [{"name": 3}]}),
            &map("/output", Some("/calls")),
        )
        .unwrap_err();
        assert!(err.contains("item 0") && err.contains("`name`"), "{err}");
        let err = extract(
            &json!({"output": "", "tool_calls": [1]}),
            &ResponseMap::default(),
        )
        .unwrap_err();
        assert!(
            err.contains("`/tool_calls`") && err.contains("item 0"),
            "{err}"
        );
        let err = extract(&json!({"output": ""}), &map("/output", Some("/calls"))).unwrap_err();
        assert!(err.contains("`/calls`"), "{err}");
    }

    #[test]
    fn pointers_are_validated() {
        let err = validate("t", &map("output", None)).unwrap_err().to_string();
        assert_eq!(
            err,
            "target `t`: response.output: `output` is not a JSON pointer: it must be empty or start with `/` (e.g. `/output`)"
        );
        assert!(validate("t", &map("", Some("/a/0"))).is_ok());
    }
}
