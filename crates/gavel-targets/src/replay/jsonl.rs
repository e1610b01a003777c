//! gavel's JSONL transcripts: each line one turn (`conversation_id` plus the
//! turn's fields) or one whole conversation (`id` and `turns`), either with an
//! optional `target` it was recorded on. Turns of a conversation are kept in
//! file order.

use std::collections::BTreeMap;

use gavel_core::{StreamStats, TargetFailure, ToolCall, Transcript, Turn, Usage};
use serde::Deserialize;
use serde_json::Value;

use super::{ConversationKey, RecordingError};

/// One recorded turn.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RecordedTurn {
    /// The user message.
    #[serde(default)]
    input: String,
    /// The agent's answer.
    #[serde(default)]
    output: String,
    /// The whole answer as JSON, for checks that read fields of it.
    #[serde(default)]
    response: Option<Value>,
    #[serde(default)]
    tool_calls: Vec<ToolCall>,
    /// Milliseconds from the message to the complete answer.
    #[serde(default)]
    latency_ms: u64,
    #[serde(default)]
    usage: Option<Usage>,
    /// The shape of the streamed answer, when it was streamed.
    #[serde(default)]
    stream: Option<StreamStats>,
    /// The agent broke on this turn: graded as `error`.
    #[serde(default)]
    error: Option<String>,
    /// The agent that answered, in a multi-agent system.
    #[serde(default)]
    agent: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ConversationLine {
    id: String,
    /// The session id it had with the agent (default: the id).
    #[serde(default)]
    session_id: Option<String>,
    /// The target it was recorded on.
    #[serde(default)]
    target: Option<String>,
    turns: Vec<RecordedTurn>,
}

impl RecordedTurn {
    fn into_turn(self) -> Turn {
        Turn {
            input: self.input,
            output: self.output,
            response: self.response,
            tool_calls: self.tool_calls,
            latency_ms: self.latency_ms,
            usage: self.usage,
            stream: self.stream,
            agent: self.agent,
            failure: self.error.map(|message| TargetFailure {
                message,
                transient: false,
            }),
            ..Turn::default()
        }
    }
}

/// Parses JSONL transcripts; errors name `file:line:col`.
pub(super) fn parse(
    text: &str,
    file: &str,
) -> Result<BTreeMap<ConversationKey, Transcript>, RecordingError> {
    let mut out: BTreeMap<ConversationKey, Transcript> = BTreeMap::new();
    for (index, line) in text.lines().enumerate() {
        let line_no = index + 1;
        if line.trim().is_empty() {
            continue;
        }
        let at = |e: serde_json::Error| {
            let col = if e.column() == 0 { 1 } else { e.column() };
            RecordingError::new(format!("{file}:{line_no}:{col}"), e.to_string())
        };
        let value: Value = serde_json::from_str(line).map_err(at)?;
        let field =
            |e: serde_json::Error| RecordingError::new(format!("{file}:{line_no}"), e.to_string());
        let (id, target, session, turns) = match value {
            Value::Object(c) if c.contains_key("turns") => {
                let c: ConversationLine =
                    serde_json::from_value(Value::Object(c)).map_err(field)?;
                let session = c.session_id.unwrap_or_else(|| c.id.clone());
                (c.id, c.target, session, c.turns)
            }
            Value::Object(mut t) => {
                let id = match t
                    .remove("conversation_id")
                    .or_else(|| t.remove("session_id"))
                {
                    Some(Value::String(id)) => id,
                    _ => {
                        return Err(RecordingError::new(
                            format!("{file}:{line_no}"),
                            "a turn line needs a string `conversation_id` (or `session_id`); a conversation line needs `id` and `turns`",
                        ));
                    }
                };
                let target = match t.remove("target") {
                    None | Some(Value::Null) => None,
                    Some(Value::String(target)) => Some(target),
                    Some(_) => {
                        return Err(RecordingError::new(
                            format!("{file}:{line_no}"),
                            "`target` must be a string: the target the turn was recorded on",
                        ));
                    }
                };
                let turn: RecordedTurn = serde_json::from_value(Value::Object(t)).map_err(field)?;
                (id.clone(), target, id, vec![turn])
            }
            _ => {
                return Err(RecordingError::new(
                    format!("{file}:{line_no}"),
                    "expected a JSON object: one turn or one conversation",
                ));
            }
        };
        if id.is_empty() {
            return Err(RecordingError::new(
                format!("{file}:{line_no}"),
                "the conversation id is empty",
            ));
        }
        let key = ConversationKey::new(id, target);
        let transcript = out.entry(key).or_insert_with(|| Transcript {
            session_id: session,
            turns: Vec::new(),
        });
        for turn in turns {
            let mut turn = turn.into_turn();
            turn.round = transcript.turns.len();
            transcript.turns.push(turn);
        }
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn turn_lines_and_conversation_lines_group_by_id_in_file_order() {
        let text = r#"{"conversation_id": "a", "input": "Hi", "output": "Hello", "latency_ms": 12}
{"id": "b", "session_id": "s-b", "turns": [{"input": "Weather?", "output": "Sunny", "agent": "forecaster", "tool_calls": [{"name": "weather", "arguments": {"city": "Oslo"}, "result": {"sky": "sun"}, "agent": "router"}]}]}

{"session_id": "a", "input": "Bye", "output": "Bye", "error": "agent crashed"}
"#;
        let got = parse(text, "t.jsonl").unwrap();
        assert_eq!(got.len(), 2);
        let a = &got[&ConversationKey::new("a", None)];
        assert_eq!(a.session_id, "a");
        assert_eq!(a.turns.len(), 2);
        assert_eq!((a.turns[0].round, a.turns[1].round), (0, 1));
        assert_eq!(a.turns[0].latency_ms, 12);
        assert_eq!(
            a.turns[1].failure.as_ref().unwrap().message,
            "agent crashed"
        );
        let b = &got[&ConversationKey::new("b", None)];
        assert_eq!(b.session_id, "s-b");
        assert_eq!(b.turns[0].tool_calls[0].arguments["city"], "Oslo");
        // Multi-agent recordings name the agent of each turn and tool call.
        assert_eq!(b.turns[0].agent.as_deref(), Some("forecaster"));
        assert_eq!(b.turns[0].tool_calls[0].agent.as_deref(), Some("router"));
        assert_eq!(a.turns[0].agent, None);
    }

    #[test]
    fn one_conversation_id_on_two_targets_is_two_conversations() {
        let text = r#"{"conversation_id": "c", "target": "old", "input": "Hi", "output": "Hello"}
{"id": "c", "target": "new", "turns": [{"input": "Hi", "output": "Hey there"}]}
{"conversation_id": "c", "input": "Hi", "output": "Yo"}
"#;
        let got = parse(text, "t.jsonl").unwrap();
        let output = |target: Option<&str>| {
            got[&ConversationKey::new("c", target.map(str::to_owned))].turns[0]
                .output
                .clone()
        };
        assert_eq!(output(Some("old")), "Hello");
        assert_eq!(output(Some("new")), "Hey there");
        assert_eq!(output(None), "Yo");
        let e = parse("{\"conversation_id\": \"c\", \"target\": 3}\n", "t.jsonl").unwrap_err();
        assert!(e.message.contains("`target`"), "{e}");
    }

    #[test]
    fn errors_name_the_line_and_column_or_the_field() {
        let e = parse("{\"conversation_id\": \"a\"}\n{\"input\": \n", "t.jsonl").unwrap_err();
        assert!(e.at.starts_with("t.jsonl:2:"), "{e}");
        let e = parse(
            "{\"conversation_id\": \"a\", \"ouput\": \"x\"}\n",
            "t.jsonl",
        )
        .unwrap_err();
        assert_eq!(e.at, "t.jsonl:1");
        assert!(e.message.contains("ouput"), "{e}");
        let e = parse("{\"input\": \"x\"}\n", "t.jsonl").unwrap_err();
        assert!(e.message.contains("conversation_id"), "{e}");
    }
}
