//! The `chat` target: a model behind a system prompt, with optional tools whose
//! calls are recorded and answered from the suite, and optionally its own user
//! message template over the case's message and context.

use std::sync::Arc;
use std::time::Instant;

use gavel_core::target::{ChatTarget, ChatTool};
use gavel_core::{TargetFailure, Turn};
use gavel_models::{ChatModel, ErrorKind, Message, ModelSource, ToolDef};
use serde_json::{Map, Value, json};

use crate::tool_loop::{ToolLoop, ToolRunner, check_prompt, render_prompt};
use crate::{Session, Target, TargetError, TurnRequest, elapsed_ms};

/// Model calls per user message while the model keeps calling tools, by default.
const DEFAULT_MAX_STEPS: u32 = 5;

/// Talks to a model directly.
#[derive(Debug)]
pub(crate) struct ChatAdapter {
    /// The target's name, recorded as the agent of its turns.
    name: String,
    model: Arc<dyn ChatModel>,
    spec: ChatTarget,
    tools: Vec<ToolDef>,
}

impl ChatAdapter {
    pub(crate) fn build(
        name: &str,
        spec: &ChatTarget,
        models: &dyn ModelSource,
    ) -> Result<Self, TargetError> {
        if let Some(system) = &spec.system {
            check_prompt(name, "system", system)?;
        }
        if let Some(user) = &spec.user {
            check_prompt(name, "user", user)?;
        }
        let model = models.model(&spec.model).map_err(|e| match e.kind {
            ErrorKind::NoCredentials => TargetError::Unavailable {
                target: name.to_owned(),
                reason: e.message,
            },
            _ => TargetError::config(name, "model", e.message),
        })?;
        let tools = spec.tools.iter().map(tool_def).collect();
        Ok(ChatAdapter {
            name: name.to_owned(),
            model,
            spec: spec.clone(),
            tools,
        })
    }
}

fn tool_def(t: &ChatTool) -> ToolDef {
    ToolDef {
        name: t.name.clone(),
        description: t.description.clone(),
        parameters: t
            .parameters
            .clone()
            .unwrap_or_else(|| json!({"type": "object", "properties": {}})),
    }
}

#[async_trait::async_trait]
impl Target for ChatAdapter {
    async fn open(&self, _session_id: &str) -> Result<Box<dyn Session>, gavel_core::TargetFailure> {
        Ok(Box::new(ChatSession {
            name: self.name.clone(),
            model: self.model.clone(),
            spec: self.spec.clone(),
            tools: self.tools.clone(),
            messages: Vec::new(),
        }))
    }

    fn kind(&self) -> &'static str {
        "chat"
    }
}

/// One conversation: the messages so far live in the session (a revival loses
/// them, as a real stateless model deployment would).
struct ChatSession {
    /// The target's name, recorded as the agent of its turns.
    name: String,
    model: Arc<dyn ChatModel>,
    spec: ChatTarget,
    tools: Vec<ToolDef>,
    messages: Vec<Message>,
}

#[async_trait::async_trait]
impl Session for ChatSession {
    async fn send(&mut self, req: &TurnRequest<'_>) -> Turn {
        let clock = Instant::now();
        let mut turn = req.turn();
        let (system, user) = match prompts(&self.spec, req) {
            Ok(prompts) => prompts,
            Err(failure) => {
                turn.failure = Some(failure);
                return crate::redacted(turn);
            }
        };
        if let Some(user) = user {
            turn.input = user;
        }
        self.messages.push(Message::user(&turn.input));
        let tool_loop = ToolLoop {
            model: self.model.as_ref(),
            system: system.as_deref(),
            tools: &self.tools,
            temperature: self.spec.temperature,
            max_tokens: self.spec.max_tokens,
            max_steps: self.spec.max_steps.unwrap_or(DEFAULT_MAX_STEPS),
            agent: &self.name,
        };
        let mut results = Configured(&self.spec.tools);
        turn.failure = tool_loop
            .run(&mut self.messages, &mut turn, &mut results)
            .await
            .err();
        turn.latency_ms = elapsed_ms(clock);
        // Secrets an agent echoes are redacted before the turn leaves the adapter.
        crate::redacted(turn)
    }

    async fn close(self: Box<Self>) {}
}

/// The rendered system prompt, and the user message when the target has its
/// own template (`message` is the case's; the context wins over it) and the
/// message is the case's own, not a follow-up (sent as it is).
fn prompts(
    spec: &ChatTarget,
    req: &TurnRequest<'_>,
) -> Result<(Option<String>, Option<String>), TargetFailure> {
    let system = match &spec.system {
        Some(template) => Some(render_prompt(
            "system prompt",
            template,
            &Map::new(),
            req.context,
        )?),
        None => None,
    };
    let user = match &spec.user {
        Some(template) if !req.followup => {
            let mut vars = Map::new();
            vars.insert("message".into(), Value::String(req.message.to_owned()));
            Some(render_prompt("user message", template, &vars, req.context)?)
        }
        _ => None,
    };
    Ok((system, user))
}

/// Answers tool calls from the results the suite configured.
struct Configured<'a>(&'a [ChatTool]);

#[async_trait::async_trait]
impl ToolRunner for Configured<'_> {
    async fn call(&mut self, name: &str, _arguments: &Value) -> Result<Value, TargetFailure> {
        Ok(self
            .0
            .iter()
            .find(|t| t.name == name)
            .and_then(|t| t.result.clone())
            .unwrap_or_else(|| json!({"error": format!("no result configured for tool `{name}`")})))
    }
}
