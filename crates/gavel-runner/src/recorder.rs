//! Sinks fed with every execution as it lands.

use gavel_core::Execution;

/// Why a recorder could not keep a result (the store's error, say).
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct RecordError(Box<dyn std::error::Error + Send + Sync>);

impl RecordError {
    /// Wraps the recorder's own error.
    pub fn new(error: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> RecordError {
        RecordError(error.into())
    }
}

/// Receives each finished execution, in completion order.
///
/// The store, progress display and live reports implement this. An `Err` stops the
/// run: a result that cannot be kept must not pass silently.
#[async_trait::async_trait]
pub trait Recorder: Send {
    /// Called once per finished execution.
    async fn record(&mut self, execution: &Execution) -> Result<(), RecordError>;

    /// Called with executions that landed together, in completion order; a sink
    /// with a per-write cost (a store commit) keeps them in one write.
    async fn record_batch(&mut self, executions: &[Execution]) -> Result<(), RecordError> {
        for execution in executions {
            self.record(execution).await?;
        }
        Ok(())
    }

    /// Called, after the batch that completed them was recorded, each time
    /// more of the plan's leading cases (in plan order) have every planned
    /// execution recorded: `cases` of them now. A plan of given executions
    /// ([`crate::Plan::of`]) does not tell it.
    async fn cases_recorded(&mut self, cases: usize) {
        let _ = cases;
    }
}

/// Collects executions in memory.
#[async_trait::async_trait]
impl Recorder for Vec<Execution> {
    async fn record(&mut self, execution: &Execution) -> Result<(), RecordError> {
        self.push(execution.clone());
        Ok(())
    }
}
