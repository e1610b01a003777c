//! Reading a streamed http answer (SSE or NDJSON) into a turn: text deltas, tool
//! calls, tool results, the completion signal and the time to the first token.

use std::time::Instant;

use eventsource_stream::Eventsource;
use futures::{Stream, StreamExt};
use gavel_core::target::{StreamFormat, StreamMap};
use gavel_core::{StreamStats, ToolCall, Turn};
use serde_json::Value;

use crate::{elapsed_ms, permanent, transient};

/// One decoded event: its SSE name (if any) and its data.
struct Event {
    name: Option<String>,
    data: String,
}

/// Reads `body` to its end or to the completion signal, filling `turn` (output,
/// tool calls, stream stats). A stream that ends without the completion signal is
/// not a failure: the `stream` check judges that. Tool calls are read at `/name`,
/// `/arguments` and `/id`; tool results at `/id` (else the latest call) and
/// `/result`. An unreadable stream, an event
/// that is not JSON, or an error event is a failure.
pub(crate) async fn read<S, B, E>(body: S, map: &StreamMap, started: Instant, turn: &mut Turn)
where
    S: Stream<Item = Result<B, E>> + Unpin + Send,
    B: AsRef<[u8]> + Send,
    E: std::fmt::Display + Send,
{
    let mut stats = StreamStats::default();
    // Tool-call ids, parallel to `turn.tool_calls`, to pair results with calls.
    let mut ids: Vec<Option<Value>> = Vec::new();
    let events: std::pin::Pin<Box<dyn Stream<Item = Result<Event, String>> + Send + '_>> =
        match map.format {
            StreamFormat::Sse => Box::pin(body.eventsource().map(|e| {
                e.map(|e| Event {
                    name: (!e.event.is_empty() && e.event != "message").then_some(e.event),
                    data: e.data,
                })
                .map_err(|e| e.to_string())
            })),
            StreamFormat::Ndjson => {
                Box::pin(lines(body).map(|line| line.map(|data| Event { name: None, data })))
            }
        };
    futures::pin_mut!(events);
    while let Some(event) = events.next().await {
        let event = match event {
            Ok(event) => event,
            Err(e) => {
                turn.failure = Some(transient(format!("reading the stream failed: {e}")));
                break;
            }
        };
        // Kept current, so a stream cut off by the timeout still shows what came.
        turn.stream = Some(stats.clone());
        if event.data.trim().is_empty() {
            continue;
        }
        stats.events += 1;
        if event.data.trim() == "[DONE]" {
            stats.done = true;
            break;
        }
        let json: Value = match serde_json::from_str(&event.data) {
            Ok(json) => json,
            Err(e) => {
                let excerpt = crate::process::truncate(event.data.trim(), 200);
                turn.failure = Some(permanent(format!(
                    "stream event #{} is not JSON: {e}; data: {excerpt}",
                    stats.events
                )));
                break;
            }
        };
        let kind = json
            .pointer(&map.kind)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .or(event.name);
        let kind = kind.as_deref().unwrap_or_default();
        if kind == map.delta {
            stats.deltas += 1;
            if stats.first_token_ms.is_none() {
                stats.first_token_ms = Some(elapsed_ms(started));
            }
            if let Some(text) = json.pointer(&map.text).and_then(Value::as_str) {
                turn.output.push_str(text);
            }
        } else if kind == map.tool_call {
            stats.tool_calls += 1;
            turn.tool_calls.push(ToolCall {
                id: json.pointer("/id").map(|id| match id {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                }),
                name: text_at(&json, "/name"),
                arguments: json.pointer("/arguments").cloned().unwrap_or(Value::Null),
                ..ToolCall::default()
            });
            ids.push(json.pointer("/id").cloned());
        } else if kind == map.tool_result {
            stats.tool_results += 1;
            let id = json.pointer("/id");
            let index = match id {
                Some(id) => ids.iter().rposition(|i| i.as_ref() == Some(id)),
                None => turn.tool_calls.len().checked_sub(1),
            };
            if let Some(call) = index.and_then(|i| turn.tool_calls.get_mut(i)) {
                call.result = json.pointer("/result").cloned();
            }
        } else if kind == map.error {
            let message = json
                .pointer("/message")
                .map(|m| m.as_str().map_or_else(|| m.to_string(), str::to_owned))
                .unwrap_or_else(|| json.to_string());
            turn.failure = Some(permanent(format!("the stream sent an error: {message}")));
            break;
        }
        if kind == map.done || json.pointer("/done") == Some(&Value::Bool(true)) {
            stats.done = true;
            break;
        }
    }
    turn.stream = Some(stats);
}

/// The string at `pointer`, or empty.
fn text_at(json: &Value, pointer: &str) -> String {
    json.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// Splits a byte stream into UTF-8 lines (without their `\n` / `\r\n`).
fn lines<S, B, E>(body: S) -> impl Stream<Item = Result<String, String>> + Send
where
    S: Stream<Item = Result<B, E>> + Unpin + Send,
    B: AsRef<[u8]> + Send,
    E: std::fmt::Display + Send,
{
    futures::stream::unfold(
        (body, Vec::<u8>::new(), false),
        |(mut body, mut buffer, mut ended)| async move {
            loop {
                if let Some(end) = buffer.iter().position(|b| *b == b'\n') {
                    let line: Vec<u8> = buffer.drain(..=end).collect();
                    let text = String::from_utf8_lossy(&line).trim_end().to_owned();
                    return Some((Ok(text), (body, buffer, ended)));
                }
                if ended {
                    if buffer.is_empty() {
                        return None;
                    }
                    let text = String::from_utf8_lossy(&buffer).trim_end().to_owned();
                    buffer.clear();
                    return Some((Ok(text), (body, buffer, ended)));
                }
                match body.next().await {
                    Some(Ok(chunk)) => buffer.extend_from_slice(chunk.as_ref()),
                    Some(Err(e)) => {
                        ended = true;
                        buffer.clear();
                        return Some((Err(e.to_string()), (body, buffer, ended)));
                    }
                    None => ended = true,
                }
            }
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(format: StreamFormat) -> StreamMap {
        serde_json::from_value(serde_json::json!({"format": format})).unwrap_or_else(|e| {
            panic!("{e}");
        })
    }

    async fn turn_of(chunks: &[&str], format: StreamFormat) -> Turn {
        let body = futures::stream::iter(
            chunks
                .iter()
                .map(|c| Ok::<_, std::io::Error>(c.as_bytes().to_vec()))
                .collect::<Vec<_>>(),
        );
        let mut turn = Turn::default();
        read(body, &map(format), Instant::now(), &mut turn).await;
        turn
    }

    #[tokio::test]
    async fn sse_events_become_text_tools_and_done() {
        let turn = turn_of(
            &[
                "data: {\"type\":\"tool_call\",\"id\":\"c1\",\"name\":\"get_listings\",\"arguments\":{}}\n\n",
                "data: {\"type\":\"tool_result\",\"id\":\"c1\",\"result\":[1,2]}\n\ndata: {\"type\":\"delta\",\"text\":\"You have \"}\n\n",
                "data: {\"type\":\"del",
                "ta\",\"text\":\"2 listings.\"}\n\n",
                "data: {\"type\":\"done\"}\n\n",
                "data: {\"type\":\"delta\",\"text\":\"ignored\"}\n\n",
            ],
            StreamFormat::Sse,
        )
        .await;
        assert_eq!(turn.failure, None);
        assert_eq!(turn.output, "You have 2 listings.");
        assert_eq!(turn.tool_calls[0].name, "get_listings");
        assert_eq!(turn.tool_calls[0].result, Some(serde_json::json!([1, 2])));
        let stats = turn.stream.unwrap_or_default();
        assert_eq!((stats.events, stats.deltas, stats.done), (5, 2, true));
        assert_eq!((stats.tool_calls, stats.tool_results), (1, 1));
        assert!(stats.first_token_ms.is_some());
    }

    #[tokio::test]
    async fn sse_event_names_and_done_marker_count() {
        let turn = turn_of(
            &["event: delta\ndata: {\"text\":\"hi\"}\n\ndata: [DONE]\n\n"],
            StreamFormat::Sse,
        )
        .await;
        assert_eq!(turn.output, "hi");
        assert!(turn.stream.is_some_and(|s| s.done && s.deltas == 1));
    }

    #[tokio::test]
    async fn ndjson_lines_and_a_stream_without_done() {
        let turn = turn_of(
            &[
                "{\"type\":\"delta\",\"text\":\"a\"}\n{\"type\":\"de",
                "lta\",\"text\":\"b\"}",
            ],
            StreamFormat::Ndjson,
        )
        .await;
        assert_eq!((turn.output.as_str(), turn.failure.is_none()), ("ab", true));
        let stats = turn.stream.unwrap_or_default();
        assert_eq!((stats.deltas, stats.done), (2, false));
        let turn = turn_of(&["{\"done\":true}\n"], StreamFormat::Ndjson).await;
        assert!(turn.stream.is_some_and(|s| s.done && s.deltas == 0));
    }

    #[tokio::test]
    async fn bad_events_and_error_events_are_failures() {
        let turn = turn_of(&["data: nope\n\n"], StreamFormat::Sse).await;
        let failure = turn.failure.unwrap_or_else(|| panic!("no failure"));
        assert!(
            failure.message.starts_with("stream event #1 is not JSON"),
            "{}",
            failure.message
        );
        let turn = turn_of(
            &["{\"type\":\"error\",\"message\":\"model overloaded\"}\n"],
            StreamFormat::Ndjson,
        )
        .await;
        assert_eq!(
            turn.failure.map(|f| f.message),
            Some("the stream sent an error: model overloaded".into())
        );
    }
}
