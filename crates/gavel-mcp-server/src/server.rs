//! The MCP server: its tools, their schemas, and the dispatch of `tools/call`.

use std::future::Future;

use gavel_store::Store;
use rmcp::handler::server::common::schema_for_input;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use schemars::JsonSchema;
use serde::Serialize;

use crate::args::{self, CompareRunsArgs, GetExecutionArgs, GetRunArgs, ListRunsArgs, QueryArgs};
use crate::{ToolError, execution, query, runs};

/// gavel's MCP server over one store: read-only tools on stored evaluations.
#[derive(Clone, Debug)]
pub struct EvalServer {
    store: Store,
}

impl EvalServer {
    /// A server answering from `store`.
    pub fn new(store: Store) -> EvalServer {
        EvalServer { store }
    }

    /// The tools offered, with their input schemas.
    pub fn tools() -> Result<Vec<Tool>, ErrorData> {
        Ok(vec![
            tool::<QueryArgs>(
                "query_evaluations",
                "Stored evaluations (verdicts and human labels) filtered by suite, run, \
                 target, case, tag, check, kind, evaluator_type (llm, human, rule, classifier), \
                 status, model and time; listed, or aggregated (avg, min, max, p50, p95, p99, \
                 count, pass_rate) per group_by fields.",
            )?,
            tool::<ListRunsArgs>("list_runs", "Stored runs, newest first.")?,
            tool::<GetRunArgs>(
                "get_run",
                "A run's summary (overall, by tag, by target) and its pass-rate gate.",
            )?,
            tool::<CompareRunsArgs>(
                "compare_runs",
                "Two runs compared: regressions, fixes, score, cost and latency deltas.",
            )?,
            tool::<GetExecutionArgs>(
                "get_execution",
                "One execution: transcript, tool calls, verdicts, stepScores, \
                 toolVerifications and trajectoryLength.",
            )?,
        ])
    }

    async fn call(&self, request: CallToolRequestParams) -> Result<CallToolResult, ErrorData> {
        let store = &self.store;
        let a = request.arguments;
        match request.name.as_ref() {
            "query_evaluations" => answer(query::query_evaluations(store, args::parse(a)?).await),
            "list_runs" => answer(runs::list_runs(store, args::parse(a)?).await),
            "get_run" => answer(runs::get_run(store, args::parse(a)?).await),
            "compare_runs" => answer(runs::compare_runs(store, args::parse(a)?).await),
            "get_execution" => answer(execution::get_execution(store, args::parse(a)?).await),
            other => Err(ErrorData::invalid_params(
                format!(
                    "unknown tool `{other}`; the tools are query_evaluations, list_runs, \
                     get_run, compare_runs and get_execution"
                ),
                Some(serde_json::json!({ "field": "name" })),
            )),
        }
    }
}

/// A read-only tool taking arguments `T`.
fn tool<T: JsonSchema + 'static>(
    name: &'static str,
    description: &'static str,
) -> Result<Tool, ErrorData> {
    let schema = schema_for_input::<T>()
        .map_err(|e| ErrorData::internal_error(format!("the input schema of {name}: {e}"), None))?;
    let annotations = ToolAnnotations::new()
        .read_only(true)
        .destructive(false)
        .idempotent(true)
        .open_world(false);
    Ok(Tool::new(name, description, schema).with_annotations(annotations))
}

/// A tool's answer as structured content (and the same JSON as text).
fn answer<T: Serialize>(result: Result<T, ToolError>) -> Result<CallToolResult, ErrorData> {
    let value = serde_json::to_value(result?)
        .map_err(|e| ErrorData::internal_error(format!("cannot encode the answer: {e}"), None))?;
    Ok(CallToolResult::structured(value))
}

impl ServerHandler for EvalServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("gavel", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Read gavel's stored evaluations: query_evaluations to filter and aggregate \
                 verdicts, list_runs / get_run / compare_runs for runs, get_execution for one \
                 transcript with its verdicts.",
            )
    }

    fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListToolsResult, ErrorData>> + Send + '_ {
        std::future::ready(EvalServer::tools().map(ListToolsResult::with_all_items))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.call(request).await.map(CallToolResponse::from)
    }
}
