//! One page of a run's executions as a person browses them: filtered by
//! status and by text in the case's id or name, in the order they were
//! recorded, each page read by key (the `seq` after the last one shown), so a
//! page costs the same at the start of a million executions as at the end.

use gavel_core::{Execution, Status};
use sqlx::AssertSqlSafe;

use crate::pages::{placeholders, read_page};
use crate::rows::from_i64;
use crate::{Store, StoreError};

/// Which executions a page shows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Browse {
    /// The statuses shown; empty: every status.
    pub statuses: Vec<Status>,
    /// Text the case id or name contains, ignoring case; empty: any.
    pub search: String,
    /// Only executions recorded after this one (a page's [`BrowsePage::next`]).
    pub after: Option<i64>,
    /// At most this many (at least 1).
    pub limit: usize,
}

/// A page of executions and where the next one starts.
#[derive(Debug)]
pub struct BrowsePage {
    /// The page's executions, in recording order.
    pub executions: Vec<Execution>,
    /// How many of the run's executions match the filter, on every page.
    pub matching: usize,
    /// Where the next page starts (its [`Browse::after`]); `None` on the last.
    pub next: Option<i64>,
}

impl Store {
    /// The page of `run_id`'s executions that `browse` asks for.
    pub async fn browse(&self, run_id: &str, browse: &Browse) -> Result<BrowsePage, StoreError> {
        let limit = browse.limit.max(1);
        let (filter, binds) = filter_sql(browse);
        let count_sql = format!("SELECT COUNT(*) FROM executions WHERE run_id = $1{filter}");
        let mut count = sqlx::query_scalar(AssertSqlSafe(count_sql)).bind(run_id);
        for b in &binds {
            count = count.bind(b.as_str());
        }
        let matching: i64 = count.fetch_one(&self.pool).await?;
        let after = binds.len() + 2;
        let keys_sql = format!(
            "SELECT id, seq FROM executions WHERE run_id = $1{filter} AND seq > ${after} \
             ORDER BY seq LIMIT {}",
            limit + 1
        );
        let mut keys = sqlx::query_as(AssertSqlSafe(keys_sql)).bind(run_id);
        for b in &binds {
            keys = keys.bind(b.as_str());
        }
        let mut keys: Vec<(String, i64)> = keys
            .bind(browse.after.unwrap_or(-1))
            .fetch_all(&self.pool)
            .await?;
        let next = (keys.len() > limit).then(|| keys[limit - 1].1);
        keys.truncate(limit);
        let ids: Vec<String> = keys.into_iter().map(|(id, _)| id).collect();
        Ok(BrowsePage {
            executions: read_page(self, &ids).await?,
            matching: from_i64(matching, || format!("run {run_id} matching executions"))?,
            next,
        })
    }
}

/// The filter's conditions (after `run_id = $1`) and their values, bound from `$2`.
fn filter_sql(browse: &Browse) -> (String, Vec<String>) {
    let mut sql = String::new();
    let mut binds: Vec<String> = browse
        .statuses
        .iter()
        .map(|s| s.as_str().to_owned())
        .collect();
    if !binds.is_empty() {
        sql.push_str(&format!(
            " AND status IN ({})",
            placeholders(2, binds.len())
        ));
    }
    let search = browse.search.trim();
    if !search.is_empty() {
        let n = binds.len() + 2;
        sql.push_str(&format!(
            " AND (LOWER(case_id) LIKE ${n} ESCAPE '!' OR LOWER(case_name) LIKE ${n} ESCAPE '!')"
        ));
        binds.push(format!("%{}%", escape_like(&search.to_lowercase())));
    }
    (sql, binds)
}

/// `text` matched literally by `LIKE … ESCAPE '!'` (a backslash is not an
/// escape character on every engine's string literals).
fn escape_like(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '%' | '_' | '!') {
            out.push('!');
        }
        out.push(c);
    }
    out
}
