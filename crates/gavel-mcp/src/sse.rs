//! The legacy MCP HTTP+SSE transport (protocol 2024-11-05), which `rmcp` no longer
//! ships: `GET` opens an event stream whose first `endpoint` event names the URL
//! that client messages are `POST`ed to; server messages arrive as `message`
//! events. The result plugs into `rmcp` as a (sink, stream) transport.

use std::pin::Pin;

use futures::{Sink, Stream, StreamExt};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};

/// Server messages, read from the event stream.
pub(crate) type Incoming = Pin<Box<dyn Stream<Item = ServerJsonRpcMessage> + Send>>;
/// Client messages, posted to the endpoint.
pub(crate) type Outgoing = Pin<Box<dyn Sink<ClientJsonRpcMessage, Error = std::io::Error> + Send>>;

/// One server-sent event.
#[derive(Debug, Default, PartialEq)]
struct Event {
    name: String,
    data: String,
}

/// Splits a byte stream into events (`event:` and `data:` lines, a blank line
/// ends an event).
struct Events {
    body: Pin<Box<dyn Stream<Item = reqwest::Result<bytes::Bytes>> + Send>>,
    buffer: String,
}

impl Events {
    async fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let mut event = Event::default();
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("event:") {
                        event.name = v.trim().to_owned();
                    } else if let Some(v) = line.strip_prefix("data:") {
                        if !event.data.is_empty() {
                            event.data.push('\n');
                        }
                        event.data.push_str(v.strip_prefix(' ').unwrap_or(v));
                    }
                }
                if event.name.is_empty() {
                    event.name = "message".to_owned();
                }
                return Some(event);
            }
            let chunk = self.body.next().await?.ok()?;
            self.buffer
                .push_str(&String::from_utf8_lossy(&chunk).replace("\r\n", "\n"));
        }
    }
}

/// Opens the event stream, waits for the `endpoint` event and returns the
/// transport.
pub(crate) async fn connect(url: &str) -> Result<(Outgoing, Incoming), String> {
    let http = reqwest::Client::new();
    let response = http
        .get(url)
        .header("accept", "text/event-stream")
        .send()
        .await
        .and_then(reqwest::Response::error_for_status)
        .map_err(|e| format!("cannot open the MCP event stream {url}: {e}"))?;
    let base = response.url().clone();
    let mut events = Events {
        body: Box::pin(response.bytes_stream()),
        buffer: String::new(),
    };
    let endpoint = loop {
        match events.next().await {
            Some(e) if e.name == "endpoint" => break e.data,
            Some(_) => continue,
            None => return Err(format!("{url} closed before sending its `endpoint` event")),
        }
    };
    let post_url = base
        .join(endpoint.trim())
        .map_err(|e| format!("bad MCP endpoint `{endpoint}` from {url}: {e}"))?;
    let incoming = futures::stream::unfold(events, |mut events| async move {
        loop {
            let event = events.next().await?;
            if event.name != "message" {
                continue;
            }
            // A message that does not parse is dropped; the request it answers
            // then times out with a clear error on the rmcp side.
            if let Ok(msg) = serde_json::from_str::<ServerJsonRpcMessage>(&event.data) {
                return Some((msg, events));
            }
        }
    });
    let outgoing = futures::sink::unfold(
        (http, post_url),
        |(http, post_url), msg: ClientJsonRpcMessage| async move {
            http.post(post_url.clone())
                .json(&msg)
                .send()
                .await
                .and_then(reqwest::Response::error_for_status)
                .map_err(std::io::Error::other)?;
            Ok::<_, std::io::Error>((http, post_url))
        },
    );
    Ok((Box::pin(outgoing), Box::pin(incoming)))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn events_split_on_blank_lines() {
        let chunks: Vec<reqwest::Result<bytes::Bytes>> = vec![
            Ok(bytes::Bytes::from(
                "event: endpoint\r\ndata: /messages?s=1\r\n\r\ndata: {\"a\"",
            )),
            Ok(bytes::Bytes::from(":1}\n\n")),
        ];
        let mut events = Events {
            body: Box::pin(futures::stream::iter(chunks)),
            buffer: String::new(),
        };
        assert_eq!(
            events.next().await,
            Some(Event {
                name: "endpoint".into(),
                data: "/messages?s=1".into()
            })
        );
        assert_eq!(
            events.next().await,
            Some(Event {
                name: "message".into(),
                data: "{\"a\":1}".into()
            })
        );
        assert_eq!(events.next().await, None);
    }
}
