//! Queries against a database gavel does not own: the agent's, or an oracle's.

use serde_json::{Map, Number, Value};
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Column, Connection, Row};

/// A database named in a suite: a SQLite file or a PostgreSQL URL.
#[derive(Debug, Clone)]
pub(crate) struct Database {
    /// The URL handed to the driver.
    url: String,
    /// How it is named in reasons (never a password).
    shown: String,
}

impl Database {
    /// Resolves `postgres://…`, `postgresql://…`, `sqlite:PATH`, `sqlite://PATH` or
    /// a plain path (a SQLite file), after expanding `${VAR}`. SQLite files are
    /// opened read-only and never created.
    pub(crate) fn parse(written: &str) -> Result<Self, String> {
        let expanded =
            gavel_core::template::expand_env(written).map_err(|e| format!("cannot expand {e}"))?;
        if expanded.starts_with("postgres://") || expanded.starts_with("postgresql://") {
            let shown = match expanded.rsplit_once('@') {
                Some((_, host)) => format!("postgres://…@{host}"),
                None => expanded.clone(),
            };
            if cfg!(not(feature = "postgres")) {
                return Err(format!(
                    "database `{shown}`: this build has no PostgreSQL support (gavel-eval's `postgres` feature; the `gavel` binary has it)"
                ));
            }
            return Ok(Database {
                url: expanded,
                shown,
            });
        }
        let path = match expanded.strip_prefix("sqlite:") {
            Some(rest) => rest.strip_prefix("//").unwrap_or(rest),
            None if expanded.contains("://") => {
                return Err(format!(
                    "unsupported database `{written}`: use a SQLite file path, sqlite://PATH or postgres://..."
                ));
            }
            None => expanded.as_str(),
        };
        let path = path.split('?').next().unwrap_or(path);
        if path.is_empty() {
            return Err(format!("database `{written}` names no file"));
        }
        Ok(Database {
            url: format!("sqlite://{path}?mode=ro"),
            shown: path.to_owned(),
        })
    }

    /// The database as shown in reasons.
    pub(crate) fn shown(&self) -> &str {
        &self.shown
    }

    /// Runs `query`, binding `session_id` to `$1` when the query uses it; rows as
    /// JSON objects keyed by column name.
    pub(crate) async fn rows(
        &self,
        query: &str,
        session_id: &str,
    ) -> Result<Vec<Map<String, Value>>, String> {
        sqlx::any::install_default_drivers();
        let mut conn = AnyConnection::connect(&self.url)
            .await
            .map_err(|e| format!("cannot open {}: {e}", self.shown))?;
        // The suite author writes this SQL; it runs against their own database.
        let mut q = sqlx::query(sqlx::AssertSqlSafe(query.to_owned()));
        if query.contains("$1") {
            q = q.bind(session_id.to_owned());
        }
        let rows = q
            .fetch_all(&mut conn)
            .await
            .map_err(|e| format!("query on {} failed: {e}", self.shown))?;
        let _ = conn.close().await;
        Ok(rows.iter().map(row_json).collect())
    }
}

/// One row as a JSON object: integers, floats, text, booleans or null.
fn row_json(row: &AnyRow) -> Map<String, Value> {
    row.columns()
        .iter()
        .enumerate()
        .map(|(i, col)| (col.name().to_owned(), cell(row, i)))
        .collect()
}

fn cell(row: &AnyRow, i: usize) -> Value {
    if let Ok(v) = row.try_get::<Option<i64>, _>(i) {
        return v.map_or(Value::Null, Value::from);
    }
    if let Ok(v) = row.try_get::<Option<f64>, _>(i) {
        return v
            .and_then(Number::from_f64)
            .map_or(Value::Null, Value::Number);
    }
    if let Ok(v) = row.try_get::<Option<String>, _>(i) {
        return v.map_or(Value::Null, Value::String);
    }
    if let Ok(v) = row.try_get::<Option<bool>, _>(i) {
        return v.map_or(Value::Null, Value::Bool);
    }
    Value::Null
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[cfg(not(feature = "postgres"))]
    #[test]
    fn without_postgres_a_postgres_database_is_refused_saying_why() {
        let err = Database::parse("postgres://u:secret@db:5432/x").unwrap_err();
        assert!(err.contains("`postgres` feature"), "{err}");
        assert!(!err.contains("secret"), "{err}");
    }

    #[test]
    fn urls_resolve_and_hide_passwords() {
        #[cfg(feature = "postgres")]
        {
            let d = Database::parse("postgres://u:secret@db:5432/x").unwrap();
            assert_eq!(d.shown(), "postgres://…@db:5432/x");
        }
        let d = Database::parse("sqlite:///tmp/a.db").unwrap();
        assert_eq!(
            (d.url.as_str(), d.shown()),
            ("sqlite:///tmp/a.db?mode=ro", "/tmp/a.db")
        );
        let d = Database::parse("agent.db").unwrap();
        assert_eq!(d.url, "sqlite://agent.db?mode=ro");
        assert!(
            Database::parse("mysql://x")
                .unwrap_err()
                .contains("unsupported")
        );
    }

    #[tokio::test]
    async fn rows_bind_the_session_id() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.db");
        sqlx::any::install_default_drivers();
        let mut conn = AnyConnection::connect(&format!("sqlite://{}?mode=rwc", path.display()))
            .await
            .unwrap();
        for sql in [
            "CREATE TABLE m (session_id TEXT, seq INTEGER, score REAL, note TEXT)",
            "INSERT INTO m VALUES ('s1', 1, 0.5, 'hi'), ('s1', 2, NULL, NULL), ('s2', 1, 1.0, 'x')",
        ] {
            sqlx::query(sql).execute(&mut conn).await.unwrap();
        }
        let db = Database::parse(path.to_str().unwrap()).unwrap();
        let rows = db
            .rows(
                "SELECT seq, score, note FROM m WHERE session_id = $1 ORDER BY seq",
                "s1",
            )
            .await
            .unwrap();
        assert_eq!(
            Value::Array(rows.into_iter().map(Value::Object).collect()),
            serde_json::json!([
                {"seq": 1, "score": 0.5, "note": "hi"},
                {"seq": 2, "score": null, "note": null}
            ])
        );
        let missing = Database::parse(dir.path().join("none.db").to_str().unwrap()).unwrap();
        assert!(
            missing
                .rows("SELECT 1", "s")
                .await
                .unwrap_err()
                .starts_with("cannot open")
        );
    }
}
