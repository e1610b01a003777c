//! Adapters that drive the agent under test.
//!
//! A [`Target`] opens [`Session`]s (conversations); a session turns each user
//! message into a [`gavel_core::Turn`]. Infrastructure problems never panic or
//! return `Err` from [`Session::send`]: they land in [`gavel_core::Turn::failure`],
//! marked transient when trying again might help, so the case is reported as
//! `error` and never as the agent failing.
//!
//! - [`build`] makes an `http` or `command` adapter from a suite's
//!   [`gavel_core::TargetSpec`], expanding `${VAR}` from the environment.
//! - [`FnTarget`] wraps an async function, for library users and benchmarks.
//! - [`start`] launches a target's server process and waits until it is ready.
//! - [`replay`] answers cases from recorded conversations (JSONL, OTLP JSON).
//! - [`tool_loop`] is the model-and-tools loop of the targets gavel drives itself
//!   (`chat` here, `mcp-agent` in gavel-mcp).
//!
//! ```
//! use gavel_targets::{FnReply, FnRequest, FnTarget, Target, TurnRequest};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let target = FnTarget::new(|req: FnRequest| async move {
//!     FnReply::text(format!("You said: {}", req.message))
//!         .tool_call("echo", serde_json::json!({"text": req.message}), None)
//! });
//! let mut session = target.open("s-1").await.unwrap();
//! let turn = session
//!     .send(&TurnRequest { message: "Hi", ..TurnRequest::new("s-1", "hello-case") })
//!     .await;
//! assert_eq!(turn.output, "You said: Hi");
//! assert_eq!(turn.tool_calls[0].name, "echo");
//! session.close().await;
//! # });
//! ```

/// Reads coding-agent CLIs' machine-readable output (Claude Code, Codex, generic JSON lines).
pub mod agent_stream;
mod chat;
mod command;
mod error;
mod function;
#[cfg(feature = "http")]
mod http;
#[cfg(feature = "http")]
mod http_ops;
mod process;
pub mod replay;
mod response;
mod retry;
mod start;
#[cfg(feature = "http")]
mod stream;
pub mod tool_loop;
mod workspace;

use std::sync::Arc;
use std::time::Instant;

use gavel_core::workspace::WorkspaceRequest;
use gavel_core::{TargetFailure, TargetSpec, Transcript, Turn};
use gavel_models::ModelSource;
use serde_json::{Value, json};

pub use error::TargetError;
pub use function::{FnError, FnReply, FnRequest, FnTarget, IntoReply};
pub use start::{Started, start};

/// What the runner sends for one user message.
#[derive(Debug, Clone, Copy)]
pub struct TurnRequest<'a> {
    /// The session (conversation) id.
    pub session_id: &'a str,
    /// The id of the case being run.
    pub case_id: &'a str,
    /// The index of the round this message belongs to (0-based).
    pub round: usize,
    /// The user message.
    pub message: &'a str,
    /// Whether the message replies to the agent's clarifying question (a
    /// follow-up) rather than being one of the case's own messages.
    pub followup: bool,
    /// The case's context object, injected into every call.
    pub context: Option<&'a Value>,
    /// The earlier turns of this session, oldest first.
    pub history: &'a [Turn],
    /// What the case asks of a `workspace` target (its repository, the files
    /// its checks read, the commands they run); other targets ignore it.
    pub workspace: Option<&'a WorkspaceRequest>,
}

impl<'a> TurnRequest<'a> {
    /// A request for round 0 with an empty message (not a follow-up), no context
    /// and no history;
    /// set the rest with struct update syntax.
    pub fn new(session_id: &'a str, case_id: &'a str) -> Self {
        TurnRequest {
            session_id,
            case_id,
            round: 0,
            message: "",
            followup: false,
            context: None,
            history: &[],
            workspace: None,
        }
    }

    /// The request as the JSON object that http body templates see as variables
    /// and command targets receive as one line: `session_id`, `message`, `context`
    /// (`null` if none), `history` (`[{role, content}]`: each earlier turn's user
    /// input, then the assistant's output), `case_id` and `round`.
    pub fn to_json(&self) -> Value {
        let history: Vec<Value> = self
            .history
            .iter()
            .flat_map(|t| {
                [
                    json!({"role": "user", "content": t.input}),
                    json!({"role": "assistant", "content": t.output}),
                ]
            })
            .collect();
        json!({
            "session_id": self.session_id,
            "message": self.message,
            "context": self.context.cloned().unwrap_or(Value::Null),
            "history": history,
            "case_id": self.case_id,
            "round": self.round,
        })
    }

    /// A turn answering this request, with no output yet.
    pub(crate) fn turn(&self) -> Turn {
        Turn {
            round: self.round,
            input: self.message.to_owned(),
            ..Turn::default()
        }
    }
}

/// The agent under test, reached through an adapter. `Debug` output never shows
/// secrets (header values, URL passwords and queries).
#[async_trait::async_trait]
pub trait Target: Send + Sync + std::fmt::Debug {
    /// Opens a session (a conversation) with this id. Infrastructure problems
    /// (e.g. the command cannot be spawned) are an `Err`.
    async fn open(&self, session_id: &str) -> Result<Box<dyn Session>, TargetFailure>;

    /// The adapter's type name: `http`, `command` or `function`.
    fn kind(&self) -> &'static str;

    /// Closes `session` for real and opens it again with the same id (revival).
    /// By default the session is closed and reopened: the command target's
    /// process is stopped and a new one started. The http target runs its
    /// configured `restart` in between, and says so when it has none.
    async fn revive(
        &self,
        session: Box<dyn Session>,
        session_id: &str,
    ) -> Result<Box<dyn Session>, TargetFailure> {
        session.close().await;
        self.open(session_id).await
    }

    /// The recorded transcript of `conversation`, for targets that replay
    /// recordings instead of talking to an agent (`None`: a live target). An
    /// unknown conversation is a permanent failure.
    fn recorded(&self, conversation: &str) -> Option<Result<Transcript, TargetFailure>> {
        let _ = conversation;
        None
    }

    /// Makes `child` a new session holding a copy of `parent`'s conversation
    /// (branching). Targets that cannot fork answer a permanent failure saying so.
    async fn fork(&self, parent: &str, child: &str) -> Result<(), TargetFailure> {
        let _ = (parent, child);
        Err(permanent(format!(
            "{} targets cannot fork sessions (branching needs an http target with `fork`)",
            self.kind()
        )))
    }
}

/// One conversation with a target.
#[async_trait::async_trait]
pub trait Session: Send {
    /// Sends one message and returns the turn: round, input, output, the whole
    /// JSON response, tool calls and latency. Always returns a turn: infrastructure
    /// problems go into `turn.failure`, with `transient` set for timeouts,
    /// connection resets and refusals, HTTP 429 and 5xx.
    async fn send(&mut self, req: &TurnRequest<'_>) -> Turn;

    /// Ends the session; the command target stops its process.
    async fn close(self: Box<Self>);
}

/// Builds the adapter for the target `name` from its spec, expanding `${VAR}` and
/// `${VAR:-default}` from the environment. Errors name the target and the field,
/// e.g. ``target `agent`: headers.Authorization: `${TOKEN}`: environment variable
/// TOKEN is not set``.
///
/// A spec's `start` process is not launched here: see [`start`]. A `chat` target
/// takes its model from `models`; a model without credentials makes the target
/// [`TargetError::Unavailable`].
pub fn build(
    name: &str,
    spec: &TargetSpec,
    models: &dyn ModelSource,
) -> Result<Arc<dyn Target>, TargetError> {
    Ok(match spec {
        #[cfg(feature = "http")]
        TargetSpec::Http(http) => Arc::new(http::HttpAdapter::build(name, http)?),
        #[cfg(not(feature = "http"))]
        TargetSpec::Http(_) => {
            return Err(TargetError::config(
                name,
                "type",
                "http targets are not in this build (gavel-eval's `http` feature; the `gavel` binary has it)",
            ));
        }
        TargetSpec::Command(command) => Arc::new(command::CommandAdapter::build(name, command)?),
        TargetSpec::Chat(chat) => Arc::new(chat::ChatAdapter::build(name, chat, models)?),
        TargetSpec::Replay(replay) => Arc::new(replay::Replay::from_file(name, replay)?),
        TargetSpec::Workspace(spec) => Arc::new(workspace::WorkspaceAdapter::build(name, spec)?),
        TargetSpec::McpAgent(_) => {
            return Err(TargetError::config(
                name,
                "type",
                "mcp-agent targets need the store for their checkpoints: build them with gavel_mcp::McpAgent::from_spec",
            ));
        }
    })
}

/// A failure that trying again will not fix, its message redacted.
pub(crate) fn permanent(message: impl Into<String>) -> TargetFailure {
    failure(message.into(), false)
}

/// A failure that trying again might fix, its message redacted.
pub(crate) fn transient(message: impl Into<String>) -> TargetFailure {
    failure(message.into(), true)
}

fn failure(message: String, transient: bool) -> TargetFailure {
    let mut failure = TargetFailure { message, transient };
    failure.redact_secrets();
    failure
}

/// `turn` with every registered secret redacted ([`gavel_core::secrets`]).
pub(crate) fn redacted(mut turn: Turn) -> Turn {
    turn.redact_secrets();
    turn
}

/// Milliseconds since `start`, saturating.
pub(crate) fn elapsed_ms(start: Instant) -> u64 {
    u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_json_has_history_as_role_messages() {
        let history = [Turn {
            input: "Hi".into(),
            output: "Hello".into(),
            ..Turn::default()
        }];
        let ctx = json!({"user": "Ana"});
        let req = TurnRequest {
            round: 1,
            message: "Bye",
            context: Some(&ctx),
            history: &history,
            ..TurnRequest::new("s", "c")
        };
        assert_eq!(
            req.to_json(),
            json!({
                "session_id": "s", "message": "Bye", "context": {"user": "Ana"},
                "history": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}],
                "case_id": "c", "round": 1,
            })
        );
        assert_eq!(TurnRequest::new("s", "c").to_json()["context"], Value::Null);
    }
}
