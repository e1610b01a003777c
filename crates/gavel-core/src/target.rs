//! Target specifications: how to reach the agent under test.
//!
//! Strings marked "expanded" accept `${VAR}` and `${VAR:-default}` from the
//! environment when the target is built, so secrets stay out of suite files;
//! `$$` is a literal `$` and any other `$` is left as written
//! ([`TargetSpec::expanded`] lists them).

mod expanded;

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// An agent adapter, selected by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "kebab-case", deny_unknown_fields)]
#[allow(clippy::large_enum_variant)] // built once per run; boxing buys nothing
pub enum TargetSpec {
    /// An HTTP endpoint answering JSON.
    Http(HttpTarget),
    /// A process speaking JSON lines on stdin/stdout, one process per session.
    Command(CommandTarget),
    /// A model itself, behind a system prompt (the seeds' "harness").
    Chat(ChatTarget),
    /// gavel's own ReAct agent: a model calling tools on MCP servers.
    McpAgent(McpAgentTarget),
    /// Recorded conversations, graded without calling any agent (docs/REPLAY.md).
    Replay(ReplayTarget),
    /// A coding agent's CLI in a fresh copy of a repository (docs/coding-agents.md).
    Workspace(crate::workspace::WorkspaceTarget),
}

impl TargetSpec {
    /// The process to start before the run, if any.
    pub fn start(&self) -> Option<&StartSpec> {
        match self {
            TargetSpec::Http(h) => h.start.as_ref(),
            TargetSpec::Command(_)
            | TargetSpec::Chat(_)
            | TargetSpec::McpAgent(_)
            | TargetSpec::Replay(_)
            | TargetSpec::Workspace(_) => None,
        }
    }

    /// The adapter's type name.
    pub fn kind(&self) -> &'static str {
        match self {
            TargetSpec::Http(_) => "http",
            TargetSpec::Command(_) => "command",
            TargetSpec::Chat(_) => "chat",
            TargetSpec::McpAgent(_) => "mcp-agent",
            TargetSpec::Replay(_) => "replay",
            TargetSpec::Workspace(_) => "workspace",
        }
    }
}

/// Where to find the parts of a JSON answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResponseMap {
    /// JSON pointer to the answer text (default `/output`).
    #[serde(default = "default_output")]
    pub output: String,
    /// JSON pointer to an array of tool calls `{name, arguments, result, agent}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<String>,
    /// JSON pointer to the name of the agent that answered, in a multi-agent
    /// system (default `/agent`, read when present).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}

impl Default for ResponseMap {
    fn default() -> Self {
        ResponseMap {
            output: default_output(),
            tool_calls: None,
            agent: None,
        }
    }
}

fn default_output() -> String {
    "/output".to_owned()
}

/// An HTTP target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HttpTarget {
    /// The endpoint URL (expanded).
    pub url: String,
    /// HTTP method (default POST).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// Extra headers; values expanded, never logged or stored.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// The JSON body template. A string leaf that is exactly `{{ name }}` becomes that
    /// variable's JSON value; other strings are rendered as templates. Variables:
    /// `session_id`, `message`, `context`, `history`, `case_id`, `round`. Default:
    /// `{"session_id": "{{ session_id }}", "message": "{{ message }}", "context": "{{ context }}"}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<Value>,
    /// Where the answer's parts are.
    #[serde(default)]
    pub response: ResponseMap,
    /// Per-request timeout in seconds (default 60).
    #[serde(
        default,
        deserialize_with = "crate::bounds::de::timeout_s",
        skip_serializing_if = "Option::is_none"
    )]
    pub timeout_s: Option<f64>,
    /// Retries of transient failures (off by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<RetrySpec>,
    /// A process to start before the run and stop after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<StartSpec>,
    /// Read the answer as an SSE or NDJSON stream of events instead of one JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<StreamMap>,
    /// How to restart the agent for revival (`revival: true`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart: Option<RestartSpec>,
    /// How to fork a session for branching cases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fork: Option<ForkSpec>,
}

/// The wire format of a streamed answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StreamFormat {
    /// Server-sent events: `data:` lines holding JSON (`[DONE]` ends the stream).
    #[default]
    Sse,
    /// One JSON object per line.
    Ndjson,
}

/// How a stream's events map to deltas, tool calls, tool results and done.
///
/// An event's kind is the string at `kind` (default `/type`), else the SSE
/// `event:` name; it is then looked up in the kind names below.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StreamMap {
    /// `sse` (default) or `ndjson`.
    #[serde(default)]
    pub format: StreamFormat,
    /// JSON pointer to the event's kind (default `/type`).
    #[serde(default = "default_kind")]
    pub kind: String,
    /// The kind of text deltas (default `delta`).
    #[serde(default = "default_delta")]
    pub delta: String,
    /// JSON pointer to a delta's text (default `/text`).
    #[serde(default = "default_text")]
    pub text: String,
    /// The kind of tool-call events (default `tool_call`): `/name`, `/arguments`,
    /// `/id`.
    #[serde(default = "default_tool_call")]
    pub tool_call: String,
    /// The kind of tool-result events (default `tool_result`): `/id` (else the
    /// latest call), `/result`.
    #[serde(default = "default_tool_result")]
    pub tool_result: String,
    /// The kind of the completion signal (default `done`); an event whose `/done`
    /// is `true` also completes the stream.
    #[serde(default = "default_done")]
    pub done: String,
    /// The kind of error events (default `error`): `/message` becomes a failure.
    #[serde(default = "default_error")]
    pub error: String,
}

fn default_kind() -> String {
    "/type".into()
}
fn default_delta() -> String {
    "delta".into()
}
fn default_text() -> String {
    "/text".into()
}
fn default_tool_call() -> String {
    "tool_call".into()
}
fn default_tool_result() -> String {
    "tool_result".into()
}
fn default_done() -> String {
    "done".into()
}
fn default_error() -> String {
    "error".into()
}

/// How an http target's agent is restarted: a command, an endpoint, or both
/// (command first); then gavel waits for `ready_url` when given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RestartSpec {
    /// Program and arguments to run (expanded); it must exit 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
    /// An endpoint to call (expanded); it must answer 2xx.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The endpoint's method (default POST).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// Ready again when a GET to this URL answers 2xx (expanded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_url: Option<String>,
    /// How long the restart may take, in seconds (default 60).
    #[serde(
        default,
        deserialize_with = "crate::bounds::de::timeout_s",
        skip_serializing_if = "Option::is_none"
    )]
    pub timeout_s: Option<f64>,
}

/// The request that forks a session: the agent copies the parent's conversation
/// into a new session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ForkSpec {
    /// The endpoint (expanded, then rendered with `parent_session_id` and
    /// `session_id`).
    pub url: String,
    /// Method (default POST).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// JSON body template over `parent_session_id` and `session_id` (default
    /// `{"parent_session_id": "{{ parent_session_id }}", "session_id": "{{ session_id }}"}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<Value>,
}

/// A JSON-lines process target: gavel writes `{"session_id", "message", "context",
/// "history"}` lines and reads one JSON answer line per message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CommandTarget {
    /// Program and arguments (expanded).
    pub command: Vec<String>,
    /// Working directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Extra environment variables (values expanded).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Where the answer's parts are.
    #[serde(default)]
    pub response: ResponseMap,
    /// Per-message timeout in seconds (default 60).
    #[serde(
        default,
        deserialize_with = "crate::bounds::de::timeout_s",
        skip_serializing_if = "Option::is_none"
    )]
    pub timeout_s: Option<f64>,
    /// Retries of a message that timed out, in a restarted process (off by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<RetrySpec>,
}

/// Sending a message again after a transient failure: for http targets 429
/// (after its Retry-After), 408, 5xx, a refused or reset connection, a timeout;
/// for command targets a timeout, in a restarted process given the history.
/// Off unless set: an agent may not be idempotent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RetrySpec {
    /// Tries per message, the first included (1-100).
    #[serde(deserialize_with = "crate::bounds::de::attempts")]
    pub attempts: u32,
    /// The first wait in milliseconds; each further one doubles, with jitter
    /// (default 500).
    #[serde(
        default,
        deserialize_with = "crate::bounds::de::backoff_ms",
        skip_serializing_if = "Option::is_none"
    )]
    pub backoff_ms: Option<u64>,
}

/// A process gavel starts before the run and stops after it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StartSpec {
    /// Program and arguments (expanded).
    pub command: Vec<String>,
    /// Working directory (relative to the suite file's folder).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Extra environment variables (values expanded).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Ready when a GET to this URL answers 2xx (expanded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_url: Option<String>,
    /// Ready when the process prints a line matching this regex.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_line: Option<String>,
    /// How long to wait for readiness, in seconds (default 120).
    #[serde(
        default,
        deserialize_with = "crate::bounds::de::timeout_s",
        skip_serializing_if = "Option::is_none"
    )]
    pub timeout_s: Option<f64>,
}

/// A model tested directly: a system prompt, optional tools, and the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChatTarget {
    /// The model id, e.g. `openai:gpt-5-mini` or `openai-compatible:NAME@URL`.
    pub model: String,
    /// The system prompt, a template over the case's `context` plus today's date
    /// as `today` and `date` (e.g. `Today's date is {{ today }}. Respond in {{ locale }}.`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    /// The user message sent in place of each of the case's messages (a reply to
    /// a clarifying question goes as it is): a template over `message` (the
    /// case's own message), the case's `context` (which wins over `message`) and
    /// `today`/`date`, e.g. `Write a tweet about {{ topic }}`. Several such
    /// targets put several prompts to one case, so `select-best` compares
    /// prompts too. The turn records the message as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// Tools the model may call; each call is recorded with its arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ChatTool>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Answer length cap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Model calls per user message while the model keeps calling tools (default
    /// 5); a model still calling tools after them makes the turn an `error`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_steps: Option<u32>,
}

/// gavel's own agent: a model, a system prompt and MCP servers. gavel runs the
/// ReAct loop, records every tool call and checkpoints the conversation in the
/// store, so a revival reloads it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpAgentTarget {
    /// The model id, e.g. `openai:gpt-5-mini` or `openai-compatible:NAME@URL`.
    pub model: String,
    /// The system prompt, a template over `vars`, the case's `context` and today's
    /// date (`YYYY-MM-DD`) as `date` and `today`, e.g. `Today is {{ date }}. Answer in {{ locale }}.`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    /// Template variables for the system prompt (`locale` and anything else).
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub vars: serde_json::Map<String, Value>,
    /// The MCP servers whose tools the agent may call (at least one).
    pub servers: Vec<McpServer>,
    /// Model calls per user message while the model keeps calling tools (default
    /// 8); a model still calling tools after them makes the turn an `error`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_steps: Option<u32>,
}

/// How to reach one MCP server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "transport", rename_all = "kebab-case", deny_unknown_fields)]
pub enum McpServer {
    /// A process speaking MCP on stdin/stdout.
    Stdio {
        /// Program and arguments (expanded).
        command: Vec<String>,
        /// Extra environment variables (values expanded).
        #[serde(default)]
        env: BTreeMap<String, String>,
    },
    /// A Streamable HTTP endpoint, e.g. `http://127.0.0.1:3001/mcp` (expanded).
    StreamableHttp {
        /// The endpoint URL.
        url: String,
    },
    /// The legacy HTTP+SSE transport: a `GET` event stream whose `endpoint` event
    /// names the URL to `POST` messages to.
    Sse {
        /// The event stream URL (expanded), e.g. `http://127.0.0.1:3001/sse`.
        url: String,
    },
}

/// A tool offered to a `chat` target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChatTool {
    /// Tool name.
    pub name: String,
    /// What the tool does, for the model.
    #[serde(default)]
    pub description: String,
    /// JSON Schema of the arguments (default: any object).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Value>,
    /// The result handed back to the model when it calls the tool (default:
    /// `{"error": "no result configured"}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
}

/// Recorded conversations to grade instead of talking to an agent: a file of
/// JSONL transcripts or OTLP JSON traces, or a stored gavel run. Give `file` or
/// `run`, not both. See docs/REPLAY.md for the formats and how conversations
/// map to cases.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplayTarget {
    /// The recording (relative to the suite file's folder).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The file's format; by default `.jsonl` files are `jsonl` transcripts and
    /// `.json` files `otlp-json` traces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<ReplayFormat>,
    /// A stored run: an id, a unique prefix of one, `latest` or `previous`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
    /// The recorded target whose conversations this target replays, when the
    /// recording holds several (default: the one of this target's name, else
    /// the only one recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
}

/// The format of a recording file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ReplayFormat {
    /// gavel's JSONL transcripts: one turn, or one whole conversation, per line.
    Jsonl,
    /// OpenTelemetry GenAI spans as OTLP JSON (one export request, or one per line).
    OtlpJson,
}
