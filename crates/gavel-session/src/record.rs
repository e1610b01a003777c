//! The store as the run's recorder: each batch of results is committed, then
//! announced to the sinks.

use async_trait::async_trait;
use gavel_core::Execution;
use gavel_runner::{RecordError, Recorder};
use gavel_store::Store;

use crate::events::Sinks;

/// Writes every execution to the store as it lands, then sends its events.
pub(crate) struct StoreSink<'a> {
    store: &'a Store,
    run_id: &'a str,
    sinks: &'a Sinks,
}

impl<'a> StoreSink<'a> {
    /// Records into `run_id` of `store`, announcing to `sinks`.
    pub(crate) fn new(store: &'a Store, run_id: &'a str, sinks: &'a Sinks) -> StoreSink<'a> {
        StoreSink {
            store,
            run_id,
            sinks,
        }
    }
}

#[async_trait]
impl Recorder for StoreSink<'_> {
    async fn record(&mut self, e: &Execution) -> Result<(), RecordError> {
        self.store
            .record_execution(self.run_id, e)
            .await
            .map_err(RecordError::new)?;
        self.sinks.recorded(e);
        Ok(())
    }

    async fn record_batch(&mut self, executions: &[Execution]) -> Result<(), RecordError> {
        self.store
            .record_executions(self.run_id, executions)
            .await
            .map_err(RecordError::new)?;
        for e in executions {
            self.sinks.recorded(e);
        }
        Ok(())
    }
}
