//! The model-answer cache: opaque JSON text under a content-addressed key.
//!
//! The store neither builds keys nor reads the answers; gavel-models' cache layer
//! does both, through its `CacheStore` trait.

use crate::{Store, StoreError};

const SELECT_CACHED: &str = "SELECT response_json FROM model_cache WHERE key = $1";

/// Inserts the entry, or replaces the one with the same key.
const UPSERT_CACHED: &str = "INSERT INTO model_cache (key, model, response_json, created_at) \
     VALUES ($1, $2, $3, $4) \
     ON CONFLICT (key) DO UPDATE SET \
         model = excluded.model, response_json = excluded.response_json, \
         created_at = excluded.created_at";

impl Store {
    /// The cached model answer (serialized JSON) under `key`, if any.
    pub async fn cache_get(&self, key: &str) -> Result<Option<String>, StoreError> {
        let json: Option<String> = sqlx::query_scalar(SELECT_CACHED)
            .bind(key)
            .fetch_optional(&self.pool)
            .await?;
        Ok(json)
    }

    /// Keeps `response_json` (a model's answer) under `key`, replacing any earlier
    /// entry; `model` names the model id, for people and pruning.
    pub async fn cache_put(
        &self,
        key: &str,
        model: &str,
        response_json: &str,
    ) -> Result<(), StoreError> {
        sqlx::query(UPSERT_CACHED)
            .bind(key)
            .bind(model)
            .bind(response_json)
            .bind(gavel_core::now_rfc3339())
            .execute(&self.pool)
            .await?;
        Ok(())
    }
}
