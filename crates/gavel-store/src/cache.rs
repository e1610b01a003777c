//! The model-answer cache: opaque JSON text under a content-addressed key.
//!
//! The store neither builds keys nor reads the answers; gavel-models' cache layer
//! does both, through its `CacheStore` trait.

use std::collections::HashMap;

use sqlx::{Any, Transaction};

use crate::tx::WriteTx;
use crate::{Store, StoreError};

/// Keys read in one batched lookup at most.
const MAX_LOOKUP_BATCH: usize = 256;

/// Inserts entries, replacing those with the same key: head, then the conflict
/// clause.
const INSERT_CACHED: &str = "INSERT INTO model_cache (key, model, response_json, created_at)";
const UPSERT_TAIL: &str = " ON CONFLICT (key) DO UPDATE SET \
     model = excluded.model, response_json = excluded.response_json, \
     created_at = excluded.created_at";

impl Store {
    /// The cached model answer (serialized JSON) under `key`, if any.
    ///
    /// A SQLite file is read directly on the caller's thread. Otherwise (or when
    /// that read fails) reads are batched like writes: a lookup that arrives while
    /// another caller is reading joins a queue, and that caller reads the whole
    /// queue in one `IN (…)` query before it returns, so concurrent model calls
    /// cost one statement instead of one each. A waiter whose reader went away
    /// (cancelled or failed) reads its key itself.
    pub async fn cache_get(&self, key: &str) -> Result<Option<String>, StoreError> {
        if let Some((_, json)) = self.cache_queue.lock().entries.get(key) {
            return Ok(Some(json.clone()));
        }
        // Entries leave the queue only once committed, so the direct connection sees
        // every entry the queue no longer holds.
        if let Some(found) = self
            .direct
            .as_ref()
            .and_then(|reader| reader.cached_answer(key).ok())
        {
            return Ok(found);
        }
        let waiting = {
            let mut lookups = self.cache_lookups.lock();
            if lookups.reading {
                let (tx, rx) = tokio::sync::oneshot::channel();
                lookups.waiting.push((key.to_owned(), tx));
                Some(rx)
            } else {
                lookups.reading = true;
                None
            }
        };
        if let Some(rx) = waiting {
            if let Ok(found) = rx.await {
                return Ok(found);
            }
            return self.cache_read(&[key]).await.map(|mut m| m.remove(key));
        }
        let _reader = Reader(&self.cache_lookups);
        let mine = self.cache_read(&[key]).await?.remove(key);
        loop {
            let mut batch = std::mem::take(&mut self.cache_lookups.lock().waiting);
            if batch.is_empty() {
                return Ok(mine);
            }
            while !batch.is_empty() {
                let rest = batch.split_off(batch.len().min(MAX_LOOKUP_BATCH));
                let chunk = std::mem::replace(&mut batch, rest);
                let keys: Vec<&str> = chunk.iter().map(|(k, _)| k.as_str()).collect();
                // On failure the chunk's senders drop and each waiter reads alone.
                if let Ok(mut found) = self.cache_read(&keys).await {
                    for (key, tx) in chunk {
                        let _ = tx.send(found.remove(&key));
                    }
                }
            }
        }
    }

    /// The stored answers of `keys` (absent keys are missing from the map).
    async fn cache_read(&self, keys: &[&str]) -> Result<HashMap<String, String>, StoreError> {
        let placeholders: Vec<String> = (1..=keys.len()).map(|i| format!("${i}")).collect();
        let sql = format!(
            "SELECT key, response_json FROM model_cache WHERE key IN ({})",
            placeholders.join(", ")
        );
        let mut query = sqlx::query_as::<_, (String, String)>(sqlx::AssertSqlSafe(sql));
        for key in keys {
            query = query.bind(*key);
        }
        Ok(query.fetch_all(&self.pool).await?.into_iter().collect())
    }

    /// Keeps `response_json` (a model's answer) under `key`, replacing any earlier
    /// entry; `model` names the model id, for people and pruning.
    ///
    /// Writes are group-committed: an entry that arrives while another caller is
    /// writing joins the queue, and that caller writes the queue in one transaction
    /// before it returns, so the entry is on disk once every concurrent `cache_put`
    /// has returned. Until then [`Store::cache_get`] serves it from the queue.
    pub async fn cache_put(
        &self,
        key: &str,
        model: &str,
        response_json: &str,
    ) -> Result<(), StoreError> {
        {
            let mut queue = self.cache_queue.lock();
            queue
                .entries
                .insert(key.to_owned(), entry(model, response_json));
            if queue.writing {
                return Ok(());
            }
            queue.writing = true;
        }
        // Cleared however this ends, even when the caller stops awaiting us.
        let _writer = Writer(&self.cache_queue);
        self.write_cache_queue().await
    }

    /// Queues `response_json` under `key` like [`Store::cache_put`], but writes
    /// nothing now: the entry is served from memory by [`Store::cache_get`] and
    /// committed with the next [`Store::record_executions`] or
    /// [`Store::finish_run`] transaction (or any `cache_put`), so a run's cache
    /// entries cost no commit of their own. Lost if the process dies first.
    pub fn cache_stage(&self, key: &str, model: &str, response_json: &str) {
        self.cache_queue
            .lock()
            .entries
            .insert(key.to_owned(), entry(model, response_json));
    }

    /// Writes queued entries, a transaction per batch, until the queue is empty.
    async fn write_cache_queue(&self) -> Result<(), StoreError> {
        while !self.cache_queue.lock().entries.is_empty() {
            let tx = self.pool.begin().await?;
            self.commit_with_cache(tx).await?;
        }
        Ok(())
    }

    /// Writes the queued cache entries inside `tx`, commits it, then drops them
    /// from the queue.
    pub(crate) async fn commit_with_cache(
        &self,
        mut tx: Transaction<'static, Any>,
    ) -> Result<(), StoreError> {
        let batch = self.cache_batch();
        write_cache_entries(self.engine, &mut tx, &batch).await?;
        tx.commit().await?;
        self.cache_committed(batch);
        Ok(())
    }

    /// A copy of the queued cache entries, to write in a transaction.
    pub(crate) fn cache_batch(&self) -> Vec<QueuedEntry> {
        let queue = self.cache_queue.lock();
        queue
            .entries
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    /// Drops the entries of `batch`, now committed, from the queue (unless a newer
    /// answer replaced one meanwhile).
    pub(crate) fn cache_committed(&self, batch: Vec<QueuedEntry>) {
        let mut queue = self.cache_queue.lock();
        for (key, value) in batch {
            if queue.entries.get(&key) == Some(&value) {
                queue.entries.remove(&key);
            }
        }
    }
}

/// A queued cache entry: key, (model, response JSON).
pub(crate) type QueuedEntry = (String, (String, String));

/// Upserts `batch` inside `tx`, in multi-row statements.
pub(crate) async fn write_cache_entries(
    engine: crate::Engine,
    tx: &mut impl WriteTx,
    batch: &[QueuedEntry],
) -> Result<(), StoreError> {
    let now = gavel_core::now_rfc3339();
    crate::write::insert_rows(
        engine,
        tx,
        INSERT_CACHED,
        UPSERT_TAIL,
        batch,
        |(key, (model, json))| {
            [
                key.as_str().into(),
                model.as_str().into(),
                json.as_str().into(),
                now.as_str().into(),
            ]
        },
    )
    .await
}

/// Model-cache entries not yet committed, and whether a caller is writing them.
#[derive(Default)]
pub(crate) struct CacheQueue(std::sync::Mutex<QueuedEntries>);

#[derive(Default)]
pub(crate) struct QueuedEntries {
    /// key → (model, response JSON)
    entries: HashMap<String, (String, String)>,
    writing: bool,
}

/// The one caller writing the queue; clears the flag when done or dropped.
struct Writer<'a>(&'a CacheQueue);

impl Drop for Writer<'_> {
    fn drop(&mut self) {
        self.0.lock().writing = false;
    }
}

impl CacheQueue {
    fn lock(&self) -> std::sync::MutexGuard<'_, QueuedEntries> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// A cache lookup waiting for the reader: its key and where to send the answer.
type Waiter = (String, tokio::sync::oneshot::Sender<Option<String>>);

/// Cache lookups waiting for a batched read, and whether a caller is reading.
#[derive(Default)]
pub(crate) struct CacheLookups(std::sync::Mutex<PendingLookups>);

#[derive(Default)]
pub(crate) struct PendingLookups {
    waiting: Vec<Waiter>,
    reading: bool,
}

impl CacheLookups {
    fn lock(&self) -> std::sync::MutexGuard<'_, PendingLookups> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// The one caller reading for the others. When it is done or dropped, waiters
/// it did not serve are let go (their senders drop) and read for themselves.
struct Reader<'a>(&'a CacheLookups);

impl Drop for Reader<'_> {
    fn drop(&mut self) {
        let mut lookups = self.0.lock();
        lookups.reading = false;
        lookups.waiting.clear();
    }
}

/// A queued cache entry: the model id and answer, secrets redacted.
fn entry(model: &str, response_json: &str) -> (String, String) {
    (
        gavel_core::secrets::redact(model).into_owned(),
        gavel_core::secrets::redact(response_json).into_owned(),
    )
}
