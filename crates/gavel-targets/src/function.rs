//! An in-process target backed by an async function, for library users and
//! benchmarks.

use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Instant;

use futures::FutureExt;
use gavel_core::{TargetFailure, ToolCall, Turn, Usage};
use serde_json::Value;

use crate::{Session, Target, TurnRequest};

/// One message, as an owned value the function can move into its future.
#[derive(Debug, Clone, PartialEq)]
pub struct FnRequest {
    /// The session (conversation) id.
    pub session_id: String,
    /// The id of the case being run.
    pub case_id: String,
    /// The round this message belongs to (0-based).
    pub round: usize,
    /// The user message.
    pub message: String,
    /// The case's context object, if any.
    pub context: Option<Value>,
    /// The earlier turns of this session, oldest first.
    pub history: Vec<Turn>,
}

/// What the function answered.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FnReply {
    /// The answer text.
    pub output: String,
    /// Tool calls made while answering, in order.
    pub tool_calls: Vec<ToolCall>,
    /// The raw response to keep in the turn, if any.
    pub response: Option<Value>,
    /// Token usage, if known.
    pub usage: Option<Usage>,
}

impl FnReply {
    /// A reply with this text and nothing else.
    pub fn text(output: impl Into<String>) -> Self {
        FnReply {
            output: output.into(),
            ..FnReply::default()
        }
    }

    /// Adds a tool call.
    pub fn tool_call(
        mut self,
        name: impl Into<String>,
        arguments: Value,
        result: Option<Value>,
    ) -> Self {
        self.tool_calls.push(ToolCall {
            name: name.into(),
            arguments,
            result,
            ..ToolCall::default()
        });
        self
    }
}

impl From<String> for FnReply {
    fn from(output: String) -> Self {
        FnReply::text(output)
    }
}

impl From<&str> for FnReply {
    fn from(output: &str) -> Self {
        FnReply::text(output)
    }
}

/// An infrastructure failure reported by the function: the turn becomes `error`,
/// never `fail`. Any `Display` error converts into a permanent one, so `?` works on
/// `anyhow`, `io` and string errors; use [`FnError::transient`] when a retry might
/// succeed.
pub struct FnError {
    message: String,
    transient: bool,
}

impl FnError {
    /// A failure that trying again will not fix.
    pub fn permanent(message: impl Into<String>) -> Self {
        FnError {
            message: message.into(),
            transient: false,
        }
    }

    /// A failure that trying again might fix.
    pub fn transient(message: impl Into<String>) -> Self {
        FnError {
            message: message.into(),
            transient: true,
        }
    }
}

// `FnError` implements `Debug` but deliberately not `Display`, so that every
// `Display` type converts into it without overlapping `From<T> for T`.
impl fmt::Debug for FnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FnError")
            .field("message", &self.message)
            .field("transient", &self.transient)
            .finish()
    }
}

impl<E: fmt::Display> From<E> for FnError {
    fn from(e: E) -> Self {
        FnError::permanent(e.to_string())
    }
}

impl From<FnError> for TargetFailure {
    fn from(e: FnError) -> Self {
        TargetFailure {
            message: e.message,
            transient: e.transient,
        }
    }
}

/// What a target function may return: an [`FnReply`], a `String` or `&str`, or a
/// `Result` of one of those whose error converts into [`FnError`].
pub trait IntoReply {
    /// The reply, or the failure to record in the turn.
    fn into_reply(self) -> Result<FnReply, TargetFailure>;
}

impl IntoReply for FnReply {
    fn into_reply(self) -> Result<FnReply, TargetFailure> {
        Ok(self)
    }
}

impl IntoReply for String {
    fn into_reply(self) -> Result<FnReply, TargetFailure> {
        Ok(FnReply::text(self))
    }
}

impl IntoReply for &str {
    fn into_reply(self) -> Result<FnReply, TargetFailure> {
        Ok(FnReply::text(self))
    }
}

impl<T: IntoReply, E: Into<FnError>> IntoReply for Result<T, E> {
    fn into_reply(self) -> Result<FnReply, TargetFailure> {
        self.map_err(|e| TargetFailure::from(e.into()))?
            .into_reply()
    }
}

/// A target that calls an async function for every message; a panic in the
/// function becomes a failed turn.
pub struct FnTarget<F> {
    f: Arc<F>,
}

impl<F> fmt::Debug for FnTarget<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FnTarget")
    }
}

impl<F, Fut> FnTarget<F>
where
    F: Fn(FnRequest) -> Fut + Send + Sync + 'static,
    Fut: Future + Send + 'static,
    Fut::Output: IntoReply,
{
    /// A target answering with `f`.
    pub fn new(f: F) -> Self {
        FnTarget { f: Arc::new(f) }
    }
}

#[async_trait::async_trait]
impl<F, Fut> Target for FnTarget<F>
where
    F: Fn(FnRequest) -> Fut + Send + Sync + 'static,
    Fut: Future + Send + 'static,
    Fut::Output: IntoReply,
{
    async fn open(&self, _session_id: &str) -> Result<Box<dyn Session>, TargetFailure> {
        Ok(Box::new(FnSession {
            f: Arc::clone(&self.f),
        }))
    }

    fn kind(&self) -> &'static str {
        "function"
    }

    /// Nothing to copy: the function sees each branch's own history in
    /// [`FnRequest::history`].
    async fn fork(&self, _parent: &str, _child: &str) -> Result<(), TargetFailure> {
        Ok(())
    }
}

struct FnSession<F> {
    f: Arc<F>,
}

#[async_trait::async_trait]
impl<F, Fut> Session for FnSession<F>
where
    F: Fn(FnRequest) -> Fut + Send + Sync + 'static,
    Fut: Future + Send + 'static,
    Fut::Output: IntoReply,
{
    async fn send(&mut self, req: &TurnRequest<'_>) -> Turn {
        // Secrets (header values, keys) an agent echoes are redacted before the
        // turn leaves the adapter: nothing downstream ever sees them.
        let turn = async {
            let mut turn = req.turn();
            let request = FnRequest {
                session_id: req.session_id.to_owned(),
                case_id: req.case_id.to_owned(),
                round: req.round,
                message: req.message.to_owned(),
                context: req.context.cloned(),
                history: req.history.to_vec(),
            };
            let started = Instant::now();
            let result = AssertUnwindSafe(async { (self.f)(request).await.into_reply() })
                .catch_unwind()
                .await;
            turn.latency_ms = crate::elapsed_ms(started);
            match result {
                Ok(Ok(reply)) => {
                    turn.output = reply.output;
                    turn.tool_calls = reply.tool_calls;
                    turn.response = reply.response;
                    turn.usage = reply.usage;
                }
                Ok(Err(failure)) => turn.failure = Some(failure),
                Err(panic) => {
                    let what = panic
                        .downcast_ref::<&str>()
                        .map(|s| (*s).to_owned())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "no message".to_owned());
                    turn.failure = Some(TargetFailure {
                        message: format!("the target function panicked: {what}"),
                        transient: false,
                    });
                }
            }
            turn
        }
        .await;
        crate::redacted(turn)
    }

    async fn close(self: Box<Self>) {}
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    #[tokio::test]
    async fn round_trip_passes_the_request_and_keeps_the_reply() {
        let target = FnTarget::new(|req: FnRequest| async move {
            let reply = FnReply::text(format!(
                "{}:{}:{}:{}",
                req.session_id, req.case_id, req.round, req.message
            ))
            .tool_call(
                "lookup",
                json!({"ctx": req.context}),
                Some(json!(req.history.len())),
            );
            FnReply {
                usage: Some(Usage {
                    input_tokens: 3,
                    output_tokens: 4,
                    cost_usd: None,
                }),
                ..reply
            }
        });
        assert_eq!(target.kind(), "function");
        let mut session = target.open("s").await.unwrap();
        let ctx = json!({"k": 1});
        let history = [Turn::default()];
        let turn = session
            .send(&TurnRequest {
                round: 1,
                message: "hi",
                context: Some(&ctx),
                history: &history,
                ..TurnRequest::new("s", "c")
            })
            .await;
        assert_eq!(turn.failure, None);
        assert_eq!(turn.round, 1);
        assert_eq!(turn.input, "hi");
        assert_eq!(turn.output, "s:c:1:hi");
        assert_eq!(turn.tool_calls[0].arguments, json!({"ctx": {"k": 1}}));
        assert_eq!(turn.tool_calls[0].result, Some(json!(1)));
        assert_eq!(turn.usage.unwrap().output_tokens, 4);
        session.close().await;
    }

    #[tokio::test]
    async fn errors_and_panics_become_failures() {
        let target = FnTarget::new(|req: FnRequest| async move {
            match req.message.as_str() {
                "io" => Err(std::io::Error::other("disk on fire"))?,
                "busy" => Err(FnError::transient("busy"))?,
                "panic" => panic!("boom"),
                _ => Ok::<_, FnError>("fine"),
            }
        });
        let mut session = target.open("s").await.unwrap();
        let send = |message: &'static str| TurnRequest {
            message,
            ..TurnRequest::new("s", "c")
        };
        let turn = session.send(&send("io")).await;
        assert_eq!(
            turn.failure,
            Some(TargetFailure {
                message: "disk on fire".into(),
                transient: false
            })
        );
        let turn = session.send(&send("busy")).await;
        assert_eq!(
            turn.failure,
            Some(TargetFailure {
                message: "busy".into(),
                transient: true
            })
        );
        let turn = session.send(&send("panic")).await;
        assert!(turn.failure.unwrap().message.contains("panicked: boom"));
        assert_eq!(session.send(&send("ok")).await.output, "fine");
    }
}
