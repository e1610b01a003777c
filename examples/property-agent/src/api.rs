//! Wire format shared by HTTP and JSON-lines mode.

use serde::Serialize;
use serde_json::{Map, Value, json};

/// A validated chat request.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ChatRequest {
    /// Conversation id; messages are persisted under it.
    pub(crate) session_id: String,
    /// The user's message (may be empty; the policy answers "Empty prompt").
    pub(crate) message: String,
    /// Optional caller context, e.g. `{"user_name": "Ana"}`.
    pub(crate) context: Map<String, Value>,
}

impl ChatRequest {
    /// A request without context (handy for tests).
    #[cfg(test)]
    pub(crate) fn new(session_id: &str, message: &str) -> Self {
        Self {
            session_id: session_id.to_owned(),
            message: message.to_owned(),
            context: Map::new(),
        }
    }
}

/// One tool invocation made while answering.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct ToolCall {
    /// Tool name, e.g. `get_listings`.
    pub(crate) name: &'static str,
    /// Arguments object.
    pub(crate) arguments: Value,
    /// JSON result.
    pub(crate) result: Value,
}

/// The answer to a chat request (HTTP 200 body, or one stdout line).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct ChatResponse {
    /// Echo of the request's session id.
    pub(crate) session_id: String,
    /// Human-readable answer.
    pub(crate) reply: String,
    /// Tools called, in order.
    pub(crate) tool_calls: Vec<ToolCall>,
    /// Short application error ("Empty prompt", "Out of domain"), or null.
    pub(crate) error: Option<String>,
}

/// Parses and validates a request body; the error names the offending field.
pub(crate) fn parse_request(body: &[u8]) -> Result<ChatRequest, String> {
    let value: Value =
        serde_json::from_slice(body).map_err(|e| format!("bad request: invalid JSON: {e}"))?;
    let Value::Object(mut object) = value else {
        return Err("bad request: body must be a JSON object".into());
    };
    let session_id = match object.remove("session_id") {
        None | Some(Value::Null) => return Err("bad request: missing field `session_id`".into()),
        Some(Value::String(s)) if !s.trim().is_empty() => s,
        Some(_) => return Err("bad request: `session_id` must be a non-empty string".into()),
    };
    let message = match object.remove("message") {
        None | Some(Value::Null) => return Err("bad request: missing field `message`".into()),
        Some(Value::String(s)) => s,
        Some(_) => return Err("bad request: `message` must be a string".into()),
    };
    let context = match object.remove("context") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(map)) => map,
        Some(_) => return Err("bad request: `context` must be a JSON object".into()),
    };
    Ok(ChatRequest {
        session_id,
        message,
        context,
    })
}

/// The `{"error": ...}` body used for HTTP 4xx/5xx and malformed JSON lines.
pub(crate) fn error_body(message: &str) -> Value {
    json!({ "error": message })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_valid_requests() {
        let req =
            parse_request(br#"{"session_id":"s","message":"hi","context":{"user_name":"Ana"}}"#);
        let req = req.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(req.session_id, "s");
        assert_eq!(req.message, "hi");
        assert_eq!(req.context.get("user_name"), Some(&json!("Ana")));
        let req = parse_request(br#"{"session_id":"s","message":"","context":null}"#);
        assert!(req.is_ok_and(|r| r.context.is_empty()));
    }

    #[test]
    fn errors_name_the_field() {
        let cases: [(&[u8], &str); 7] = [
            (b"{not json", "invalid JSON"),
            (b"[1]", "JSON object"),
            (br#"{"message":"hi"}"#, "`session_id`"),
            (br#"{"session_id":" ","message":"hi"}"#, "`session_id`"),
            (br#"{"session_id":"s"}"#, "`message`"),
            (br#"{"session_id":"s","message":3}"#, "`message`"),
            (
                br#"{"session_id":"s","message":"x","context":"fr"}"#,
                "`context`",
            ),
        ];
        for (body, needle) in cases {
            let err = parse_request(body).err().unwrap_or_default();
            assert!(
                err.starts_with("bad request: ") && err.contains(needle),
                "{err}"
            );
        }
    }
}
