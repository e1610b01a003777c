//! `/mcp`: the agent's four tools as an MCP server over Streamable HTTP, so an
//! MCP client (gavel's `mcp-agent` target) can drive them.

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{Map, Value, json};

use crate::agent::Agent;
use crate::tools::Tools;

/// The MCP handler: one per MCP session, all over the same agent.
#[derive(Clone)]
pub(crate) struct ToolServer {
    agent: Agent,
}

/// The Streamable HTTP service to mount at `/mcp`.
pub(crate) fn service(agent: Agent) -> StreamableHttpService<ToolServer, LocalSessionManager> {
    StreamableHttpService::new(
        move || {
            Ok(ToolServer {
                agent: agent.clone(),
            })
        },
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    )
}

fn schema(properties: Value, required: &[&str]) -> Arc<Map<String, Value>> {
    match json!({"type": "object", "properties": properties, "required": required}) {
        Value::Object(map) => Arc::new(map),
        _ => Arc::default(),
    }
}

fn tools() -> Vec<Tool> {
    let id = json!({"type": "integer", "description": "Listing id (1-3)"});
    vec![
        Tool::new(
            "get_listings",
            "All listings: id, name, city",
            schema(json!({}), &[]),
        ),
        Tool::new(
            "get_listing_details",
            "One listing's full record",
            schema(json!({"listing_id": id}), &["listing_id"]),
        ),
        Tool::new(
            "get_bookings",
            "Bookings of one listing, or of all",
            schema(json!({"listing_id": id}), &[]),
        ),
        Tool::new(
            "get_revenue_data",
            "Monthly revenue rows and their total in USD",
            schema(
                json!({"listing_id": id, "month": {"type": "string", "description": "YYYY-MM"}}),
                &[],
            ),
        ),
    ]
}

/// An optional integer argument; a wrong type is the caller's error.
fn listing_id(args: &Map<String, Value>) -> Result<Option<i64>, ErrorData> {
    match args.get("listing_id") {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v.as_i64().map(Some).ok_or_else(|| {
            ErrorData::invalid_params(format!("`listing_id` must be an integer, got {v}"), None)
        }),
    }
}

impl ServerHandler for ToolServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        let mut tools = Tools::new(self.agent.db(), true);
        let id = listing_id(&args)?;
        let month = args.get("month").and_then(Value::as_str);
        let ran = match request.name.as_ref() {
            "get_listings" => tools.get_listings().await.map(drop),
            "get_listing_details" => {
                let id =
                    id.ok_or_else(|| ErrorData::invalid_params("`listing_id` is required", None))?;
                tools.get_listing_details(id).await.map(drop)
            }
            "get_bookings" => tools.get_bookings(id).await.map(drop),
            "get_revenue_data" => tools.get_revenue_data(id, month).await.map(drop),
            other => {
                return Err(ErrorData::invalid_params(
                    format!("unknown tool `{other}`"),
                    None,
                ));
            }
        };
        ran.map_err(|e| ErrorData::internal_error(format!("database error: {e}"), None))?;
        let result = tools.into_calls().pop().map_or(Value::Null, |c| c.result);
        Ok(CallToolResult::success(vec![ContentBlock::text(result.to_string())]).into())
    }
}
