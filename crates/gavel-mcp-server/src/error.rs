//! What a tool call can fail with, and the JSON-RPC error each becomes.

use gavel_store::StoreError;
use rmcp::ErrorData;

/// A tool call that could not be answered.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// An argument does not fit: JSON-RPC `invalid params` (-32602).
    #[error("{}{message}", field.as_ref().map(|f| format!("invalid `{f}`: ")).unwrap_or_default())]
    Invalid {
        /// The argument at fault (a path like `group_by[1]`), when one is.
        field: Option<String>,
        /// What is wrong with it.
        message: String,
    },
    /// The run or execution asked for does not exist: `invalid params` too.
    #[error("{0}")]
    NotFound(String),
    /// The store failed: JSON-RPC `internal error` (-32603).
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl ToolError {
    /// A bad value of argument `field`.
    pub fn field(field: &str, message: impl Into<String>) -> ToolError {
        ToolError::Invalid {
            field: Some(field.to_owned()),
            message: message.into(),
        }
    }

    /// A store error on reading what argument `field` names: a missing or
    /// ambiguous run is the caller's to fix.
    pub(crate) fn lookup(field: &str, error: StoreError) -> ToolError {
        match error {
            StoreError::NotFound(what) => ToolError::field(field, format!("{what} not found")),
            e @ StoreError::Ambiguous { .. } => ToolError::field(field, e.to_string()),
            other => ToolError::Store(other),
        }
    }
}

impl From<ToolError> for ErrorData {
    fn from(error: ToolError) -> ErrorData {
        match &error {
            ToolError::Invalid { field, .. } => ErrorData::invalid_params(
                error.to_string(),
                field.as_ref().map(|f| serde_json::json!({ "field": f })),
            ),
            ToolError::NotFound(_) => ErrorData::invalid_params(error.to_string(), None),
            ToolError::Store(_) => ErrorData::internal_error(error.to_string(), None),
        }
    }
}
