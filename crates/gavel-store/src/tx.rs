//! Write transactions, whichever connection runs them: statements with their
//! values bound in order, so that one piece of code writes through sqlx's pool
//! (both engines) and through the direct SQLite connection.
//!
//! Every text value is redacted ([`gavel_core::secrets::redact`]) as it is
//! bound: no registered secret reaches a stored execution, whatever field it hid in.

use std::borrow::Cow;
use std::future::Future;

use gavel_core::secrets::redact;
use rusqlite::types::{ToSqlOutput, Value, ValueRef};
use sqlx::any::AnyArguments;
use sqlx::{Any, Arguments, AssertSqlSafe, Transaction};

use crate::StoreError;
use crate::rows::Float;

/// One value bound to a statement. The kind of a NULL is kept: PostgreSQL types
/// every parameter.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Param<'a> {
    Text(Option<&'a str>),
    Int(Option<i64>),
    Real(Option<f64>),
}

impl<'a> From<&'a str> for Param<'a> {
    fn from(value: &'a str) -> Self {
        Param::Text(Some(value))
    }
}

impl<'a> From<Option<&'a str>> for Param<'a> {
    fn from(value: Option<&'a str>) -> Self {
        Param::Text(value)
    }
}

impl From<i64> for Param<'_> {
    fn from(value: i64) -> Self {
        Param::Int(Some(value))
    }
}

impl From<Option<i64>> for Param<'_> {
    fn from(value: Option<i64>) -> Self {
        Param::Int(value)
    }
}

impl From<Option<f64>> for Param<'_> {
    fn from(value: Option<f64>) -> Self {
        Param::Real(value)
    }
}

impl rusqlite::ToSql for Param<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match *self {
            Param::Text(Some(text)) => match redact(text) {
                Cow::Borrowed(text) => ValueRef::Text(text.as_bytes()),
                Cow::Owned(clean) => return Ok(ToSqlOutput::Owned(Value::Text(clean))),
            },
            Param::Int(Some(value)) => ValueRef::Integer(value),
            // SQLite stores a NaN as NULL, as sqlx's driver does.
            Param::Real(Some(value)) => ValueRef::Real(value),
            Param::Text(None) | Param::Int(None) | Param::Real(None) => ValueRef::Null,
        }))
    }
}

/// An execution's key as a write statement returns it: id, case id, target,
/// repeat index.
pub(crate) type ReturnedKey = (String, String, String, i64);

/// An open write transaction. On the direct connection its futures complete
/// without ever waiting.
pub(crate) trait WriteTx {
    /// Runs `sql` with `params` bound in order.
    fn execute(
        &mut self,
        sql: &str,
        params: &[Param<'_>],
    ) -> impl Future<Output = Result<(), StoreError>>;

    /// Runs `sql`, which yields one integer.
    fn fetch_i64(
        &mut self,
        sql: &str,
        params: &[Param<'_>],
    ) -> impl Future<Output = Result<i64, StoreError>>;

    /// Runs `sql`, which yields rows of (text, text, text, integer).
    fn fetch_keys(
        &mut self,
        sql: &str,
        params: &[Param<'_>],
    ) -> impl Future<Output = Result<Vec<ReturnedKey>, StoreError>>;
}

/// `params` as sqlx arguments.
fn arguments(params: &[Param<'_>]) -> Result<AnyArguments, StoreError> {
    let mut arguments = AnyArguments::default();
    for param in params {
        match *param {
            Param::Text(None) => arguments.add(None::<&str>),
            Param::Text(Some(text)) => match redact(text) {
                Cow::Borrowed(text) => arguments.add(text),
                Cow::Owned(clean) => arguments.add(clean),
            },
            Param::Int(value) => arguments.add(value),
            Param::Real(value) => arguments.add(Float(value)),
        }
        .map_err(sqlx::Error::Encode)?;
    }
    Ok(arguments)
}

impl WriteTx for Transaction<'_, Any> {
    async fn execute(&mut self, sql: &str, params: &[Param<'_>]) -> Result<(), StoreError> {
        sqlx::query_with(AssertSqlSafe(sql), arguments(params)?)
            .execute(&mut **self)
            .await?;
        Ok(())
    }

    async fn fetch_i64(&mut self, sql: &str, params: &[Param<'_>]) -> Result<i64, StoreError> {
        Ok(
            sqlx::query_scalar_with(AssertSqlSafe(sql), arguments(params)?)
                .fetch_one(&mut **self)
                .await?,
        )
    }

    async fn fetch_keys(
        &mut self,
        sql: &str,
        params: &[Param<'_>],
    ) -> Result<Vec<ReturnedKey>, StoreError> {
        Ok(sqlx::query_as_with(AssertSqlSafe(sql), arguments(params)?)
            .fetch_all(&mut **self)
            .await?)
    }
}

impl WriteTx for rusqlite::Transaction<'_> {
    async fn execute(&mut self, sql: &str, params: &[Param<'_>]) -> Result<(), StoreError> {
        self.prepare_cached(sql)?
            .execute(rusqlite::params_from_iter(params))?;
        Ok(())
    }

    async fn fetch_i64(&mut self, sql: &str, params: &[Param<'_>]) -> Result<i64, StoreError> {
        Ok(self
            .prepare_cached(sql)?
            .query_row(rusqlite::params_from_iter(params), |row| row.get(0))?)
    }

    async fn fetch_keys(
        &mut self,
        sql: &str,
        params: &[Param<'_>],
    ) -> Result<Vec<ReturnedKey>, StoreError> {
        let mut statement = self.prepare_cached(sql)?;
        let rows = statement.query_map(rusqlite::params_from_iter(params), |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

#[cfg(test)]
mod tests {
    use crate::{Store, fixtures};
    use serde_json::json;

    /// Every file of the store's directory (database, WAL, shared memory) as bytes.
    fn files_bytes(dir: &std::path::Path) -> Vec<u8> {
        let mut bytes = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            bytes.extend(std::fs::read(entry.unwrap().path()).unwrap());
        }
        bytes
    }

    #[tokio::test]
    async fn secrets_never_reach_the_file_through_either_write_path() {
        let canary = "store-canary-Zq81";
        gavel_core::secrets::register(canary);
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&format!("sqlite://{}", dir.path().join("s.db").display()))
            .await
            .unwrap();
        let mut run = fixtures::run("secrets");
        run.config = json!({"header": format!("Bearer {canary}")});
        store.create_run(&run).await.unwrap();
        let mut e = fixtures::execution("direct");
        e.transcript.turns[0].output = format!("you sent {canary}");
        e.transcript.turns[0].response = Some(json!({"echo": canary}));
        e.transcript.turns[0].tool_calls[0].arguments = json!({"token": canary});
        e.verdicts[0].reason = format!("saw {canary}");
        e.verdicts[0]
            .evidence
            .detail
            .insert("seen".into(), json!([canary]));
        e.reason = Some(canary.to_owned());
        store.cache_stage("k", "m", &format!("{{\"text\":\"{canary}\"}}"));
        store.record_execution(&run.id, &e).await.unwrap();
        // The same through the pool.
        store.direct = None;
        e.case_id = "pooled".into();
        store.record_execution(&run.id, &e).await.unwrap();
        let read = store.executions(&run.id).await.unwrap();
        assert_eq!(read.len(), 2);
        assert_eq!(read[0].transcript.turns[0].output, "you sent [redacted]");
        store.close().await;
        let bytes = files_bytes(dir.path());
        let found = bytes.windows(canary.len()).any(|w| w == canary.as_bytes());
        assert!(!found, "the canary reached the SQLite files");
    }
}
