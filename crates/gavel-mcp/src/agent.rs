//! The mcp-agent target: gavel runs a ReAct loop itself — the model answers or
//! asks for tools, gavel calls them on the MCP servers and hands back the results —
//! recording every call, and checkpoints the conversation after every turn.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use gavel_core::target::{McpAgentTarget, McpServer};
use gavel_core::{TargetFailure, Turn};
use gavel_models::{ChatModel, ErrorKind, Message, ModelSource, ToolDef};
use gavel_targets::tool_loop::{ToolLoop, ToolRunner, check_prompt, render_prompt};
use gavel_targets::{Session, Target, TargetError, TurnRequest};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::checkpoint::Checkpoints;
use crate::client::Connection;

/// Model calls per user message while the model keeps calling tools, by default.
const DEFAULT_MAX_STEPS: u32 = 8;

/// The checkpoint format's version, bumped when its meaning changes.
const CHECKPOINT_VERSION: u32 = 1;

/// An mcp-agent target.
pub struct McpAgent {
    name: String,
    model: Arc<dyn ChatModel>,
    system: Option<String>,
    vars: Map<String, Value>,
    servers: Vec<McpServer>,
    max_steps: u32,
    checkpoints: Arc<dyn Checkpoints>,
}

impl std::fmt::Debug for McpAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpAgent")
            .field("name", &self.name)
            .field("model", &self.model.id())
            .field("servers", &self.servers)
            .finish()
    }
}

/// What a checkpoint holds: the conversation so far.
#[derive(Serialize, Deserialize)]
struct Checkpoint {
    version: u32,
    messages: Vec<Message>,
}

impl McpAgent {
    /// An agent named `name` (the target's name, which keys its checkpoints).
    ///
    /// `system` is a minijinja template over `vars`, the case's `context` and
    /// today's date (`YYYY-MM-DD`) as `date` and `today`; `vars` may set `locale`
    /// and anything else.
    pub fn new(
        name: impl Into<String>,
        model: Arc<dyn ChatModel>,
        servers: Vec<McpServer>,
        checkpoints: Arc<dyn Checkpoints>,
    ) -> Result<Self, TargetError> {
        let name = name.into();
        if servers.is_empty() {
            return Err(TargetError::config(
                &name,
                "servers",
                "an mcp-agent needs at least one MCP server",
            ));
        }
        Ok(McpAgent {
            name,
            model,
            system: None,
            vars: Map::new(),
            servers,
            max_steps: DEFAULT_MAX_STEPS,
            checkpoints,
        })
    }

    /// Sets the system prompt template and its variables; the template must parse.
    pub fn with_system(
        mut self,
        template: &str,
        vars: Map<String, Value>,
    ) -> Result<Self, TargetError> {
        check_prompt(&self.name, "system", template)?;
        self.system = Some(template.to_owned());
        self.vars = vars;
        Ok(self)
    }

    /// The agent a suite's `mcp-agent` target describes, its model from `models`.
    /// A model without credentials makes the target unavailable (its executions
    /// are skipped with the reason); a bad field is a configuration error.
    pub fn from_spec(
        name: &str,
        spec: &McpAgentTarget,
        models: &dyn ModelSource,
        checkpoints: Arc<dyn Checkpoints>,
    ) -> Result<Self, TargetError> {
        let model = models.model(&spec.model).map_err(|e| match e.kind {
            ErrorKind::NoCredentials => TargetError::Unavailable {
                target: name.to_owned(),
                reason: e.message,
            },
            _ => TargetError::config(name, "model", e.message),
        })?;
        let mut agent = McpAgent::new(name, model, spec.servers.clone(), checkpoints)?;
        if let Some(system) = &spec.system {
            agent = agent.with_system(system, spec.vars.clone())?;
        }
        if let Some(steps) = spec.max_steps {
            agent = agent.with_max_steps(steps);
        }
        Ok(agent)
    }

    /// Caps the model calls per user message (at least 1).
    pub fn with_max_steps(mut self, max_steps: u32) -> Self {
        self.max_steps = max_steps.max(1);
        self
    }

    fn failure(&self, message: String) -> TargetFailure {
        TargetFailure {
            message: format!("target `{}`: {message}", self.name),
            transient: false,
        }
    }
}

#[async_trait::async_trait]
impl Target for McpAgent {
    /// Connects to every server, lists their tools, and restores the session's
    /// conversation from its checkpoint, if one was saved.
    async fn open(&self, session_id: &str) -> Result<Box<dyn Session>, TargetFailure> {
        let mut connections = Vec::new();
        let mut route = BTreeMap::new();
        let mut tools = Vec::new();
        for spec in &self.servers {
            let conn = match Connection::open(spec).await {
                Ok(c) => c,
                Err(e) => {
                    for c in connections {
                        Connection::close(c).await;
                    }
                    return Err(TargetFailure {
                        message: format!("target `{}`: {e}", self.name),
                        transient: true,
                    });
                }
            };
            for tool in &conn.tools {
                if route
                    .insert(tool.name.to_string(), connections.len())
                    .is_some()
                {
                    return Err(self.failure(format!(
                        "two MCP servers offer a tool named `{}`",
                        tool.name
                    )));
                }
                tools.push(ToolDef {
                    name: tool.name.to_string(),
                    description: tool.description.as_deref().unwrap_or_default().to_owned(),
                    parameters: Value::Object((*tool.input_schema).clone()),
                });
            }
            connections.push(conn);
        }
        let messages = match self.checkpoints.load(&self.name, session_id).await {
            Ok(None) => Vec::new(),
            Ok(Some(text)) => {
                serde_json::from_str::<Checkpoint>(&text)
                    .map_err(|e| self.failure(format!("unreadable checkpoint: {e}")))?
                    .messages
            }
            Err(e) => return Err(self.failure(e.to_string())),
        };
        Ok(Box::new(McpSession {
            target: self.name.clone(),
            session_id: session_id.to_owned(),
            model: self.model.clone(),
            system: self.system.clone(),
            vars: self.vars.clone(),
            max_steps: self.max_steps,
            checkpoints: self.checkpoints.clone(),
            connections,
            route,
            tools,
            messages,
        }))
    }

    fn kind(&self) -> &'static str {
        "mcp-agent"
    }

    /// Copies the parent's checkpoint to the child: the branch starts from the
    /// parent's conversation and the two never share state afterwards.
    async fn fork(&self, parent: &str, child: &str) -> Result<(), TargetFailure> {
        let state = self
            .checkpoints
            .load(&self.name, parent)
            .await
            .map_err(|e| self.failure(e.to_string()))?
            .ok_or_else(|| self.failure(format!("no checkpoint of session `{parent}` to fork")))?;
        self.checkpoints
            .save(&self.name, child, &state)
            .await
            .map_err(|e| self.failure(e.to_string()))
    }
}

/// One conversation: live MCP connections and the messages so far.
struct McpSession {
    target: String,
    session_id: String,
    model: Arc<dyn ChatModel>,
    system: Option<String>,
    vars: Map<String, Value>,
    max_steps: u32,
    checkpoints: Arc<dyn Checkpoints>,
    connections: Vec<Connection>,
    route: BTreeMap<String, usize>,
    tools: Vec<ToolDef>,
    messages: Vec<Message>,
}

#[async_trait::async_trait]
impl Session for McpSession {
    async fn send(&mut self, req: &TurnRequest<'_>) -> Turn {
        let clock = Instant::now();
        let mut turn = Turn {
            round: req.round,
            input: req.message.to_owned(),
            ..Turn::default()
        };
        let system = match &self.system {
            Some(template) => {
                render_prompt("system prompt", template, &self.vars, req.context).map(Some)
            }
            None => Ok(None),
        };
        match system {
            Ok(system) => {
                self.messages.push(Message::user(req.message));
                let tool_loop = ToolLoop {
                    model: self.model.as_ref(),
                    system: system.as_deref(),
                    tools: &self.tools,
                    temperature: None,
                    max_tokens: None,
                    max_steps: self.max_steps,
                    agent: &self.target,
                };
                let mut servers = Servers {
                    connections: &self.connections,
                    route: &self.route,
                };
                turn.failure = tool_loop
                    .run(&mut self.messages, &mut turn, &mut servers)
                    .await
                    .err();
            }
            Err(failure) => turn.failure = Some(failure),
        }
        if turn.failure.is_none() {
            turn.failure = self.save().await.err().map(permanent);
        }
        turn.latency_ms = u64::try_from(clock.elapsed().as_millis()).unwrap_or(u64::MAX);
        turn
    }

    async fn close(self: Box<Self>) {
        for c in self.connections {
            c.close().await;
        }
    }
}

fn permanent(message: String) -> TargetFailure {
    TargetFailure {
        message,
        transient: false,
    }
}

/// Runs tool calls on the MCP server that offers each tool.
struct Servers<'a> {
    connections: &'a [Connection],
    route: &'a BTreeMap<String, usize>,
}

#[async_trait::async_trait]
impl ToolRunner for Servers<'_> {
    async fn call(&mut self, name: &str, arguments: &Value) -> Result<Value, TargetFailure> {
        match self.route.get(name) {
            Some(&i) => self.connections[i]
                .call(name, arguments)
                .await
                .map_err(|message| TargetFailure {
                    message,
                    transient: true,
                }),
            None => Ok(json!({ "error": format!("no MCP server offers a tool named `{name}`") })),
        }
    }
}

impl McpSession {
    async fn save(&self) -> Result<(), String> {
        let state = serde_json::to_string(&Checkpoint {
            version: CHECKPOINT_VERSION,
            messages: self.messages.clone(),
        })
        .map_err(|e| format!("cannot serialize the checkpoint: {e}"))?;
        self.checkpoints
            .save(&self.target, &self.session_id, &state)
            .await
            .map_err(|e| e.to_string())
    }
}
