//! The `chat` target: a model behind a system prompt, with optional tools whose
//! calls are recorded and answered from the suite.

use std::sync::Arc;
use std::time::Instant;

use gavel_core::target::{ChatTarget, ChatTool};
use gavel_core::{ToolCall, Turn, Usage};
use gavel_models::{ChatModel, ChatRequest, ErrorKind, Message, ModelSource, Role, ToolDef};
use serde_json::{Value, json};

use crate::{Session, Target, TargetError, TurnRequest, elapsed_ms, permanent, transient};

/// Talks to a model directly.
#[derive(Debug)]
pub(crate) struct ChatAdapter {
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
            minijinja::Environment::new()
                .template_from_str(system)
                .map_err(|e| TargetError::config(name, "system", e.to_string()))?;
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
    model: Arc<dyn ChatModel>,
    spec: ChatTarget,
    tools: Vec<ToolDef>,
    messages: Vec<Message>,
}

#[async_trait::async_trait]
impl Session for ChatSession {
    async fn send(&mut self, req: &TurnRequest<'_>) -> Turn {
        // Secrets (header values, keys) an agent echoes are redacted before the
        // turn leaves the adapter: nothing downstream ever sees them.
        let turn = async {
            let clock = Instant::now();
            let mut turn = Turn {
                round: req.round,
                input: req.message.to_owned(),
                ..Turn::default()
            };
            let system = match self.system(req.context) {
                Ok(s) => s,
                Err(message) => {
                    turn.failure = Some(permanent(message));
                    return turn;
                }
            };
            self.messages.push(Message::user(req.message));
            let mut usage = Usage::default();
            for _ in 0..self.spec.max_steps.unwrap_or(5).max(1) {
                let request = ChatRequest {
                    system: system.clone(),
                    messages: self.messages.clone(),
                    temperature: self.spec.temperature,
                    max_tokens: self.spec.max_tokens,
                    tools: self.tools.clone(),
                    ..ChatRequest::default()
                };
                let answer = match self.model.chat(&request).await {
                    Ok(a) => a,
                    Err(e) => {
                        let failure = if e.kind.is_retryable() {
                            transient(e.message)
                        } else {
                            permanent(e.message)
                        };
                        turn.failure = Some(failure);
                        break;
                    }
                };
                usage.input_tokens += answer.usage.input_tokens;
                usage.output_tokens += answer.usage.output_tokens;
                if let Some(cost) = answer.cost_usd {
                    *usage.cost_usd.get_or_insert(0.0) += cost;
                }
                self.messages.push(Message {
                    role: Role::Assistant,
                    content: answer.text.clone(),
                    tool_calls: answer.tool_calls.clone(),
                    tool_call_id: None,
                });
                if answer.tool_calls.is_empty() {
                    turn.output = answer.text;
                    break;
                }
                for call in answer.tool_calls {
                    let result = self.result_of(&call.name);
                    turn.tool_calls.push(ToolCall {
                        name: call.name.clone(),
                        arguments: call.arguments.clone(),
                        result: Some(result.clone()),
                    });
                    self.messages.push(Message {
                        role: Role::Tool,
                        content: result.to_string(),
                        tool_calls: Vec::new(),
                        tool_call_id: Some(call.id),
                    });
                }
            }
            turn.usage = Some(usage);
            turn.latency_ms = elapsed_ms(clock);
            turn
        }
        .await;
        crate::redacted(turn)
    }

    async fn close(self: Box<Self>) {}
}

impl ChatSession {
    /// The system prompt rendered over the case context and today's date.
    fn system(&self, context: Option<&Value>) -> Result<Option<String>, String> {
        let Some(template) = &self.spec.system else {
            return Ok(None);
        };
        let mut vars = match context {
            Some(Value::Object(map)) => map.clone(),
            _ => serde_json::Map::new(),
        };
        let today = gavel_core::now_rfc3339();
        vars.entry("today")
            .or_insert_with(|| json!(today.get(..10).unwrap_or(&today)));
        let mut env = minijinja::Environment::new();
        env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
        let ctx = minijinja::Value::from(minijinja::value::Serde(&Value::Object(vars)));
        gavel_core::template::render_str(&env, template, &ctx)
            .map(Some)
            .map_err(|e| format!("system prompt: {e}"))
    }

    fn result_of(&self, tool: &str) -> Value {
        self.spec
            .tools
            .iter()
            .find(|t| t.name == tool)
            .and_then(|t| t.result.clone())
            .unwrap_or_else(|| json!({"error": format!("no result configured for tool `{tool}`")}))
    }
}
