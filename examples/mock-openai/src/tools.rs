//! Scripted tool use, for agents that gavel itself runs (`mcp-agent`, `chat`
//! with tools). When a request offers tools:
//! - a user message naming an offered tool and holding a JSON object gets a call
//!   of that tool with the object as arguments;
//! - an answer to tool results quotes them;
//! - anything else gets an answer that recalls every earlier user message, so a
//!   test can see whether the conversation survived a revival.

use serde_json::{Value, json};

/// The assistant message for a request that offers tools, or `None` when it
/// offers none.
pub(crate) fn answer(request: &Value) -> Option<Value> {
    let tools: Vec<&str> = request["tools"]
        .as_array()?
        .iter()
        .filter_map(|t| t.pointer("/function/name").and_then(Value::as_str))
        .collect();
    if tools.is_empty() {
        return None;
    }
    let messages = request["messages"].as_array()?;
    let last = messages.last()?;
    if last["role"] == "tool" {
        let results: Vec<&str> = messages
            .iter()
            .rev()
            .take_while(|m| m["role"] == "tool")
            .filter_map(|m| m["content"].as_str())
            .collect();
        return Some(text(format!("Tool results: {}", results.join("; "))));
    }
    let said = last["content"].as_str().unwrap_or_default();
    if let Some((tool, arguments)) = requested_call(said, &tools) {
        return Some(json!({
            "role": "assistant",
            "content": null,
            "tool_calls": [{
                "id": format!("call-{}", messages.len()),
                "type": "function",
                "function": {"name": tool, "arguments": arguments.to_string()}
            }]
        }));
    }
    let earlier: Vec<&str> = messages
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str())
        .filter(|c| *c != said)
        .collect();
    Some(text(if earlier.is_empty() {
        format!("You said: {said}. Nothing before that.")
    } else {
        format!(
            "You said: {said}. Earlier you said: {}",
            earlier.join(" | ")
        )
    }))
}

/// The offered tool the message names (the longest match) and the JSON object
/// it holds (`{}` when none).
fn requested_call<'a>(said: &str, tools: &[&'a str]) -> Option<(&'a str, Value)> {
    let tool = tools
        .iter()
        .filter(|t| said.contains(**t))
        .max_by_key(|t| t.len())?;
    let arguments = said
        .find('{')
        .and_then(|start| {
            serde_json::Deserializer::from_str(&said[start..])
                .into_iter::<Value>()
                .next()
                .and_then(Result::ok)
        })
        .filter(Value::is_object)
        .unwrap_or_else(|| json!({}));
    Some((tool, arguments))
}

fn text(content: String) -> Value {
    json!({"role": "assistant", "content": content})
}
