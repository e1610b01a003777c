//! A fresh PostgreSQL database per test, on the server `GAVEL_TEST_DATABASE_URL`
//! names (`postgres://postgres@127.0.0.1:5432/test` in CI).

use std::future::Future;

use sqlx::{AssertSqlSafe, Connection, Executor, PgConnection};

use crate::{Need, skip};

/// The variable naming the PostgreSQL server tests use.
const URL_VARIABLE: &str = "GAVEL_TEST_DATABASE_URL";

/// Runs `story` with the URL of a fresh database on the server of
/// `GAVEL_TEST_DATABASE_URL`, dropped afterwards even when the story panics
/// (the panic is then raised here), and returns what the story returned.
/// Without the variable, `None` after saying `what` is skipped; under CI
/// ([`Need::required`]) that is a failure instead.
///
/// # Panics
/// When the server cannot be reached or the database not created or dropped:
/// a test's setup failing.
pub async fn on_fresh_postgres<F, Fut, T>(what: &str, story: F) -> Option<T>
where
    F: FnOnce(String) -> Fut,
    Fut: Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    let Ok(admin_url) = std::env::var(URL_VARIABLE) else {
        skip(
            Need::Postgres,
            format_args!("{URL_VARIABLE} is not set, so {what} does not run on PostgreSQL"),
        );
        return None;
    };
    let database = format!("gavel_test_{}", uuid::Uuid::now_v7().simple());
    let mut admin = match PgConnection::connect(&admin_url).await {
        Ok(admin) => admin,
        Err(e) => panic!("{what}: cannot connect to {URL_VARIABLE}: {e}"),
    };
    if let Err(e) = admin
        .execute(AssertSqlSafe(format!("CREATE DATABASE {database}")))
        .await
    {
        panic!("{what}: cannot create database {database}: {e}");
    }
    let outcome = tokio::spawn(story(with_database(&admin_url, &database))).await;
    let dropped = admin
        .execute(AssertSqlSafe(format!(
            "DROP DATABASE IF EXISTS {database} WITH (FORCE)"
        )))
        .await;
    let _ = admin.close().await;
    match outcome {
        Ok(result) => {
            if let Err(e) = dropped {
                panic!("{what}: cannot drop database {database}: {e}");
            }
            Some(result)
        }
        Err(join) => std::panic::resume_unwind(join.into_panic()),
    }
}

/// `url` naming `database` instead of its own, its query kept.
fn with_database(url: &str, database: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, format!("?{query}")),
        None => (url, String::new()),
    };
    let authority = base.find("://").map_or(0, |i| i + 3);
    let server = match base[authority..].find('/') {
        Some(slash) => &base[..authority + slash],
        None => base,
    };
    format!("{server}/{database}{query}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_database_is_swapped_and_the_query_kept() {
        assert_eq!(
            with_database("postgres://postgres@127.0.0.1:5432/test", "x"),
            "postgres://postgres@127.0.0.1:5432/x"
        );
        assert_eq!(
            with_database("postgres://u:p@h/test?sslmode=disable", "x"),
            "postgres://u:p@h/x?sslmode=disable"
        );
        assert_eq!(with_database("postgres://h", "x"), "postgres://h/x");
    }
}
