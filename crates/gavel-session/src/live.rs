//! A new run's report, folded from the store while the run is recorded.

use gavel_report::{Detail, Files, Report, ReportError};
use gavel_store::Store;

use crate::report::Folding;
use crate::{Regate, SessionError};

/// The report of a run being recorded, folded on a thread of its own as its
/// cases become whole (every planned execution recorded,
/// [`Live::cases_recorded`]), with its files written as it goes; what is left
/// is folded once the run ends ([`Live::write`]). At the end of a large run
/// only the last cases are left to read.
pub(crate) struct Live {
    tell: tokio::sync::watch::Sender<usize>,
    folding: tokio::task::JoinHandle<Result<Folding, SessionError>>,
    run_id: String,
}

impl Live {
    /// Starts folding new run `run_id` (its case snapshot saved in plan
    /// order) at its own gate, writing `files`.
    pub(crate) async fn start(
        store: &Store,
        run_id: &str,
        files: Files,
    ) -> Result<Live, SessionError> {
        let regate = Regate::default();
        let mut folding =
            Folding::open(store, run_id, &regate, Detail::Summary, Some(files), true).await?;
        let (tell, mut told) = tokio::sync::watch::channel(0);
        let store = store.clone();
        // Off the run's thread: its I/O is still driven by the runtime the
        // run's thread blocks on.
        let runtime = tokio::runtime::Handle::current();
        let folding = tokio::task::spawn_blocking(move || {
            runtime.block_on(async move {
                while told.changed().await.is_ok() {
                    let cases = *told.borrow_and_update();
                    folding.before(&store, Some(cases)).await?;
                    folding.read().await?;
                }
                Ok(folding)
            })
        });
        Ok(Live {
            tell,
            folding,
            run_id: run_id.to_owned(),
        })
    }

    /// The run's first `cases` cases have every planned execution recorded.
    pub(crate) fn cases_recorded(&self, cases: usize) {
        self.tell.send_replace(cases);
    }

    /// Once the run is recorded and ended: folds what is left and writes the
    /// files, as [`crate::report::write`] does; keeps the run's [`crate::report::Decision`].
    pub(crate) async fn write(self, store: &Store) -> Result<Report, SessionError> {
        drop(self.tell);
        let mut folding = self.folding.await.map_err(|e| {
            SessionError::Report(ReportError::Write(std::io::Error::other(format!(
                "the report folded during the run stopped: {e}"
            ))))
        })??;
        let stamp = store.decision_stamp(&self.run_id).await?;
        folding.before(store, None).await?;
        folding.read().await?;
        let (report, files) = folding.finish(store, Some(&stamp)).await;
        if let Some(files) = files {
            files.finish(&report, |_| ())?;
        }
        Ok(report)
    }
}
