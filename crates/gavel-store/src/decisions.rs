//! What a finished run came to, kept with it: the session decides a run's
//! counts and gate once ([`Store::save_decision`]) and the pages that list or
//! show runs read that back ([`Store::decision`]) instead of folding every
//! execution on each load. A decision is kept with a [`DecisionStamp`] of the
//! run it was decided from; once the run changes (a resume, a late execution),
//! the stamp no longer matches and the decision is not given back.

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::{Store, StoreError};

/// What a run's decision is decided from: its status, end time, the
/// executions recorded and the last one's sequence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecisionStamp(String);

impl Store {
    /// The stamp of run `run_id` as it stands: take it before reading the run,
    /// so that what is recorded meanwhile makes the decision stale.
    pub async fn decision_stamp(&self, run_id: &str) -> Result<DecisionStamp, StoreError> {
        let (status, finished_at, count, last): (String, Option<String>, i64, Option<i64>) =
            sqlx::query_as(
                "SELECT r.status, r.finished_at, \
                 (SELECT COUNT(*) FROM executions e WHERE e.run_id = r.id), \
                 (SELECT MAX(e.seq) FROM executions e WHERE e.run_id = r.id) \
                 FROM runs r WHERE r.id = $1",
            )
            .bind(run_id)
            .fetch_optional(&self.pool)
            .await?
            .ok_or_else(|| StoreError::NotFound(format!("run `{run_id}`")))?;
        let finished_at = finished_at.unwrap_or_default();
        let last = last.map(|s| s.to_string()).unwrap_or_default();
        Ok(DecisionStamp(format!(
            "{status} {finished_at} {count} {last}"
        )))
    }

    /// Keeps `decision` as what run `run_id` came to when it stood at `stamp`
    /// (replacing any earlier one).
    pub async fn save_decision(
        &self,
        run_id: &str,
        stamp: &DecisionStamp,
        decision: &impl Serialize,
    ) -> Result<(), StoreError> {
        let json = serde_json::to_string(decision)
            .map_err(|e| StoreError::invalid(format!("decision of run {run_id}"), e))?;
        let mut tx = self.begin_write().await?;
        sqlx::query(
            "INSERT INTO run_decisions (run_id, stamp, decision) VALUES ($1, $2, $3) \
             ON CONFLICT (run_id) DO UPDATE SET stamp = excluded.stamp, \
             decision = excluded.decision",
        )
        .bind(run_id)
        .bind(stamp.0.as_str())
        .bind(json)
        .execute(&mut *tx)
        .await
        .map_err(|e| crate::write::run_missing(e, run_id))?;
        tx.commit().await?;
        Ok(())
    }

    /// The decision kept for run `run_id`, when it was decided at `stamp` (the
    /// run has not changed since) and reads as a `T`; `None` otherwise.
    pub async fn decision<T: DeserializeOwned>(
        &self,
        run_id: &str,
        stamp: &DecisionStamp,
    ) -> Result<Option<T>, StoreError> {
        let kept: Option<(String, String)> =
            sqlx::query_as("SELECT stamp, decision FROM run_decisions WHERE run_id = $1")
                .bind(run_id)
                .fetch_optional(&self.pool)
                .await?;
        Ok(kept
            .filter(|(kept, _)| *kept == stamp.0)
            .and_then(|(_, json)| serde_json::from_str(&json).ok()))
    }
}
