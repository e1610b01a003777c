//! Connections to MCP servers: stdio and Streamable HTTP through `rmcp`, the legacy
//! HTTP+SSE transport through [`crate::sse`].

use gavel_core::target::McpServer;
use rmcp::model::{CallToolRequestParams, CallToolResult, Tool};
use rmcp::service::RunningService;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

/// One live connection and the tools it offers.
pub(crate) struct Connection {
    service: RunningService<RoleClient, ()>,
    pub(crate) tools: Vec<Tool>,
}

fn expand(text: &str) -> Result<String, String> {
    gavel_core::template::expand_env(text).map_err(|e| format!("cannot expand {e}"))
}

impl Connection {
    /// Connects, completes the handshake and lists the server's tools.
    pub(crate) async fn open(spec: &McpServer) -> Result<Connection, String> {
        let service = match spec {
            McpServer::Stdio { command, env } => {
                let argv: Vec<String> = command
                    .iter()
                    .map(|a| expand(a))
                    .collect::<Result<_, _>>()?;
                let (program, args) = argv
                    .split_first()
                    .ok_or("an stdio MCP server needs a `command`")?;
                let mut cmd = tokio::process::Command::new(program);
                cmd.args(args).stderr(std::process::Stdio::null());
                for (k, v) in env {
                    cmd.env(k, expand(v)?);
                }
                let transport = TokioChildProcess::new(cmd)
                    .map_err(|e| format!("cannot start MCP server `{program}`: {e}"))?;
                ().serve(transport)
                    .await
                    .map_err(|e| format!("MCP handshake with `{program}` failed: {e}"))?
            }
            McpServer::StreamableHttp { url } => {
                let url = expand(url)?;
                let transport = StreamableHttpClientTransport::from_uri(url.clone());
                ().serve(transport)
                    .await
                    .map_err(|e| format!("MCP handshake with {url} failed: {e}"))?
            }
            McpServer::Sse { url } => {
                let url = expand(url)?;
                let transport = crate::sse::connect(&url).await?;
                ().serve(transport)
                    .await
                    .map_err(|e| format!("MCP handshake with {url} failed: {e}"))?
            }
        };
        let tools = service
            .list_all_tools()
            .await
            .map_err(|e| format!("listing the MCP server's tools failed: {e}"))?;
        Ok(Connection { service, tools })
    }

    /// Calls a tool; the result as JSON: the structured content, else the text
    /// (parsed when it is JSON), `{"error": text}` when the tool reported an error.
    pub(crate) async fn call(&self, name: &str, arguments: &Value) -> Result<Value, String> {
        let mut params = CallToolRequestParams::new(name.to_owned());
        match arguments {
            Value::Object(map) => params = params.with_arguments(map.clone()),
            Value::Null => {}
            other => {
                return Ok(json!({"error": format!("arguments must be an object, got {other}")}));
            }
        }
        let result = self
            .service
            .call_tool(params)
            .await
            .map_err(|e| format!("MCP call of `{name}` failed: {e}"))?;
        Ok(result_json(&result))
    }

    /// Ends the connection (and stops a stdio server).
    pub(crate) async fn close(self) {
        let _ = self.service.cancel().await;
    }
}

fn result_json(result: &CallToolResult) -> Value {
    let text: Vec<&str> = result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
        .collect();
    let text = text.join("\n");
    if result.is_error == Some(true) {
        return json!({ "error": text });
    }
    if let Some(structured) = &result.structured_content {
        return structured.clone();
    }
    serde_json::from_str(&text).unwrap_or(Value::String(text))
}
