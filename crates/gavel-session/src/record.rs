//! The store as the run's recorder: each batch of results is committed, then
//! announced to the sinks.

use async_trait::async_trait;
use gavel_core::Execution;
use gavel_runner::{RecordError, Recorder};
use gavel_store::Store;

use crate::events::Sinks;
use crate::live::Live;

/// Writes every execution to the store as it lands, then sends its events;
/// tells the run's live report how many cases are whole.
pub(crate) struct StoreSink<'a> {
    store: &'a Store,
    run_id: &'a str,
    sinks: &'a Sinks,
    live: Option<&'a Live>,
}

impl<'a> StoreSink<'a> {
    /// Records into `run_id` of `store`, announcing to `sinks`.
    pub(crate) fn new(store: &'a Store, run_id: &'a str, sinks: &'a Sinks) -> StoreSink<'a> {
        StoreSink {
            store,
            run_id,
            sinks,
            live: None,
        }
    }

    /// Tells `live` as the run's cases become whole.
    pub(crate) fn telling(mut self, live: Option<&'a Live>) -> StoreSink<'a> {
        self.live = live;
        self
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

    async fn cases_recorded(&mut self, cases: usize) {
        if let Some(live) = self.live {
            live.cases_recorded(cases);
        }
    }
}
