//! The `mcp-agent` target: gavel itself runs a ReAct loop — a model from
//! gavel-models, a system prompt with variables (`date`, `locale`, the case
//! context), and MCP servers reached over stdio, Streamable HTTP (both through the
//! official `rmcp` crate) or the legacy HTTP+SSE transport ([`McpServer`]) —
//! recording every tool call with its arguments and result into the turn.
//!
//! After every turn the conversation is saved through [`Checkpoints`] (the gavel
//! [`Store`](gavel_store::Store) implements it), and opening a session with the same
//! id reloads it: closing and reopening a session (a revival) continues the same
//! conversation, with fresh MCP connections.

mod agent;
mod checkpoint;
mod client;
mod sse;

pub use agent::McpAgent;
pub use checkpoint::{CheckpointError, Checkpoints};
pub use gavel_core::target::McpServer;
