//! `gavel mcp`: a Model Context Protocol server over the evaluations gavel has
//! stored, on stdio or Streamable HTTP, through `rmcp`'s server side.
//!
//! Tools (all read-only): `query_evaluations` (filter, list, aggregate and group
//! verdicts and human labels), `list_runs`, `get_run` (summary and gate),
//! `compare_runs` (regressions and fixes) and `get_execution` (transcript, tool
//! calls, verdicts and the agent fields `stepScores`, `toolVerifications`,
//! `trajectoryLength`). Bad arguments are JSON-RPC `invalid params` errors naming
//! the field; listings are pages of at most 1000 with an opaque cursor.

mod args;
mod cursor;
mod error;
mod execution;
mod query;
mod runs;
mod serve;
mod server;

pub use args::{
    Aggregation, CompareRunsArgs, DEFAULT_LIMIT, Field, GetExecutionArgs, GetRunArgs, ListRunsArgs,
    MAX_LIMIT, QueryArgs,
};
pub use error::ToolError;
pub use execution::{ExecutionOut, StepScore, ToolVerification, get_execution};
pub use query::{
    Aggregated, EvaluationOut, Group, Listing, MAX_SCAN, QueryResult, query_evaluations,
};
pub use runs::{
    GateOut, RunComparison, RunList, RunOut, RunSummary, compare_runs, get_run, list_runs,
};
pub use serve::{ServeError, serve_http, serve_stdio};
pub use server::EvalServer;
