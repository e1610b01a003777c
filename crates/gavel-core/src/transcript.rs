//! What a target did: turns, tool calls and the transcript of a session.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One tool call the target reported making.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The call's id, when the target reports one (an OpenAI `tool_calls` id,
    /// an Anthropic `tool_use` id, a coding agent's call or item id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The tool's name.
    pub name: String,
    /// The arguments as JSON (an object for most tools).
    #[serde(default)]
    pub arguments: Value,
    /// The tool's result, when the target reports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The agent that made the call, in a multi-agent system that says so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}

/// One model call gavel made itself: a `chat` target's step, or the harness's
/// follow-up detector or simulated user around a turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelCall {
    /// Who made it.
    pub caller: ModelCaller,
    /// The model id without any base URL (`openai:gpt-5-mini`,
    /// `openai-compatible:llama3`).
    pub model: String,
    /// Tokens and cost, when the model answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Wall time of the call, retries included.
    pub latency_ms: u64,
    /// The class of error the call failed with (`timeout`, `rate_limited`,
    /// `auth`, …), when it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Who made a [`ModelCall`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ModelCaller {
    /// A target gavel drives itself (`chat`, `mcp-agent`).
    Target,
    /// The follow-up detector, reading an answer for a clarifying question.
    FollowupDetector,
    /// The simulated user, writing the next message.
    SimulatedUser,
}

impl ModelCaller {
    /// The caller's name, as serialised.
    pub fn as_str(self) -> &'static str {
        match self {
            ModelCaller::Target => "target",
            ModelCaller::FollowupDetector => "followup-detector",
            ModelCaller::SimulatedUser => "simulated-user",
        }
    }
}

/// Token usage and cost of one turn, when known.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
    /// Cost in US dollars, when a price is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

impl Usage {
    /// Adds `other`'s tokens and cost (a cost stays unknown only if both are).
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        if let Some(cost) = other.cost_usd {
            *self.cost_usd.get_or_insert(0.0) += cost;
        }
    }
}

/// How many transport tries calls took: the first try and each retry, with the
/// rate-limited (429) and malformed answers among them. Judge answers read again
/// because their JSON did not parse are not transport tries and are not counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attempts {
    /// Requests sent, retries included.
    pub attempts: u32,
    /// Requests sent again after a transient failure.
    pub retries: u32,
    /// Answers that were 429 Too Many Requests.
    #[serde(default)]
    pub rate_limited: u32,
    /// Successful answers whose body could not be used (bad JSON, no choices).
    #[serde(default)]
    pub malformed: u32,
}

impl Attempts {
    /// Adds `other`'s counts, for totals over turns or runs.
    pub fn add(&mut self, other: &Attempts) {
        self.attempts = self.attempts.saturating_add(other.attempts);
        self.retries = self.retries.saturating_add(other.retries);
        self.rate_limited = self.rate_limited.saturating_add(other.rate_limited);
        self.malformed = self.malformed.saturating_add(other.malformed);
    }
}

/// An infrastructure failure while talking to the target: it yields `error`, never
/// `fail`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetFailure {
    /// What went wrong, for people.
    pub message: String,
    /// Whether trying again might succeed (timeouts, resets, 5xx).
    pub transient: bool,
}

/// One user message and everything the target did in answer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    /// The index of the round this turn answers (0-based).
    pub round: usize,
    /// The user message sent.
    pub input: String,
    /// The target's answer text.
    pub output: String,
    /// The whole response as JSON, when the target answered with JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<Value>,
    /// Tool calls the target reported, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// Wall time from sending the message to the complete answer.
    pub latency_ms: u64,
    /// Usage, when the target or model reported it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Set when the target could not be reached or broke.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<TargetFailure>,
    /// Whether gavel sent this message to answer the agent's clarifying question
    /// (a follow-up) rather than as the round's own message.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub followup: bool,
    /// The branch this turn belongs to (`None`: the parent conversation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// What the answer's stream looked like, when the target streamed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<StreamStats>,
    /// Model calls gavel itself made around this turn: the follow-up detector
    /// reading the answer, the simulated user writing the message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harness_usage: Option<Usage>,
    /// Each model call gavel made for this turn (the target's own when gavel
    /// drives the model, then the harness's), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub model_calls: Vec<ModelCall>,
    /// Transport tries of this turn's message, when the target retries
    /// (`retry:` on an http or command target).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempts: Option<Attempts>,
    /// The agent that answered, in a multi-agent system that says so (the
    /// target's own name for `chat` and `mcp-agent` targets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// What a coding agent left in its workspace after this message (`workspace`
    /// targets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<Box<crate::workspace::WorkspaceState>>,
}

/// The shape of one streamed answer, for structural checks.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StreamStats {
    /// Events read, of any kind.
    pub events: u64,
    /// Text delta events.
    pub deltas: u64,
    /// Tool-call events.
    pub tool_calls: u64,
    /// Tool-result events.
    pub tool_results: u64,
    /// Whether the completion signal arrived.
    pub done: bool,
    /// Milliseconds from sending the message to the first text delta.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_token_ms: Option<u64>,
}

/// The ordered turns of one session with a target.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Transcript {
    /// The session id used with the target.
    pub session_id: String,
    /// Turns in the order they happened.
    pub turns: Vec<Turn>,
}

impl Transcript {
    /// All tool calls of all turns, in order.
    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolCall> {
        self.turns.iter().flat_map(|t| t.tool_calls.iter())
    }

    /// The last turn, if any.
    pub fn last(&self) -> Option<&Turn> {
        self.turns.last()
    }

    /// The session id of a branch forked from `parent`.
    pub fn branch_session(parent: &str, branch: &str) -> String {
        format!("{parent}~{branch}")
    }
}
