//! The tool loop shared by every target where gavel itself drives a model (`chat`,
//! and gavel-mcp's `mcp-agent`): ask the model; run the tools it asks for; hand
//! back the results; until it answers or runs out of steps.
//!
//! Running out of steps is an `error` (the turn's failure), never an empty answer:
//! the agent did not finish, and a check must not grade what it never said.

use gavel_core::{ModelCaller, TargetFailure, ToolCall, Turn, Usage};
use gavel_models::{ChatModel, ChatRequest, Message, Role, ToolDef};
use serde_json::{Map, Value, json};

use crate::{TargetError, permanent};

/// Runs the tools the model asks for.
#[async_trait::async_trait]
pub trait ToolRunner: Send {
    /// The result of calling `name` with `arguments`. A tool that reports an
    /// error answers `{"error": ...}` (the model sees it, and `tools-called` fails
    /// on it); an `Err` is an infrastructure failure that ends the turn.
    async fn call(&mut self, name: &str, arguments: &Value) -> Result<Value, TargetFailure>;
}

/// One model with its tools and limits.
#[derive(Debug, Clone, Copy)]
pub struct ToolLoop<'a> {
    /// The model.
    pub model: &'a dyn ChatModel,
    /// The rendered system prompt.
    pub system: Option<&'a str>,
    /// The tools offered to the model.
    pub tools: &'a [ToolDef],
    /// Sampling temperature.
    pub temperature: Option<f64>,
    /// Answer length cap per model call.
    pub max_tokens: Option<u32>,
    /// Model calls per user message at most (at least 1 is made).
    pub max_steps: u32,
    /// The agent recorded on the turn and its tool calls: the target's name.
    pub agent: &'a str,
}

impl ToolLoop<'_> {
    /// Plays one user turn: `messages` holds the conversation so far, the user's
    /// message last, and gets every assistant and tool message appended. Tool
    /// calls, summed usage, each model call and their transport tries go into `turn`;
    /// the answer text into `turn.output`.
    /// A model error is `Err` (transient when retrying may help), and so is
    /// running out of steps.
    pub async fn run(
        &self,
        messages: &mut Vec<Message>,
        turn: &mut Turn,
        tools: &mut dyn ToolRunner,
    ) -> Result<(), TargetFailure> {
        let steps = self.max_steps.max(1);
        let mut usage = Usage::default();
        turn.agent = Some(self.agent.to_owned());
        for _ in 0..steps {
            let request = ChatRequest {
                system: self.system.map(str::to_owned),
                messages: messages.clone(),
                temperature: self.temperature,
                max_tokens: self.max_tokens,
                tools: self.tools.to_vec(),
                ..ChatRequest::default()
            };
            let (answer, call) =
                gavel_models::chat_recorded(self.model, &request, ModelCaller::Target).await;
            turn.model_calls.extend(call);
            let tried = match &answer {
                Ok(a) => a.attempts,
                Err(e) => e.attempts,
            };
            if tried.attempts > 0 {
                turn.attempts.get_or_insert_default().add(&tried);
            }
            let answer = answer.map_err(|e| TargetFailure {
                transient: e.kind.is_retryable(),
                message: e.message,
            })?;
            usage.add(&Usage {
                input_tokens: answer.usage.input_tokens,
                output_tokens: answer.usage.output_tokens,
                cost_usd: answer.cost_usd,
            });
            turn.usage = Some(usage);
            messages.push(Message {
                role: Role::Assistant,
                content: answer.text.clone(),
                tool_calls: answer.tool_calls.clone(),
                tool_call_id: None,
            });
            if answer.tool_calls.is_empty() {
                turn.output = answer.text;
                return Ok(());
            }
            for call in answer.tool_calls {
                let result = tools.call(&call.name, &call.arguments).await?;
                let content = match &result {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                turn.tool_calls.push(ToolCall {
                    id: Some(call.id.clone()).filter(|id| !id.is_empty()),
                    agent: Some(self.agent.to_owned()),
                    name: call.name,
                    arguments: call.arguments,
                    result: Some(result),
                });
                messages.push(Message {
                    role: Role::Tool,
                    content,
                    tool_calls: Vec::new(),
                    tool_call_id: Some(call.id),
                });
            }
        }
        Err(out_of_steps(steps))
    }
}

/// The failure of a turn whose model was still calling tools after `steps` calls.
pub fn out_of_steps(steps: u32) -> TargetFailure {
    permanent(format!(
        "the model was still calling tools after {steps} steps (max_steps): no final answer"
    ))
}

/// Renders a prompt template (minijinja, undefined variables are errors) over
/// `vars`, then the case `context` on top, with today's date (`YYYY-MM-DD`) as
/// both `today` and `date` unless those are given; an error starts with `what`
/// (`system prompt`, `user message`).
pub fn render_prompt(
    what: &str,
    template: &str,
    vars: &Map<String, Value>,
    context: Option<&Value>,
) -> Result<String, TargetFailure> {
    let mut all = vars.clone();
    if let Some(Value::Object(ctx)) = context {
        all.extend(ctx.clone());
    }
    let now = gavel_core::now_rfc3339();
    let today = json!(now.get(..10).unwrap_or(&now));
    for name in ["today", "date"] {
        all.entry(name).or_insert_with(|| today.clone());
    }
    let mut env = minijinja::Environment::new();
    env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
    let ctx = minijinja::Value::from(minijinja::value::Serde(&Value::Object(all)));
    gavel_core::template::render_str(&env, template, &ctx)
        .map_err(|e| permanent(format!("{what}: {e}")))
}

/// Checks that the prompt template in target `target`'s `field` parses; the
/// error names both.
pub fn check_prompt(target: &str, field: &str, template: &str) -> Result<(), TargetError> {
    minijinja::Environment::new()
        .template_from_str(template)
        .map(|_| ())
        .map_err(|e| TargetError::config(target, field, e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn today_and_date_are_both_set_and_the_context_wins() {
        let mut vars = Map::new();
        vars.insert("locale".into(), json!("fr"));
        let out = render_prompt(
            "system prompt",
            "{{ today }}|{{ date }}|{{ locale }}",
            &vars,
            None,
        )
        .unwrap();
        let parts: Vec<&str> = out.split('|').collect();
        assert_eq!(parts[0], parts[1]);
        assert_eq!(parts[0].len(), 10);
        assert_eq!(parts[2], "fr");
        let ctx = json!({"locale": "en", "date": "2026-01-02"});
        let out = render_prompt(
            "system prompt",
            "{{ date }} {{ locale }}",
            &vars,
            Some(&ctx),
        )
        .unwrap();
        assert_eq!(out, "2026-01-02 en");
        let err = render_prompt("system prompt", "{{ nope }}", &vars, None).unwrap_err();
        assert!(err.message.starts_with("system prompt:"), "{}", err.message);
        assert!(
            check_prompt("bot", "system", "{{ open")
                .unwrap_err()
                .to_string()
                .starts_with("target `bot`: system: ")
        );
    }
}
