//! Persistence of gavel runs: the run record, the exact cases it used, and every
//! [`Execution`](gavel_core::Execution) with its transcript turns, tool calls and
//! verdicts. One schema and one code path serve SQLite (the embedded default) and
//! PostgreSQL (the team store).
//!
//! Every execution is written in one transaction as it lands, keyed by
//! (run, case, target, repeat): writing the same key again replaces the old rows, so
//! `--resume` and retries never duplicate work.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use gavel_core::{RunRecord, RunStatus};
//! use gavel_store::Store;
//!
//! let store = Store::open("sqlite::memory:").await?;
//! let run = RunRecord {
//!     id: "0190e0a4-5f2b-7cc1-9a53-6f7d3b2c1a00".into(),
//!     suite: "smoke".into(),
//!     status: RunStatus::Running,
//!     started_at: gavel_core::now_rfc3339(),
//!     finished_at: None,
//!     config: serde_json::json!({ "concurrency": 4 }),
//!     planned: None,
//! };
//! store.create_run(&run).await?;
//! store.finish_run(&run.id, RunStatus::Completed, &gavel_core::now_rfc3339()).await?;
//! let again = store.run("0190e0a4").await?; // a unique prefix of 6+ characters will do
//! assert_eq!(again.status, RunStatus::Completed);
//! # Ok::<(), gavel_store::StoreError>(())
//! # }).unwrap();
//! ```

mod browse;
mod cache;
mod calibration;
mod cases;
mod checkpoint;
mod decisions;
mod direct;
mod driver;
mod embeddings;
mod error;
mod evaluations;
#[cfg(test)]
mod fixtures;
mod labels;
mod library;
mod lifecycle;
mod migrations;
mod open;
mod pages;
mod pair_labels;
mod queue;
mod rate;
mod read;
mod review;
mod rows;
mod sign_in;
mod tx;
mod users;
mod write;

use std::fmt;

use sqlx::AnyPool;

pub use browse::{Browse, BrowsePage};
pub use cases::CasePages;
pub use decisions::DecisionStamp;
pub use error::StoreError;
pub use evaluations::{Evaluation, EvaluationFilter, EvaluationPage, Page};
pub use gavel_core::EvaluatorType;
pub use gavel_core::secrets::mask_url;
pub use labels::Label;
pub use library::{CaseVersion, DocShape, ImportSummary, SuiteDoc, SuiteInfo, case_key};
pub use lifecycle::CaseChange;
pub use open::{DEFAULT_URL, Engine};
pub use pages::{ExecutionPages, PAGE_SIZE};
pub use pair_labels::{PairLabel, PairSide};
pub use queue::{Claim, QueueProgress};
pub use read::MIN_RUN_PREFIX;
pub use review::{Informative, PairItem, Pairing, Review, ReviewItem, ReviewPage};
pub use sign_in::{SignInFailures, SignInSubject};
pub use users::{ApiToken, Role, User, check_user_name};
pub use write::SnapshotCase;

/// A handle on the store: a connection pool and the engine behind it.
///
/// Cheap to clone; clones share the pool, so concurrent tasks may write through
/// their own clones.
#[derive(Clone)]
pub struct Store {
    pool: AnyPool,
    engine: Engine,
    /// The URL it was opened with, password masked: safe to show.
    url: String,
    /// Model-cache entries waiting for the next group commit.
    cache_queue: std::sync::Arc<cache::CacheQueue>,
    /// Model-cache lookups waiting for the next batched read.
    cache_lookups: std::sync::Arc<cache::CacheLookups>,
    /// Reads cache entries and executions of a SQLite file, and records
    /// executions, on the caller's thread.
    direct: Option<std::sync::Arc<direct::DirectConnection>>,
}

impl Store {
    /// The engine this store runs on.
    pub fn engine(&self) -> Engine {
        self.engine
    }

    /// Closes every connection, waiting for those in use to be returned. A
    /// SQLite file is checkpointed and left without its `-wal` and `-shm` files.
    /// Every clone of this store is closed with it.
    pub async fn close(&self) {
        self.pool.close().await;
        if let Some(direct) = &self.direct {
            direct.close();
        }
    }
}

impl fmt::Debug for Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Not the pool: its connect options would print the URL with its password.
        f.debug_struct("Store")
            .field("engine", &self.engine)
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}
