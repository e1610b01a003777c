//! Session checkpoints: the conversation state of a target gavel runs itself,
//! as opaque JSON text under (target, session id).

use crate::{Store, StoreError};

const SELECT_CHECKPOINT: &str =
    "SELECT state_json FROM session_checkpoints WHERE target = $1 AND session_id = $2";

/// Inserts the checkpoint, or replaces the session's earlier one.
const UPSERT_CHECKPOINT: &str = "INSERT INTO session_checkpoints \
     (target, session_id, state_json, updated_at) VALUES ($1, $2, $3, $4) \
     ON CONFLICT (target, session_id) DO UPDATE SET \
         state_json = excluded.state_json, updated_at = excluded.updated_at";

impl Store {
    /// The last checkpoint saved for this target's session, if any.
    pub async fn checkpoint_get(
        &self,
        target: &str,
        session_id: &str,
    ) -> Result<Option<String>, StoreError> {
        let json: Option<String> = sqlx::query_scalar(SELECT_CHECKPOINT)
            .bind(target)
            .bind(session_id)
            .fetch_optional(&self.pool)
            .await?;
        Ok(json)
    }

    /// Saves `state_json` as this target's session checkpoint, replacing any
    /// earlier one; registered secrets are redacted.
    pub async fn checkpoint_put(
        &self,
        target: &str,
        session_id: &str,
        state_json: &str,
    ) -> Result<(), StoreError> {
        sqlx::query(UPSERT_CHECKPOINT)
            .bind(target)
            .bind(session_id)
            .bind(gavel_core::secrets::redact(state_json).into_owned())
            .bind(gavel_core::now_rfc3339())
            .execute(&self.pool)
            .await?;
        Ok(())
    }
}
